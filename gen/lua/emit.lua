-- emit.lua -- marlin-gen's pipeline: specs -> kernels -> rendered files -> <out>/.
--
--   templates/<family>/spec.lua   enumerate (cross, CLI filters, valid, derive), name, --kernels glob,
--                          bank proof (spec.smem_accesses: conflicted kernels are rejected unless
--                          --allow-conflicts), default set (spec.defaults, unless --space full),
--                          sort by (op, act, wfmt, group, tile_m, tile_n, tile_k, stages, warps, name)
--   <spec>.template        -> kernels/<name>.cu            (k, version, banner)
--   manifest.tsv.tpl       -> manifest.tsv                 (kernels, version, table_hash, banner)
--   table.c.tpl            -> mgen_table.c                 (+ table_hash, shards)
--   shard.cu.tpl           -> shards/<family>_NN.cu, N files per family (+ shard, family,
--                             file, shard_kernels)
--   common/*.{cuh,h}[.tpl] -> include/*                    (*.tpl rendered with kernels, version,
--   <family>/include/*.{cuh,h}[.tpl] -> include/<family>/*   table_hash, banner; plain files
--   formats/[<wfmt>/]*.{cuh,h}[.tpl] -> include/formats/...  copied under a "do not edit" banner)
--   <x>.h.tpl              -> include/mgen_<x>.h           (formats = templates/formats.lua,
--                                                           version, banner)
--   params.h.tpl           -> include/mgen_params_<family>.h, per spec declaring params
--                             (family, id, spec, params, count, version, banner)
--
-- Everything is rendered in memory first; then every changed file is written to a temporary
-- beside it (synced), and only when all were written are they renamed into place, stale
-- kernels removed, and mgen.stamp renamed last. So an error (a template's, a full disk's)
-- leaves <out> untouched, and unchanged files keep their mtimes. table_hash is FNV-1a 64 over
-- the manifest lines of the kernels, in order.
local host = require("mgen_host")
local template = require("template")
local enumerate = require("enumerate")
local naming = require("naming")
local banks = require("banks")

local M = {}

local function fail(fmt, ...)
  error({ message = string.format(fmt, ...) }, 0)
end

local function usage(fmt, ...)
  error({ usage = string.format(fmt, ...) }, 0)
end

local function hex64(h)
  return string.format("0x%016x", h)
end

-- ---------------------------------------------------------------- template sources

local prefix = "templates/"

-- Whether `name` is a path inside templates/: relative, without empty, "." or ".." parts and
-- without NUL (a spec's M.template, a module name, a listed file).
local function inside_templates(name)
  if type(name) ~= "string" or name:sub(1, #prefix) ~= prefix or name:find("\0", 1, true) then
    return false
  end
  for part in (name:sub(#prefix + 1) .. "/"):gmatch("([^/]*)/") do
    if part == "" or part == "." or part == ".." then return false end
  end
  return true
end

-- The templates: embedded at build time, or read from `dir` (same names below templates/).
-- Reads stay inside the folder: no ".." in names, and no symbolic link that leads out of it.
local function sources(dir)
  local self = {}
  local root = nil -- dir with links resolved, once needed
  function self.names()
    local names = {}
    if dir == nil then
      for _, name in ipairs(host.embedded_names()) do
        if name:sub(1, #prefix) == prefix then names[#names + 1] = name end
      end
      return names
    end
    local function walk(sub)
      for _, entry in ipairs(host.list_dir(dir .. "/" .. sub)) do
        if not entry:match("^%.") and not entry:match("~$") then
          if entry:sub(-1) == "/" then
            walk(sub .. entry)
          else
            names[#names + 1] = prefix .. sub .. entry
          end
        end
      end
    end
    walk("")
    table.sort(names)
    return names
  end
  function self.read(name)
    if not inside_templates(name) then
      fail("%s: not a template name (a path inside templates/, without '.' or '..' parts)",
        naming.printable(tostring(name)))
    end
    if dir ~= nil then
      local path = dir .. "/" .. name:sub(#prefix + 1)
      root = root or host.real_path(dir)
      local real = host.real_path(path)
      if real:sub(1, #root + 1) ~= root .. "/" then
        fail("%s: %s leads out of the templates folder (to %s)", name, path,
          naming.printable(real))
      end
      return host.read_file(path)
    end
    local src = host.embedded(name)
    if src == nil then fail("%s: no such template", name) end
    return src
  end
  return self
end

-- ---------------------------------------------------------------- errors and banners

-- Runs fn(...); a failure becomes { message = error .. " (context)" }, with the traceback
-- under -v.
-- fn(...) with `name` declared to mgen_host as the spec or template running (the limits'
-- messages name it), the previous declaration restored after.
local function as_running(name, fn, ...)
  local previous = host.running(name)
  local results = table.pack(fn(...))
  host.running(previous)
  return table.unpack(results, 1, results.n)
end

local function protect(verbose, context, fn, ...)
  local function handler(e)
    local msg = type(e) == "table" and (e.message or e.usage) or tostring(e)
    if context then msg = msg .. " (" .. context .. ")" end
    return verbose and debug.traceback(msg, 2) or msg
  end
  local ok, result = xpcall(fn, handler, ...)
  if not ok then error({ message = result }, 0) end
  return result
end

-- A one-line Lua-like literal of a field value, for the banner.
local function literal(v)
  local t = type(v)
  if t == "string" then
    return '"' .. v:gsub('[%c"\\]', function(c)
      return string.format("\\%03d", c:byte())
    end) .. '"'
  end
  if math.type(v) == "integer" then return string.format("%d", v) end
  if t == "number" then return string.format("%.17g", v) end
  if t ~= "table" then return tostring(v) end
  local raw, parts, n = template.thaw(v), {}, 0
  for i = 1, #raw do parts[i], n = literal(raw[i]), i end
  for _, key in ipairs(template.sorted_keys(raw)) do
    if not (math.type(key) == "integer" and key >= 1 and key <= n) then
      local kk = type(key) == "string" and key:match("^[%a_][%w_]*$") and key
        or "[" .. literal(key) .. "]"
      parts[#parts + 1] = kk .. " = " .. literal(raw[key])
    end
  end
  if #parts == 0 then return "{}" end
  return "{ " .. table.concat(parts, ", ") .. " }"
end

-- Rendered templates see `banner` as this placeholder; the file's content hash is taken over
-- the text with the placeholder removed, then the placeholder becomes the real banner.
local placeholder = "\0mgen_banner\0" -- no pattern magic characters

local function render_file(render, vars, tpl_name, version, k)
  vars.banner = placeholder
  local text = render(vars)
  local hash = host.fnv1a64((text:gsub(placeholder, "")))
  local lines = {
    string.format("// Generated by marlin-gen %s from %s. Do not edit.", version, tpl_name),
  }
  if k ~= nil then
    local raw, width, keys = template.thaw(k), 0, {}
    for _, key in ipairs(template.sorted_keys(raw)) do
      -- The implicit op is left out as it is out of the name: a dense kernel's file is what it
      -- was before kernels had an op.
      if not (key == naming.OP_FIELD and raw[key] == naming.IMPLICIT_OP) then
        keys[#keys + 1], width = key, math.max(width, #key)
      end
    end
    for _, key in ipairs(keys) do
      lines[#lines + 1] = string.format("// k.%-" .. width .. "s = %s", key, literal(raw[key]))
    end
  end
  lines[#lines + 1] = "// content-hash: " .. hex64(hash)
  local banner = table.concat(lines, "\n")
  return (text:gsub(placeholder, function() return banner end))
end

-- ---------------------------------------------------------------- selection

-- The set of values chosen by a comma-separated CLI list, or nil (no filter).
local function selection(list, option, values, show)
  if list == nil then return nil end
  local valid = {}
  for i, v in ipairs(values or {}) do valid[i] = show(v) end
  local set = {}
  for item in (list .. ","):gmatch("([^,]*),") do
    local found = false
    for i, v in ipairs(values or {}) do
      if valid[i] == item then set[v], found = true, true end
    end
    if not found then
      usage("unknown %s value '%s' (valid values: %s)", option, item,
        #valid > 0 and table.concat(valid, ", ") or "none")
    end
  end
  return set
end

-- The functional key, then the family and the tile; then the family's own fields (spec.sort,
-- e.g. { "stages", "warps" }), then the name.
local sort_fields = { "op", "act", "wfmt", "group", "family", "tile_m", "tile_n", "tile_k" }

-- Orders kernels by sort_fields, the family's sort fields, then name. Numbers compare
-- numerically; strings that are axis values by their position in the specs (so "f16" before
-- "bf16" if declared so); families by name. family_sort[family] is the family's spec.sort.
local function comparator(values, family_sort)
  local rank = {}
  for field, list in pairs(values) do
    rank[field] = {}
    for i, v in ipairs(list) do rank[field][v] = i end
  end
  local function less(f, x, y)
    if type(x) == "number" and type(y) == "number" then return x < y end
    local rx, ry = rank[f] and rank[f][x], rank[f] and rank[f][y]
    if rx and ry then return rx < ry end
    if type(x) == type(y) and type(x) == "string" then return x < y end
    return tostring(type(x)) < tostring(type(y))
  end
  return function(a, b)
    for _, f in ipairs(sort_fields) do
      local x, y = a[f], b[f]
      if x ~= y then return less(f, x, y) end
    end
    for _, f in ipairs(family_sort[a.family] or {}) do -- a.family == b.family here
      local x, y = a[f], b[f]
      if x ~= y then return less(f, x, y) end
    end
    return a.name < b.name
  end
end

-- ---------------------------------------------------------------- pipeline

-- The specs (templates/<family>/spec.lua), loaded, and their file names.
local function load_specs(src, opts)
  local specs, files = {}, {}
  for _, name in ipairs(src.names()) do
    local folder = name:match("^templates/([^/]+)/spec%.lua$")
    if folder then
      specs[#specs + 1] = as_running(name, enumerate.load_spec, src.read(name), name, src.read)
      files[#specs] = name
      if not inside_templates(specs[#specs].template) then
        fail("%s: template '%s' must be a path inside templates/ (without '.' or '..' parts)",
          name, naming.printable(specs[#specs].template))
      end
      if specs[#specs].family ~= folder or not folder:match("^[a-z][a-z0-9]*$") then
        fail("%s: family '%s' must be the folder's name, a lower-case word", name,
          specs[#specs].family)
      end
    end
  end
  if #specs == 0 then
    fail("no templates/<family>/spec.lua in %s", opts.templates or "the embedded templates")
  end
  return specs, files
end

-- The fields of kernel name `name` and its spec, by the one family whose name declaration
-- parses it; a usage error naming every family's name shape otherwise.
local function parse_name(specs, files, name, option)
  local found, spec_found, shapes = nil, nil, {}
  for i, spec in ipairs(specs) do
    local k = naming.parse(spec.naming, name)
    if k ~= nil then
      if found then
        fail("%s: %s parses as a kernel of %s and of %s", option, name, files[i],
          files[spec_found])
      end
      found, spec_found = k, i
    end
    shapes[#shapes + 1] = naming.shape(spec.naming)
  end
  if found == nil then
    usage("%s: not a kernel name: '%s' (expected %s)", option, naming.printable(name),
      table.concat(shapes, " or "))
  end
  found.family = specs[spec_found].family
  return found, specs[spec_found]
end

-- A decoder over the specs of the templates in `dir` (nil: the embedded ones), loaded once:
-- decoder(name) gives the lines --decode prints ("family=mma", then "field=value" in name
-- order), or raises --decode's usage error. The decoder fuzzer (tests/fuzz) calls it per input.
function M.decoder(dir, opts)
  local specs, files = load_specs(sources(dir), opts or {})
  return function(name)
    local k, spec = parse_name(specs, files, name, "--decode")
    local lines = { "family=" .. spec.family }
    if k.op ~= naming.IMPLICIT_OP then lines[#lines + 1] = "op=" .. k.op end -- as in the name
    for _, f in ipairs(naming.fields(spec.naming)) do lines[#lines + 1] = f .. "=" .. tostring(k[f]) end
    return lines
  end
end

local function decode(opts)
  for _, line in ipairs(M.decoder(opts.templates, opts)(opts.decode)) do
    io.stdout:write(line, "\n")
  end
end

-- A predicate over kernel names: whether `name` matches one of `globs` (nil: every name).
-- Globs without wildcards are looked up in a set, the rest go through fnmatch: the default set
-- is a list of exact names, tested against every combination of the space.
local function name_matcher(globs)
  if globs == nil then return function() return true end end
  local exact, patterns = {}, {}
  for _, glob in ipairs(globs) do
    if glob:find("[*?[]") then patterns[#patterns + 1] = glob else exact[glob] = true end
  end
  return function(name)
    if exact[name] then return true end
    for _, glob in ipairs(patterns) do
      if host.fnmatch(glob, name) then return true end
    end
    return false
  end
end

-- Why the bank proof rejects a kernel ("BANKS: A ldmatrix.x4 8-way (...)"), or nil.
local function banks_reason(proof)
  if proof == nil or #proof.conflicted == 0 then return nil end
  local parts = {}
  for _, p in ipairs(proof.conflicted) do parts[#parts + 1] = banks.summary(p) end
  return "BANKS: " .. table.concat(parts, "; ")
end

-- Enumerates the specs (load_specs' lists): returns the sorted kernels, the rejected
-- combinations, spec_of[k] = { spec, file } and the families. opts.space "full" skips the
-- default-set filter; opts.all keeps every named kernel (no proof or default-set filter:
-- --explain).
local function enumerate_all(specs, files, opts)
  local values = enumerate.axis_values(specs)
  local filters = {
    wfmt = selection(opts.formats, "--formats", values.wfmt, tostring),
    act = selection(opts.act, "--act", values.act, tostring),
    arch = selection(opts.arch, "--arch", values.arch, function(v) return "sm" .. tostring(v) end),
  }
  local fields = opts.fields -- --explain: only the combination with these name fields
  local function keep(k)
    for field, set in pairs(filters) do
      if k[field] ~= nil and not set[k[field]] then return false end
    end
    for field, v in pairs(fields or {}) do
      if k[field] ~= nil and k[field] ~= v then return false end
    end
    return true
  end
  -- --kernels: one glob or a comma-separated list of them (kernel names hold no commas).
  local kernel_globs = nil
  if opts.kernels ~= nil then
    kernel_globs = {}
    for glob in opts.kernels:gmatch("[^,]+") do kernel_globs[#kernel_globs + 1] = glob end
  end
  local wanted = name_matcher(kernel_globs)
  local full = opts.space == "full"
  local kernels, rejected, spec_of, by_name = {}, {}, {}, {}
  local quiet = not (opts.why_not or opts.all)
  for i, spec in ipairs(specs) do
    -- Combinations that the --kernels glob or (quietly) the default set would drop later are
    -- dropped before valid() and derive(), by the name their axes give: most of the space.
    local defaults_only = quiet and not full and spec.defaults
    local in_defaults = name_matcher(spec.defaults) -- every kernel, if the spec declares none
    local function spec_keep(k)
      if not keep(k) then return false end
      if opts.kernels == nil and not defaults_only then return true end
      local named, name = pcall(naming.kernel_name, spec.naming, k)
      if not named then return true end
      return wanted(name) and (not defaults_only or in_defaults(name))
    end
    local previous = host.running(files[i])
    local ks, rs = enumerate.run(spec, files[i], { keep = spec_keep, verbose = opts.verbose,
      quiet = quiet })
    for _, k in ipairs(ks) do
      if wanted(k.name) then
        if by_name[k.name] then
          fail("%s: kernel %s is already defined by %s", files[i], k.name, by_name[k.name])
        end
        by_name[k.name] = files[i]
        local default = full or in_defaults(k.name)
        local reason = nil
        -- The proof costs time: skip it where the default-set filter drops the kernel silently.
        if not opts.all and (default or opts.why_not) then
          local proof = enumerate.prove(spec, files[i], k, opts.verbose)
          reason = not opts.allow_conflicts and banks_reason(proof) or nil
        end
        if reason == nil and not default and not opts.all then
          reason = "DEFAULTS: not in the default set (M.defaults); --space full emits it"
        end
        if reason then
          rejected[#rejected + 1] = { label = k.name, reason = reason }
        else
          kernels[#kernels + 1] = k
          spec_of[k] = { spec = spec, file = files[i] }
        end
      end
    end
    for _, r in ipairs(rs) do
      if not r.label:match("^mgen_") or wanted(r.label) then rejected[#rejected + 1] = r end
    end
    host.running(previous)
  end
  local family_sort = {}
  for _, spec in ipairs(specs) do family_sort[spec.family] = spec.sort end
  table.sort(kernels, comparator(values, family_sort))
  local families = {}
  for i, spec in ipairs(specs) do families[i] = spec.family end
  table.sort(families)
  return kernels, rejected, spec_of, families
end

-- table_hash: FNV-1a 64 over the manifest line of each kernel (a line with a tab-separated
-- field equal to the kernel's name), in manifest order; each kernel must have exactly one.
-- The manifest may show table_hash elsewhere (a header): it is rendered with a placeholder,
-- which must not appear on a kernel's line, and the placeholder is replaced afterwards.
local hash_placeholder = "\0mgen_table_hash\0"

local function manifest_hash(manifest, kernels)
  local count = {}
  for _, k in ipairs(kernels) do count[k.name] = 0 end
  local lines = {}
  for line in manifest:gmatch("[^\n]+") do
    for field in (line .. "\t"):gmatch("([^\t]*)\t") do
      if count[field] then
        if line:find(hash_placeholder, 1, true) then
          fail("templates/manifest.tsv.tpl: the line of kernel %s shows table_hash, which is "
            .. "computed over the kernel lines", field)
        end
        count[field] = count[field] + 1
        lines[#lines + 1] = line .. "\n"
        break
      end
    end
  end
  for _, k in ipairs(kernels) do
    if count[k.name] ~= 1 then
      fail("templates/manifest.tsv.tpl: kernel %s has %d lines in manifest.tsv, expected 1",
        k.name, count[k.name])
    end
  end
  return host.fnv1a64(table.concat(lines))
end

-- Renders every output file in memory: returns a list of { path, content } (relative paths).
local function render_all(src, opts, kernels, spec_of, families, specs, files)
  local version, verbose, nshards = opts.version, opts.verbose, opts.shards
  local compiled = {}
  local function compile(name)
    if compiled[name] == nil then
      compiled[name] = as_running(name, protect, verbose, nil, template.compile, src.read(name),
        name)
    end
    return compiled[name]
  end
  local out, paths = {}, {}
  local function add(path, content, from)
    if paths[path] then fail("%s and %s both render %s", paths[path], from, path) end
    paths[path] = from
    out[#out + 1] = { path = path, content = content }
  end
  local function render(name, vars, context, k)
    return as_running(name, protect, verbose, context, render_file, compile(name), vars, name,
      version, k)
  end

  local frozen = {}
  for i, k in ipairs(kernels) do frozen[i] = template.freeze(k, "k") end
  local all = template.freeze(frozen, "kernels")

  for i, k in ipairs(kernels) do
    local name = spec_of[k].spec.template
    add("kernels/" .. k.name .. ".cu",
      render(name, { k = frozen[i], version = version }, "kernel " .. k.name, frozen[i]), name)
  end
  local manifest = render("templates/manifest.tsv.tpl",
    { kernels = all, version = version, table_hash = hash_placeholder })
  local table_hash = hex64(manifest_hash(manifest, kernels))
  manifest = manifest:gsub(hash_placeholder, table_hash)
  add("manifest.tsv", manifest, "templates/manifest.tsv.tpl")
  add("mgen_table.c", render("templates/table.c.tpl",
    { kernels = all, version = version, table_hash = table_hash, shards = nshards }),
    "templates/table.c.tpl")
  -- Shards per family (each family is compiled for its own architectures), nshards each even
  -- where a family has fewer kernels, so the build knows the file names before generating.
  local members = {}
  for _, family in ipairs(families) do
    members[family] = {}
    for s = 0, nshards - 1 do members[family][s] = {} end
  end
  for i, k in ipairs(kernels) do
    local list = members[k.family][host.fnv1a32(k.name) % nshards]
    list[#list + 1] = frozen[i]
  end
  for _, family in ipairs(families) do
    for s = 0, nshards - 1 do
      local file = string.format("%s_%02d.cu", family, s)
      add("shards/" .. file, render("templates/shard.cu.tpl",
        { kernels = all, version = version, table_hash = table_hash, shards = nshards,
          shard = s, family = family, file = file,
          shard_kernels = template.freeze(members[family][s], "shard_kernels") },
        string.format("shard %s", file)), "templates/shard.cu.tpl")
    end
  end
  -- Headers from the format table: templates/<x>.h.tpl -> include/mgen_<x>.h, given
  -- `formats` (templates/formats.lua) when the templates have one.
  local formats = nil
  for _, name in ipairs(src.names()) do
    if name == "templates/formats.lua" then
      formats = template.freeze(as_running(name, protect, verbose, nil, enumerate.load_module,
        "formats", src.read), "formats")
    end
  end
  for _, name in ipairs(src.names()) do
    local base = name:match("^templates/([^/]+)%.h%.tpl$")
    if base and base ~= "params" then
      add("include/mgen_" .. base .. ".h", render(name,
        { formats = formats, version = version }), name)
    end
  end
  -- Each family's parameter header: templates/params.h.tpl -> include/mgen_params_<family>.h,
  -- given the spec's declared params (names and order written once, in the spec), whatever the
  -- filter selects: the family's runtime file includes it.
  for i, spec in ipairs(specs) do
    if spec.params ~= nil then
      local params = {}
      for j, p in ipairs(spec.params) do
        params[j] = { id = string.upper(p.name), name = p.name, index = j - 1, doc = p.doc }
      end
      local name = "templates/params.h.tpl"
      add("include/mgen_params_" .. spec.family .. ".h", render(name,
        { family = spec.family, id = string.upper(spec.family), spec = files[i],
          params = params, count = #params, version = version }), name)
    end
  end
  -- Partials (.cuh, .h): templates/common/X -> include/X, templates/<family>/include/X ->
  -- include/<family>/X, templates/formats/P (P: X or <wfmt>/X) -> include/formats/P. X.tpl is a
  -- template; a plain X (no template syntax: editors highlight it) is copied under a banner.
  for _, name in ipairs(src.names()) do
    local file = name:gsub("%.tpl$", "")
    local header = file:match("%.cuh$") or file:match("%.h$")
    local base = header and file:match("^templates/common/([^/]+)$")
    local family, fbase = file:match("^templates/([^/]+)/include/([^/]+)$")
    if not header then fbase = nil end
    local fmt = header and file:match("^templates/(formats/[^/]+)$")
      or header and file:match("^templates/(formats/[^/]+/[^/]+)$")
    local path = base and ("include/" .. base) or fbase and ("include/" .. family .. "/" .. fbase)
      or fmt and ("include/" .. fmt)
    if path and name:match("%.tpl$") then
      add(path, render(name, { kernels = all, version = version, table_hash = table_hash }), name)
    elseif path then
      add(path, string.format("// Generated by marlin-gen %s from %s. Do not edit.\n", version,
        name) .. src.read(name), name)
    end
  end
  return out, table_hash
end

-- A relative output path ("kernels/<name>.cu") split into its folder (nil: <out> itself) and
-- file name; every part must be a plain file name (letters, digits, "_", "." and "-", not
-- starting with "."), so that nothing a template or spec names lands outside <out>.
local function split_output(path)
  local parts = {}
  for part in (path .. "/"):gmatch("([^/]*)/") do
    if not part:match("^[A-Za-z0-9_][A-Za-z0-9_.%-]*$") then
      fail("output file '%s': '%s' is not a plain file name (letters, digits, '_', '.', '-')",
        naming.printable(path), naming.printable(part))
    end
    parts[#parts + 1] = part
  end
  local name = table.remove(parts)
  return #parts > 0 and table.concat(parts, "/") or nil, name
end

-- Writes the rendered files all or nothing: each changed file to a temporary beside it (every
-- output path checked first); on a failure the temporaries and the folders made for them are
-- removed and <out> is as it was. Then renames them into place, removes stale generated
-- files, and renames mgen.stamp last.
local function write_all(dir, files, summary, verbose)
  local wanted, targets = {}, {}
  for _, f in ipairs(files) do
    local sub, name = split_output(f.path)
    wanted[f.path] = true
    targets[#targets + 1] = { dir = sub and (dir .. "/" .. sub) or dir, name = name,
      content = f.content }
  end
  targets[#targets + 1] = { dir = dir, name = "mgen.stamp", content = summary, force = true }
  local staged, made = {}, {}
  local ok, err = pcall(function()
    for _, t in ipairs(targets) do
      for _, d in ipairs(host.make_dirs(t.dir)) do made[#made + 1] = d end
      t.tmp = host.stage_file(t.dir, t.name, t.content, t.force)
      if t.tmp then staged[#staged + 1] = t end
    end
  end)
  if not ok then
    for i = #staged, 1, -1 do pcall(host.remove_file, staged[i].tmp) end
    for i = #made, 1, -1 do pcall(host.remove_dir, made[i]) end
    error(err, 0)
  end
  -- Renames within a folder do not fail for want of space; should one fail all the same, the
  -- temporaries not yet renamed are removed.
  local stamp = table.remove(staged)
  for i, t in ipairs(staged) do
    local renamed, rerr = pcall(host.commit_file, t.tmp, t.dir, t.name)
    if not renamed then
      for j = i, #staged do pcall(host.remove_file, staged[j].tmp) end
      pcall(host.remove_file, stamp.tmp)
      error(rerr, 0)
    end
  end
  -- Generated files no longer wanted, in these folders and (include/<family>/) one level down.
  local removed = 0
  local stale = { kernels = "^mgen_.*%.cu$", shards = "%.cu$", include = "%.c?u?h$" }
  local function sweep(sub, pattern, depth)
    for _, entry in ipairs(host.list_dir(dir .. "/" .. sub)) do
      if entry:sub(-1) == "/" then
        if depth > 0 then sweep(sub .. "/" .. entry:sub(1, -2), pattern, depth - 1) end
      elseif entry:match(pattern) and not entry:match("^%.") and not wanted[sub .. "/" .. entry] then
        host.remove_file(dir .. "/" .. sub .. "/" .. entry)
        removed = removed + 1
      end
    end
  end
  local ok_sweep, serr = pcall(function()
    for _, sub in ipairs(template.sorted_keys(stale)) do
      sweep(sub, stale[sub], sub == "include" and 1 or 0)
    end
  end)
  if not ok_sweep then
    pcall(host.remove_file, stamp.tmp)
    error(serr, 0)
  end
  host.commit_file(stamp.tmp, stamp.dir, stamp.name)
  if verbose then
    io.stderr:write(string.format("marlin-gen: %s: %d files, %d written, %d stale removed\n",
      dir, #files, #staged, removed))
  end
end

-- ---------------------------------------------------------------- --explain

-- "MxNxK" -> { m, n, k }, or a usage error.
local function parse_shape(text)
  local m, n, k = text:match("^(%d+)x(%d+)x(%d+)$")
  m, n, k = math.tointeger(m), math.tointeger(n), math.tointeger(k)
  if m == nil or n == nil or k == nil or m < 1 or n < 1 or k < 1 then
    usage("--shape needs MxNxK (e.g. 16x4096x4096), not '%s'", text)
  end
  return { m = m, n = n, k = k }
end

local function out(fmt, ...)
  io.stdout:write(string.format(fmt, ...), "\n")
end

-- Prints the bank proof of kernel `name`: per access the worst instruction's lane -> address
-- -> bank table and its conflicts; with --shape, the predicted totals of one launch.
local function explain(src, opts)
  local name = opts.explain
  local specs, files = load_specs(src, opts)
  local fields = parse_name(specs, files, name, "--explain")
  local kernels, rejected, spec_of = enumerate_all(specs, files, {
    templates = opts.templates, verbose = opts.verbose, kernels = name, all = true,
    fields = fields })
  local k = kernels[1]
  if k == nil then
    for _, r in ipairs(rejected) do
      if r.label == name then fail("--explain: %s is rejected: %s", name, r.reason) end
    end
    fail("--explain: no kernel %s in the specs", name)
  end
  local spec, file = spec_of[k].spec, spec_of[k].file
  -- The shape is checked before anything is printed: a usage error prints no proof.
  local shape = nil
  if opts.shape then
    shape = parse_shape(opts.shape)
    shape.sms = opts.sms
    if shape.n % k.tile_n ~= 0 or shape.k % k.tile_k ~= 0 then
      usage("--shape %s: N must be a multiple of %d and K of %d", opts.shape, k.tile_n, k.tile_k)
    end
  end
  host.running(file)
  local proof = enumerate.prove(spec, file, k, opts.verbose)
  if proof == nil then
    out("%s: %s has no shared-memory model (smem_accesses)", name, file)
    return
  end
  local reason = banks_reason(proof)
  local status
  if reason then
    status = "REJECTED " .. reason .. " (--allow-conflicts emits it)"
  elseif #proof.waived > 0 then
    status = "conflict-free except waived accesses"
  else
    status = "conflict-free"
  end
  out("%s: %s", name, status)
  out("model: gen/lua/banks.lua: 32 banks x 4 B; phases: ldmatrix one 8x8 matrix (8 lanes), other")
  out("  16-byte accesses half-warps, 8 bytes or less the whole warp; wavefronts = most distinct words")
  out("  in one bank, summed over phases; minimum = bytes of distinct words / 128 per phase.")
  -- The family's own access kinds (its model's kinds table), in its own words.
  local notes, own = spec.smem_explain or {}, spec.smem_kinds or {}
  local declared = false
  for _, p in ipairs(proof.accesses) do declared = declared or own[p.access.kind] ~= nil end
  for _, line in ipairs(declared and notes.model or {}) do out("  %s", line) end
  out("  Addresses are byte offsets in the buffer named (each starts on a 128-byte boundary).")
  out("")
  out("  %-18s %-7s %-17s %5s %9s %10s %7s %9s", "access", "kind", "instruction", "width",
    "instrs", "wavefronts", "minimum", "conflicts")
  for _, p in ipairs(proof.accesses) do
    local a = p.access
    out("  %-18s %-7s %-17s %5d %9d %10d %7d %9d%s", a.name, a.kind, a.instr, a.width,
      p.instances, p.wavefronts, p.min, p.conflicts,
      p.conflicts > 0 and (a.waived and "  waived" or "  CONFLICT") or "")
  end
  out("  (per block and per event: instrs = warp-wide instructions of all warps, each listed)")
  for _, p in ipairs(proof.accesses) do
    local a, r = p.access, p.worst.result
    out("")
    out("%s: %s, %d bytes per lane, in the %s; event '%s'; %d instructions", a.name, a.instr,
      a.width, a.buffer or "shared memory", a.event, p.instances)
    if p.conflicts > 0 then
      out("  worst: %s: %d wavefronts, min %d: %d-way conflict%s", p.worst.label, r.wavefronts,
        r.min, r.ways, a.waived and (" (waived: " .. a.waived .. ")") or "")
    else
      out("  every instruction at its minimum; first: %s: %d wavefronts, min %d", p.worst.label,
        r.wavefronts, r.min)
    end
    for _, line in ipairs(banks.table_lines(r, p.worst.addrs)) do out("%s", line) end
  end
  if shape then
    local totals, info = enumerate.launch(spec, file, k, shape, opts.verbose)
    if totals == nil then
      out("%s has no launch model (smem_launch)", file)
      return
    end
    out("")
    out("launch M=%d N=%d K=%d on %d SMs%s: predicted shared-memory wavefronts (ncu "
      .. "--section SourceCounters: L1 Wavefronts Shared, Ideal, Excessive)", shape.m,
      shape.n, shape.k, shape.sms, type(info) == "table" and info.grid
        and string.format(", grid %d", info.grid)
          .. (info.dp_tiles and string.format(", whole tiles %d", info.dp_tiles) or "") or "")
    out("  %-7s %12s %12s %12s %12s", "kind", "instrs", "wavefronts", "minimum", "conflicts")
    local pseudo = false
    for _, t in ipairs(totals) do
      out("  %-7s %12d %12d %12d %12d", t.kind, t.instructions, t.wavefronts, t.min, t.conflicts)
      pseudo = pseudo or (own[t.kind] ~= nil and own[t.kind].pseudo == true)
    end
    for _, line in ipairs(pseudo and notes.launch or {}) do out("  %s", line) end
  end
end

local spaces = { default = true, full = true }

function M.main(opts)
  if opts.decode then return decode(opts) end
  opts.space = opts.space or "default"
  if not spaces[opts.space] then usage("--space must be default or full, not '%s'", opts.space) end
  if opts.sms ~= nil then
    local n = math.tointeger(tonumber(opts.sms))
    if n == nil or n < 1 or n > 1024 then usage("--sms needs a number from 1 to 1024, not '%s'", opts.sms) end
    opts.sms = n
  else
    opts.sms = 132
  end
  if opts.shape and not opts.explain then usage("--shape goes with --explain NAME") end
  local src = sources(opts.templates)
  if opts.explain then return explain(src, opts) end
  local specs, files = load_specs(src, opts)
  local kernels, rejected, spec_of, families = enumerate_all(specs, files, opts)
  -- A --kernels filter that selects nothing is a mistake (a typo in CMake's MGEN_KERNELS would
  -- otherwise build an empty library), for --list and generation alike; --why-not is satisfied
  -- by the rejected kernels it explains (named ones: only those went through the filter).
  local explained = false
  for _, r in ipairs(opts.why_not and rejected or {}) do
    explained = explained or r.label:match("^mgen_") ~= nil
  end
  if opts.kernels ~= nil and #kernels == 0 and not explained then
    usage("--kernels '%s' selects no kernel%s", opts.kernels,
      opts.space == "full" and "" or " of the default set (--space full: of every valid one)")
  end
  if opts.list or opts.why_not then
    for _, k in ipairs(kernels) do io.stdout:write(k.name, "\n") end
    if opts.why_not then
      for _, r in ipairs(rejected) do
        -- a spec's reason is outside text, as is a field list of its values
        io.stdout:write(naming.printable("REJECTED " .. r.label .. ": " .. r.reason), "\n")
      end
    end
    return
  end
  if #kernels == 0 then io.stderr:write("marlin-gen: warning: no kernels selected\n") end
  local files, table_hash = render_all(src, opts, kernels, spec_of, families, specs, files)
  local summary = string.format("marlin-gen %s: %d kernels, %d shards, table_hash %s\n",
    opts.version, #kernels, opts.shards, table_hash)
  write_all(opts.out, files, summary, opts.verbose)
end

return M
