-- templates/common/smem.lua -- what every family's shared-memory model (templates/<family>/
-- smem.lua) builds its accesses with: the one Lua swizzle, which gen.swizzle_agree checks
-- against templates/common/mgen_swizzle.h, and lanes().
local M = {}

-- Swizzle<bits, base, shift> of templates/common/mgen_swizzle.cuh (CuTe's Swizzle<B,M,S>).
function M.swizzle(bits, base, shift, offset)
  local yyy = ((1 << bits) - 1) << (base + shift)
  return offset ~ ((offset & yyy) >> shift)
end

-- addrs[lane + 1] = fn(lane), or false where fn returns nil (inactive lane). Also the bank
-- tests'.
function M.lanes(fn)
  local a = {}
  for lane = 0, 31 do
    local x = fn(lane)
    if x == nil then x = false end
    a[lane + 1] = x
  end
  return a
end

return M
