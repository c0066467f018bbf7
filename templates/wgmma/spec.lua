-- templates/wgmma/spec.lua -- the Hopper family: warpgroup MMA (wgmma.mma_async, sm_90a) with
-- the dequantized weights as the register A operand and the activations as the shared-memory B
-- operand (C^T = W A^T, so small and odd M map to wgmma's n without padding rows to 64).
-- Data (axes) plus pure functions (valid, derive), as templates/mma/spec.lua.
local M = {}
local formats = require("formats") -- templates/formats.lua: acts, wfmts, schemes, layouts
local smem = require("wgmma.smem") -- templates/wgmma/smem.lua: the shared-memory access model
local partials = require("formats.partials") -- the format partials' structs (dequant, scales)

M.family = "wgmma"
M.template = "templates/wgmma/kernel.cu.tpl"
-- What CMake compiles its shards for (CMakeLists.txt reads this line): arch-specific sm_90a
-- code, Hopper only.
M.cuda_architectures = "90a"
-- The packed layouts it reads. A stage of A is one 128-byte swizzle row, so tile_k says the
-- activations' width and with it the layout: tile_k 64, FP16/BF16 activations on weights in
-- the mma family's layout (its 16x16 tile per warp is the m64nNk16 A fragment, kernel.cu.tpl:
-- one packing serves both families and the runtime may pick either per shape); tile_k 128,
-- E4M3 activations (W4A8, kernel.cu.tpl kA8) on weights in the e4m3 layout, its layout row's
-- a_type (formats.lua). The output and the scales stay of type k.act.
local LAYOUT_OF_TILE_K = { [64] = "mma", [128] = "e4m3" }
for _, l in pairs(LAYOUT_OF_TILE_K) do
  assert(formats.layout[l] and formats.read_by(l, M.family),
         "formats.lua has no layout '" .. l .. "' read by the wgmma family")
end
local function a_type(k)  -- the activations' type: the layout's, else the kernel's act
  return formats.layout[LAYOUT_OF_TILE_K[k.tile_k]].a_type or k.act
end

-- The kernel name (gen/lua/naming.lua), e.g. mgen_sm90a_f16_u4b8_g128_64x64x64_wg1_s1:
-- architecture token (sm_90a code runs on sm_90 only), activation, format, group, tile
-- M (wgmma n) x N (64 per warpgroup) x K (per stage), warpgroups, pipeline stages.
M.name = {
  "sm{arch}a",
  "{act:word}",
  "{wfmt:word}",
  { "g{group}", alias = { "gc", when = { group = 0 } } },
  "{tile_m}x{tile_n}x{tile_k}",
  "wg{warpgroups}",
  "s{stages}",
}
M.sort = { "warpgroups", "stages" }

