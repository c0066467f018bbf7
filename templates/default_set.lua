-- templates/default_set.lua -- a family's default kernel set from its defaults.lua (key -> kernel
-- names in default_rank order, written by bench/sweep_select.lua): the names, sorted (the spec's
-- M.defaults), and rank(name), the name's position in its key's list (the cost model's
-- tie-break); kernels outside the set (--space full, or no name) rank after all of them.
-- Shared by templates/mma/spec.lua and templates/wgmma/spec.lua.
local M = {}

function M.load(module)
  local names, rank = {}, {}
  for _, list in pairs(require(module)) do
    for i, name in ipairs(list) do
      rank[name] = i - 1
      names[#names + 1] = name
    end
  end
  table.sort(names)
  return names, function(name) return name and rank[name] or #names end
end

return M
