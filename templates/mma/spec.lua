-- templates/mma/spec.lua -- the mma.sync family: Marlin-style W4A16 kernels for sm_80+.
-- Data (axes) plus pure functions (valid, derive). Adding a value to an axis is one line.
local M = {}
local smem = require("mma.smem") -- templates/mma/smem.lua: the shared-memory access model
local formats = require("formats") -- templates/formats.lua: acts, wfmts, schemes, layouts
local partials = require("formats.partials") -- the format partials' structs per format name

M.family = "mma"
M.template = "templates/mma/kernel.cu.tpl"
-- The packed layouts it reads, by architecture token: sm80 and sm90 kernels (the same code,
-- sized for each one's shared memory) read the mma layout with FP16/BF16 activations; sm89,
-- the first architecture with FP8 conversions (cvt e4m3x2, mgen_ptx.cuh), names the W4A8
-- decode kernels: E4M3 activations (the layout row's a_type) on weights in the e4m3 layout,
-- whose words are m16n8k32 .e4m3 A fragments (formats/<wfmt>/mma_e4m3.cuh), so one packing
-- serves them and the wgmma family's W4A8 kernels and the runtime picks either per shape.
-- They run on sm_89 and later, sized for sm_89's shared memory.
local LAYOUT_OF_ARCH = { [80] = "mma", [89] = "e4m3", [90] = "mma" }
for _, l in pairs(LAYOUT_OF_ARCH) do
  assert(formats.layout[l] and formats.read_by(l, M.family),
         "formats.lua has no layout '" .. l .. "' read by the mma family")
end
local function layout_of(k) return LAYOUT_OF_ARCH[k.arch] end
-- The activations' type: the layout's a_type (one byte: E4M3), else the act itself.
local A8_BYTES = 1
local A8_CHAIN = 128  -- K depth of a run of FP8 MMAs at most, before its sums go to FP32 (group_run)
local function a8(k) return formats.layout[layout_of(k)].a_type ~= false end
local function a_bytes(k) return a8(k) and A8_BYTES or formats.act[k.act].bytes end
-- K depth of one MMA step: m16n8k16 (16-bit), m16n8k32 (E4M3). Either is 32 bytes of an A row.
local function step_k(k) return a8(k) and 32 or 16 end
-- Whether its W4A8 partial folds the block scales into the E4M3 weights (partials.lua).
local function folds(k) return a8(k) and partials.folds_scales(k, formats.layout[layout_of(k)].a_type) end

-- The kernel name (gen/lua/naming.lua), e.g. mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3:
-- architecture token, activation, format, group (gc: per channel), tile MxNxK, cp.async
-- stages, warps, Swizzle<bits,base,shift> of the A tile (swnone: none).
M.name = {
  "sm{arch}",
  "{act:word}",
  "{wfmt:word}",
  { "g{group}", alias = { "gc", when = { group = 0 } } },
  "{tile_m}x{tile_n}x{tile_k}",
  "s{stages}",
  "w{warps}",
  { "sw{swz_bits}x{swz_base}x{swz_shift}",
    alias = { "swnone", when = { swz_bits = 0 }, requires = { swz_base = 0, swz_shift = 0 } } },
}
-- Within a key and tile, the table lists kernels by pipeline depth, then warps.
M.sort = { "stages", "warps" }

-- The axes over the format table: every activation type, every weight format, and the union of
-- the schemes' group sizes (valid() keeps a weight format's own).
local function all_groups()
  local seen, out = {}, {}
  for _, s in ipairs(formats.schemes) do
    for _, g in ipairs(s.groups) do
      if not seen[g] then seen[g], out[#out + 1] = true, g end
    end
  end
  table.sort(out)
  return out
end

M.axes = {
  { name = "arch", values = {
    80,                                   -- mma.sync + cp.async + ldmatrix: Ampere and later
    89,                                   -- W4A8: FP8 mma.sync (the e4m3 layout, LAYOUT_OF_ARCH)
    90,                                   -- the same code with sm_90's 227 KB: deeper pipelines
  } },
  { name = "op", values = formats.names(formats.ops) }, -- what the kernel computes (formats.ops)
  { name = "act", values = formats.names(formats.acts) },
  { name = "wfmt", values = formats.names(formats.wfmts) },
  { name = "group", values = all_groups() }, -- K elements per scale; 0 = one scale per column
  { name = "tile", values = {             -- threadblock tile: M rows x N columns x K depth
    { m = 8, n = 64, k = 128 },           -- decode (M <= 8), weights as the MMA's A operand
    { m = 8, n = 128, k = 128 },          -- (swap_ab below): half the mma.sync of a 16-row tile
    { m = 8, n = 256, k = 128 },
    { m = 8, n = 64, k = 256 },           -- decode: half the stages (barriers, waits) per byte
    { m = 8, n = 128, k = 256 },
    { m = 8, n = 256, k = 256 },
    { m = 16, n = 64, k = 64 },
    { m = 16, n = 64, k = 128 },
    { m = 16, n = 128, k = 64 },
    { m = 16, n = 128, k = 128 },         -- decode (M <= 16): many blocks, deep K per stage
    { m = 16, n = 256, k = 64 },
    { m = 16, n = 256, k = 128 },
    { m = 16, n = 64, k = 256 },
    { m = 16, n = 128, k = 256 },
    { m = 16, n = 256, k = 256 },
    { m = 32, n = 64, k = 64 },
    { m = 32, n = 64, k = 128 },
    { m = 32, n = 128, k = 64 },
    { m = 32, n = 128, k = 128 },
    { m = 32, n = 256, k = 64 },
    { m = 32, n = 256, k = 128 },
    { m = 48, n = 64, k = 64 },
    { m = 48, n = 64, k = 128 },
    { m = 48, n = 128, k = 64 },
    { m = 48, n = 128, k = 128 },
    { m = 48, n = 256, k = 64 },
    { m = 48, n = 256, k = 128 },
    { m = 64, n = 64, k = 64 },
    { m = 64, n = 64, k = 128 },
    { m = 64, n = 128, k = 64 },
    { m = 64, n = 128, k = 128 },
    { m = 64, n = 256, k = 64 },          -- prefill: M > 32 in slabs of 64 rows
    { m = 64, n = 256, k = 128 },
  } },
  { name = "stages", values = {           -- cp.async pipeline depth; valid() caps it by SMEM
    2,
    3,
    4,
    5,
    6,
    7,
    8,
  } },
  { name = "warps", values = {
    4,
    8,
  } },
  { name = "swz", values = {              -- Swizzle<bits,base,shift> on byte offsets of A rows;
    { bits = 0, base = 0, shift = 0 },    -- none (the bank proof rejects it: 8-way ldmatrix)
    { bits = 1, base = 4, shift = 3 },    -- base 4: 16-byte vectors stay whole
    { bits = 2, base = 4, shift = 3 },
    { bits = 3, base = 4, shift = 3 },    -- rows of 128 B (tile_k 64): conflict-free
    { bits = 1, base = 4, shift = 4 },
    { bits = 2, base = 4, shift = 4 },
    { bits = 3, base = 4, shift = 4 },    -- rows of 256 B (tile_k 128): conflict-free
    { bits = 3, base = 4, shift = 5 },    -- rows of 512 B (tile_k 256)
  } },
}

-- The default build: the kernels chosen by measurement, per key (act_wfmt_group), written by
-- bench/sweep_select.lua into templates/mma/defaults.lua: for each key, the smallest set
-- (greedy cover) that comes within 3% of the fastest valid configuration at every point of the
-- H200 sweep (all 3088 configurations x 8 shapes x 13 M; bench/results/sweep-h200.csv.xz, bench/notes/sweep.md).
-- Position in a key's list = default_rank, the cost model's tie-break. `marlin-gen --space
-- full` emits every valid, bank-conflict-free configuration instead (ranked after the set).
local rank
-- The W4A8 kernels of the groups the wgmma family does not take (g32, g64): templates/mma/defaults_w4a8.lua.
-- The other operations' kernels (moe): templates/mma/op_defaults.lua, per op and key (the
-- measured cover bench/moe_cover.py writes, or hand picked until a sweep measures the op).
M.defaults, rank = require("default_set").load({ "mma.defaults", { "mma.defaults_w4a8", twins = false } },
                                                 "mma.op_defaults")

-- Shared memory per block, by compute capability (bytes a block may opt in to), and per SM:
-- templates/devices.lua.
local devices = require("devices")
local SMEM_LIMIT, SMEM_PER_SM = {}, {}
for sm, d in pairs(devices.sm) do SMEM_LIMIT[sm], SMEM_PER_SM[sm] = d.smem_block, d.smem_sm end
local SMEM_STATIC = 4                     -- reduce_grid's __shared__ int, beside the dynamic part
local SMEM_RESERVED = devices.smem_reserved -- per block, taken by the system

-- The scales of kernel k: its scheme (formats.schemes), the mgen_scales.cuh struct, bytes per
-- scale in shared memory (0 per channel: those stay in global memory), and the summary's words.
local function scales_of(k)
  local scheme, struct, summary = partials.scales_of(formats, k)
  local _, scale_bytes = partials.stage_scales(formats, k)
  return scheme, struct, scale_bytes, summary
end

-- Co-resident blocks per SM the launch assumes: decode tiles let two blocks share an SM.
local function blocks_per_sm(k)
  return k.tile_m <= 16 and 2 or 1
end

-- Whether `bytes` of dynamic shared memory fit one block of k (beside reduce_grid's static
-- int), and blocks_per_sm(k) such blocks one SM, of k's architecture or of `arch`.
local function block_fits(k, bytes, arch)
  return bytes + SMEM_STATIC <= SMEM_LIMIT[arch or k.arch]
end
local function sm_fits(k, bytes, arch)
  local blocks = blocks_per_sm(k)
  return blocks == 1 or blocks * (bytes + SMEM_STATIC + SMEM_RESERVED) <= SMEM_PER_SM[arch or k.arch]
end

-- The block's warp grid: n_warps side by side along N (64 columns each) x k_warps splitting
-- each stage's K; k_warps is nil where the warps do not split into whole warp columns (valid()
-- rejects those).
local function warp_grid(k)
  local n_warps = k.tile_n // 64
  if n_warps == 0 or k.tile_n % 64 ~= 0 or k.warps % n_warps ~= 0 then return n_warps, nil end
  return n_warps, k.warps // n_warps
