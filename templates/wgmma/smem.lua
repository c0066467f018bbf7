-- templates/wgmma/smem.lua -- every shared-memory access of the wgmma kernels, lane by lane, as
-- byte offsets into their shared-memory buffers: what gen/lua/banks.lua proves. A mirror of
-- the kernel body (include/mgen_wgmma_body.cuh: Ring, produce(), dequant(), issue(), release(),
-- fixup()): change both together; the names below are the body's and kernel.cu.tpl's
-- (functions and constants, not line numbers, which went stale). Required by wgmma/spec.lua
-- (M.smem_accesses, M.smem_launch).
--
-- Shared memory of one block (struct Ring, set up at the kernel's start), from a 1 KiB aligned base:
--
--   | A stage 0 .. s-1                | W stage 0 .. s-1                 | S stage 0 .. s-1     | Z stage 0 .. s-1   | full[s] empty[s] flag |
--   | tile_m rows x 128 B, SW128:     | 4 steps x kChunk (tile_n x 8 B), | scale_rows x tile_n  | zero_rows x        | 8 B each, then 4 B    |
--   | chunk c of row r at c ^ (r % 8) | the packed layout, contiguous    | x scale_bytes        | tile_n / 2 B (u4)  |                       |
--   0                                 stages x kABytes                   + stages x kWBytes     + stages x kSBytes   + stages x kZBytes
--
-- kABytes = tile_m x 128 (a multiple of 1 KiB: the kABytes static_assert) and kWBytes = 32 x tile_n (a multiple
-- of 128; kSBytes = scale_rows x tile_n x scale_bytes, a multiple of 64; kZBytes = zero_rows x tile_n / 2
-- rounded up to 128, 0 without zero points), so every stage of A starts 1 KiB aligned (the 128-byte swizzle is applied by the
-- hardware on address bits 4-9: the atoms must be) and every stage of W and the barriers start
-- on 128-byte boundaries: offsets in stage 0 have the banks of every stage. One instance is one
-- warp-wide instruction of one warp per stage (for the copy engine: see below).
--
-- Who touches shared memory, per stage i of the ring:
--   * the copy engine (TMA): the A box, the W box, the scale box and the zero box (u4). Not warp instructions: a
--     producer thread (lane 0 of producer warp s % producers) issues them and the engine writes whole 128-byte lines (a row of the
--     SW128 box is a permutation of its own 8 chunks; W's and the scales' rows are contiguous). Modelled with
--     kind "tma": 16-byte chunks as pseudo-lanes, 8 per phase (one 128-byte line per wavefront):
--     it shows every line whole, i.e. conflict-free by construction. ncu does not count these in
--     the LSU's shared wavefronts (the "ld"/"st" rows of --shape).
--   * wgmma (issue()): each consumer warpgroup's 4 steps read the A stage through the K-major
--     SW128 descriptor (mgen_wgmma.cuh desc_sw128_lo/_at: 8-row atoms 1 KiB apart, +32 B per step).
--     Kind "wgmma": one 8-row x 16-byte core matrix per phase, as ldmatrix's 8x8 matrix.
--   * the consumers' ld.shared.b32 of W (dequant()): word 4 lane + j of tile 4 c + j, where j is
--     the lane's tile (kernel.cu.tpl `tile`): in moe the warp, lanes 16 B apart, a 4-way conflict
--     of the mma packed layout, waived (M.w_waiver); in dense (rotate_w) (warp + lane / 8) % 4,
--     32 banks; in the e4m3 layout j = warp, word 32 j + lane, one wavefront.
--   * the consumers' scale loads, one per scale row of the stage: the pair at 64 c + 8 g + 2 j of the step's
--     row (g = lane / 4): 8 distinct words per warp in 8 banks, the 4 lanes of a group broadcast.
--   * with zero points (u4), the consumers' zero loads, one per zero row of the stage: word 8 c + g
--     of the row (zero_pairs()): 8 distinct words per warp in 8 banks, the 4 lanes of a group broadcast.
--     A stage that keeps the stage before's zero rows in registers (mgen_wgmma_body.cuh kZKeep) skips them:
--     the accesses modelled are the ones a reading stage makes.
--   * mbarriers (the kernel's init, produce(), dequant(), release()) and split-K's flag (fixup()): one 8-byte
--     barrier (or the 4-byte flag) per instruction, one lane or every lane on the same word:
--     1 wavefront whatever the lanes, listed for completeness (event "sync"/"split").
--   * the dense epilogue (store(), kCRows): each consumer warpgroup's staging rows (stage_c_bytes:
--     min(16, tile_m) rows of 128 bytes, 16-byte chunk c of row r at c ^ (r % 8)), after the
--     route's place: st.shared.b16 of each value at its row and column, then ld.shared.v4 of
--     16 bytes (8 columns) of a row per thread; the moe op's store_moe() stores straight to global memory.
--   * the moe op (kernel.cu.tpl kMoe): A is not a TMA box but gathered (mgen_wgmma_body.cuh gather_a()): each lane of
--     the stage's producer warp copies 16-byte chunk lane % 8 of rows lane / 8 + 4 i (cp.async,
--     LDGSTS) into the same SW128 places, after reading the row's A row from its warp's table of
--     the segment's rows (producer_rows(), at each segment's start; after the flag), every lane
--     arrives on full(s); store_moe() reads a row's C row and weight from its consumer
--     warpgroup's table (consumer_rows()).
local M = {}

