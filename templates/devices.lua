-- templates/devices.lua -- facts of the GPUs the kernels are built for, by compute capability
-- (10 * major + minor), written once for every family's spec (require("devices")): shared
-- memory a block may opt in to (cudaFuncAttributeMaxDynamicSharedMemorySize's ceiling, static
-- and dynamic together), per SM, and what the system takes per resident block. CUDA C
-- Programming Guide, "Technical Specifications per Compute Capability".
local M = {}

M.sm = {
  [80] = { smem_block = 163 * 1024, smem_sm = 164 * 1024 }, -- A100
  [86] = { smem_block = 99 * 1024, smem_sm = 100 * 1024 },  -- GA10x
  [89] = { smem_block = 99 * 1024, smem_sm = 100 * 1024 },  -- Ada
  [90] = { smem_block = 227 * 1024, smem_sm = 228 * 1024 }, -- H100 / H200
}

M.smem_reserved = 1024 -- per resident block, taken by the system (sm_80 and later)

-- The facts of compute capability `sm`, or an error naming the table.
function M.of(sm)
  local d = M.sm[sm]
  if d == nil then error(string.format("templates/devices.lua: no facts for sm_%s", tostring(sm)), 2) end
  return d
end

return M