-- The default build (bench/notes/v7.md, "wgmma v3"), from the H200 sweep of f16 g128 over M:
-- the two-warpgroup tiles with 4 stages (64/128/256 rows: the family's fastest from M = 128
-- up; 6 stages were never ahead by more than noise) and the four-warpgroup tiles with 4 stages
-- (32/64 rows x 256 columns: the fastest at M = 32 and 64, ahead of every mma kernel there).
-- `marlin-gen --space full` also emits one-warpgroup tiles and 6 stages. The same five tiles
-- serve fe2m1 (NVFP4, MXFP4): in the H200 run of all of them against every mma kernel (bench/notes/v10.md,
-- "wgmma fe2m1"), each of the five was the fastest kernel of some shape and M.
-- The 8- and 16-row tiles (decode: wgmma n = 8 or 16 against 64 weight rows per warpgroup)
-- and 8 or 12 stages are in `--space full` only, until a sweep puts them in.
-- Two tiles of two consumers with 128 columns each (two m64 wgmma per step, and room for the
-- overlap's second fragment set, which the four-consumer tiles lack) joined the set: the fastest
-- at M = 32 and 64 on most shapes (bench/notes/v11.md, "wgmma v4", H200: +8% and +7% over the
-- default choice, f16 u4b8 g128).
-- Version 5 (bench/notes/v17.md): 8 stages where the H200 candidate sweep of every key
-- (bench/results/sweep-h200-wgmma-candidates.csv.xz, 168 kernels) measured them ahead: 64x128 and
-- 128x128 (s4 over s8: 1.08-1.10x and 1.02-1.21x) and the four-consumer tiles (1.01-1.03x);
-- 256x128 keeps 4 (6, the most that fits, is 0.5% slower from M = 256, where it is picked),
-- 64x256 with two consumers keeps 6 (s8 within 0.5%). 32x256 with two consumers left the set:
-- the four-consumer s8 tile is within 3% of it on every point but one of the sweep.
-- The set itself: templates/wgmma/defaults.lua, per key (act_wfmt_group), which
-- bench/sweep_select.lua --out writes from a sweep of both families (the greedy cover the mma
-- set comes from, here a sweep of the mma defaults and the 168 candidates above:
-- 69 kernels of those tiles and stage counts, bench/notes/v29.md). Position in a key's list =
-- default_rank, the cost model's tie-break; kernels outside it (--space full) rank after.
local rank
-- The W4A8 kernels' set (tile_k 128): templates/wgmma/defaults_w4a8.lua.
-- The moe op's kernels: templates/wgmma/op_defaults.lua (bench/moe_cover.py's cover of both
-- families' moe kernels: the wgmma tiles where they beat the mma cover by more than its tol).
M.defaults, rank = require("default_set").load({ "wgmma.defaults", { "wgmma.defaults_w4a8", twins = false } },
                                                 "wgmma.op_defaults")

M.axes = {
  { name = "arch", values = {
    90,                                   -- wgmma: sm_90a only (not sm_100: arch-specific code)
  } },
  { name = "op", values = formats.names(formats.ops) }, -- what the kernel computes (formats.ops)
  { name = "act", values = formats.names(formats.acts) },
  { name = "wfmt", values = formats.names(formats.wfmts) },
  { name = "group", values = {            -- K elements per scale; 0 = one scale per column
    0, 16, 32, 64, 128,                   -- (formats.lua says which exist per wfmt)
  } },
  { name = "tile", values = {             -- block tile: rows of A (wgmma n) x columns x K
    { m = 8, n = 128, k = 64 },
    { m = 16, n = 128, k = 64 },
    { m = 8, n = 256, k = 64 },
    { m = 16, n = 256, k = 64 },
    { m = 64, n = 64, k = 64 },
    { m = 128, n = 64, k = 64 },
    { m = 256, n = 64, k = 64 },
    { m = 64, n = 128, k = 64 },          -- two consumer warpgroups share each stage of A
    { m = 128, n = 128, k = 64 },
    { m = 256, n = 128, k = 64 },
    { m = 32, n = 256, k = 64 },          -- four consumer warpgroups: more work in flight per
    { m = 64, n = 256, k = 64 },          -- SM where M is small and the weights stream
    { m = 32, n = 192, k = 64 },          -- three consumer warpgroups of 64 columns: a third
    { m = 64, n = 192, k = 64 },          -- warp per scheduler, each with the overlap's registers
                                          -- (H100, f16 g128: 1-2% over the best other tile at
                                          -- M = 16-64, bench/notes/v16.md; --space full only)
    { m = 128, n = 192, k = 64 },         -- three consumers of 128 rows: where N % 192 == 0 (12288)
                                          -- up to 1.24x over the default set at M = 128-512, else
                                          -- 0.95-0.99x of 128x128 (H200, bench/notes/v18.md;
                                          -- --space full only)
    -- W4A8 (tile_k 128: E4M3 activations): each stage's FP32 sums beside the totals (acc_scales)
    -- must fit a consumer's registers (valid(): a8_regs)
    { m = 8, n = 128, k = 128 },          -- decode: twice the blocks of 256 columns on small N
    { m = 16, n = 128, k = 128 },
    { m = 8, n = 256, k = 128 },
    { m = 16, n = 256, k = 128 },
    { m = 32, n = 256, k = 128 },
    { m = 64, n = 128, k = 128 },
    { m = 64, n = 256, k = 128 },
    { m = 128, n = 64, k = 128 },
    { m = 128, n = 128, k = 128 },
    { m = 160, n = 128, k = 128 },        -- more rows per weight tile: fewer bytes per FLOP from
    { m = 192, n = 128, k = 128 },        -- L2, what the 256-row tiles do at 64 deep
    { m = 64, n = 192, k = 128 },         -- three consumers, so that one's wgmma fill another's
    { m = 96, n = 192, k = 128 },         -- serial wait-fold-dequantize gap: measured ~0.9x the
                                          -- two-consumer tiles at M >= 256 (more dequantization
                                          -- per FLOP); kept for the sweep (12288-column shapes)
  } },
  { name = "warpgroups", values = {       -- consumer (math) warpgroups, 64 output columns each
    1,
    2,
    3,
    4,
  } },
  { name = "stages", values = {           -- shared-memory stages of the TMA ring
    4,
    6,
    8,
    12,
  } },
}

-- Shared memory a block may use on sm_90 (templates/devices.lua: 227 KiB), and the layout's
-- parts (mgen_wgmma_body.cuh, Ring).
local SMEM_LIMIT = require("devices").of(90).smem_block

-- The zero points one stage of kernel k carries (formats/partials.lua zeros_of: u4): its zero
-- rows (one per scale row of the stage, or the one row per channel: the same row each stage
-- of a column tile, copied with each all the same, tile_n / 2 bytes a stage against W's
-- 32 tile_n, so that no consumer ever waits for a global load, as for the scales), the bytes of
-- a row (tile_n / 2: 4 bits per column) and of the stage's buffer (a multiple of 128: the copy
-- engine's destinations stay 128-byte aligned). 0, 0, 0 without zero points.
local function stage_zeros(k)
  if not partials.zeros_of(formats, k) then return 0, 0, 0 end
  local rows = k.group == 0 and 1 or math.max(1, k.tile_k // k.group)
  local row_bytes = k.tile_n // 2
  return rows, row_bytes, (rows * row_bytes + 127) // 128 * 128
end

local MOE_PRODUCERS = smem.MOE_PRODUCERS  -- the moe op's producer warps (producers() below)

local function smem_bytes(k)
  local a = k.tile_m * 128                -- a stage of A: one 128-byte row per row of A
  local w = k.tile_n * k.tile_k // 2      -- a stage of packed W
  local rows, bytes = partials.stage_scales(formats, k)
  local s = rows * k.tile_n * bytes       -- a stage of scales (formats/partials.lua)
  local _, _, z = stage_zeros(k)          -- a stage of zero points
  local route = smem.route_bytes(k)       -- moe: the route's tables (smem.lua)
  local c = smem.stage_c_bytes(k)         -- dense: the epilogue's staging rows (smem.lua)
  return 1024 + k.stages * (a + w + s + z) + 2 * 8 * k.stages + 16 + route + c  -- slack, ring, barriers, flag
end

-- Registers per thread after setmaxnreg. A block starts with what ptxas gives each thread under
-- __launch_bounds__(threads, 1) (64 Ki / threads, in steps of 8, at most 256: 256 / 168 / 96
-- for 1 / 2 / 4 consumers); the producer warpgroup gives most of its share back and the
-- consumers claim it. setmaxnreg.inc waits until the block's pool has the registers, so the
-- consumers may claim no more than the producer released: the sum stays within the start.
local PRODUCER_REGS = 40
-- The moe op's producer warps walk the block's segments (their cursor, the segment's expert and
-- rows) beside the gather's batch of rows: within 40 registers ptxas spilled 150-200 bytes
-- (64x256 wg2 / wg4), within 48 none; the wg3 and wg4 consumers keep their count (152, 104).
local MOE_PRODUCER_REGS = 48
local function producer_regs(k) return k.op == "moe" and MOE_PRODUCER_REGS or PRODUCER_REGS end
local function start_regs(threads)
  local r = 65536 // threads
  r = r - r % 8
  return r > 256 and 256 or r
end
local function consumer_regs(k)
  local threads = 128 * (k.warpgroups + 1)
  local r = (start_regs(threads) * threads - 128 * producer_regs(k)) // (128 * k.warpgroups)
  r = r - r % 8
  return r > 256 and 256 or r
end

-- Producer threads (lane 0 of as many producer warps), buffer s filled by producer s % P: a
-- whole number of buffers each, so a buffer always has one producer. One thread issuing every
-- stage's copies caps a ring below the copy engine's rate whatever its depth (~250 ns of issue
-- per stage: bench_ring streams 8 KB stages at 3.5 TB/s with one, 3.8 with two on an H200);
-- in the kernels two producers gain up to 8% (64x128), four gain less than two and cost the
-- four-consumer tiles' issue slots (bench/notes/v18.md).
-- The moe op gathers A with every lane of four producer warps (mgen_wgmma_body.cuh gather_a: a
-- stage's rows are 8 tile_m cp.async of 16 bytes, their arrivals made by the copies'
-- completion), each warp a quarter of the stages.
local function producers(k)
  if k.op == "moe" then return MOE_PRODUCERS end
  return k.stages % 2 == 0 and 2 or 1
end

-- Stream-K (templates/wgmma/include/mgen_wgmma_sched.h): where the tiles are fewer than the SMs,
-- at most this many blocks share a tile, each at least this many stages deep (a block fills
-- and drains its ring once; the last of a tile's blocks sums their partials).
local MAX_SPLITS = 16
local MIN_SPLIT_TILES = 4

-- The moe op's tile order (mgen_wgmma_body.cuh Schedule::slab): bands of this many m slabs, each
-- band's tiles slab-fastest, column tile by column tile. The list's slabs are the experts'
-- rows one after another; in the dense order (slab fastest over all of them) the blocks of a
-- wave took one or two column tiles of every slab, so each wave read all of A again from
-- HBM past the L2 (Mixtral M = 4096 down: 8 x 1024 rows x 14336 x 2 bytes = 235 MB a wave).
-- A band's slabs stay in the L2 while its column tiles pass.
local MOE_BAND = 8
-- The dense op's bands follow A's bytes (mgen_wgmma_sched.h mgen_wgmma_band): one band where
-- all of A fits this much of the L2 (H100 50 MB, H200 60 MB; the weights stream past it), else
-- bands whose A fits.
local DENSE_BAND_L2_BYTES = 24 * 1024 * 1024

-- Activation types: the PTX type name of wgmma's operands, its K depth, and the element type of
-- A's tensor map (mgen_tma.cuh AType). Only the 16-bit types have wgmma's transpose operand
-- (imm-trans-b: 0, K-major B).
local PTX = {
  f16 = { ptx = "f16", k = 16, tma = "kF16", trans_b = ", 0" },
  bf16 = { ptx = "bf16", k = 16, tma = "kBf16", trans_b = ", 0" },
  e4m3 = { ptx = "e4m3", k = 32, tma = "kE4m3", trans_b = "" },
}

-- mgen_kernel_desc.params of a wgmma kernel, in this order: marlin-gen renders the list into
-- <out>/include/mgen_params_wgmma.h (MGEN_WGMMA_<NAME>, MGEN_WGMMA_PARAMS, the names), which
-- runtime/src/families/wgmma.c reads them by; derive gives the values by name.
M.params = {
  { name = "warpgroups", doc = "consumer warpgroups per block (64 output columns each)" },
  { name = "stages", doc = "shared-memory stages of the TMA ring" },
  { name = "max_splits", doc = "stream-K: most blocks sharing a tile where the tiles are few" },
  { name = "min_split_tiles", doc = "and fewest 64-deep stages per block" },
  { name = "acc_scales", doc = "1: group scales on the FP32 sums once per group (acc_scales)" },
}

-- A consumer's 64-column groups: one m64 wgmma each per step.
local function consumer_groups(k)
  return k.tile_n // k.warpgroups // 64
end

-- Registers a W4A8 consumer needs per thread (kernel.cu.tpl kA8): the totals and each stage's
-- sums apart from them (tile_m / 2 each per 64 columns), `fragment_sets` sets of 16 fragment
-- registers per 64 columns, and ~24 of addressing. Found by compiling: 128x192 wg3 at g128
-- (2 x 64 sums, one set, 152 registers) spilled 286 bytes, 64x256 wg4 (2 x 32 of 104) none.
local function a8_regs(k, fragment_sets)
  local groups = consumer_groups(k)
  return 2 * groups * (k.tile_m // 2) + 16 * fragment_sets * groups + 24
end

function M.valid(k)
  local scheme = formats.scheme_of(k.wfmt, k.group)
  if scheme == nil then
    return false, string.format("GROUP: %s has no scheme with group %d", k.wfmt, k.group)
  end
  local covered, what = partials.covers(formats, k)
  if not covered then return false, "FORMAT: " .. what end
  if k.group > 0 and k.group % 16 ~= 0 then
    return false, string.format("GROUP: %d is not a multiple of the 16-deep MMA", k.group)
  end
  if k.stages < 2 then
    return false, string.format("STAGES: %d < 2: the pipeline refills the stage before", k.stages)
  end
  local layout = LAYOUT_OF_TILE_K[k.tile_k]
  if layout == nil then
    return false, string.format("TILE: tile_k %d is not one 128-byte swizzle row (64 or 128)", k.tile_k)
  end
  if not formats.packed_in(k.wfmt, layout, k.group) then
    return false, string.format("LAYOUT: %s is not packed in the %s layout (tile_k %d)", k.wfmt, layout, k.tile_k)
  end
  if k.op == "moe" then
    if a_type(k) ~= k.act then return false, "OP: the moe kernels take 16-bit activations" end
    if k.stages % 4 ~= 0 then
      return false, string.format("OP: moe stages are whole rounds of its four producer warps, not %d", k.stages)
    end
  end
  if a_type(k) ~= k.act then  -- W4A8
    if partials.folds_scales(k, a_type(k)) then
      if k.group % PTX[a_type(k)].k ~= 0 then
        return false, string.format("GROUP: %s block scales folded into the weights: group %d is not "
                                    .. "whole %d-deep steps", a_type(k), k.group, PTX[a_type(k)].k)
      end
    elseif k.group % k.tile_k ~= 0 then
      return false, string.format("GROUP: %s activations take group scales on the FP32 sums of whole "
                                  .. "stages: group %d is not a multiple of %d", a_type(k), k.group, k.tile_k)
    end
    local need = a8_regs(k, 1)
    if need > consumer_regs(k) then
      return false, string.format("REGS: %s activations sum each group apart: %d registers per thread, "
                                  .. "the consumers have %d", a_type(k), need, consumer_regs(k))
    end
  end
  if smem_bytes(k) > SMEM_LIMIT then
    return false, string.format("SMEM: %d stages need %d bytes > %d", k.stages, smem_bytes(k), SMEM_LIMIT)
  end
  if k.warpgroups == 4 and k.tile_m > 64 then
    return false, string.format("REGS: 4 warpgroups x %d rows: %d accumulators per thread do not fit "
                                .. "the %d registers of a 640-thread block", k.tile_m, k.tile_m // 2,
                                65536 // 640)
  end
  if k.tile_n ~= 64 * k.warpgroups and k.tile_n ~= 128 * k.warpgroups then
    return false, string.format("TILE: tile_n %d is not 64 or 128 per warpgroup", k.tile_n)
  end
  if k.tile_n == 128 * k.warpgroups and k.tile_m > 64 then
    return false, string.format("REGS: 128 columns x %d rows per consumer: %d accumulators per thread "
                                .. "leave too few of its %d registers", k.tile_m, k.tile_m, consumer_regs(k))
  end
  return true
end

-- The asm operand lists of the kernel's wgmma (kernel.cu.tpl): tile_m / 2 accumulators, then
-- the four A registers and the B descriptor.
local function operands(acc)
  local list, bindings = {}, {}
  for i = 0, acc - 1 do
    list[#list + 1] = "%" .. i
    bindings[#bindings + 1] = string.format('"+f"(d[%d])%s', i, i < acc - 1 and "," or "")
  end
  return table.concat(list, ", "), bindings,
         string.format("%%%d, %%%d, %%%d, %%%d", acc, acc + 1, acc + 2, acc + 3),
         string.format("%%%d", acc + 4)
end

-- Whether a consumer keeps a second set of A fragments to dequantize stage i + 1 while its group
-- i runs (mgen_wgmma_body.cuh run()): per 64-column group, tile_m / 2 accumulators and two sets of
-- 16 fragment registers, which must leave 64 of the consumer's registers for the dequantization and addressing. Where they
-- do not, ptxas serializes every wgmma (C7512, "insufficient register resources"): found by
-- compiling, the 16-row four-warpgroup tiles fit (104 - 8 - 32 = 64), the 32-row ones do not
-- (56); every two- and one-warpgroup tile fits.
local function overlap(k)
  if a_type(k) ~= k.act then return false end  -- acc_scales: one stage's sums at a time
  return consumer_regs(k) - consumer_groups(k) * (k.tile_m // 2 + 2 * 16) >= 64
end

-- Whether a consumer's loops run the ring in passes unrolled over its buffers
-- (mgen_wgmma_body.cuh run()): each stage's buffer a constant, ~15-20% fewer instructions per stage). The tiles
-- without the overlap (three and four consumers) run 2-8% faster with them. With the overlap,
-- ptxas keeps wgmma asynchronous through a pass only where a 64-column group has 128 registers
-- beside its sums and both fragment sets (found by compiling `--space full`, f16 u4b8 g128:
-- 64x128 and 128x128 with two consumers pass; 256-row tiles, two groups per consumer and the
-- three- and four-consumer overlap tiles got C7511 / C7512, every wgmma serialized). And there
-- the passes gain nothing warm while their code costs a cold start -- the unrolled ring is
-- 14-35 KB more SASS (64x128 wg2 s12 44 -> 77 KB, 128x64 wg1 s12 48 -> 83 KB), which the SMs
-- fetch anew when other kernels ran since the last launch, as in an engine (bench/notes/v32.md,
-- passes off over on, --space full f16 u4b8 g128, M 32-128, after 16 other kernels /
-- one kernel repeated: 128x64 wg1 s4-s12 1.00-1.06 / 1.00-1.01, 64x128 wg2 s12 1.02-1.04 /
-- 1.00, two consumers at s4-s8 0.99-1.01 / 0.99-1.00): no passes for one consumer or 12 stages.
local function ring_passes(k)
  if not overlap(k) then return true end
  if k.warpgroups == 1 or k.stages > 8 then return false end
  local groups = consumer_groups(k)
  return (consumer_regs(k) - groups * (k.tile_m // 2 + 2 * 16)) // groups >= 128
end

-- Whether a consumer applies its group scales to FP32 sums once per group instead of to every
-- dequantized weight (mgen_wgmma_body.cuh run_acc_scales()): a group's stages accumulate into a second
-- set of tile_m / 2 sums per 64 columns, folded in by one FMA each at the group's end (tile_m / 2
-- FMA per group against group / 4 HMUL2 of the weights' way: fewer where 2 tile_m < group, the
-- 32-row tiles at g128). Needs groups of whole stages (one scale row per stage) and the
-- one-group-at-a-time loop: the overlap's second fragment set leaves no registers for the sums.
local function acc_scales(k)
  -- E4M3 weights cannot take the scales, and an FP8 MMA's running sum keeps ~13 bits: FP32
  -- totals per stage, per channel too (kernel.cu.tpl kA8)
  if a_type(k) ~= k.act then return true end
  if k.group == 0 or k.group % k.tile_k ~= 0 or overlap(k) then return false end
  return 2 * k.tile_m < k.group
end

-- Whether a W4A8 consumer (acc_scales, a stage per group) dequantizes the next stage while a
-- stage's wgmma run (mgen_wgmma_body.cuh run_acc_overlap()): a second fragment set beside the sums
-- and the stage's sums, where the registers hold them (a8_regs with two sets) with 8 to spare:
-- 96x192 wg3 at exactly its consumers' 152 spilled 358 bytes.
local function acc_overlap(k)
  return a_type(k) ~= k.act and a8_regs(k, 2) + 8 <= consumer_regs(k)
end

-- Whether such a consumer converts each 32-deep step of a stage right before that step's wgmma
-- (mgen_wgmma_body.cuh a8_convert()) instead of the whole stage before the first: then ptxas
-- leaves only step 0's conversion beside the fold, between the wait for the stage before and
-- the stage's first wgmma (128x128 wg2: 140 -> 85 instructions), but each step then has its
-- own fence. H100, f16 u4b8 g128, M 256-4096 (bench/notes/v71.md item 1), time without / with
-- it: 128x128 wg2 1.02-1.05, 64x128 wg2 0.98-1.00, 16x128 wg2 0.95-0.98, 192x128 wg2 (no
-- overlap) 0.99-1.00. So the 128-row tiles with the overlap and two or more consumers.
local function a8_steps(k)
  return acc_overlap(k) and k.tile_m >= 128 and k.warpgroups >= 2
end

-- Whether the consumers' lanes take their W tiles rotated (kernel.cu.tpl `tile`: lanes 8 q ..
-- 8 q + 7 of a warp tile (warp + q) % 4 of each 64-column group): the mma layout's words in 32
-- banks (one wavefront per ld.shared.b32, four with the warp's own tile), the wgmma's rows a
-- permutation of the columns. Every dense 16-bit tile: store() stages C through shared memory,
-- so the scattered columns still leave as whole 128-byte rows (staged and rotated against
-- neither, H100, bench/notes/v67.md item 1: 1.00-1.06x on most tiles at M 256-4096; f16
-- 128x64 wg1 0.97). Not moe: store_moe() writes the route's scattered rows straight from the
-- fragments, where the rotation would split a warp's part of a row into four sectors. The e4m3
-- layout (W4A8) has no conflict to take away.
local function rotate_w(k)
  return a_type(k) == k.act and k.op ~= "moe"
end

function M.derive(k, name)
  local acc = k.tile_m // 2
  local acc_operands, acc_bindings, a_operands, b_operand = operands(acc)
  local a = a_type(k)
  -- its A: the mma fragment order (FP16/BF16), or the W4A8 partials' (formats/<wfmt>/mma_e4m3.cuh)
  local dequant_partial, dequant = partials.dequant_of(k, "mma", a)
  local _, scales, scales_summary = partials.scales_of(formats, k)
  local scale_rows, scale_bytes = partials.stage_scales(formats, k)
  local zero_rows, zero_row_bytes, zero_stage_bytes = stage_zeros(k)
  local scheme = formats.scheme_of(k.wfmt, k.group)
  return formats.kernel_fields(k, LAYOUT_OF_TILE_K[k.tile_k], {
    family_enum = "MGEN_FAMILY_WGMMA",
    ptx_a = PTX[a].ptx,
    mma_k = PTX[a].k,
    trans_b = PTX[a].trans_b,
    a_tma_type = PTX[a].tma,
    a8 = a == k.act and "false" or "true",
    rotate_w = rotate_w(k) and "true" or "false",
    stage_c_rows = smem.stage_c_rows(k),  -- the dense epilogue's chunk of staged rows
    folds_scales = partials.folds_scales(k, a) and "true" or "false", -- W4A8: block scales in the weights
    moe = k.op == "moe" and "true" or "false",
    dequant = dequant,
    scales = scales,
    partials = { "mgen_ptx.cuh", "mgen_swizzle.cuh", "mgen_launch.cuh", "formats/mgen_scales.cuh", "wgmma/mgen_wgmma.cuh",
                 "wgmma/mgen_tma.cuh", "wgmma/mgen_wgmma_sched.h", dequant_partial },
    acc_operands = acc_operands,
    acc_bindings = acc_bindings,
    a_operands = a_operands,
    b_operand = b_operand,
    sm_min = k.arch,
    sm_max = k.arch,                      -- sm_90a code runs on sm_90 only
    smem_bytes = smem_bytes(k),
    producer_regs = producer_regs(k),
    producers = producers(k),
    consumer_regs = consumer_regs(k),
    max_splits = MAX_SPLITS,
    min_split_tiles = MIN_SPLIT_TILES,
    raster_band = k.op == "moe" and MOE_BAND or 0,
    band_l2_bytes = DENSE_BAND_L2_BYTES,
    steps = k.tile_k // PTX[a].k,        -- wgmma per stage
    overlap = overlap(k) and "true" or "false",
    acc_scales = acc_scales(k) and "true" or "false",
    acc_overlap = acc_overlap(k) and "true" or "false",
    a8_steps = a8_steps(k) and "true" or "false",
    ring_passes = ring_passes(k) and "true" or "false",
    keep_operand = string.format("%%%d", acc + 5),  -- mma_into()'s accumulate flag
    scale_rows = scale_rows,
    scale_bytes = scale_bytes,
    zeros = zero_rows > 0 and "true" or "false",
    zero_rows = zero_rows,
    zero_row_bytes = zero_row_bytes,
    zero_stage_bytes = zero_stage_bytes,
    stored_scale_bytes = scheme.scale_bytes, -- per channel too: where the zero rows start
    blocks_per_sm = 1,
    default_rank = rank(name),
    params = { warpgroups = k.warpgroups, stages = k.stages, max_splits = MAX_SPLITS, -- M.params
               min_split_tiles = MIN_SPLIT_TILES, acc_scales = acc_scales(k) and 1 or 0 },
    summary = string.format("wgmma (sm_90a) %s%s activations x %s weights, %s scales, %dx%dx%d tile",
                            k.op == "moe" and "grouped (moe) GEMM, " or "",
                            a == k.act and k.act or a .. " (" .. k.act .. " output)", k.wfmt,
                            scales_summary, k.tile_m, k.tile_n, k.tile_k),
  })
end

-- The bank proof's model (gen/lua/banks.lua): every shared-memory access of the template. The
-- consumers' W words are a waived 4-way conflict in moe, without rotate_w (M.w_waiver says why).
M.smem_accesses = smem.accesses
M.smem_launch = smem.launch
M.smem_kinds = smem.kinds     -- its access kinds beyond the LSU's (tma, wgmma, sync)
M.smem_explain = smem.explain -- and what --explain says of them

return M
