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
-- bench_gemm --fmt g128,u4_g128). Not for W4A8 sets (a module listed as { name, twins = false }):
-- there u4's bytes cost 9 instructions a word against u4b8's 7 (formats/u4/mma_e4m3.cuh), so
-- its kernels enter only through a measured cover of their own.
M.twins = { u4 = "u4b8" }

-- The kernels of the operations beyond dense (templates/formats.lua M.ops) that enter a
-- family's default set: `op_module` (optional) maps op -> key -> that op's kernel names in rank
-- order (the op token after the architecture token, gen/lua/naming.lua; its own measured cover,
-- bench/moe_cover.py: an op's best tiles need not be dense's), each with its format twins as
-- above. A name without the op's token is an error.
local function check_op_name(op_module, op, key, i, name)
  if type(name) ~= "string" or not name:match("^mgen_[^_]+_" .. op .. "_") then
    error(string.format("%s: %s[%s][%d] '%s' is not a kernel name of op %s", op_module, op, key,
                        i, tostring(name), op))
  end
end

-- module: a module name, or a list of them (a family's sets written apart: wgmma's W4A8 one),
-- each a name or { name, twins = false } (its names without format twins).
function M.load(module, op_module)
  local names, rank = {}, {}
  local function add(name, i, twins)
    rank[name] = i - 1
    names[#names + 1] = name
    if twins == false then return end
    for fmt, twin in pairs(M.twins) do
      local mapped, count = name:gsub("_" .. twin .. "_", "_" .. fmt .. "_")
      if count == 1 then
        rank[mapped] = i - 1
        names[#names + 1] = mapped
      end
    end
  end
  for _, m in ipairs(type(module) == "table" and module or { module }) do
    local entry = type(m) == "table" and m or { m }
    for _, list in pairs(require(entry[1])) do
      for i, name in ipairs(list) do add(name, i, entry.twins) end
    end
  end
  if op_module then
    for op, keys in pairs(require(op_module)) do
      for key, list in pairs(keys) do
        for i, name in ipairs(list) do
          check_op_name(op_module, op, key, i, name)
          add(name, i)
        end
      end
    end
  end
  table.sort(names)
  return names, function(name) return name and rank[name] or #names end
end

return M
