-- banks_test.lua -- the bank model (gen/lua/banks.lua) on hand-computed cases, the swizzle
-- tables of the design document, the mma family's shared-memory model (templates/mma/smem.lua
-- through mma/spec.lua) for each M tile, and the wgmma family's (templates/wgmma/smem.lua) for
-- each tile.
--   lua5.4 tests/gen/banks_test.lua gen/lua .
local lua_dir = assert(arg[1], "usage: banks_test.lua GEN_LUA_DIR SOURCE_ROOT")
local root = assert(arg[2], "usage: banks_test.lua GEN_LUA_DIR SOURCE_ROOT")
package.path = lua_dir .. "/?.lua;" .. package.path

local banks = require("banks")
local enumerate = require("enumerate")

package.path = debug.getinfo(1, "S").source:match("^@(.*[/\\])") .. "?.lua;" .. package.path
local t = require("testlib")
local test, eq, raises = t.test, t.eq, t.raises

-- addrs[lane + 1] = fn(lane) (nil: inactive): the models' own helper.
package.path = root .. "/templates/?.lua;" .. package.path
local lanes = require("mma.smem").lanes

-- wavefronts, min, ways of one instruction (kind "ld" unless given).
local function model(width, fn, kind)
  local r = banks.analyze(width, lanes(fn), kind or "ld")
  return r.wavefronts, r.min, r.ways, r
end

local function expect(width, fn, wavefronts, min, ways, what, kind)
  local w, m, y = model(width, fn, kind)
  eq(w, wavefronts, what .. ": wavefronts")
  eq(m, min, what .. ": minimum")
  eq(y, ways, what .. ": ways")
end

-- ---------------------------------------------------------------- the model, by hand

test("phases by width and kind", function()
  eq(banks.phase_lanes(16, "ldsm"), 8, "ldmatrix: one 8x8 matrix")
  eq(banks.phase_lanes(16, "ld"), 16, "LDS.128: half-warps")
  eq(banks.phase_lanes(16, "ldgsts"), 16, "cp.async 16 B: half-warps")
  eq(banks.phase_lanes(8, "st"), 32)
  eq(banks.phase_lanes(4, "ld"), 32)
  eq(banks.phase_lanes(2, "ld"), 32)
  eq(banks.phase_lanes(1, "ld"), 32)
end)

test("4-byte accesses: one phase of 32 lanes", function()
  -- lane l -> word l: banks 0..31 once each.
  expect(4, function(l) return 4 * l end, 1, 1, 1, "consecutive")
  -- every lane in bank 0, 32 different words: 32-way.
  expect(4, function(l) return 128 * l end, 32, 1, 32, "stride 128 B")
  -- one word for everybody: a broadcast, no conflict.
  expect(4, function() return 64 end, 1, 1, 1, "broadcast")
  -- stride 2 words: banks 0, 2, .., 30 twice each (words l*2 and l*2 + 32): 2-way.
  expect(4, function(l) return 8 * l end, 2, 1, 2, "stride 8 B")
  -- lanes l and l + 16 share word l: 16 words, 16 banks, no conflict; 64 bytes: min 1.
  expect(4, function(l) return 4 * (l % 16) end, 1, 1, 1, "pairs share words")
  -- 2-byte accesses: lanes 2w and 2w + 1 share word w.
  expect(2, function(l) return 2 * l end, 1, 1, 1, "halves")
end)