-- The one Lua swizzle (templates/common/smem.lua, which gen.swizzle_agree checks against
-- templates/common/mgen_swizzle.h). CU_TENSOR_MAP_SWIZZLE_128B is Swizzle<3,4,3>: bits 7-9 of
-- the byte offset (row % 8) XORed into bits 4-6 (the 16-byte chunk).
local common = require("common.smem")
local swizzle = common.swizzle
local function sw128(offset) return swizzle(3, 4, 3, offset) end

-- Dense FP16/BF16 wgmma on sm_90: 4096 FLOP per clock per SM (H100/H200: 989 TFLOP/s at
-- 1.83 GHz x 132 SMs); shared memory: one 128-byte wavefront per clock.
local TENSOR_FLOP_PER_CLK = 4096

-- addrs[lane + 1] = fn(lane), or false where fn returns nil (inactive lane).
local lanes = common.lanes

-- The access kinds of this model that are not LSU instructions (gen/lua/banks.lua knows those:
-- ld, st, ldgsts, ldsm), modelled in the same terms though not calibrated by ncu per lane:
-- lanes per phase (nil: by width, as an LSU access) and whether ncu's LSU shared-memory
-- counters leave them out (`pseudo`: --explain's launch totals say so). Not warp instructions:
--   tma    the copy engine's writes (cp.async.bulk[.tensor]), 16-byte chunks as pseudo-lanes,
--          8 per phase: it writes 128-byte lines, a whole line one wavefront;
--   wgmma  the tensor core's descriptor reads of a shared-memory operand, one 8-row x 16-byte
--          core matrix per phase, as ldmatrix;
--   sync   mbarrier operations: one 8-byte word per instruction.
M.kinds = {
  tma = { phase_lanes = 8, pseudo = true },
  wgmma = { phase_lanes = 8, pseudo = true },
  sync = {},
}
-- What --explain prints of them: below the model's description, and below the launch totals.
M.explain = {
  model = { "Hopper: copy-engine writes (tma) as 16-byte pseudo-lanes, 8 per 128-byte line; wgmma's",
            "descriptor reads one 8-row x 16-byte core matrix per phase; mbarriers (sync) one word." },
  launch = { "(tma and wgmma rows count the model's 32-chunk groups, not instructions, and are not",
             "in ncu's LSU shared-memory counters: compare the ld and st rows)" },
}

-- An access table `a` whose instances fill(add) lists (add(label, fn), fn(lane) -> offset or
-- nil), memoized on `deps` (the fields its offsets and text depend on). An access of one of
-- this model's kinds carries its lanes per phase (banks.lua).
local memo = {}
local function access(deps, a, fill)
  a.phase_lanes = M.kinds[a.kind] and M.kinds[a.kind].phase_lanes
  local parts = { a.name }
  for i, d in ipairs(deps) do parts[i + 1] = tostring(d) end
  local key = table.concat(parts, ",")
  if memo[key] then return memo[key] end
  a.instances = {}
  fill(function(label, fn) a.instances[#a.instances + 1] = { label = label, addrs = lanes(fn) } end)
  memo[key] = a
  return a
end

-- Why the W reads' 4-way conflict is accepted in the mma layout (16-bit A) of a tile whose lanes
-- keep their warp's W tile (rotate_w false: the moe op), with kernel k's numbers (the waiver's
-- text). Dense tiles rotate (lane_tile()); the e4m3 layout (W4A8) has no conflict.
function M.w_waiver(k)
  local groups, loads = k.tile_n // 64, k.tile_k // 16  -- 64-column groups; ld.shared.b32 per warp per stage
  local excess = groups * 4 * loads * 3                -- 4 wavefronts each, 1 needed
  local tensor = groups * 2 * 64 * k.tile_m * k.tile_k // TENSOR_FLOP_PER_CLK
  return string.format("mma packed layout: lanes 16 B apart, 4 wavefronts per 32 words; %d "
    .. "loads per warp per stage = %d excess wavefronts per stage vs %d tensor clocks "
    .. "(%d wgmma m64n%dk16) = %d%%; kept: the lanes' tiles rotated (rotate_w, as dense tiles "
    .. "are) would split store_moe()'s writes of a warp's part of a row into four 32-byte "
    .. "sectors (dense stages C in shared memory first: bench/notes/v67.md item 1); fix: the "
    .. "route's rows staged as store() stages dense tiles, then the rotation",
    loads, excess, tensor, groups * k.steps, k.tile_m, (100 * excess + tensor // 2) // tensor)
end

-- The moe op's route tables after the barriers and the flag (mgen_wgmma_body.cuh producer_rows,
-- consumer_rows): each of its MOE_PRODUCERS producer warps' A rows (tile_m words), then each
-- consumer warpgroup's two tables of C rows and router weights (2 tile_m words each). spec.lua
-- counts their bytes (route_bytes) into the kernel's shared memory; dense has none.
M.MOE_PRODUCERS = 4
local function consumer_route_offset(k) return 4 * M.MOE_PRODUCERS * k.tile_m end
function M.route_bytes(k)
  if k.op ~= "moe" then return 0 end
  return consumer_route_offset(k) + 2 * 8 * k.tile_m * k.warpgroups
end

-- The dense epilogue's staging rows (mgen_wgmma_body.cuh store(), kernel.cu.tpl kCBytes):
-- min(16, tile_m) rows of one 64-column group (128 bytes) per consumer warpgroup; spec.lua
-- counts them into the kernel's shared memory. The moe op has none (store_moe()).
function M.stage_c_rows(k) return math.min(16, k.tile_m) end
local stage_c_rows = M.stage_c_rows
function M.stage_c_bytes(k)
  if k.op == "moe" then return 0 end
  return stage_c_rows(k) * 128 * k.warpgroups
end
-- store()'s place of byte `byte` of staged row `row` (mgen_wgmma_body.cuh staged()): the
-- 128-byte swizzle of the A stages, 16-byte chunk c at c ^ (row % 8).
local function staged(row, byte) return sw128(row * 128 + byte) end

-- The tile (of a 64-column group's four) whose columns a consumer lane's fragment rows hold
-- (kernel.cu.tpl `tile`): the warp's own, or with rotate_w (spec.lua) the warp's rotated by
-- lane / 8.
local function lane_tile(rotate, warp, lane)
  if not rotate then return warp end
  return (warp + lane // 8) % 4
end

local function build(k)
  local list = {}
  local a8, rotate = k.a8 == "true", k.rotate_w == "true"
  local wg, steps = k.warpgroups, k.steps    -- steps: wgmma per stage (k16, or W4A8's k32)
  local tiles = k.tile_k // 16               -- 16-deep tiles of packed W per stage (kSteps)
  -- The consumers' 64-column groups: group grp is consumer grp // (groups / wg)'s, one m64
  -- wgmma per step; its W words, scales and wgmma reads are those of a 64-column consumer.
  local groups = k.tile_n // 64
  local chunk = k.tile_n * 8                 -- kChunk: W of one 16-deep step
  local a_bytes = k.tile_m * 128             -- kABytes: a 128-byte row of K per row of A

  -- moe: gather_a(), instance i: lane l copies chunk l % 8 of row l / 8 + 4 i into its SW128
  -- place, after the ld.shared of that row's A row (4 distinct words a warp: broadcasts).
  local moe = k.op == "moe"
  -- the route's tables (route_bytes): the proof takes producer warp 0's and consumer warpgroup
  -- 0's first
  local route = 16 * k.stages + 16
  local consumer_route = route + consumer_route_offset(k)
  if moe then
    list[#list + 1] = access({ "moe", k.tile_m }, { name = "A gather cp.async", buffer = "A stage",
      kind = "ldgsts", instr = "cp.async.cg 16", width = 16, event = "stage" }, function(add)
      for i = 0, k.tile_m // 4 - 1 do
        add(string.format("producer warp, rows %d-%d", 4 * i, 4 * i + 3), function(lane)
          local r = lane // 8 + 4 * i
          return sw128(r * 128 + (lane % 8) * 16)
        end)
      end
    end)
    list[#list + 1] = access({ "moe", k.tile_m, k.stages }, { name = "route A row ld.shared", buffer = "barriers",
      kind = "ld", instr = "ld.shared.b32", width = 4, event = "stage" }, function(add)
      for i = 0, k.tile_m // 4 - 1 do
        add(string.format("producer warp, rows %d-%d", 4 * i, 4 * i + 3),
          function(lane) return route + 4 * (lane // 8 + 4 * i) end)
      end
    end)
    -- producer_rows(): lane l writes rows l + 32 i of its warp's table; consumer_rows(): thread
    -- x of a warpgroup rows x + 128 i, its C row and its weight (one round of 32 rows a warp each)
    list[#list + 1] = access({ "moe", k.tile_m, k.stages, "st" }, { name = "route st.shared", buffer = "barriers",
      kind = "st", instr = "st.shared.b32", width = 4, event = "tile" }, function(add)
      for w = 0, (k.tile_m + 31) // 32 - 1 do
        add(string.format("producer warp, rows %d-%d, A rows", 32 * w, 32 * w + 31), function(lane)
          local r = 32 * w + lane
          if r < k.tile_m then return route + 4 * r end
        end)
        for part = 0, 1 do
          add(string.format("consumer warp %d, %s", w % 4, ({ "C rows", "router weights" })[part + 1]),
            function(lane)
              local r = 32 * w + lane
              if r < k.tile_m then return consumer_route + 4 * (part * k.tile_m + r) end
            end)
        end
      end
    end)
    -- store_moe(): rows 8 i + 2 t + j of each warp (t = lane % 4): 4 distinct words, broadcast
    list[#list + 1] = access({ "moe", k.tile_m, k.stages, "ld" }, { name = "route C row ld.shared", buffer = "barriers",
      kind = "ld", instr = "ld.shared.b32", width = 4, event = "tile" }, function(add)
      for i = 0, k.tile_m // 8 - 1 do
        for j = 0, 1 do
          for part = 1, 2 do
            add(string.format("consumer warp, rows %d-%d, %s", 8 * i, 8 * i + 7, part == 1 and "C row" or "weight"),
              function(lane) return consumer_route + 4 * ((part - 1) * k.tile_m + 8 * i + 2 * (lane % 4) + j) end)
          end
        end
      end
    end)
  end
  -- produce(): the TMA box, tile_m rows x 64 elements: row r's 16-byte chunk c at
  -- r * 128 + 16 * (c ^ r % 8) (mgen_tma.cuh encode_rows_sw128). 32 chunks (4 rows) per
  -- instance; the engine's own order is not visible, only that lines are whole.
  if not moe then list[#list + 1] = access({ k.tile_m }, { name = "A TMA write", buffer = "A stage",
    kind = "tma", instr = "bulk.tensor.2d", width = 16, event = "stage" }, function(add)
    for r0 = 0, k.tile_m - 1, 4 do
      add(string.format("copy engine, rows %d-%d", r0, r0 + 3), function(lane)
        return sw128((r0 + lane // 8) * 128 + (lane % 8) * 16)
      end)
    end
  end) end
  -- produce(): one TMA box of steps rows x kChunk bytes (tile_n columns of 8 bytes), row after
  -- row: each step's chunk contiguous.
  list[#list + 1] = access({ k.tile_n }, { name = "W TMA write", buffer = "W stage",
    kind = "tma", instr = "bulk.tensor.2d", width = 16, event = "stage" }, function(add)
    for st = 0, tiles - 1 do
      for b = 0, chunk - 1, 512 do
        add(string.format("copy engine, step %d, bytes %d-%d", st, b, b + 511), function(lane)
          return st * chunk + b + lane * 16
        end)
      end
    end
  end)

  -- produce(): one TMA box of the stage's scale rows x tile_n scales, row after row.
  local srow = k.tile_n * k.scale_bytes
  if k.scale_rows > 0 then list[#list + 1] = access({ k.tile_n, k.scale_rows, k.scale_bytes }, { name = "S TMA write",
    buffer = "S stage", kind = "tma", instr = "bulk.tensor.2d", width = 16, event = "stage" },
    function(add)
    for r = 0, k.scale_rows - 1 do
      for b = 0, srow - 1, 512 do
        add(string.format("copy engine, scale row %d, bytes %d-%d", r, b, math.min(b + 511, srow - 1)),
          function(lane)
            if b + lane * 16 < srow then return r * srow + b + lane * 16 end
          end)
      end
    end
  end) end

  -- produce(): with zero points, one TMA box of the stage's zero rows x tile_n / 2 bytes, row
  -- after row.
  local zrow = k.zero_row_bytes
  if k.zero_rows > 0 then list[#list + 1] = access({ k.tile_n, k.zero_rows }, { name = "Z TMA write",
    buffer = "Z stage", kind = "tma", instr = "bulk.tensor.2d", width = 16, event = "stage" },
    function(add)
    local bytes = k.zero_rows * zrow
    for b = 0, bytes - 1, 512 do
      add(string.format("copy engine, zero rows, bytes %d-%d", b, math.min(b + 511, bytes - 1)),
        function(lane)
          if b + lane * 16 < bytes then return b + lane * 16 end
        end)
    end
  end) end

  -- dequant(): the scale pair of each scale row of the stage (step st uses row
  -- st * scale_rows / steps), position 64 c + 8 g + 2 j, j the lane's tile (lane_tile()):
  -- ld.shared.b32 of two 2-byte scales, ld.shared.u16 of two bytes.
  if k.scale_rows > 0 then
    list[#list + 1] = access({ groups, k.tile_n, k.scale_rows, k.scale_bytes, rotate }, { name = "S ld.shared",
      buffer = "S stage", kind = "ld", instr = k.scale_bytes == 2 and "ld.shared.b32" or "ld.shared.u16",
      width = 2 * k.scale_bytes, event = "stage" }, function(add)
      for c = 0, groups - 1 do
        for warp = 0, 3 do
          for r = 0, k.scale_rows - 1 do
            add(string.format("columns %d-%d, warp %d, scale row %d", 64 * c, 64 * c + 63, warp, r), function(lane)
              return r * srow + (64 * c + 8 * (lane // 4) + 2 * lane_tile(rotate, warp, lane)) * k.scale_bytes
            end)
          end
        end
      end
    end)
  end

  -- zero_pairs(): the zero word of each zero row of the stage, word 8 c + g of the row
  -- (ld.shared.b32; pair j of it, the lane's tile, is the lane's).
  if k.zero_rows > 0 then
    list[#list + 1] = access({ groups, k.tile_n, k.zero_rows }, { name = "Z ld.shared",
      buffer = "Z stage", kind = "ld", instr = "ld.shared.b32", width = 4, event = "stage" }, function(add)
      for c = 0, groups - 1 do
        for warp = 0, 3 do
          for r = 0, k.zero_rows - 1 do
            add(string.format("columns %d-%d, warp %d, zero row %d", 64 * c, 64 * c + 63, warp, r), function(lane)
              return r * zrow + (8 * c + lane // 4) * 4
            end)
          end
        end
      end
    end)
  end

  -- issue(): wgmma step st of every consumer warpgroup reads, per 16-row block,
  -- the four core matrices rows (0-7, 8-15) x K chunks (2 st, 2 st + 1): pseudo-lane l is row
  -- l % 16, chunk 2 st + l / 16 (ldmatrix.x4's order; an 8-row tile has only rows 0-7), at the descriptor's address
  -- a_of(s) + 32 st + 128 row, swizzled by the hardware (desc_sw128_lo/_at, layout type 1 = SW128).
  assert(a_bytes % 1024 == 0, "stages of A are 1 KiB aligned (the kABytes static_assert)")
  local rows = math.min(16, k.tile_m)        -- rows per instance: 16, or all 8 of an 8-row tile
  list[#list + 1] = access({ groups, k.tile_m, steps }, { name = "A wgmma read", buffer = "A stage",
    kind = "wgmma", instr = "wgmma.mma_async", width = 16, event = "stage" }, function(add)
    for c = 0, groups - 1 do
      for st = 0, steps - 1 do
        for b = 0, k.tile_m // rows - 1 do
          add(string.format("columns %d-%d, step %d, rows %d-%d", 64 * c, 64 * c + 63, st, rows * b, rows * b + rows - 1),
            function(lane)
              if (lane & 15) >= rows then return nil end  -- an 8-row tile: two core matrices
              return sw128((rows * b + (lane & 15)) * 128 + (2 * st + (lane >> 4)) * 16)
            end)
        end
      end
    end
  end)

  -- dequant(): words + st * kChunk, words = w_of(s) + (128 c + 4 lane + j) * 4 in the mma
  -- layout, (128 c + 32 j + lane) * 4 in the e4m3 layout (W4A8: a tile's words together), j
  -- the lane's tile (lane_tile()).
  list[#list + 1] = access({ groups, k.tile_m, tiles, chunk, a8, rotate }, { name = "W ld.shared",
    buffer = "W stage", kind = "ld", instr = "ld.shared.b32", width = 4, event = "stage",
    waived = not a8 and not rotate and M.w_waiver(k) or nil }, function(add)
    for c = 0, groups - 1 do
      for warp = 0, 3 do
        for st = 0, tiles - 1 do
          add(string.format("columns %d-%d, warp %d, step %d", 64 * c, 64 * c + 63, warp, st), function(lane)
            local j = lane_tile(rotate, warp, lane)
            return st * chunk + (128 * c + (a8 and 32 * j + lane or 4 * lane + j)) * 4
          end)
        end
      end
    end
  end)

  -- store() (dense): per chunk of staged rows, warp w's st.shared.b16 of rows 8 q + 2 t (+ 1)
  -- at columns 16 j + g (+ 8), j the lane's tile (lane_tile()), then its ld.shared.v4 of
  -- 16-byte chunk l % 8 of row 4 w + l / 8 (an 8-row tile: warps 0 and 1). Offsets in
  -- warpgroup 0's rows; every warpgroup's are the same 128-byte multiples apart.
  if not moe then
    local rows = stage_c_rows(k)
    list[#list + 1] = access({ k.tile_m, rotate, "st" }, { name = "C stage st.shared", buffer = "C rows",
      kind = "st", instr = "st.shared.b16", width = 2, event = "tile" }, function(add)
      for warp = 0, 3 do
        for q = 0, rows // 8 - 1 do
          for odd = 0, 1 do
            for half = 0, 1 do
              add(string.format("warp %d, rows %d-%d %s, columns %s", warp, 8 * q, 8 * q + 7,
                odd == 0 and "even" or "odd", half == 0 and "lo" or "hi"), function(lane)
                local j = lane_tile(rotate, warp, lane)
                return staged(8 * q + 2 * (lane % 4) + odd, 2 * (16 * j + lane // 4 + 8 * half))
              end)
            end
          end
        end
      end
    end)
    list[#list + 1] = access({ k.tile_m, "ld" }, { name = "C stage ld.shared", buffer = "C rows",
      kind = "ld", instr = "ld.shared.v4.b32", width = 16, event = "tile" }, function(add)
      for warp = 0, math.min(3, rows // 4 - 1) do  -- (an 8-row tile: warps 2 and 3 read none)
        add(string.format("warp %d", warp), function(lane)
          local row = 4 * warp + lane // 8
          if row < rows then return staged(row, 16 * (lane % 8)) end
        end)
      end
    end)
  end

  -- Barriers (offsets in the barrier area: full[s] at 8 s, empty[s] at 8 (stages + s), the
  -- flag at 16 stages; the kernel's ring setup). Stage 0's stand for every stage: one word per instruction.
  local empty0, flag = 8 * k.stages, 16 * k.stages
  list[#list + 1] = access({ k.stages }, { name = "mbarrier init", buffer = "barriers",
    kind = "sync", instr = "mbarrier.init", width = 8, event = "sync" }, function(add)
    for s = 0, k.stages - 1 do  -- the kernel's mbar_init loop, thread 0
      add(string.format("thread 0, full[%d]", s), function(l) if l == 0 then return 8 * s end end)
      add(string.format("thread 0, empty[%d]", s),
        function(l) if l == 0 then return empty0 + 8 * s end end)
    end
  end)
  list[#list + 1] = access({ k.stages, moe }, { name = "producer mbarrier", buffer = "barriers",
    kind = "sync", instr = "mbarrier.*", width = 8, event = "sync" }, function(add)
    -- produce(): try_wait empty(s), arrive.expect_tx full(s), by lane 0 of producer warp
    -- s % producers (spec.lua): one lane per instruction whichever warp.
    add("producer lane 0, try_wait empty[0]", function(l) if l == 0 then return empty0 end end)
    add("producer lane 0, expect_tx full[0]", function(l) if l == 0 then return 0 end end)
    -- moe: every lane of the producer warp arrives on full(s) after its gather
    if moe then add("producer warp, arrive full[0]", function() return 0 end) end
  end)
  list[#list + 1] = access({ wg, k.stages }, { name = "consumer mbarrier", buffer = "barriers",
    kind = "sync", instr = "mbarrier.*", width = 8, event = "sync" }, function(add)
    for c = 0, wg - 1 do
      for warp = 0, 3 do  -- dequant(): every lane waits on full(s); release(): lane 0 arrives
        add(string.format("warpgroup %d, warp %d, try_wait full[0]", c, warp), function() return 0 end)
        add(string.format("warpgroup %d, warp %d, arrive empty[0]", c, warp),
          function(l) if l == 0 then return empty0 end end)
      end
    end
  end)
  -- fixup(), with K split: thread 0 of consumer 0 stores the flag, then every consumer thread
  -- loads the one word: real st/ld.shared, counted by ncu.
  list[#list + 1] = access({ k.stages }, { name = "flag st.shared", buffer = "barriers",
    kind = "st", instr = "st.shared.b32", width = 4, event = "split" }, function(add)
    add("warpgroup 0, warp 0", function(l) if l == 0 then return flag end end)
  end)
  list[#list + 1] = access({ wg, k.stages }, { name = "flag ld.shared", buffer = "barriers",
    kind = "ld", instr = "ld.shared.b32", width = 4, event = "split" }, function(add)
    for c = 0, wg - 1 do
      for warp = 0, 3 do
        add(string.format("warpgroup %d, warp %d", c, warp), function() return flag end)
      end
    end
  end)
  return list
end

-- The accesses of kernel k (rows: unused; the TMA box, the wgmma read and the staged epilogue
-- take all tile_m rows whatever M).
local lists = {}
function M.accesses(k)
  local key = table.concat({ k.tile_m, k.tile_n, k.tile_k, k.warpgroups, k.stages, k.steps,
                            k.scale_rows, k.scale_bytes, k.zero_rows, k.op }, ",")
  if lists[key] == nil then lists[key] = build(k) end
  return lists[key]
end

-- How often each event happens in one launch on shape = { m, n, k, sms }, as the kernel divides
-- the work (templates/wgmma/include/mgen_wgmma_sched.h, a mirror: tests/gen/plan_agree.sh
-- compares the two on shapes of every branch, tests/gen/banks_test.lua
-- checks its numbers by hand): "stage" once per unit (every tile's K once, whichever block runs
-- it), "split" once per piece of a tile that blocks share (each meets in fixup()). "sync" is
-- not counted: try_wait spins a data-dependent number of times.
-- mgen_wgmma_schedule (with a workspace): { grid, dp_tiles }.
local function schedule(tiles, sms, k_tiles, most, depth)
  if tiles >= sms then
    local waves = (tiles + sms - 1) // sms
    if 10 * tiles >= 9 * waves * sms then return sms, tiles end
    return sms, tiles >= 2 * sms and (tiles // sms - 1) * sms or 0
  end
  local splits = math.max(1, math.min(sms // tiles, k_tiles // depth, most))
  if 10 * tiles * splits >= 9 * sms or splits < sms // tiles then
    return tiles * splits, splits == 1 and tiles or 0
  end
  return math.max(tiles, math.min(sms, tiles * k_tiles // depth, tiles * most)), 0
end

function M.launch(k, shape)
  local m_slabs = (shape.m + k.tile_m - 1) // k.tile_m
  local tiles = m_slabs * ((shape.n + k.tile_n - 1) // k.tile_n)
  local k_total = (shape.k + k.tile_k - 1) // k.tile_k
  local grid, dp = schedule(tiles, shape.sms, k_total, k.max_splits, k.min_split_tiles)
  -- (moe: the same plan, which the kernel makes over the live slabs' tiles: shape.m is those rows)
  local sk_units = (tiles - dp) * k_total
  local pieces = 0
  for b = 0, grid - 1 do  -- each block's stream-K range, segment by segment
    local u, e = sk_units * b // grid, sk_units * (b + 1) // grid
    while u < e do
      local run = math.min(e - u, k_total - u % k_total)
      if run < k_total then pieces = pieces + 1 end
      u = u + run
    end
  end
  local out = { { event = "stage", rows = k.tile_m, times = tiles * k_total } }
  if pieces > 0 then out[#out + 1] = { event = "split", rows = k.tile_m, times = pieces } end
  -- "tile": store_moe()'s route reads, or the dense store()'s staged rows: per 64-column group
  -- of a warpgroup, tile_m / min(16, tile_m) chunks (the model lists one chunk and one group)
  if k.op == "moe" then out[#out + 1] = { event = "tile", rows = k.tile_m, times = tiles }
  else out[#out + 1] = { event = "tile", rows = k.tile_m,
    times = tiles * (k.tile_n // 64) * (k.tile_m // stage_c_rows(k)) } end
  return out, { grid = grid, dp_tiles = dp, pieces = pieces }
end

return M
