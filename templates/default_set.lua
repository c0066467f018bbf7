-- templates/default_set.lua -- a family's default kernel set from its defaults.lua (key -> kernel
-- names in default_rank order, written by bench/sweep_select.lua): the names, sorted (the spec's
-- M.defaults), and rank(name), the name's position in its key's list (the cost model's
-- tie-break); kernels outside the set (--space full, or no name) rank after all of them.
-- Shared by templates/mma/spec.lua and templates/wgmma/spec.lua.
local M = {}

-- Weight formats without a sweep of their own that take a measured format's default set, the
-- names' format token mapped: u4's kernels are u4b8's plus the zero points, at u4b8's
-- instruction count in the main loop (templates/formats/u4/mma_f16.cuh), so u4b8's cover is
-- theirs until a sweep measures u4 (the benchmark compares the pairs on every shape:
-- bench_gemm --fmt g128,u4_g128).
M.twins = { u4 = "u4b8" }

function M.load(module)
  local names, rank = {}, {}
  local function add(name, i)
    rank[name] = i - 1
    names[#names + 1] = name
  end
  for _, list in pairs(require(module)) do
    for i, name in ipairs(list) do
      add(name, i)
      for fmt, twin in pairs(M.twins) do
        local mapped, count = name:gsub("_" .. twin .. "_", "_" .. fmt .. "_")
        if count == 1 then add(mapped, i) end
      end
    end
  end
  table.sort(names)
  return names, function(name) return name and rank[name] or #names end
end

return M
