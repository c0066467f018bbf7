-- templates/mma/smem.lua -- every shared-memory access of the mma kernels, lane by lane, as byte
-- offsets into their shared-memory buffers: what gen/lua/banks.lua proves bank-conflict-free. A
-- mirror of the kernel body (include/mgen_mma_body.cuh: Fetcher, compute, reduce_block,
-- add_slices, reduce_grid, store_c): change both together. Required by mma/spec.lua
-- (M.smem_accesses, M.smem_launch).
--
-- Shared memory of one block (offsets in bytes; every region starts on a 128-byte boundary,
-- which the template static_asserts, so the bank of an offset is the bank of its address):
--
--   stage 0                                stage 1 ...        reduction tile
--   | A: tile_m rows x tile_k  | B packed  | scales | zeros  | ...  | tile_m x (tile_n + 8) floats |
--   | swizzled rows of 16-B    | 16-deep   | s_rows | z_rows |      | row stride +8 floats          |
--   | vectors                  | rows      | x n    | x n/2  |      |                               |
--   0                          a_stage    +b_stage +s_stage       stages * stage bytes
--
-- (zeros: u4's zero points only, 4 bits a column, the region padded to 128 bytes.)
--
-- (red_slices reduction tiles one after another where the block's shared memory allows: one
-- per K-warp, each tile_m x (tile_n + 8) floats, a multiple of 128 bytes.)
--
-- Addresses are byte offsets from the start of the access's buffer (`buffer`: the A, B or
-- scale tile of stage 0, the reduction tile, the flag): buffers start on 128-byte boundaries,
-- and the other stages are the same pattern shifted by a multiple of 128 bytes, which moves no
-- bank. One instance is one warp-wide instruction of one warp in one loop iteration; every warp
-- of the block and every iteration is listed.
local M = {}

local common = require("common.smem") -- templates/common/smem.lua: swizzle, lanes

