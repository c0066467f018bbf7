-- sweep_select.lua -- the default kernel set from a configuration sweep (bench_gemm --sweep).
--
--   lua5.4 bench/sweep_select.lua [--tol 0.03] --out templates SWEEP.csv[.xz] ...
--
-- Reads the sweep's rows (header names the columns: act, fmt, kernel, M, K, N, mgen_us, reps;
-- .xz files through `xz -dc`) and, for each key (act, fmt), picks the kernels to build:
--   1. a point is one (M, K, N); its best is the fastest fully timed row (reps > the coarse
--      pass's; coarse-only rows were already > 10% off the best and never count);
--   2. a kernel covers a point when it runs within --tol (3%) of the point's best;
--   3. greedy set cover, three times, each seeded with the ones before: first over the key's
--      earliest architecture's kernels (sm80; sm89 for the mma family's W4A8 keys) that run
--      every k (tile_k dividing the packed layout's K padding, MGEN_LAYOUT_K_PAD, read from
--      runtime/src/formats/layout.h), against the best of them:
--      a deeper tile (tile_k 256) runs only k that are multiples of it, and every benchmark
--      shape's K is one, so without this cover a key could keep no decode tile for k such as
--      5504 (11008 split two ways); then over all of that architecture's kernels against their
--      best (what such a device can run); then over every kernel against the overall best
--      (sm80 kernels run on sm_90 too), so sm90-only kernels are added only where they gain
--      more than the tolerance;
--   4. where no pick runs every shape (every k and 64-column tiles: the benchmark shapes never
--      ask for n < tile_n, mgen_pack does), the earliest architecture's such kernel that
--      covers the most points joins.
-- The order of picking is the kernels' default_rank (the cost model's tie-break). Ties in the
-- greedy step go to the lexically smaller name, so the output is a function of the input.
-- Writes each family's picks to OUT/<family>/defaults.lua (a Lua table: key -> kernel names;
-- a family without picks: no file) and, on stderr, what each pick covers and the kernel counts.
-- A kernel's family is the one whose spec's name declaration parses its name
-- (templates/<family>/spec.lua through gen/lua/naming.lua), so a new family needs no option
-- here. Kernels of sm_90-only families (mgen_sm90a_*: sweeps with their candidates,
-- bench_gemm --all-kernels of a --space full build) are picked in the last cover like any sm90
-- kernel, where they come within the tolerance of points no other pick does.

