-- swizzle_digest.lua ROOT -- the Lua swizzle model's digests (templates/common/smem.lua's
-- M.swizzle), in test_swizzle --digest's format: one line per (bits, base, shift), FNV-1a over
-- the little-endian bytes of the swizzle of every offset below 2^16. gen.swizzle_agree diffs
-- the two, so the Lua model and the C/CUDA formula (templates/common/mgen_swizzle.h) agree
-- over the whole parameter range.
local root = assert(arg[1], "usage: swizzle_digest.lua ROOT")
local smem = dofile(root .. "/templates/common/smem.lua")
local MAX_BITS, MAX_BASE, MAX_SHIFT, OFFSETS = 4, 6, 6, 1 << 16
for bits = 0, MAX_BITS do
  for base = 0, MAX_BASE do
    for shift = 0, MAX_SHIFT do
      local h = 2166136261
      for x = 0, OFFSETS - 1 do
        local y = smem.swizzle(bits, base, shift, x)
        for byte = 0, 3 do h = ((h ~ ((y >> (8 * byte)) & 0xff)) * 16777619) & 0xffffffff end
      end
      io.write(string.format("%d %d %d %08x\n", bits, base, shift, h))
    end
  end
end