test("8-byte accesses: one phase of 32 lanes", function()
  expect(8, function(l) return 8 * l end, 2, 2, 1, "consecutive float2")
  -- The reduction tile's C fragments: row g = l / 4 (stride 72 floats = 288 B), column
  -- 2 * (l % 4): word 72 g + 2 q -> bank 8 g + 2 q (+1): rows g and g + 4 share the banks, 2
  -- words each, for 256 bytes: at the minimum (measured: 2 wavefronts per STS.64).
  expect(8, function(l) return ((l // 4) * 72 + (l % 4) * 2) * 4 end, 2, 2, 1, "stride 72 floats")
  -- Without the +8 padding (stride 64 floats) all 8 rows meet: 8 words a bank, 4-way.
  expect(8, function(l) return ((l // 4) * 64 + (l % 4) * 2) * 4 end, 8, 2, 4, "stride 64 floats")
  -- 8 vectors of 8 bytes, 4 lanes each (fe2m1 scales): 64 bytes, one wavefront (measured).
  expect(8, function(l) return 8 * (l // 4) end, 1, 1, 1, "shared vectors")
end)

test("16-byte accesses: two phases of 16 lanes", function()
  expect(16, function(l) return 16 * l end, 4, 4, 1, "512 contiguous bytes")
  -- store_c: two float4 per lane 32 bytes apart: lane l in banks 8l .. 8l + 3 (mod 32), so
  -- lanes l, l + 4, l + 8, l + 12 of a half-warp meet: 4 words, 256 bytes: 2-way (measured 8).
  expect(16, function(l) return 32 * l end, 8, 4, 2, "stride 32 B")
  -- the same 16 bytes for lanes with equal l / 4 (u4b8 scales): 4 vectors per half-warp,
  -- one wavefront each (measured: 2 per LDS.128).
  expect(16, function(l) return 16 * (l // 4) end, 2, 2, 1, "shared vectors")
  -- inactive lanes: only lanes 0-3, contiguous: one phase of 64 bytes.
  local w, m, _, r = model(16, function(l) if l < 4 then return 16 * l end end)
  eq(w, 1, "4 lanes: wavefronts")
  eq(m, 1, "4 lanes: minimum")
  eq(r.active, 4, "active lanes")
  eq(r.phases[2].wavefronts, 0, "an empty phase takes no wavefront")
end)

test("ldmatrix: unswizzled 128-byte rows are 8-way conflicted", function()
  -- ldmatrix.x4 over rows of 64 halves: lane l gives row l % 16, 16-byte column l / 16. Every
  -- row starts in bank 0, so the 8 rows of one matrix (phase) hit the same 4 banks.
  local w, m, y = model(16, function(l) return (l % 16) * 128 + (l // 16) * 16 end, "ldsm")
  eq(w, 32, "wavefronts (8 per phase)")
  eq(m, 4, "minimum")
  eq(y, 8, "ways")
end)

-- Swizzle<bits, base, shift> as in the design document (CuTe's), on any integer index.
local smem -- templates/mma/smem.lua, loaded below (its swizzle mirrors mgen_swizzle.h)
local read = t.reader(root)
local spec = enumerate.load_spec(read("templates/mma/spec.lua"), "templates/mma/spec.lua", read)
smem = assert(load(read("templates/mma/smem.lua"), "@templates/mma/smem.lua", "t",
  setmetatable({}, { __index = _G })))()

test("Swizzle<3,3,3> over rows of 64 halves is conflict-free for ldmatrix", function()
  -- Element (row r, column c) of a row-major tile of 64 halves at element index 64 r + c,
  -- swizzled in elements (base 3: 8 halves = 16 bytes stay together), then 2 bytes each.
  for kb = 0, 3 do -- the four 16-deep steps of a 64-deep row
    local w, m, y = model(16, function(l)
      local e = (l % 16) * 64 + (kb * 2 + l // 16) * 8
      return 2 * smem.swizzle(3, 3, 3, e)
    end, "ldsm")
    eq(w, 4, "kb " .. kb .. ": wavefronts")
    eq(m, 4, "kb " .. kb .. ": minimum")
    eq(y, 1, "kb " .. kb .. ": ways")
  end
  -- ... and the same in bytes: Swizzle<3,4,3> on byte offsets (the kernels' form).
  local w = model(16, function(l) return smem.swizzle(3, 4, 3, (l % 16) * 128 + (l // 16) * 16) end,
    "ldsm")
  eq(w, 4, "Swizzle<3,4,3> on bytes")
  -- Swizzle<3,4,4> on the same rows XORs row / 2: rows 2i and 2i + 1 of a matrix meet (2-way,
  -- measured 8 wavefronts); as a half-warp LDS.128 the same addresses would be at the minimum.
  local paired = function(l) return smem.swizzle(3, 4, 4, (l % 16) * 128 + (l // 16) * 16) end
  expect(16, paired, 8, 4, 2, "ldmatrix under Swizzle<3,4,4>", "ldsm")
  expect(16, paired, 4, 4, 1, "LDS.128 under Swizzle<3,4,4>", "ld")
end)

-- ---------------------------------------------------------------- the design document's tables

-- docs: reference/swizzle-bits-base-shift.zh.md, "更多例子": 0..63 as 8 x 8, row by row.
local doc_tables = {
  ["2,0,3"] = {
    { 0, 1, 2, 3, 4, 5, 6, 7 }, { 9, 8, 11, 10, 13, 12, 15, 14 },
    { 18, 19, 16, 17, 22, 23, 20, 21 }, { 27, 26, 25, 24, 31, 30, 29, 28 },
    { 32, 33, 34, 35, 36, 37, 38, 39 }, { 41, 40, 43, 42, 45, 44, 47, 46 },
    { 50, 51, 48, 49, 54, 55, 52, 53 }, { 59, 58, 57, 56, 63, 62, 61, 60 } },
  ["2,1,3"] = {
    { 0, 1, 2, 3, 4, 5, 6, 7 }, { 8, 9, 10, 11, 12, 13, 14, 15 },
    { 18, 19, 16, 17, 22, 23, 20, 21 }, { 26, 27, 24, 25, 30, 31, 28, 29 },
    { 36, 37, 38, 39, 32, 33, 34, 35 }, { 44, 45, 46, 47, 40, 41, 42, 43 },
    { 54, 55, 52, 53, 50, 51, 48, 49 }, { 62, 63, 60, 61, 58, 59, 56, 57 } },
  ["2,2,3"] = {
    { 0, 1, 2, 3, 4, 5, 6, 7 }, { 8, 9, 10, 11, 12, 13, 14, 15 },
    { 16, 17, 18, 19, 20, 21, 22, 23 }, { 24, 25, 26, 27, 28, 29, 30, 31 },
    { 36, 37, 38, 39, 32, 33, 34, 35 }, { 44, 45, 46, 47, 40, 41, 42, 43 },
    { 52, 53, 54, 55, 48, 49, 50, 51 }, { 60, 61, 62, 63, 56, 57, 58, 59 } },
  ["2,3,3"] = {
    { 0, 1, 2, 3, 4, 5, 6, 7 }, { 8, 9, 10, 11, 12, 13, 14, 15 },
    { 16, 17, 18, 19, 20, 21, 22, 23 }, { 24, 25, 26, 27, 28, 29, 30, 31 },
    { 32, 33, 34, 35, 36, 37, 38, 39 }, { 40, 41, 42, 43, 44, 45, 46, 47 },
    { 48, 49, 50, 51, 52, 53, 54, 55 }, { 56, 57, 58, 59, 60, 61, 62, 63 } },
}

test("the document's swizzle(2, base, 3) tables", function()
  for params, rows in pairs(doc_tables) do
    local b, s, h = params:match("(%d),(%d),(%d)")
    for r = 0, 7 do
      for c = 0, 7 do
        eq(smem.swizzle(tonumber(b), tonumber(s), tonumber(h), 8 * r + c), rows[r + 1][c + 1],
          string.format("Swizzle<%s>(%d)", params, 8 * r + c))
      end
    end
  end
  -- swizzle<2,0,3>: 8 -> 9 and 9 -> 8, the document's worked examples.
  eq(smem.swizzle(2, 0, 3, 8), 9)
  eq(smem.swizzle(2, 0, 3, 9), 8)
end)

test("the document's XOR tables of <3,3,3> and <2,3,3>", function()
  -- Row yyy, column zzz: the 16-byte group zzz of row yyy moves to zzz ^ yyy (the table's
  -- binary entries; its bracketed distances are not all consistent, so they are not checked).
  local xor333 = {
    "000 001 010 011 100 101 110 111", "001 000 011 010 101 100 111 110",
    "010 011 000 001 110 111 100 101", "011 010 001 000 111 110 101 100",
    "100 101 110 111 000 001 010 011", "101 100 111 110 001 000 011 010",
    "110 111 100 101 010 011 000 001", "111 110 101 100 011 010 001 000" }
  local function bin(v, n)
    local s = ""
    for i = n - 1, 0, -1 do s = s .. ((v >> i) & 1) end
    return s
  end
  for y = 0, 7 do
    local row = {}
    for z = 0, 7 do
      local out = smem.swizzle(3, 3, 3, (y << 6) | (z << 3) | 5)
      eq(out >> 6, y, "row bits unchanged")
      eq(out & 7, 5, "the 8 elements of a group stay in order")
      row[#row + 1] = bin((out >> 3) & 7, 3)
    end
    eq(table.concat(row, " "), xor333[y + 1], "<3,3,3> row " .. bin(y, 3))
  end
  for y = 0, 3 do
    for z = 0, 3 do
      eq((smem.swizzle(2, 3, 3, (y << 6) | (z << 3)) >> 3) & 3, z ~ y, "<2,3,3>")
    end
  end
end)

-- ---------------------------------------------------------------- the mma family's model

-- Every valid kernel of mma/spec.lua (derived and named), and by name.
local all = enumerate.run(spec, "templates/mma/spec.lua", { quiet = true })
local by_name = {}
for _, k in ipairs(all) do by_name[k.name] = k end

local function kernel(name)
  return by_name[name] or error(name .. ": not a valid kernel of templates/mma/spec.lua")
end

local function access(k, name)
  for _, a in ipairs(enumerate.smem_accesses(spec, "templates/mma/spec.lua", k)) do
    if a.name == name then return a, banks.prove_access(a) end
  end
  error("no access " .. name)
end

local function instance(a, label)
  for _, inst in ipairs(a.instances) do
    if inst.label == label then return inst end
  end
  error("no instance " .. label .. " of " .. a.name)
end

-- Per M tile: the ldmatrix count (warp columns x 16-deep steps x 16-row blocks, one per warp
-- per step and block), two lanes' addresses and banks worked by hand, and the totals.
test("A ldmatrix.x4 for each M tile, by hand", function()
  -- 16x128x128, 8 warps: 2 warp columns x 4 warps along K; 8 steps; 1 block: 16 ldmatrix.
  -- Rows of 256 B under <3,4,4>: row r, chunk c -> r*256 + 16 (c ^ (r & 7)) within its 128 B.
  local k = kernel("mgen_sm80_f16_u4b8_g128_16x128x128_s4_w8_sw3x4x4")
  local a, p = access(k, "A ldmatrix.x4")
  eq(p.instances, 16, "16x128x128 instructions")
  eq(p.wavefronts, 64, "16x128x128 wavefronts")
  eq(p.conflicts, 0, "16x128x128 conflicts")
  -- (swapped, its g128 scales on the sums: the K-warps take runs of step_chunk = 2 steps)
  -- warp 5 = (warp_n 1, warp_k 2); its step i = 1 is kb = 2 * 2 + 1 = 5; lane 3: row 3, chunk
  -- 10 = 3*256 + 160 = 928; bits 8..10 = 3 flip bits 4..6: 928 ^ 48 = 912, bank 228 % 32 = 4.
  eq(k.step_chunk, 2, "16x128x128 step_chunk")
  local inst = instance(a, "warp 5, kb 5, mb 0")
  eq(inst.addrs[4], 912, "lane 3 address")
  eq((inst.addrs[4] // 4) % 32, 4, "lane 3 bank")

  -- 32x256x64, 8 warps: 4 warp columns x 2 along K; 4 steps; 2 blocks: 32 ldmatrix.
  k = kernel("mgen_sm80_f16_u4b8_g128_32x256x64_s4_w8_sw3x4x3")
  a, p = access(k, "A ldmatrix.x4")
  eq(p.instances, 32, "32x256x64 instructions")
  eq(p.conflicts, 0, "32x256x64 conflicts")
  -- mb 1, kb 3, lane 20: row 16 + 4 = 20, chunk 6 + 1 = 7: 20*128 + 112 = 2672; bits 7..9 of
  -- 2672 = 20 & 7 = 4: 2672 ^ 64 = 2608, bank 652 % 32 = 12.
  -- (warp 4 = warp_n 0, warp_k 1 takes kb 1 and 3)
  eq(instance(a, "warp 4, kb 3, mb 1").addrs[21], 2608, "lane 20 address")

  -- 48x128x64, 4 warps: 2 warp columns x 2 along K; 4 steps; 3 blocks: 24 ldmatrix.
  k = kernel("mgen_sm80_f16_u4b8_g128_48x128x64_s4_w4_sw3x4x3")
  a, p = access(k, "A ldmatrix.x4")
  eq(p.instances, 24, "48x128x64 instructions")
  eq(p.conflicts, 0, "48x128x64 conflicts")
  -- mb 2, kb 1, lane 9: row 32 + 9 = 41, chunk 2: 41*128 + 32 = 5280; 41 & 7 = 1 flips bit 4:
  -- 5296, bank 1324 % 32 = 12. Lane 25: same row, chunk 3: 5296 ^ 16 = 5280, bank 8.
  inst = instance(a, "warp 2, kb 1, mb 2")
  eq(inst.addrs[10], 5296, "lane 9 address")
  eq((inst.addrs[10] // 4) % 32, 12, "lane 9 bank")
  eq(inst.addrs[26], 5280, "lane 25 address")
  eq((inst.addrs[26] // 4) % 32, 8, "lane 25 bank")

  -- 64x256x64, 8 warps: 4 x 2 warps; 4 steps; 4 blocks: 64 ldmatrix.
  k = kernel("mgen_sm80_f16_u4b8_g128_64x256x64_s4_w8_sw3x4x3")
  a, p = access(k, "A ldmatrix.x4")
  eq(p.instances, 64, "64x256x64 instructions")
  eq(p.wavefronts, 256, "64x256x64 wavefronts")
  -- mb 3, kb 0, lane 15: row 48 + 15 = 63, chunk 0: 8064; 63 & 7 = 7: 8064 ^ 112 = 8176.
  eq(instance(a, "warp 0, kb 0, mb 3").addrs[16], 8176, "lane 15 address")
end)

test("swizzles that do not spread 8 rows conflict, by hand", function()
  -- 128-byte rows (tile_k 64), XOR source bits = row bits: <1,4,3> spreads 2 rows (4-way),
  -- <2,4,3> 4 rows (2-way), <3,4,3> 8 (none); <3,4,4> takes row / 2 (2-way). 256-byte rows
  -- under <3,4,3>: bit 7 is the chunk's, so only row bits 8, 9 spread: rows r and r + 4
  -- meet (2-way); <2,4,4> spreads 4 rows (2-way).
  local cases = {
    { "mgen_sm80_f16_u4b8_g128_32x128x64_s4_w4_swnone", 8 },
    { "mgen_sm80_f16_u4b8_g128_32x128x64_s4_w4_sw1x4x3", 4 },
    { "mgen_sm80_f16_u4b8_g128_32x128x64_s4_w4_sw2x4x3", 2 },
    { "mgen_sm80_f16_u4b8_g128_32x128x64_s4_w4_sw3x4x3", 1 },
    { "mgen_sm80_f16_u4b8_g128_32x128x64_s4_w4_sw3x4x4", 2 }, -- bits 8..10 = row / 2: pairs meet
    { "mgen_sm80_f16_u4b8_g128_32x128x128_s4_w4_sw3x4x3", 2 },
    { "mgen_sm80_f16_u4b8_g128_32x128x128_s4_w4_sw2x4x4", 2 },
    { "mgen_sm80_f16_u4b8_g128_32x128x128_s4_w4_sw3x4x4", 1 },
  }
  for _, c in ipairs(cases) do
    local _, p = access(kernel(c[1]), "A ldmatrix.x4")
    eq(p.worst.result.ways, c[2], c[1] .. ": ways")
    eq(p.worst.result.wavefronts, 4 * c[2], c[1] .. ": wavefronts of the worst instruction")
    -- the cp.async writes stay whole 128-byte lines whatever the swizzle
    local _, w = access(kernel(c[1]), "A cp.async")
    eq(w.conflicts, 0, c[1] .. ": A cp.async")
  end
end)

test("B, scales and the reduction tile for each M tile", function()
  for _, name in ipairs({
    "mgen_sm80_f16_fe2m1_g16_16x64x128_s4_w4_sw3x4x4",
    "mgen_sm80_f16_u4b8_g64_32x256x128_s3_w8_sw3x4x4",
    "mgen_sm80_bf16_u4b8_g128_48x256x64_s4_w4_sw3x4x3",
    "mgen_sm80_f16_fe2m1_g16_64x128x64_s4_w8_sw3x4x3",
  }) do
    local k = kernel(name)
    -- B: 32 lanes x 16 B contiguous = 4 wavefronts, once per warp per 16-deep step.
    local _, p = access(k, "B LDS")
    eq(p.instances, k.n_warps * k.kb_per_stage, name .. ": B instructions")
    eq(p.wavefronts, 4 * p.instances, name .. ": B wavefronts")
    -- scales: lane / 4 picks the vector: 4 per half-warp (16-byte) or 8 per warp (8-byte).
    _, p = access(k, "scales LDS")
    eq(p.conflicts, 0, name .. ": scales")
    eq(p.access.width, 8 * k.scale_bytes, name .. ": scale vector width")
    -- C fragments: 2 float2 phases, each 16 lanes over all 32 banks.
    _, p = access(k, "reduce STS")
    eq(p.instances, k.warps * k.m_blocks * 16, name .. ": fragment stores")
    eq(p.wavefronts, 2 * p.instances, name .. ": fragment store wavefronts")
    eq(p.conflicts, 0, name .. ": fragment stores")
    -- reduce_grid's float4 rows: 8 consecutive lanes = 128 contiguous bytes.
    _, p = access(k, "partial LDS")
    eq(p.conflicts, 0, name .. ": partial")
    eq(p.instances * 32 * 16, k.tile_m * k.tile_n * 4, name .. ": partial covers the tile")
    -- store_c: float4 32 B apart, but lanes with bit 2 of c8 set read their high half first:
    -- lanes 4 apart are 16 B apart within one instruction, so no bank is met twice.
    for _, which in ipairs({ "store_c LDS 1st", "store_c LDS 2nd" }) do
      _, p = access(k, which)
      eq(p.conflicts, 0, name .. ": " .. which)
      assert(not p.access.waived, name .. ": " .. which .. " needs no waiver")
    end
  end
end)

test("runs of steps: a warp's steps of one group in a row where the sums are scaled", function()
  for _, c in ipairs({
    -- name, step_chunk, acc_scales: g32 is 2 steps, a run of 2 on 1, 2 or 4 K-warps (interleaved
    -- steps gave a 2- or 4-K-warp tile 1 or 0.5 steps of a group a warp: bench/notes/v25.md)
    { "mgen_sm80_f16_fe2m1_g32_16x64x128_s3_w4_sw3x4x4", 2, true },
    { "mgen_sm80_f16_fe2m1_g32_8x128x128_s2_w4_sw3x4x4", 2, true },
    { "mgen_sm80_f16_u4b8_g64_8x128x128_s4_w4_sw3x4x4", 4, true },
    { "mgen_sm80_f16_u4b8_g128_8x256x128_s3_w4_sw3x4x4", 8, true },
    { "mgen_sm80_f16_u4b8_g128_16x64x128_s3_w4_sw3x4x4", 2, true },
    -- NVFP4's group is one step: interleaved, scales on the weights; the row tiles the same
    { "mgen_sm80_f16_fe2m1_g16_8x128x128_s5_w4_sw3x4x4", 1, false },
    { "mgen_sm80_f16_u4b8_g128_32x256x128_s3_w8_sw3x4x4", 1, false },
  }) do
    local k = kernel(c[1])
    eq(k.step_chunk, c[2], c[1] .. ": step_chunk")
    eq(k.acc_scales, c[3], c[1] .. ": acc_scales")
    -- every step of the stage once, and each run inside one group
    local _, p = access(k, "B LDS")
    eq(#p.access.instances, k.n_warps * k.kb_per_stage, c[1] .. ": B loads")
    local seen = {}
    for _, inst in ipairs(p.access.instances) do
      local w, kb = inst.label:match("^warp (%d+), kb (%d+)")
      kb = tonumber(kb)
      assert(not seen[kb .. "/" .. (tonumber(w) % k.n_warps)], c[1] .. ": step " .. kb .. " twice")
      seen[kb .. "/" .. (tonumber(w) % k.n_warps)] = true
    end
    for kb = 0, k.kb_per_stage - 1 do
      for wn = 0, k.n_warps - 1 do assert(seen[kb .. "/" .. wn], c[1] .. ": step " .. kb .. " missing") end
    end
    if k.acc_scales then
      local gs = k.group // 16
      eq(gs % k.step_chunk, 0, c[1] .. ": runs inside a group")
    end
  end
end)

test("W4A8 (sm89, the e4m3 layout): word ldmatrix per 16-deep row, runs of 32-deep steps", function()
  for _, c in ipairs({
    -- name, step_chunk (32-deep steps a warp sums before a fold): the group's steps, at most
    -- 128 deep and the warp's share of the stage; per channel the share (at most 4 steps)
    { "mgen_sm89_f16_u4b8_g32_16x64x128_s4_w4_sw3x4x3", 1 },
    { "mgen_sm89_bf16_u4b8_g64_8x256x128_s2_w4_sw3x4x3", 2 },
    { "mgen_sm89_f16_u4b8_g128_8x128x128_s4_w4_sw3x4x3", 2 },
    { "mgen_sm89_f16_u4b8_g128_8x256x128_s2_w4_sw3x4x3", 4 },
    { "mgen_sm89_f16_u4b8_gc_16x128x256_s2_w4_sw3x4x4", 4 },
  }) do
    local k = kernel(c[1])
    eq(k.a8, true, c[1] .. ": a8")
    eq(k.step_k, 32, c[1] .. ": 32-deep steps")
    eq(k.step_chunk, c[2], c[1] .. ": step_chunk")
    eq(k.swap_ab, true, c[1] .. ": swapped")
    eq(k.a_row_vecs * 16, k.tile_k, c[1] .. ": one byte an activation")
    -- each warp column reads every 16-deep row of the stage once: 4 wavefronts (a 128-byte
    -- matrix each), no conflict
    local _, p = access(k, "B ldmatrix.x4")
    eq(#p.access.instances, k.n_warps * k.kb_per_stage, c[1] .. ": B loads")
    eq(p.conflicts, 0, c[1] .. ": B conflicts")
    eq(p.wavefronts, 4 * #p.access.instances, c[1] .. ": B wavefronts")
    if k.group > 0 then eq((k.group // 32) % k.step_chunk, 0, c[1] .. ": runs inside a group") end
    assert(k.step_chunk * 32 <= 128, c[1] .. ": runs at most 128 deep")
  end
end)

test("the swapped 8- and 16-row tiles: ldmatrix.x2 / .x4 and the one-float reduction stores", function()
  for _, name in ipairs({
    "mgen_sm80_f16_u4b8_g128_8x256x128_s3_w4_sw3x4x4",
    "mgen_sm80_f16_u4b8_g128_8x64x128_s4_w8_sw3x4x4",
    "mgen_sm80_bf16_fe2m1_g16_8x128x128_s5_w4_sw3x4x4",
    "mgen_sm80_f16_fe2m1_g32_16x256x128_s2_w4_sw3x4x4",
    "mgen_sm80_f16_u4b8_g128_16x128x128_s3_w4_sw3x4x4",
  }) do
    local k = kernel(name)
    assert(k.swap_ab and k.m_blocks == 0 and k.tok_blocks * 8 == k.tile_m, name .. ": swapped")
    -- one ldmatrix per warp and 16-deep step: .x2 for 8 rows, .x4 for 16; phases of 8 rows x
    -- 16 B, one wavefront each
    local x = k.tok_blocks == 1 and "x2" or "x4"
    local _, p = access(k, "A ldmatrix." .. x)
    eq(p.instances, k.warps * k.k_iters, name .. ": ldmatrix instructions")
    eq(p.wavefronts, 2 * k.tok_blocks * p.instances, name .. ": ldmatrix wavefronts")
    eq(pcall(access, k, "A ldmatrix." .. (x == "x2" and "x4" or "x2")), false, name .. ": one kind of ldmatrix")
    -- C^T fragments: one float per lane, rows 8tb + 2t, + 1 x 8 columns: stride tile_n + 4 puts
    -- the 32 lanes in 32 banks
    _, p = access(k, "reduce STS")
    eq(p.instances, k.warps * k.tok_blocks * 16, name .. ": fragment stores")
    eq(p.wavefronts, p.instances, name .. ": fragment store wavefronts")
    eq(k.red_stride, k.tile_n + 4, name .. ": reduction stride")
  end
end)

test("every valid f16 u4b8 g128 kernel: ldmatrix conflict-free iff <3,4,log2(row bytes)-4>", function()
  local n = 0
  local function check(k)
    local proof = enumerate.prove(spec, "templates/mma/spec.lua", k)
    -- rows of 128, 256 or 512 bytes: tile_k 16-bit elements, or bytes of E4M3 (sm89, W4A8)
    local row_bytes = k.tile_k * (k.arch == 89 and 1 or 2)
    local shift = math.floor(math.log(row_bytes, 2) + 0.5) - 4
    local right = k.swz_bits == 3 and k.swz_base == 4 and k.swz_shift == shift
    eq(#proof.conflicted == 0, right, k.name .. ": conflict-free")
    for _, p in ipairs(proof.accesses) do
      if not p.access.name:match("^A ldmatrix") and not p.access.waived then
        eq(p.conflicts, 0, k.name .. ": " .. p.access.name)
      end
    end
  end
  for _, k in ipairs(all) do
    if k.act == "f16" and k.wfmt == "u4b8" and k.group == 128 then
      n = n + 1
      check(k)
    end
  end
  assert(n > 100, "the space has more than 100 such kernels")
end)

test("launch counts of the partition, by hand", function()
  -- 16x128x128 on M=16, N=4096, K=4096, 132 SMs: 1 x 32 x 32 = 1024 units; grid = 2 x 132 =
  -- 264; per = ceil(1024 / 264) = 4: blocks 0..255 take 4 units each, block 256.. none. A
  -- column (32 units) spans 8 blocks: 256 segments, all split; 32 sums and 32 stores.
  local k = kernel("mgen_sm80_f16_u4b8_g128_16x128x128_s4_w8_swnone")
  local events, info = spec.smem_launch(k, { m = 16, n = 4096, k = 4096, sms = 132 })
  eq(info.grid, 264, "grid")
  eq(info.per, 4, "units per block")
  local got = {}
  for _, e in ipairs(events) do got[e.event .. "/" .. e.rows] = e.times end
  eq(got["fetch/16"], 1024)
  eq(got["stage/16"], 1024)
  eq(got["segment/16"], 256)
  eq(got["partial/16"], 256)
  eq(got["sum/16"], 32)
  eq(got["store/16"], 32)
  -- ldmatrix: 16 per stage; unswizzled, 28 extra wavefronts each.
  local totals = enumerate.launch(spec, "templates/mma/spec.lua", k, { m = 16, n = 4096, k = 4096, sms = 132 })
  local ldsm
  for _, t in ipairs(totals) do if t.kind == "ldsm" then ldsm = t end end
  eq(ldsm.instructions, 1024 * 16, "ldmatrix instructions")
  eq(ldsm.conflicts, 1024 * 16 * 28, "ldmatrix conflicts")
  -- 64-row tile, M = 100: 2 slabs, the second with 36 live rows.
  k = kernel("mgen_sm80_f16_u4b8_g128_64x256x64_s4_w8_sw3x4x3")
  events = spec.smem_launch(k, { m = 100, n = 512, k = 128, sms = 132 })
  got = {}
  for _, e in ipairs(events) do got[e.event .. "/" .. e.rows] = e.times end
  -- 2 x 2 x 2 = 8 units on 8 blocks: every column split over 2 blocks.
  eq(got["partial/64"], 4)
  eq(got["partial/36"], 4)
  eq(got["store/36"], 2)
end)

-- ---------------------------------------------------------------- the wgmma family's model

local wspec = enumerate.load_spec(read("templates/wgmma/spec.lua"), "templates/wgmma/spec.lua", read)
local wfile = "templates/wgmma/spec.lua"
local wall = enumerate.run(wspec, wfile, { quiet = true })
local wby_name = {}
for _, k in ipairs(wall) do wby_name[k.name] = k end

local function waccess(k, name)
  for _, a in ipairs(enumerate.smem_accesses(wspec, wfile, k)) do
    if a.name == name then return a, banks.prove_access(a) end
  end
  error("no access " .. name)
end

-- One kernel of each tile of the axis (its warpgroups = tile_n / 64), 4 stages, f16 g128.
local function waxis(name)
  for _, a in ipairs(wspec.axes) do
    if a.name == name then return a end
  end
  error("the wgmma spec has no axis " .. name)
end
local wtiles = {}
for _, tile in ipairs(waxis("tile").values) do
  local name = string.format("mgen_sm90a_f16_u4b8_g128_%dx%dx%d_wg%d_s4", tile.m, tile.n, tile.k,
    tile.n // 64)
  wtiles[#wtiles + 1] = wby_name[name] or error(name .. ": not a valid wgmma kernel")
end
-- And the tiles with 128 columns per consumer (two m64 groups each), where valid (<= 64 rows;
-- the 192-column tiles have three consumers of 64).
local wide = 0
for _, tile in ipairs(waxis("tile").values) do
  local name = string.format("mgen_sm90a_f16_u4b8_g128_%dx%dx%d_wg%d_s4", tile.m, tile.n, tile.k,
    tile.n // 128)
  if tile.n % 128 == 0 and tile.m <= 64 then
    wtiles[#wtiles + 1] = wby_name[name] or error(name .. ": not a valid wgmma kernel")
    wide = wide + 1
  end
end

test("wgmma: every dense tile conflict-free: A, the copies, W (rotated, or the e4m3 layout), C", function()
  eq(#wtiles - wide, 28, "tiles")  -- 15 of 64-deep stages (FP16 / BF16 A), 13 of W4A8's 128-deep
  eq(wide, 14, "tiles with 128 columns per consumer")
  for _, k in ipairs(wtiles) do
    local name, groups = k.name, k.tile_n // 64
    local proof = enumerate.prove(wspec, wfile, k)
    local a8, rotated = k.a8 == "true", k.rotate_w == "true"
    eq(rotated, not a8, name .. ": W tiles rotated in every 16-bit dense tile")
    eq(#proof.conflicted, 0, name .. ": nothing conflicted")
    eq(#proof.waived, 0, name .. ": nothing waived (moe keeps the mma layout's waiver)")
    -- The copy engine: whole 128-byte lines, one wavefront each.
    local _, p = waccess(k, "A TMA write")
    eq(p.conflicts, 0, name .. ": A TMA")
    eq(p.wavefronts, k.tile_m, name .. ": A TMA: a row of 128 B per wavefront")
    _, p = waccess(k, "W TMA write")
    eq(p.conflicts, 0, name .. ": W TMA")
    eq(p.wavefronts * 128, k.tile_n * 32, name .. ": W TMA covers the W stage")
    _, p = waccess(k, "S TMA write")
    eq(p.conflicts, 0, name .. ": S TMA")
    eq(p.wavefronts * 128, k.tile_n * 2 * k.scale_rows, name .. ": S TMA covers the scale stage")
    _, p = waccess(k, "S ld.shared")
    eq(p.conflicts, 0, name .. ": S loads")
    eq(p.instances, groups * 4 * k.scale_rows, name .. ": S loads per stage: one per warp, group and scale row")
    -- wgmma: each warpgroup reads the stage, one core matrix (8 rows x 16 B) per wavefront:
    -- the 8 rows' chunks sit at 8 distinct chunk positions (bank groups) of their rows.
    _, p = waccess(k, "A wgmma read")
    eq(p.conflicts, 0, name .. ": A wgmma")
    eq(p.instances, groups * k.steps * k.tile_m // math.min(16, k.tile_m), name .. ": A wgmma instances")
    eq(p.wavefronts, groups * k.tile_m, name .. ": A wgmma wavefronts = rows x 64-column groups")
    eq(p.worst.result.ways, 1, name .. ": A wgmma ways")
    -- W words, rotated (lanes 8 q .. take tile warp + q): 32 banks, one wavefront; e4m3
    -- layout: 128 consecutive bytes, one. One load per warp and 16-deep tile. (The warp's own
    -- tile, moe's below: lanes l, l + 8, l + 16, l + 24 in one bank, 4 wavefronts.)
    local a
    a, p = waccess(k, "W ld.shared")
    eq(p.instances, groups * 4 * k.tile_k // 16, name .. ": W loads per stage: one per 16-deep tile")
    eq(p.wavefronts, p.instances, name .. ": W wavefronts")
    eq(p.min, p.instances, name .. ": W minimum")
    eq(p.conflicts, 0, name .. ": W conflicts")
    eq(p.worst.result.ways, 1, name .. ": W ways")
    eq(a.waived, nil, name .. ": no waiver")
    -- The staged epilogue (store()): a chunk of min(16, rows) rows; each 2-byte store puts the
    -- warp's 4 rows x 8 columns in 16 distinct words of 16 banks (one wavefront), rotated or
    -- not; each 16-byte load 4 whole rows (4 wavefronts, the minimum).
    local rows = math.min(16, k.tile_m)
    _, p = waccess(k, "C stage st.shared")
    eq(p.instances, 4 * rows // 8 * 4, name .. ": C stores per chunk: 4 per warp and 8 rows")
    eq(p.wavefronts, p.instances, name .. ": C stores one wavefront each")
    eq(p.conflicts, 0, name .. ": C stores")
    _, p = waccess(k, "C stage ld.shared")
    eq(p.instances, rows // 4, name .. ": C loads per chunk: 4 rows of 128 B each")
    eq(p.wavefronts, 4 * p.instances, name .. ": C loads 4 wavefronts each")
    eq(p.conflicts, 0, name .. ": C loads")
    for _, which in ipairs({ "flag st.shared", "flag ld.shared", "mbarrier init",
      "producer mbarrier", "consumer mbarrier" }) do
      _, p = waccess(k, which)
      eq(p.conflicts, 0, name .. ": " .. which)
    end
  end
end)

test("wgmma moe: A gathered by cp.async into the SW128 places, the route table, conflict-free", function()
  for _, name in ipairs({ "mgen_sm90a_moe_f16_u4b8_g128_128x128x64_wg2_s8",
                          "mgen_sm90a_moe_bf16_fe2m1_g32_64x128x64_wg2_s8",
                          "mgen_sm90a_moe_f16_u4_g64_8x256x64_wg4_s8" }) do
    local k = wby_name[name] or error(name .. ": not a valid wgmma kernel")
    local proof = enumerate.prove(wspec, wfile, k)
    eq(#proof.conflicted, 0, name .. ": nothing conflicted without a waiver")
    eq(k.rotate_w, "false", name .. ": moe kernels keep their warp's W tile")
    eq(#proof.waived, 1, name .. ": the mma layout's W words, waived (dense tiles rotate)")
    local a, p = waccess(k, "W ld.shared")
    eq(p.wavefronts, 4 * p.instances, name .. ": W 4 wavefronts each")
    eq(p.conflicts, 3 * p.instances, name .. ": W conflicts")
    eq(p.worst.result.phases[1].hot_bank, 0, name .. ": W hot bank of warp 0")
    assert(a.waived:find("route's rows staged", 1, true), name .. ": the waiver names the fix")
    for _, a in ipairs(enumerate.smem_accesses(wspec, wfile, k)) do
      assert(a.name ~= "A TMA write", name .. ": A is gathered, not a TMA box")
    end
    -- each 8 lanes one row's 128 bytes (its 8 chunks permuted): a warp's 4 rows x 128 B in
    -- 4 wavefronts, tile_m / 4 instructions a stage (lane l: rows l / 8 + 4 i)
    a, p = waccess(k, "A gather cp.async")
    eq(p.conflicts, 0, name .. ": A gather")
    eq(p.instances, k.tile_m // 4, name .. ": A gather instructions per stage")
    eq(p.wavefronts, k.tile_m, name .. ": A gather wavefronts: a row each")
    local inst = instance(a, "producer warp, rows 4-7")
    eq(inst.addrs[1], 4 * 128 + 16 * (0 ~ 4), name .. ": lane 0 = row 4, chunk 0 at 4 ^ 0")
    eq(inst.addrs[12], 5 * 128 + 16 * (3 ~ 5), name .. ": lane 11 = row 5, chunk 3 at 3 ^ 5")
    for _, which in ipairs({ "route A row ld.shared", "route st.shared", "route C row ld.shared" }) do
      _, p = waccess(k, which)
      eq(p.conflicts, 0, name .. ": " .. which)
    end
  end
end)

test("wgmma: the SW128 addresses and the waiver's numbers, by hand", function()
  local k = wby_name["mgen_sm90a_f16_u4b8_g128_256x128x64_wg2_s4"]
  local a = waccess(k, "A wgmma read")
  -- step 1, rows 0-15: lane 1 = row 1, chunk 2 -> 128 + 16 (2 ^ 1) = 176; lane 23 = row 7,
  -- chunk 3 -> 896 + 16 (3 ^ 7) = 960; lane 9 = row 9, chunk 2 -> 1152 + 16 (2 ^ 1) = 1200.
  local inst = instance(a, "columns 0-63, step 1, rows 0-15")
  eq(inst.addrs[2], 176, "lane 1")
  eq(inst.addrs[24], 960, "lane 23")
  eq(inst.addrs[10], 1200, "lane 9")
  -- the chunk positions of rows 0-7 of one core matrix are 8 distinct values (a permutation)
  local seen = {}
  for lane = 0, 7 do
    local c = (inst.addrs[lane + 1] % 128) // 16
    assert(not seen[c], "chunk " .. c .. " twice")
    seen[c] = true
  end
  -- W (rotated): warpgroup 1, warp 2, step 3: 3 * 1024 + (128 + 4 lane + (2 + lane / 8) % 4) * 4.
  a = waccess(k, "W ld.shared")
  inst = instance(a, "columns 64-127, warp 2, step 3")
  eq(inst.addrs[1], 3 * 1024 + 130 * 4, "W lane 0: tile 2")
  eq(inst.addrs[9], 3 * 1024 + 163 * 4, "W lane 8: tile 3, the next bank")
  eq(inst.addrs[17], 3 * 1024 + 192 * 4, "W lane 16: tile 0, bank 0")
  -- moe (the warp's own tile): lane 8 128 B on, the same bank.
  k = wby_name["mgen_sm90a_moe_f16_u4b8_g128_128x192x64_wg3_s8"]
  a = waccess(k, "W ld.shared")
  inst = instance(a, "columns 64-127, warp 2, step 3")
  eq(inst.addrs[1], 3 * k.tile_n * 8 + 130 * 4, "moe W lane 0")
  eq(inst.addrs[9], 3 * k.tile_n * 8 + 162 * 4, "moe W lane 8: the same bank")
  -- 3 groups x 4 warps x 4 loads x 3 = 144 excess of 768 tensor clocks (12 x m64n128k16 at
  -- 4096 FLOP/clk): 19%.
  assert(a.waived:find("144 excess wavefronts per stage vs 768 tensor clocks", 1, true), a.waived)
  assert(a.waived:find("(12 wgmma m64n128k16) = 19%", 1, true), a.waived)
  -- W4A8 (the e4m3 layout): warpgroup 1, warp 2, step 3 of 128x128x128 (kChunk 1024 bytes):
  -- 3 * 1024 + (128 + 64 + lane) * 4, 32 consecutive words.
  a = waccess(wby_name["mgen_sm90a_f16_u4b8_g128_128x128x128_wg2_s4"], "W ld.shared")
  inst = instance(a, "columns 64-127, warp 2, step 3")
  eq(inst.addrs[1], 3 * 1024 + 192 * 4, "W4A8 W lane 0")
  eq(inst.addrs[9], 3 * 1024 + 200 * 4, "W4A8 W lane 8: 32 B on, 8 banks on")
  eq(inst.addrs[32], 3 * 1024 + 223 * 4, "W4A8 W lane 31")
  local w4 = waccess(wby_name["mgen_sm90a_moe_f16_u4b8_g128_64x256x64_wg4_s8"], "W ld.shared")
  assert(w4.waived:find("192 excess wavefronts per stage vs 512 tensor clocks", 1, true), w4.waived)
  assert(w4.waived:find("= 38%", 1, true), w4.waived)
end)

test("wgmma: the staged epilogue's addresses, by hand", function()
  -- Byte b of staged row r at r * 128 + 16 ((b / 16) ^ (r % 8)) + b % 16 (store()).
  local k = wby_name["mgen_sm90a_f16_u4b8_g128_256x128x64_wg2_s4"]
  local a = waccess(k, "C stage st.shared")
  -- warp 2 (its own tile: columns 32-47), rows 8-15 odd, lo: lane 5 (g 1, t 1) -> row 11,
  -- column 33, byte 66: chunk 4 ^ 3 = 7 -> 1408 + 112 + 2 = 1522
  local inst = instance(a, "warp 2, rows 8-15 odd, columns lo")
  eq(inst.addrs[6], 1522, "lane 5")
  -- hi: column 41, byte 82: chunk 5 ^ 3 = 6 -> 1408 + 96 + 2 = 1506
  eq(instance(a, "warp 2, rows 8-15 odd, columns hi").addrs[6], 1506, "lane 5, hi")
  a = waccess(k, "C stage ld.shared")
  -- warp 1, lane 13: row 4 + 1 = 5, chunk 5 ^ 5 = 0 -> 640
  eq(instance(a, "warp 1").addrs[14], 640, "load lane 13")
  -- rotated (16x256): warp 1, lane 9 (g 2, t 1) takes tile 2: row 2, column 34, byte 68,
  -- chunk 4 ^ 2 = 6 -> 256 + 96 + 4 = 356
  k = wby_name["mgen_sm90a_bf16_u4b8_g128_16x256x64_wg2_s12"]
  a = waccess(k, "C stage st.shared")
  eq(instance(a, "warp 1, rows 0-7 even, columns lo").addrs[10], 356, "rotated lane 9")
end)

test("wgmma: launch counts of the stream-K schedule, by hand", function()
  -- The plan (mgen_wgmma_sched.h), by hand. 256x128 at M = 4096, N = K = 8192: 16 x 64 = 1024
  -- tiles on 132 SMs: 8 waves of 132 slots, 1024 / 1056 = 97% full: whole tiles, no pieces.
  local k = wby_name["mgen_sm90a_f16_u4b8_g128_256x128x64_wg2_s4"]
  local events, info = wspec.smem_launch(k, { m = 4096, n = 8192, k = 8192, sms = 132 })
  eq(info.grid, 132, "grid")
  eq(info.dp_tiles, 1024, "whole tiles")
  eq(#events, 2, "no split event")
  eq(events[1].times, 1024 * 128, "stages")
  -- the staged epilogue: per tile, 2 64-column groups x 256 / 16 chunks of 16 rows
  eq(events[2].event, "tile", "the staged epilogue's chunks")
  eq(events[2].times, 1024 * 2 * 16, "chunks")
  -- 64x128 at M = 16, N = K = 4096: 32 tiles of 64 stages: split-K 132 // 32 = 4 ways
  -- (128 / 132 = 97% full), pieces of 16 stages: 128 blocks, each one piece.
  k = wby_name["mgen_sm90a_f16_u4b8_g128_64x128x64_wg2_s4"]
  events, info = wspec.smem_launch(k, { m = 16, n = 4096, k = 4096, sms = 132 })
  eq(info.grid, 128, "grid")
  eq(info.pieces, 128, "pieces")
  eq(events[1].times, 32 * 64, "stages: every tile's K once")
  eq(events[2].event, "split", "split event")
  eq(events[2].times, 128, "one flag per piece")
  -- 8x256 at M = 1, N = 22016 (86 tiles), K = 4096: split-K cannot split (132 // 86 = 1) and
  -- 86 / 132 = 65% is under 90%: stream-K over 132 blocks, 5504 units in shares of
  -- 5504 b / 132 = 1376 b / 33 (41.7 stages, shorter than a tile: every segment is a piece).
  -- Segments: 132 ranges plus one per inner tile boundary (64 j, j = 1..85) that is not a
  -- range start; 64 j = floor(1376 b / 33) needs 1376 b - 2112 j in [0, 33), a multiple of
  -- 32: 43 b = 66 j (b = 66) or 43 b - 66 j = 1 (b = 43, 109): 132 + 85 - 3 = 214 pieces.
  k = wby_name["mgen_sm90a_f16_u4b8_g128_8x256x64_wg4_s4"]
  events, info = wspec.smem_launch(k, { m = 1, n = 22016, k = 4096, sms = 132 })
  eq(info.grid, 132, "grid")
  eq(info.dp_tiles, 0, "no whole tiles")
  eq(info.pieces, 214, "pieces")
  -- 8x256 at M = 1, N = 33792 (132 tiles): whole tiles, one per block.
  events, info = wspec.smem_launch(k, { m = 1, n = 33792, k = 4096, sms = 132 })
  eq(info.grid, 132, "grid")
  eq(info.pieces, 0, "pieces")
  eq(#events, 2, "no split event")
  eq(events[2].times, 132 * 4 * 1, "chunks: 4 groups, one 8-row chunk each")
  k = wby_name["mgen_sm90a_f16_u4b8_g128_64x128x64_wg2_s4"]
  local totals = enumerate.launch(wspec, wfile, k, { m = 16, n = 4096, k = 4096, sms = 132 })
  local ld
  for _, t in ipairs(totals) do if t.kind == "ld" then ld = t end end
  -- Per stage: W 32 loads x 1 wavefront (rotated), the scales 8 loads (one row) x 1; the flag:
  -- 8 loads x 1 per piece; the staged epilogue: per tile (32), 2 groups x 4 chunks, 4 loads of
  -- 16 bytes a lane (4 wavefronts each).
  eq(ld.instructions, 2048 * (32 + 8) + 128 * 8 + 32 * 2 * 4 * 4, "ld instructions")
  eq(ld.wavefronts, 2048 * (32 + 8) + 128 * 8 + 32 * 2 * 4 * 16, "ld wavefronts")
  eq(ld.conflicts, 0, "ld conflicts")
end)

test("wgmma u4: the zero box and the zero loads, by hand", function()
  -- Zero points (u4): a box of the stage's zero rows x tile_n / 2 bytes, one per scale row (two
  -- at g32, one at g64/g128) and one per channel; each warp loads word 8 c + g of each row of its
  -- 64-column group c (mgen_wgmma_body.cuh zero_pairs(): pair j = warp of the word). Its twin without
  -- zero points has neither, and the zero stage (padded to 128 bytes) is the only difference in
  -- shared memory.
  local cases = {
    { "mgen_sm90a_f16_u4_g32_32x256x64_wg4_s8", rows = 2, stage = 256 },
    { "mgen_sm90a_bf16_u4_g64_64x256x64_wg4_s6", rows = 1, stage = 128 },
    { "mgen_sm90a_f16_u4_g128_64x128x64_wg2_s12", rows = 1, stage = 128 },
    { "mgen_sm90a_bf16_u4_gc_128x64x64_wg1_s12", rows = 1, stage = 128 },  -- 32 bytes, padded
    { "mgen_sm90a_f16_u4_gc_16x256x64_wg4_s12", rows = 1, stage = 128 },
  }
  for _, case in ipairs(cases) do
    local name = case[1]
    local k = wby_name[name] or error(name .. ": not a valid wgmma kernel")
    local twin = wby_name[(name:gsub("_u4_", "_u4b8_"))] or error(name .. ": no u4b8 twin")
    eq(k.zeros, "true", name .. ": zeros")
    eq(twin.zeros, "false", name .. ": the twin has none")
    eq(k.zero_rows, case.rows, name .. ": zero rows per stage")
    eq(k.zero_rows, k.group == 0 and 1 or k.scale_rows, name .. ": a zero row per scale row")
    eq(k.zero_row_bytes, k.tile_n // 2, name .. ": 4 bits per column")
    eq(k.zero_stage_bytes, case.stage, name .. ": the zero stage, 128-byte aligned")
    eq(k.smem_bytes - twin.smem_bytes, k.stages * case.stage, name .. ": shared memory beyond the twin")
    local proof = enumerate.prove(wspec, wfile, k)
    eq(#proof.conflicted, 0, name .. ": nothing conflicted without a waiver")
    eq(#proof.waived, 0, name .. ": nothing waived")
    local a, p = waccess(k, "Z TMA write")
    local bytes, chunks = k.zero_rows * k.tile_n // 2, 0
    eq(p.conflicts, 0, name .. ": Z TMA")
    eq(p.wavefronts, (bytes + 127) // 128, name .. ": Z TMA: whole lines (a 64-byte box: one)")
    for _, inst in ipairs(a.instances) do
      for _, addr in ipairs(inst.addrs) do
        if addr then
          eq(addr, 16 * chunks, name .. ": Z TMA chunks in order")
          chunks = chunks + 1
        end
      end
    end
    eq(16 * chunks, bytes, name .. ": Z TMA covers the zero rows")
    a, p = waccess(k, "Z ld.shared")
    eq(p.conflicts, 0, name .. ": Z loads")
    eq(p.instances, k.tile_n // 64 * 4 * k.zero_rows, name .. ": one per warp, 64-column group and zero row")
    eq(p.wavefronts, p.instances, name .. ": one wavefront each")
    local last = k.tile_n // 64 - 1
    for warp = 0, 3 do
      for r = 0, k.zero_rows - 1 do
        local inst = instance(a, string.format("columns %d-%d, warp %d, zero row %d", 64 * last,
          64 * last + 63, warp, r))
        for lane = 0, 31 do  -- word 8 c + g of row r: the same for every warp (pair j = warp)
          eq(inst.addrs[lane + 1], r * k.tile_n // 2 + (8 * last + lane // 4) * 4,
            string.format("%s: warp %d, row %d, lane %d", name, warp, r, lane))
        end
      end
    end
    eq(select(2, pcall(waccess, twin, "Z ld.shared")):match("no access Z ld.shared") ~= nil, true,
      name .. ": the twin loads no zeros")
  end
end)

test("model checks", function()
  local a = { name = "x", kind = "ld", instr = "LDS", event = "e", width = 16,
    instances = { { label = "i", addrs = lanes(function(l) return 16 * l end) } } }
  banks.check(a, "w")
  a.width = 12
  raises("w (x): width must be 1, 2, 4, 8 or 16 bytes", banks.check, a, "w")
  a.width = 16
  a.instances[1].addrs[3] = 8
  raises("lane 2: address 8 is not aligned to 16 bytes", banks.check, a, "w")
  a.instances[1].addrs = lanes(function() end)
  raises("no active lane", banks.check, a, "w")
  a.instances[1].addrs = { 0 }
  raises("addrs has 1 lanes, expected 32", banks.check, a, "w")
end)

test("access kinds: the LSU's, or the model's own with its lanes per phase", function()
  local a = { name = "x", kind = "copy", instr = "engine", event = "e", width = 16,
    instances = { { label = "i", addrs = lanes(function(l) return 16 * l end) } } }
  raises("kind 'copy' is neither an LSU kind (ld, st, ldgsts, ldsm) nor one the model declares",
    banks.check, a, "w")
  raises("kind 'copy' is neither", banks.check, a, "w", { other = {} })
  local kinds = { copy = { phase_lanes = 8 } }
  raises("phase_lanes nil, but the model declares 8 for kind 'copy'", banks.check, a, "w", kinds)
  a.phase_lanes = 8
  banks.check(a, "w", kinds)
  a.phase_lanes = 12
  raises("phase_lanes must be nil or 1, 2, 4, 8, 16 or 32", banks.check, a, "w", kinds)
  -- 16-byte lanes 16 B apart: 8 lanes per phase are one 128-byte line each (4 wavefronts);
  -- by width (half-warps of 16 lanes) two lines per phase (4 wavefronts as well, 2 phases).
  local r = banks.analyze(16, a.instances[1].addrs, "copy", 8)
  eq(#r.phases, 4, "declared: 4 phases of 8 lanes")
  eq(r.lanes, 8, "lanes per phase")
  eq(#banks.analyze(16, a.instances[1].addrs, "copy").phases, 2, "undeclared: by width")
  for _, kind in ipairs({ "tma", "wgmma", "sync" }) do
    eq(banks.lsu_kinds[kind], nil, kind .. " is a family's kind, not the engine's")
  end
end)

io.write(string.format("banks_test: %d/%d passed\n", t.count - t.failures, t.count))
os.exit(t.failures == 0 and 0 or 1)