local tol, files, out_dir = 0.03, {}, nil
local i = 1
while i <= #arg do
  if arg[i] == "--tol" then
    tol = tonumber(arg[i + 1]) or error("--tol needs a number")
    i = i + 2
  elseif arg[i] == "--out" then
    out_dir = arg[i + 1] or error("--out needs a folder")
    i = i + 2
  else
    files[#files + 1] = arg[i]
    i = i + 1
  end
end
if #files == 0 or out_dir == nil then
  io.stderr:write("usage: lua5.4 bench/sweep_select.lua [--tol 0.03] --out DIR SWEEP.csv[.xz] ...\n")
  os.exit(2)
end

-- The families: every templates/<family>/spec.lua, loaded as marlin-gen loads it.
local root = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/.."
package.path = root .. "/gen/lua/?.lua;" .. package.path
local enumerate, naming = require("enumerate"), require("naming")
local function read_source(path)
  local f = io.open(root .. "/" .. path) or error("cannot read " .. root .. "/" .. path)
  local text = f:read("a")
  f:close()
  return text
end
local specs = {}
local listing = io.popen("cd '" .. root .. "/templates' && ls -d */spec.lua")
for file in listing:lines() do
  specs[#specs + 1] = enumerate.load_spec(read_source("templates/" .. file), "templates/" .. file,
    read_source)
end
listing:close()
if #specs == 0 then error("no templates/<family>/spec.lua under " .. root) end
local family_cache = {}
local function family_of(kernel)
  if family_cache[kernel] == nil then
    for _, spec in ipairs(specs) do
      if naming.parse(spec.naming, kernel) ~= nil then family_cache[kernel] = spec.family end
    end
    if family_cache[kernel] == nil then error("no family's name declaration parses " .. kernel) end
  end
  return family_cache[kernel]
end

-- rows[key][point][kernel] = time (us), fully timed rows only.
local rows, coarse_reps = {}, math.huge
local function read(path)
  local f = path:match("%.xz$") and io.popen("xz -dc '" .. path .. "'") or io.open(path)
  if f == nil then error("cannot read " .. path) end
  local col, pending = nil, {}
  for line in f:lines() do
    local fields = {}
    for v in line:gmatch("[^,]+") do fields[#fields + 1] = v end
    if col == nil then
      col = {}
      for j, name in ipairs(fields) do col[name] = j end
      for _, need in ipairs({ "act", "fmt", "kernel", "M", "K", "N", "mgen_us", "reps" }) do
        if col[need] == nil then error(path .. ": no column '" .. need .. "'") end
      end
    else
      local reps = tonumber(fields[col.reps])
      coarse_reps = math.min(coarse_reps, reps)
      pending[#pending + 1] = {
        key = fields[col.act] .. "_" .. fields[col.fmt], reps = reps, kernel = fields[col.kernel],
        point = fields[col.M] .. "x" .. fields[col.K] .. "x" .. fields[col.N],
        us = tonumber(fields[col.mgen_us]),
      }
    end
  end
  local ok, how, code = f:close()
  if not ok then error(string.format("%s: reading failed (%s %s)", path, how, code)) end
  if col == nil then error(path .. ": empty") end
  return pending
end
local all, full_reps = {}, 0
for _, path in ipairs(files) do
  for _, r in ipairs(read(path)) do
    all[#all + 1] = r
    full_reps = math.max(full_reps, r.reps)
  end
end
-- A run without a coarse pass (bench_gemm --all-kernels: every row timed alike) counts whole.
if full_reps == coarse_reps then coarse_reps = coarse_reps - 1 end
for _, r in ipairs(all) do
  if r.reps > coarse_reps then
    rows[r.key] = rows[r.key] or {}
    rows[r.key][r.point] = rows[r.key][r.point] or {}
    rows[r.key][r.point][r.kernel] = r.us
  end
end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end

-- covers[kernel] = set of points within tol of the best among kernels accepted by `ok`.
local function covers_of(points, ok)
  local covers = {}
  for point, times in pairs(points) do
    local best = math.huge
    for kernel, us in pairs(times) do
      if ok(kernel) and us < best then best = us end
    end
    for kernel, us in pairs(times) do
      if ok(kernel) and us <= best * (1 + tol) then
        covers[kernel] = covers[kernel] or {}
        covers[kernel][point] = true
      end
    end
  end
  return covers
end

-- Greedy set cover of every point that some accepted kernel runs; appends to `picked`.
local function cover(points, ok, picked, key, label)
  local covers, open = covers_of(points, ok), {}
  for point, times in pairs(points) do
    for kernel in pairs(times) do
      if ok(kernel) then open[point] = true end
    end
  end
  for _, kernel in ipairs(picked) do
    for point in pairs(covers[kernel] or {}) do open[point] = nil end
  end
  while next(open) do
    local best, gain = nil, 0
    for _, kernel in ipairs(sorted_keys(covers)) do
      local n = 0
      for point in pairs(covers[kernel]) do
        if open[point] then n = n + 1 end
      end
      if n > gain then best, gain = kernel, n end
    end
    picked[#picked + 1] = best
    for point in pairs(covers[best]) do open[point] = nil end
    io.stderr:write(string.format("%s %s: %s covers %d more points\n", key, label, best, gain))
  end
end

-- The packed layout's K padding, from its one definition.
local function layout_k_pad()
  local dir = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/../runtime/src/formats/layout.h"
  local f = io.open(dir) or error("cannot read " .. dir)
  local pad = tonumber(f:read("a"):match("#define MGEN_LAYOUT_K_PAD (%d+)"))
  f:close()
  return pad or error(dir .. ": no MGEN_LAYOUT_K_PAD")
end
local k_pad = layout_k_pad()
local function runs_every_k(kernel)
  local tile_k = tonumber(kernel:match("_%d+x%d+x(%d+)_") or error("no tile in " .. kernel))
  return k_pad % tile_k == 0
end

local function header(family)
  return {
    string.format("-- The %s family's default kernel set, by key (act_wfmt_group), in default_rank order.", family),
    "-- Written by bench/sweep_select.lua from the configuration sweep (bench/notes/sweep.md); do not edit.",
    string.format("-- Cover tolerance %.0f%%; inputs: %s.", tol * 100,
      (table.concat(files, ", "):gsub("[^,%s]*/", ""))),
    "return {",
  }
end
-- The architecture token of a kernel (80, 89, 90: "mgen_sm90a_" reads 90).
local function arch_of(kernel)
  return tonumber(kernel:match("^mgen_sm(%d+)") or error("no architecture token in " .. kernel))
end
-- A kernel that runs every shape of its key: every k (above) and every n the layout allows
-- (64-column tiles: a wider tile needs n >= tile_n, which no benchmark shape tests).
local function runs_every_shape(kernel)
  return runs_every_k(kernel) and tonumber(kernel:match("_%d+x(%d+)x%d+_")) == 64
end

local outs, totals = {}, {}
for _, key in ipairs(sorted_keys(rows)) do
  local picked = {}
  -- the key's earliest architecture (sm80 for the 16-bit keys; sm89 for the mma family's W4A8)
  local first = math.huge
  for _, times in pairs(rows[key]) do
    for kernel in pairs(times) do first = math.min(first, arch_of(kernel)) end
  end
  local label = "sm" .. first
  local function earliest(k) return arch_of(k) == first end
  cover(rows[key], function(k) return earliest(k) and runs_every_k(k) end, picked, key, label .. " every k")
  cover(rows[key], earliest, picked, key, label)
  cover(rows[key], function() return true end, picked, key, "all")
  -- Every shape must have a kernel (mgen_pack refuses weights that none runs): where no pick
  -- runs every shape, the one of the earliest architecture that covers the most points joins.
  local general = false
  for _, kernel in ipairs(picked) do general = general or runs_every_shape(kernel) end
  if not general then
    local covers = covers_of(rows[key], function() return true end)
    local best, gain = nil, -1
    local candidates = {}
    for _, times in pairs(rows[key]) do
      for kernel in pairs(times) do
        if earliest(kernel) and runs_every_shape(kernel) then candidates[kernel] = true end
      end
    end
    for _, kernel in ipairs(sorted_keys(candidates)) do
      local n = 0
      for _ in pairs(covers[kernel] or {}) do n = n + 1 end
      if n > gain then best, gain = kernel, n end
    end
    if best then
      picked[#picked + 1] = best
      io.stderr:write(string.format("%s every shape: %s (covers %d points)\n", key, best, gain))
    else
      io.stderr:write(string.format("%s: no kernel of the sweep runs every shape\n", key))
    end
  end
  local by_family = {}
  for _, kernel in ipairs(picked) do
    local family = family_of(kernel)
    by_family[family] = by_family[family] or {}
    table.insert(by_family[family], kernel)
  end
  -- The key as the generator names it: act_wfmt_group (fmt u4b8_g128 -> u4b8 g128).
  local gkey = key:gsub("_fe2m1_nvfp4$", "_fe2m1_g16"):gsub("_fe2m1_mxfp4$", "_fe2m1_g32")
  for family, names in pairs(by_family) do
    outs[family] = outs[family] or header(family)
    totals[family] = (totals[family] or 0) + #names
    local o = outs[family]
    o[#o + 1] = string.format("  [%q] = {", gkey)
    for _, name in ipairs(names) do o[#o + 1] = string.format("    %q,", name) end
    o[#o + 1] = "  },"
  end
end
local counts = {}
for _, family in ipairs(sorted_keys(outs)) do
  local o = outs[family]
  o[#o + 1] = "}"
  local path = string.format("%s/%s/defaults.lua", out_dir, family)
  local f = io.open(path, "w") or error("cannot write " .. path)
  f:write(table.concat(o, "\n"), "\n")
  f:close()
  counts[#counts + 1] = string.format("%d kernels (%s)", totals[family], family)
end
io.stderr:write(table.concat(counts, ", "), "\n")
