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

-- The names of the operations beyond dense (templates/formats.lua M.ops) that enter a family's
-- default set: `op_module` (optional) maps op -> key -> dense default names in rank order, each
-- of which brings its twin of that op (the op token after the architecture token,
-- gen/lua/naming.lua), and that twin's format twins as above. A name outside the dense set is
-- an error: the op's kernel is the dense kernel's tile with the op's gather and store.
local function op_name(name, op)
  local mapped, count = name:gsub("^(mgen_[^_]+)_", "%1_" .. op .. "_")
  if count ~= 1 then error(string.format("default_set: '%s' has no architecture token", name)) end
  return mapped
end

function M.load(module, op_module)
  local names, rank = {}, {}
  local function add(name, i)
    rank[name] = i - 1
    names[#names + 1] = name
    for fmt, twin in pairs(M.twins) do
      local mapped, count = name:gsub("_" .. twin .. "_", "_" .. fmt .. "_")
      if count == 1 then
        rank[mapped] = i - 1
        names[#names + 1] = mapped
      end
    end
  end
  for _, list in pairs(require(module)) do
    for i, name in ipairs(list) do add(name, i) end
  end
  if op_module then
    local dense = {}
    for _, name in ipairs(names) do dense[name] = true end
    for op, keys in pairs(require(op_module)) do
      for key, list in pairs(keys) do
        for i, name in ipairs(list) do
          if not dense[name] then
            error(string.format("%s: %s[%s][%d] '%s' is not in the dense default set", op_module,
                                op, key, i, name))
          end
          add(op_name(name, op), i)
        end
      end
    end
  end
  table.sort(names)
  return names, function(name) return name and rank[name] or #names end
end

return M