-- Swizzle<bits, base, shift> of templates/common/mgen_swizzle.cuh (CuTe's Swizzle<B,M,S>).
M.swizzle = common.swizzle

-- addrs[lane + 1] = fn(lane), or false where fn returns nil (inactive lane).
local lanes = common.lanes
M.lanes = lanes

-- Every access kind of this model is an LSU instruction gen/lua/banks.lua knows (ldsm, ld, st,
-- ldgsts): no kinds of its own.
M.kinds = {}

local function active(addrs)
  for _, x in ipairs(addrs) do
    if x then return true end
  end
  return false
end

-- An access: `a` holds its fields (name, buffer, kind, instr, width, event, waived; see
-- banks.lua) and fill(add) calls add(label, fn) once per instruction, fn(lane) giving the
-- lane's byte offset or nil. Memoized on `deps` (what the offsets depend on): kernels that
-- share them share the table, and banks.lua proves each table once. nil if no lane is active.
local memo = {}

local function access(deps, a, fill)
  local parts = { a.name }
  for i, d in ipairs(deps) do parts[i + 1] = tostring(d) end
  local key = table.concat(parts, ",")
  if memo[key] ~= nil then return memo[key] or nil end
  a.instances = {}
  fill(function(label, fn)
    local addrs = lanes(fn)
    if active(addrs) then a.instances[#a.instances + 1] = { label = label, addrs = addrs } end
  end)
  memo[key] = #a.instances > 0 and a
  return memo[key] or nil
end

-- A block-wide loop over `vecs` 16-byte vectors, vector v = threadIdx.x + i * threads, guarded
-- by v < vecs (cp.async rounds in fetch, the float4 loops of reduce_grid and store_c): one
-- instruction per round and warp, lane offsets offset(v).
local function vector_loop(k, vecs, offset)
  return function(add)
    for i = 0, (vecs + k.threads - 1) // k.threads - 1 do
      for w = 0, k.warps - 1 do
        add(string.format("round %d, warp %d", i, w), function(lane)
          local v = 32 * w + lane + i * k.threads
          if v < vecs then return offset(v) end
        end)
      end
    end
  end
end

-- Every warp (warp_n, warp_k) of the block, as the template numbers them.
local function warps(k, fn)
  for w = 0, k.warps - 1 do fn(w, w % k.n_warps, w // k.n_warps) end
end

-- The MMA step (16 deep, 32 with FP8 A: k.step_k; 32 bytes of an A row either way) a warp
-- takes i-th, as the template's step_of(): runs of step_chunk steps, the K-warps' runs side by
-- side.
local function step_of(k, warp_k, i)
  local c = k.step_chunk
  return (i // c) * (c * k.k_warps) + warp_k * c + i % c
end

-- The accesses of kernel k with `rows` live rows in the epilogue.
local function build(k, rows)
  local list = {}
  local function add(a) if a then list[#list + 1] = a end end
  local row_bytes = k.a_row_vecs * 16
  local function swz(offset) return M.swizzle(k.swz_bits, k.swz_base, k.swz_shift, offset) end
  local function linear(v) return v * 16 end
  local swz_bits, swz_base, swz_shift = k.swz_bits, k.swz_base, k.swz_shift

  -- fetch(): A rows under the swizzle, B and scales straight, 16 bytes per lane.
  local function copy_of(name, buffer)
    return { name = name, buffer = buffer, kind = "ldgsts", instr = "cp.async.cg 16 B",
      width = 16, event = "fetch" }
  end
  add(access({ k.warps, k.a_stage_vecs, k.a_row_vecs, swz_bits, swz_base, swz_shift },
    copy_of("A cp.async", "A tile"), vector_loop(k, k.a_stage_vecs, function(v)
      return swz((v // k.a_row_vecs) * row_bytes + (v % k.a_row_vecs) * 16)
    end)))
  add(access({ k.warps, k.b_stage_vecs }, copy_of("B cp.async", "B tile"),
    vector_loop(k, k.b_stage_vecs, linear)))
  -- Grouped, the zero rows (u4) follow the scale rows in the same copy loop (kSideVecs).
  if k.grouped then
    local side = k.s_stage_vecs + (k.zeros and k.z_stage_vecs or 0)
    add(access({ k.warps, side }, copy_of(k.zeros and "scales+zeros cp.async" or "scales cp.async",
      "scale tile"), vector_loop(k, side, linear)))
  elseif k.zeros then
    add(access({ k.warps, k.z_stage_vecs }, copy_of("zeros cp.async", "zero tile"),
      vector_loop(k, k.z_stage_vecs, linear)))
  end

  -- compute(): per 16-deep step kb of the warp, one ldmatrix.x4 per 16-row block (lane l gives
  -- row l % 16 of the block, 8-column half l / 16), one LDS.128 of packed B (512 contiguous bytes
  -- per warp), one load of the 8 scales of columns 16j + 8h + lane / 4 (Scales::Vec: 8 x
  -- scale_bytes; lanes with equal lane / 4 share it).
  -- Swapped 8-row tiles (swap_ab): one ldmatrix.x2 per step instead, lanes 0-7 rows 0-7 of K
  -- half 0, lanes 8-15 of K half 1 (lanes 16-31 give no address); swapped 16-row tiles one
  -- ldmatrix.x4 with lanes 16-31 doing the same for rows 8-15 (the MMAs' register pairs).
  local x2 = k.swap_ab and k.tile_m == 8
  local ldsm = x2 and "ldmatrix.x2" or "ldmatrix.x4"
  add(access({ k.warps, k.n_warps, k.k_warps, k.k_iters, k.step_chunk, k.m_blocks, k.a_row_vecs,
      swz_bits, swz_base, swz_shift, x2 },
    { name = "A " .. ldsm, buffer = "A tile", kind = "ldsm", instr = ldsm, width = 16,
      event = "stage" },
    function(add_inst)
      warps(k, function(w, _, warp_k)
        for i = 0, k.k_iters - 1 do
          local kb = step_of(k, warp_k, i)
          for mb = 0, (k.swap_ab and 1 or k.m_blocks) - 1 do
            add_inst(string.format("warp %d, kb %d, mb %d", w, kb, mb), function(lane)
              if k.swap_ab and not x2 then
                return swz(((lane & 7) + (lane >> 4) * 8) * row_bytes + (kb * 2 + ((lane >> 3) & 1)) * 16)
              elseif not x2 then
                return swz((mb * 16 + (lane & 15)) * row_bytes + (kb * 2 + (lane >> 4)) * 16)
              elseif lane < 16 then
                return swz((lane & 7) * row_bytes + (kb * 2 + (lane >> 3)) * 16)
              end
            end)
          end
        end
      end)
    end))
  -- W4A8 (a8, the e4m3 layout): a tile's 32 words together (word 32 j + lane of the warp's
  -- chunk), one ldmatrix.x4 per 16-deep row of the 32-deep step: lane l gives row l % 8 of
  -- matrix j = l / 8, the 16 bytes of words 32 j + 4 (l % 8) ..
  local rows_per_step = k.step_k // 16
  if k.a8 then
    add(access({ k.warps, k.n_warps, k.k_warps, k.k_iters, k.step_chunk, k.b_row_vecs, "a8" },
      { name = "B ldmatrix.x4", buffer = "B tile", kind = "ldsm", instr = "ldmatrix.x4", width = 16,
        event = "stage" },
      function(add_inst)
        warps(k, function(w, warp_n, warp_k)
          for i = 0, k.k_iters - 1 do
            local kb = step_of(k, warp_k, i) * rows_per_step
            for r = 0, rows_per_step - 1 do
              add_inst(string.format("warp %d, kb %d", w, kb + r), function(lane)
                return ((kb + r) * k.b_row_vecs + warp_n * 32) * 16 + (32 * (lane // 8) + 4 * (lane % 8)) * 4
              end)
            end
          end
        end)
      end))
  else
    add(access({ k.warps, k.n_warps, k.k_warps, k.k_iters, k.step_chunk, k.b_row_vecs },
      { name = "B LDS", buffer = "B tile", kind = "ld", instr = "LDS.128", width = 16,
        event = "stage" },
      function(add_inst)
        warps(k, function(w, warp_n, warp_k)
          for i = 0, k.k_iters - 1 do
            local kb = step_of(k, warp_k, i)
            add_inst(string.format("warp %d, kb %d", w, kb), function(lane)
              return (kb * k.b_row_vecs + warp_n * 32 + lane) * 16
            end)
          end
        end)
      end))
  end
  if k.grouped then
    -- Groups at least as deep as the stage: srow is the constant 0, so every step reads the
    -- same vector and nvcc loads it once per stage (seen in the SASS); else once per step.
    local one_row = k.group >= k.tile_k
    local width = 8 * k.scale_bytes
    add(access({ k.warps, k.n_warps, k.k_warps, k.k_iters, k.step_chunk, k.s_row_vecs, width,
        one_row and "one" or k.group, rows_per_step },
      { name = "scales LDS", buffer = "scale tile", kind = "ld", instr = "LDS." .. 8 * width,
        width = width, event = "stage" },
      function(add_inst)
        warps(k, function(w, warp_n, warp_k)
          for i = 0, (one_row and 1 or k.k_iters) - 1 do
            local kb = step_of(k, warp_k, i) * rows_per_step
            local srow = one_row and 0 or kb * 16 // k.group
            add_inst(string.format("warp %d, kb %d", w, kb), function(lane)
              return srow * k.s_row_vecs * 16 + (warp_n * 8 + lane // 4) * width
            end)
          end
        end)
      end))
  end

  if k.zeros then
    -- The zero word of the lane's 8 columns (lane / 4: 8 words, 32 bytes, the lanes of a word
    -- broadcast), from the stage's zero row of the step: once per stage where one row serves the
    -- stage (group >= tile_k, per channel: load_zeros before the loop), else once per step.
    local one_row = not k.grouped or k.group >= k.tile_k
    add(access({ k.warps, k.n_warps, k.k_warps, k.k_iters, k.step_chunk, k.z_row_vecs,
        one_row and "one" or k.group },
      { name = "zeros LDS", buffer = "zero tile", kind = "ld", instr = "LDS.32", width = 4,
        event = "stage" },
      function(add_inst)
        warps(k, function(w, warp_n, warp_k)
          for i = 0, (one_row and 1 or k.k_iters) - 1 do
            local kb = step_of(k, warp_k, i)
            local zrow = one_row and 0 or kb * 16 // k.group
            add_inst(string.format("warp %d, kb %d", w, kb), function(lane)
              return zrow * k.z_row_vecs * 16 + (warp_n * 8 + lane // 4) * 4
            end)
          end
        end)
      end))
  end

  -- reduce_block(): C fragments as float2, row g = lane / 4 (and g + 8), columns 2 * (lane % 4);
  -- with one tile per K-warp (red_slices > 1) every warp stores into its own, otherwise warp_k 0
  -- stores and the others load, add and store. Slices are whole multiples of 128 bytes apart
  -- (the template asserts it), so a warp's slice moves none of its banks: offsets are slice 0's.
  local sliced = k.red_slices > 1
  local function fragments(load)
    return function(add_inst)
      warps(k, function(w, warp_n, warp_k)
        if load and (warp_k == 0 or sliced) then return end
        for mb = 0, k.m_blocks - 1 do
          for j = 0, 3 do
            for h = 0, 1 do
              for half = 0, 1 do
                add_inst(string.format("warp %d, mb %d, j %d, h %d, rows +%d", w, mb, j, h,
                  8 * half), function(lane)
                  local row = mb * 16 + lane // 4 + 8 * half
                  local col = warp_n * 64 + j * 16 + h * 8 + (lane % 4) * 2
                  return (row * k.red_stride + col) * 4
                end)
              end
            end
          end
        end
      end)
    end
  end
  -- Swapped tiles: the C^T fragment of each 8-row block tb, one float per lane: row 8 tb + 2
  -- (lane % 4) + (e & 1), column 16j + 8 (e >> 1) + lane / 4.
  local function swapped(load)
    return function(add_inst)
      warps(k, function(w, warp_n, warp_k)
        if load and (warp_k == 0 or sliced) then return end
        for tb = 0, k.tok_blocks - 1 do
          for j = 0, 3 do
            for e = 0, 3 do
              add_inst(string.format("warp %d, tb %d, j %d, e %d", w, tb, j, e), function(lane)
                local row = tb * 8 + (lane % 4) * 2 + (e & 1)
                local col = warp_n * 64 + j * 16 + (e >> 1) * 8 + lane // 4
                return (row * k.red_stride + col) * 4
              end)
            end
          end
        end
      end)
    end
  end
  local red_deps = { k.warps, k.n_warps, k.m_blocks, k.red_stride, k.swap_ab, k.red_slices, k.tok_blocks }
  if k.swap_ab then
    add(access(red_deps, { name = "reduce STS", buffer = "reduction tile", kind = "st",
      instr = "STS.32", width = 4, event = "segment" }, swapped(false)))
    add(access(red_deps, { name = "reduce LDS", buffer = "reduction tile", kind = "ld",
      instr = "LDS.32", width = 4, event = "segment" }, swapped(true)))
  else
    add(access(red_deps, { name = "reduce STS", buffer = "reduction tile", kind = "st",
      instr = "STS.64", width = 8, event = "segment" }, fragments(false)))
    add(access(red_deps, { name = "reduce LDS", buffer = "reduction tile", kind = "ld",
      instr = "LDS.64", width = 8, event = "segment" }, fragments(true)))
  end

  -- add_slices(): the whole tile as float4 (row r, 4-float column c), one load per slice and a
  -- store into slice 0 (the same lane pattern in every slice).
  local vec4 = k.tile_n // 4
  local function float4(v) return ((v // vec4) * k.red_stride + (v % vec4) * 4) * 4 end
  if sliced then
    local slice_deps = { k.warps, k.tile_n, k.red_stride, k.tile_m, k.red_slices }
    local slice_bytes = k.tile_m * k.red_stride * 4
    add(access(slice_deps, { name = "slices LDS", buffer = "reduction tile", kind = "ld",
      instr = "LDS.128", width = 16, event = "segment" }, function(add_inst)
      for sl = 0, k.red_slices - 1 do
        vector_loop(k, k.tile_m * vec4, function(v) return float4(v) + sl * slice_bytes end)(
          function(label, fn) add_inst(string.format("slice %d, %s", sl, label), fn) end)
      end
    end))
    add(access(slice_deps, { name = "slices STS", buffer = "reduction tile", kind = "st",
      instr = "STS.128", width = 16, event = "segment" }, vector_loop(k, k.tile_m * vec4, float4)))
  end

  -- reduce_grid(): the tile to global as float4 (row r, 4-float column c), the arrival flag
  -- (a static __shared__ int: written by thread 0, read by all), and in the last block the sums.
  local tile_deps = { k.warps, k.tile_n, k.red_stride, rows }
  add(access(tile_deps, { name = "partial LDS", buffer = "reduction tile", kind = "ld",
    instr = "LDS.128", width = 16, event = "partial" }, vector_loop(k, rows * vec4, float4)))
  add(access({}, { name = "flag STS", buffer = "flag", kind = "st", instr = "STS.32", width = 4,
    event = "partial" }, function(add_inst)
    add_inst("warp 0", function(lane) if lane == 0 then return 0 end end)
  end))
  add(access({ k.warps }, { name = "flag LDS", buffer = "flag", kind = "ld", instr = "LDS.32",
    width = 4, event = "partial" }, function(add_inst)
    for w = 0, k.warps - 1 do add_inst(string.format("warp %d", w), function() return 0 end) end
  end))
  add(access(tile_deps, { name = "sum STS", buffer = "reduction tile", kind = "st",
    instr = "STS.128", width = 16, event = "sum" }, vector_loop(k, rows * vec4, float4)))

  -- store_c(): 8 floats per thread (8 output columns c8), read as two float4 32 bytes apart;
  -- lanes with bit 2 of c8 set read their high half first, so that lanes 4 apart (32 B apart)
  -- never meet in a bank within one instruction.
  local vec8 = k.tile_n // 8
  for first = 0, 1 do
    add(access(tile_deps, { name = "store_c LDS " .. (first == 0 and "1st" or "2nd"),
      buffer = "reduction tile", kind = "ld", instr = "LDS.128", width = 16, event = "store" },
      vector_loop(k, rows * vec8, function(v)
        local c8 = v % vec8
        local half = (first + (c8 // 4) % 2) % 2
        return ((v // vec8) * k.red_stride + c8 * 8 + 4 * half) * 4
      end)))
  end
  return list
end

-- The fields of k the accesses depend on: kernels equal on these share one list.
local fields = {
  "warps", "n_warps", "k_warps", "k_iters", "m_blocks", "tile_n", "tile_k", "swz_bits",
  "swz_base", "swz_shift", "a_row_vecs", "a_stage_vecs", "b_row_vecs", "b_stage_vecs",
  "grouped", "group", "s_row_vecs", "s_stage_vecs", "scale_bytes", "red_stride", "swap_ab",
  "red_slices", "tile_m", "tok_blocks", "step_chunk", "zeros", "z_row_vecs", "z_stage_vecs", "a8",
  "step_k",
}
local lists = {}

-- The accesses of kernel k (derived fields included) with `rows` live rows in the epilogue
-- (default tile_m), as banks.lua describes them; the same table for kernels with equal traffic.
function M.accesses(k, rows)
  rows = rows or k.tile_m
  local parts = { rows }
  for i, f in ipairs(fields) do parts[i + 1] = tostring(k[f]) end
  local key = table.concat(parts, ",")
  if lists[key] == nil then lists[key] = build(k, rows) end
  return lists[key]
end

-- How often each event of M.accesses happens in one launch on `shape` = { m, n, k, sms }, as the
-- template partitions the work (striped units, grid = min(units, sms * blocks_per_sm)):
-- a list of { event, rows, times }, per block (every warp of the block executes the event's
-- instances once). fetch/stage: once per unit; segment: once per (block, column) it touches;
-- partial: per segment of a split column; sum: per split column; store: per column.
function M.launch(k, shape)
  local m_slabs = (shape.m + k.tile_m - 1) // k.tile_m
  local n_tiles, k_tiles = shape.n // k.tile_n, shape.k // k.tile_k
  local units = m_slabs * n_tiles * k_tiles
  local grid = math.min(units, shape.sms * k.blocks_per_sm)
  local per = (units + grid - 1) // grid
  local counts, order = {}, {}
  local function bump(event, rows)
    local key = event .. "/" .. rows
    if counts[key] == nil then
      counts[key] = { event = event, rows = rows, times = 0 }
      order[#order + 1] = key
    end
    counts[key].times = counts[key].times + 1
  end
  for b = 0, grid - 1 do
    local u_begin = b * per
    local u_end = math.min(units, u_begin + per)
    for _ = u_begin, u_end - 1 do
      bump("fetch", k.tile_m)
      bump("stage", k.tile_m)
    end
    if u_begin < u_end then
      for col = u_begin // k_tiles, (u_end - 1) // k_tiles do
        local rows = math.min(k.tile_m, shape.m - (col // n_tiles) * k.tile_m)
        bump("segment", k.tile_m)
        if col * k_tiles >= u_begin and (col + 1) * k_tiles <= u_end then
          bump("store", rows)
        else
          bump("partial", rows)
          if col * k_tiles >= u_begin then -- the column's first block: count its sum once
            bump("sum", rows)
            bump("store", rows)
          end
        end
      end
    end
  end
  local out = {}
  for i, key in ipairs(order) do out[i] = counts[key] end
  return out, { units = units, grid = grid, per = per }
end

return M