end

-- Where a swapped tile can multiply group scales into its FP32 sums once per group instead of
-- into every dequantized weight: a warp's consecutive steps of one group (step_chunk of them,
-- within one stage) accumulate into their own registers, then one FMA per sum folds them in (8
-- scale conversions and 16 FMA per warp and run against 16 __hmul2 per step). Needs the group
-- to end inside a stage (group <= tile_k) and at least two steps per warp and run to pay.
-- The warps of a stage take its steps in runs of step_chunk (warp w: steps w c .. w c + c - 1,
-- then (k_warps + w) c ..): c = min(group / 16, k_iters), so a run never crosses a group and is
-- as long as the group or the warp's share of the stage allows. Interleaved steps (c = 1, the
-- row tiles' order) gave a warp only group / 16 / k_warps steps of a group: none for g32 (MXFP4,
-- u4b8 g32) on a tile with two or four K-warps.
-- W4A8 (a8) tiles run every step's sums through such runs: an E4M3 weight cannot carry a
-- scale, and Hopper's FP8 MMA keeps its running sum to ~13-14 bits (tests/gpu/
-- test_w4a8_gpu.c), so a chain of m16n8k32 steps stays within one group and 128 deep (the
-- chain that test's bound and the wgmma kernels' stages assume) and is then added into the
-- FP32 totals, times the group's scale or as is; runs of 32-deep steps,
-- c = min(min(group or tile_k, 128) / 32, k_iters).
local function group_run(k)
  local _, k_warps = warp_grid(k)
  if k_warps == nil then return 1 end
  local k_iters = k.tile_k // step_k(k) // k_warps
  if a8(k) then  -- (scales folded into the weights: chains as per channel)
    local per_chain = (k.group == 0 or folds(k)) and k.tile_k or k.group
    local depth = math.min(per_chain, k.tile_k, A8_CHAIN)
    return math.max(1, math.min(depth // step_k(k), k_iters))
  end
  if k.group == 0 or k.group > k.tile_k then return 1 end
  return math.min(k.group // 16, k_iters)
end

local function group_scales_on_sums(k)
  return group_run(k) >= 2
end

-- Decode tiles swap the MMA's operands (C^T = W A^T): the dequantized weights are the A operand
-- of mma.m16n8k16 (16 output columns) and 8 rows of activations its B operand (n8). An 8-row
-- tile always: every mma.sync multiplies 256 weights by live rows instead of 128 weights by 16
-- rows of which at most 8 are live. A 16-row tile (two 8-row B operands, two MMAs per weight
-- fragment, the same MMA count as unswapped) only where its group scales go on the FP32 sums
-- (acc_scales): that is what it gains, 4-15% at M = 1-32 for g128 / MXFP4 (H200 A/B, bench/notes/v25.md
-- item 2), while NVFP4 (g16, scales on every weight either way) measured 0-3% slower swapped.
-- The accumulators' columns are the weight columns whose scales the lane holds. The packed
-- layout serves unchanged: a lane's 8 codes of a 16x16 tile are its B fragments of two 8-column
-- blocks and, reordered, its A fragment.
-- W4A8 tiles are swapped always (valid(): 8 or 16 rows; the wgmma family serves more).
local function swap_ab(k)
  return a8(k) or k.tile_m == 8 or (k.tile_m == 16 and group_scales_on_sums(k))
end

local function acc_scales(k)
  if a8(k) then return k.group > 0 and not folds(k) end
  return swap_ab(k) and group_scales_on_sums(k)
end

-- Whether a warp's runs of steps accumulate apart and are folded into the totals (above).
local function fold_runs(k)
  return a8(k) or acc_scales(k)
end

-- Steps a warp takes in a row (above); 1 (interleaved) where nothing is folded.
local function step_chunk(k)
  return fold_runs(k) and group_run(k) or 1
end

-- Byte sizes of the shared-memory buffers (one pipeline stage, and the reduction tile).
local function smem_layout(k)
  local a_stage = k.tile_m * k.tile_k * a_bytes(k)
  local b_stage = k.tile_k * k.tile_n // 2
  local s_rows, scale_bytes = partials.stage_scales(formats, k)
  local s_stage = s_rows * k.tile_n * scale_bytes
  -- Zero points (u4): the stage's zero rows, tile_n / 2 bytes each, one per scale row (per
  -- channel one, copied with every stage: tile_n / 2 bytes beside tile_k * tile_n / 2 of codes),
  -- padded so that the next stage starts on 128 bytes.
  local z_rows = partials.zeros_of(formats, k) and math.max(s_rows, 1) or 0
  local z_stage = (z_rows * k.tile_n // 2 + 127) // 128 * 128
  -- floats; +8 keeps the row-major fragment stores (float2) at 2 wavefronts, +4 the swapped
  -- tiles' column-major ones (one float per lane, rows 2t and 2t + 1) at 1
  local red_stride = k.tile_n + (swap_ab(k) and 4 or 8)
  local red = k.tile_m * red_stride * 4
  local stages = k.stages * (a_stage + b_stage + s_stage + z_stage)
  -- Reduction slices: where the block's shared memory allows, each K-warp stores its sums into
  -- a tile of its own and one block-wide pass adds them (two barriers); otherwise the K-warps
  -- add into one tile in turn (a barrier each). Same order of additions, same sums. Four K-warps
  -- and more only: measured (H200, bench/notes/v22.md) +1.5-2.5% with four, nothing with two.
  local _, k_warps = warp_grid(k)
  local slices = 1
  if k_warps and k_warps >= 4 and block_fits(k, stages + k_warps * red) and sm_fits(k, stages + k_warps * red) then
    slices = k_warps
  end
  return { a_stage = a_stage, b_stage = b_stage, s_rows = s_rows, s_stage = s_stage,
           z_rows = z_rows, z_stage = z_stage, red_stride = red_stride, red = red, red_slices = slices,
           one_tile = stages + red,       -- what valid() judges: slices never decide validity
           total = stages + slices * red }
end

-- mgen_kernel_desc.params of an mma kernel, in this order: marlin-gen renders the list into
-- <out>/include/mgen_params_mma.h (MGEN_MMA_<NAME> indexes, MGEN_MMA_PARAMS, the names), which
-- runtime/src/families/mma.c reads them by; derive gives the values by name.
M.params = {
  { name = "stages", doc = "cp.async pipeline stages" },
  { name = "warps", doc = "warps per block" },
  { name = "swz_bits", doc = "Swizzle<bits, base, shift> of the A tile" },
  { name = "swz_base", doc = "its base: low address bits kept (16-byte vectors whole)" },
  { name = "swz_shift", doc = "and its shift: distance of the XOR source bits" },
  { name = "acc_scales", doc = "1: group scales on the FP32 sums once per group (acc_scales)" },
}

function M.valid(k)
  local threads = k.warps * 32
  local scheme, why = formats.scheme_of(k.wfmt, k.group)
  if not scheme then return false, "GROUP: " .. why end
  local covered, what = partials.covers(formats, k)
  if not covered then return false, "FORMAT: " .. what end
  local layout = layout_of(k)
  if not formats.packed_in(k.wfmt, layout, k.group) then
    return false, string.format("LAYOUT: %s is not packed in the %s layout (sm%d)", k.wfmt, layout, k.arch)
  end
  if a8(k) then  -- W4A8 decode: dense, swapped, whole 128-byte A rows, groups of whole k32 steps
    if k.op ~= "dense" then return false, "OP: the W4A8 kernels (sm89, the e4m3 layout) are dense only" end
    if k.tile_m > 16 then
      return false, string.format("TILE: W4A8 tile_m %d: the sm89 kernels are 8- and 16-row decode tiles (wgmma serves more)", k.tile_m)
    end
    if k.tile_k < 128 then
      return false, string.format("TILE: W4A8 tile_k %d: E4M3 rows of less than 128 bytes", k.tile_k)
    end
    if k.group % step_k(k) ~= 0 then
      return false, string.format("GROUP: %d is not a multiple of the 32-deep FP8 MMA", k.group)
    end
  end
  if k.tile_n % 64 ~= 0 then
    return false, string.format("TILE: tile_n %d is not a multiple of 64 (one warp column)", k.tile_n)
  end
  local n_warps, k_warps = warp_grid(k)
  if not k_warps then
    return false, string.format("WARPS: %d warps do not split into %d warp columns", k.warps, n_warps)
  end
  if (k.tile_k // step_k(k)) % k_warps ~= 0 then
    return false, string.format("WARPS: %d steps of %d do not split over %d warps",
                                k.tile_k // step_k(k), step_k(k), k_warps)
  end
  if (k.tile_m % 16 ~= 0 and k.tile_m ~= 8) or k.tile_m > 64 then
    return false, string.format("TILE: tile_m %d must be 8, 16, 32, 48 or 64", k.tile_m)
  end
  if k.group > 0 and k.group % 16 ~= 0 then
    return false, string.format("GROUP: %d is not a multiple of the 16-deep MMA", k.group)
  end
  if k.group > 0 and k.group < k.tile_k and k.tile_k % k.group ~= 0 then
    return false, string.format("GROUP: %d does not divide tile_k %d", k.group, k.tile_k)
  end
  -- Whether a swizzle is bank-conflict-free is the generator's proof (M.smem_accesses); here
  -- only what makes it a swizzle: 16-byte vectors whole (cp.async and ldmatrix move whole
  -- vectors) and a bijection (the XOR source bits above the bits they flip).
  if k.swz_bits > 0 and k.swz_base < 4 then
    return false, string.format("SWIZZLE: base %d < 4 splits 16-byte vectors", k.swz_base)
  end
  if k.swz_bits > 0 and k.swz_shift < k.swz_bits then
    return false, string.format("SWIZZLE: shift %d < bits %d is not a bijection", k.swz_shift,
                                k.swz_bits)
  end
  local s = smem_layout(k)
  local kib = function(b) return string.format("%.1f KiB", b / 1024) end
  if not block_fits(k, s.one_tile) then
    return false, string.format("SMEM: %d stages x %s + %s reduction = %s > %s on sm%d",
                                k.stages, kib(s.a_stage + s.b_stage + s.s_stage + s.z_stage), kib(s.red),
                                kib(s.one_tile + SMEM_STATIC), kib(SMEM_LIMIT[k.arch]), k.arch)
  end
  -- The earliest architecture whose kernel is valid serves (its block and its blocks per SM fit
  -- there): a tile of two blocks per SM that fits one block but not two on sm80 is sm90's.
  for arch, layout in pairs(LAYOUT_OF_ARCH) do
    if arch < k.arch and layout == layout_of(k) and block_fits(k, s.one_tile, arch) and sm_fits(k, s.one_tile, arch) then
      return false, string.format("ARCH: %s fits sm%d's %s; the sm%d kernel serves sm%d",
                                  kib(s.one_tile + SMEM_STATIC), arch, kib(SMEM_LIMIT[arch]), arch, k.arch)
    end
  end
  if not sm_fits(k, s.one_tile) then
    return false, string.format("OCCUPANCY: %d blocks x %s > %s per SM on sm%d", blocks_per_sm(k),
                                kib(s.one_tile + SMEM_STATIC + SMEM_RESERVED),
                                kib(SMEM_PER_SM[k.arch]), k.arch)
  end
  -- Each thread moves whole 16-byte vectors of A and B per stage.
  if (s.a_stage // 16) % threads ~= 0 and threads % (s.a_stage // 16) ~= 0 then
    return false, "COPY: A stage is not a whole number of 16-byte vectors per thread"
  end
  if (s.b_stage // 16) % threads ~= 0 then
    return false, "COPY: B stage is not a whole number of 16-byte vectors per thread"
  end
  return true
end

function M.derive(k, name)
  local s = smem_layout(k)
  local threads = k.warps * 32
  local n_warps, k_warps = warp_grid(k)
  local grouped = k.group > 0
  local _, scales, scale_bytes, scales_summary = scales_of(k)
  local a_type = formats.layout[layout_of(k)].a_type or nil  -- "e4m3" (W4A8), else the act's
  local dequant_partial, dequant = partials.dequant_of(k, "mma", a_type)
  return formats.kernel_fields(k, layout_of(k), {
    family_enum = "MGEN_FAMILY_MMA",
    dequant = dequant,
    a8 = a8(k),                             -- E4M3 activations, FP32 row scales (W4A8)
    folds_scales = folds(k),                -- W4A8: block scales folded into the E4M3 weights
    mma = a8(k) and "mma_f16" or partials.act[k.act].mma, -- W4A8: E4M3 as FP16 (kernel.cu.tpl)
    step_k = step_k(k),                     -- K depth of one MMA step
    scales = scales,
    scale_bytes = scale_bytes,
    partials = { "mgen_ptx.cuh", "mgen_swizzle.cuh", "mgen_launch.cuh", "formats/mgen_scales.cuh",
                 dequant_partial },
    sm_min = k.arch,
    sm_max = 0,                             -- MGEN_SM_NO_MAX: later architectures run the PTX
    params = { stages = k.stages, warps = k.warps, swz_bits = k.swz_bits, swz_base = k.swz_base,
               swz_shift = k.swz_shift, acc_scales = acc_scales(k) and 1 or 0 }, -- M.params
    threads = threads,
    blocks_per_sm = blocks_per_sm(k),
    m_blocks = swap_ab(k) and 0 or k.tile_m // 16, -- 16-row MMA blocks per tile (0: swap_ab)
    tok_blocks = swap_ab(k) and k.tile_m // 8 or 0, -- swapped tiles: 8-row B operands per tile
    moe = k.op == "moe",                    -- grouped over experts: rows gathered by a route
    swap_ab = swap_ab(k),                   -- weights as the MMA's A operand (8- and 16-row tiles)
    acc_scales = acc_scales(k),             -- group scales on the FP32 sums, once per group
    fold_runs = fold_runs(k),               -- a warp's runs of steps summed apart, then folded
    n_warps = n_warps,                      -- warps side by side along N (64 columns each)
    k_warps = k_warps,                      -- warps splitting each stage's K
    k_iters = k.tile_k // step_k(k) // k_warps, -- MMA steps per warp per stage
    step_chunk = step_chunk(k),             -- of them, taken in a row (1: interleaved)
    kb_per_stage = k.tile_k // 16,
    a_row_vecs = k.tile_k * a_bytes(k) // 16, -- 16-byte vectors per A row
    a_stage_vecs = s.a_stage // 16,
    b_stage_vecs = s.b_stage // 16,
    b_row_vecs = k.tile_n * 8 // 16,        -- 16-byte vectors of one 16-deep packed row
    s_rows = s.s_rows,
    s_stage_vecs = s.s_stage // 16,
    s_row_vecs = k.tile_n * scale_bytes // 16,
    zeros = s.z_rows > 0,                   -- u4: zero points in the dequantization
    z_rows = s.z_rows,                      -- zero rows per stage (one per scale row; per channel 1)
    z_row_vecs = k.tile_n // 32,            -- 16-byte vectors of one zero row (4 bits a column)
    z_stage_vecs = s.z_rows * k.tile_n // 32,
    z_stage_bytes = s.z_stage,
    group_blocks = grouped and (k.group // 16) or 0,      -- 16-deep k-blocks per group
    grouped = grouped,
    a_stage_bytes = s.a_stage,
    b_stage_bytes = s.b_stage,
    s_stage_bytes = s.s_stage,
    red_stride = s.red_stride,
    red_bytes = s.red,
    red_slices = s.red_slices,              -- reduction tiles: 1, or one per K-warp
    smem_bytes = s.total,
    default_rank = rank(name),
    summary = string.format("%s%s activations x %s weights, %s scales, %dx%dx%d tile, %d-stage cp.async",
                            k.op == "moe" and "grouped (moe) GEMM, " or "",
                            a8(k) and string.format("%s (FP32 row scales, %s output)", a_type, k.act) or k.act,
                            k.wfmt, scales_summary, k.tile_m, k.tile_n, k.tile_k, k.stages),
  })
end

-- The bank proof's model (gen/lua/banks.lua): every shared-memory access of the template.
M.smem_accesses = smem.accesses
M.smem_launch = smem.launch
M.smem_kinds = smem.kinds

return M
