-- enumerate.lua -- loads a spec and turns its axes into kernels: cross, filter, valid, derive.
--
-- A spec (templates/<family>/spec.lua) is data plus pure functions:
--   family, template          strings
--   name = { "sm{arch}", "{act:word}", ... }                 the kernel name's parts (naming.lua)
--   sort = { "stages", "warps" }                             optional; the family's fields that
--                                                            order its kernels after the tile
--   axes = { { name = "group", values = { 0, 32 } }, ... }   crossed, first axis outermost
--   valid(k) -> true | false, "reason"                       optional
--   derive(k, name) -> { new_key = value, ... }              optional; may not override
--                                                            k's fields; name: the kernel's
--                                                            name, nil if the axes alone
--                                                            cannot name it
--   params = { { name = "stages", doc = "..." }, ... }      optional; mgen_kernel_desc.params:
--                                                            names and order (derive returns
--                                                            params = { stages = 4, ... })
--   cuda_architectures = "90a"                               optional; read by CMake only
--   defaults = { "mgen_sm80_*_16x128x128_*", ... }          optional; globs of the default set
--   smem_accesses(k, rows) -> { access, ... }                optional; see banks.lua
--   smem_launch(k, shape) -> { { event, rows, times } }, info  optional; see banks.lua
--   smem_kinds = { tma = { phase_lanes = 8, pseudo = true } }  optional; the model's own access
--                                                            kinds (banks.lua knows the LSU's)
--   smem_explain = { model = { lines }, launch = { lines } }   optional; --explain's words on them
-- A table-valued axis value is flattened with the axis name as prefix: { m = 16, n = 64 } on
-- axis "tile" gives k.tile_m = 16, k.tile_n = 64 (and no k.tile). Every k also has
-- k.family = spec.family (so no axis may be called "family") and k.op, the operation: an axis
-- named "op" gives it, else it is naming.IMPLICIT_OP ("dense"). Spec functions receive a
-- frozen k; an error inside them is reported as "<file>: derive(<kernel name>): <error>".
-- A spec may split itself into modules: require("mma.smem") loads templates/mma/smem.lua in the
-- same sandbox (once per spec), through the loader given to load_spec.
--
-- Errors are raised as tables { message = "..." } (already formatted; see gen/main.c).
local template = require("template")
local naming = require("naming")
local banks = require("banks")

local M = {}

local checked = setmetatable({}, { __mode = "k" }) -- access lists already checked

local function fail(fmt, ...)
  error({ message = string.format(fmt, ...) }, 0)
end

-- What spec code may use: pure functions only (no io, os, require, load, debug). pairs()
-- iterates in sorted key order, so that derived lists do not depend on hash order. The
-- libraries are read-only copies (template.frozen_libraries), so a spec cannot change the
-- functions the generator itself uses; getmetatable shows tables' metatables only (a string's
-- is the host's own `string` table) and rawset refuses read-only tables.
local libraries = template.frozen_libraries()
local spec_globals = {
  assert = assert, error = error, ipairs = ipairs, next = next, pairs = template.pairs,
  pcall = pcall, select = select, tonumber = tonumber, tostring = tostring, type = type,
  setmetatable = setmetatable, rawequal = rawequal, rawget = rawget, rawlen = rawlen,
  getmetatable = function(v)
    if type(v) ~= "table" then return nil end
    return getmetatable(v)
  end,
  rawset = function(t, key, v)
    if template.is_frozen(t) then error("rawset: the table is read-only", 2) end
    return rawset(t, key, v)
  end,
  string = libraries.string, table = libraries.table, math = libraries.math,
  utf8 = libraries.utf8,
}

-- "{act=f16, arch=80, ...}": a kernel that has no name (yet); the implicit op, as in names, is
-- not written.
function M.field_list(k)
  local parts = {}
  for _, key in ipairs(template.sorted_keys(k)) do
    local v = k[key]
    if type(v) ~= "table" and not (key == naming.OP_FIELD and v == naming.IMPLICIT_OP) then
      parts[#parts + 1] = string.format("%s=%s", key, tostring(v))
    end
  end
  return "{" .. table.concat(parts, ", ") .. "}"
end

-- The kernel's name if its fields make one (by its spec's name declaration), else its field
-- list.
function M.label(spec, k)
  local ok, name = pcall(naming.kernel_name, spec.naming, k)
  if ok then return name end
  return M.field_list(k)
end

local function is_scalar(v)
  local t = type(v)
  return t == "string" or t == "number" or t == "boolean"
end

-- Checks the shape of a loaded spec; raises "<file>: <what>: <problem>".
local function check(spec, file)
  if type(spec) ~= "table" then fail("%s: must return a table, not a %s", file, type(spec)) end
  for _, f in ipairs({ "family", "template" }) do
    if type(spec[f]) ~= "string" then fail("%s: %s must be a string", file, f) end
  end
  if spec.cuda_architectures ~= nil and type(spec.cuda_architectures) ~= "string" then
    fail("%s: cuda_architectures must be a string (CMake's CUDA_ARCHITECTURES, e.g. \"90a\")", file)
  end
  if type(spec.axes) ~= "table" or #spec.axes == 0 then
    fail("%s: axes must be a non-empty list", file)
  end
  if spec.sort ~= nil then
    if type(spec.sort) ~= "table" then fail("%s: sort must be a list of field names", file) end
    for i, f in ipairs(spec.sort) do
      if type(f) ~= "string" then fail("%s: sort[%d] must be a field name", file, i) end
    end
  end
  if spec.smem_kinds ~= nil and type(spec.smem_kinds) ~= "table" then
    fail("%s: smem_kinds must be a table of access kinds (the shared-memory model's)", file)
  end
  for kind, d in pairs(spec.smem_kinds or {}) do
    if type(kind) ~= "string" or type(d) ~= "table" or banks.lsu_kinds[kind] then
      fail("%s: smem_kinds.%s must be { phase_lanes = n | nil, pseudo = boolean | nil } and not "
        .. "an LSU kind", file, tostring(kind))
    end
  end
  for _, f in ipairs({ "valid", "derive", "smem_accesses", "smem_launch" }) do
    if spec[f] ~= nil and type(spec[f]) ~= "function" then
      fail("%s: %s must be a function", file, f)
    end
  end
  if spec.params ~= nil then -- mgen_kernel_desc.params: names and order (mgen_params_<family>.h)
    if type(spec.params) ~= "table" then fail("%s: params must be a list of { name, doc }", file) end
    local seen_param = {}
    for i, p in ipairs(spec.params) do
      if type(p) ~= "table" or type(p.name) ~= "string" or not p.name:match("^[a-z][a-z0-9_]*$")
          or type(p.doc) ~= "string" or p.doc == "" or p.doc:find("*/", 1, true) then
        fail("%s: params[%d] must be { name = lower-case identifier, doc = text (no '*/') }", file, i)
      end
      if seen_param[p.name] then fail("%s: params[%d]: '%s' appears twice", file, i, p.name) end
      seen_param[p.name] = true
    end
  end
  if spec.defaults ~= nil then
    if type(spec.defaults) ~= "table" then fail("%s: defaults must be a list of globs", file) end
    for i, g in ipairs(spec.defaults) do
      if type(g) ~= "string" then fail("%s: defaults[%d] must be a string (a glob)", file, i) end
    end
  end
  local seen = { family = "M.family" }
  local function claim(key, where)
    if seen[key] then
      fail("%s: %s: field '%s' already comes from %s", file, where, key, seen[key])
    end
    seen[key] = where
  end
  for i, axis in ipairs(spec.axes) do
    local where = string.format("axes[%d]", i)
    if type(axis) ~= "table" or type(axis.name) ~= "string"
        or not axis.name:match("^[%a_][%w_]*$") then
      fail("%s: %s: name must be an identifier", file, where)
    end
    where = string.format("axes[%d] (%s)", i, axis.name)
    if type(axis.values) ~= "table" or #axis.values == 0 then
      fail("%s: %s: values must be a non-empty list", file, where)
    end
    local first = axis.values[1]
    if type(first) == "table" then
      for j, v in ipairs(axis.values) do -- field names, before they are sorted and joined
        for f in next, type(v) == "table" and v or {} do
          if type(f) ~= "string" then
            fail("%s: %s: values[%d] has a key that is not a string (a field name)", file, where, j)
          end
        end
      end
      local fields = template.sorted_keys(first)
      for _, f in ipairs(fields) do claim(axis.name .. "_" .. tostring(f), where) end
      for j, v in ipairs(axis.values) do
        local vf = type(v) == "table" and template.sorted_keys(v) or {}
        if table.concat(vf, ",") ~= table.concat(fields, ",") then
          fail("%s: %s: values[%d] must have the fields {%s} of values[1]", file, where, j,
            table.concat(fields, ", "))
        end
        for _, f in ipairs(vf) do
          if type(f) ~= "string" or not is_scalar(v[f]) then
            fail("%s: %s: values[%d].%s must be a string, number or boolean", file, where, j,
              tostring(f))
          end
        end
      end
    else
      claim(axis.name, where)
      for j, v in ipairs(axis.values) do
        if not is_scalar(v) then
          fail("%s: %s: values[%d] must be a string, number, boolean or table", file, where, j)
        end
      end
    end
  end
end

-- Runs `src` (named `file`) in a fresh sandbox; `require` there calls load_module.
local function run_sandboxed(src, file, load_module)
  local env = setmetatable({}, {
    __index = function(_, name)
      local v = spec_globals[name]
      if name == "require" then v = load_module end
      if v == nil then error(string.format("undefined name '%s'", tostring(name)), 2) end
      return v
    end,
    __newindex = function(_, name)
      error(string.format("cannot assign global '%s' in a spec (use local)", tostring(name)), 2)
    end,
  })
  local chunk, err = load(src, "@" .. file, "t", env)
  if chunk == nil then fail("%s", err) end
  local ok, result = pcall(chunk)
  if not ok then fail("%s", type(result) == "table" and result.message or tostring(result)) end
  return result
end

-- A require() for sandboxed code: loads templates/<name>.lua through loader(path) (which
-- returns its source or raises) in the same kind of sandbox, once per returned function.
local function module_loader(loader)
  local modules, loading = {}, {}
  local function load_module(name)
    if type(name) ~= "string" or not name:match("^[%w_][%w_.]*$") then
      error(string.format("require: bad module name %s", tostring(name)), 2)
    end
    if modules[name] ~= nil then return modules[name] end
    if loading[name] then error(string.format("require: '%s' requires itself", name), 2) end
    if loader == nil then error(string.format("require: no modules here ('%s')", name), 2) end
    loading[name] = true
    local path = "templates/" .. name:gsub("%.", "/") .. ".lua"
    local result = run_sandboxed(loader(path), path, load_module)
    loading[name] = nil
    modules[name] = result == nil and true or result
    return modules[name]
  end
  return load_module
end

-- Runs spec source `src` (named `file`, e.g. "templates/mma/spec.lua") and checks its shape.
-- loader(path) (optional) returns the source of templates/<name with dots as slashes>.lua for
-- require(name) ("mma.smem": templates/mma/smem.lua), or raises; without one, require is an
-- error.
function M.load_spec(src, file, loader)
  local spec = run_sandboxed(src, file, module_loader(loader))
  check(spec, file)
  local ok, schema = pcall(naming.schema, spec.name, file)
  if not ok then fail("%s", schema) end
  spec.naming = schema -- the compiled name declaration
  return spec
end

-- The data module templates/<name>.lua (e.g. "formats"), run in the spec sandbox.
function M.load_module(name, loader)
  return module_loader(loader)(name)
end

-- Every combination of the spec's axis values (plain tables), first axis outermost.
function M.cross(spec)
  local combos = { { family = spec.family } }
  for _, axis in ipairs(spec.axes) do
    local grown = {}
    for _, c in ipairs(combos) do
      for _, v in ipairs(axis.values) do
        local k = {}
        for key, x in pairs(c) do k[key] = x end
        if type(v) == "table" then
          for f, x in pairs(v) do k[axis.name .. "_" .. f] = x end
        else
          k[axis.name] = v
        end
        grown[#grown + 1] = k
      end
    end
    combos = grown
  end
  for _, k in ipairs(combos) do
    if k[naming.OP_FIELD] == nil then k[naming.OP_FIELD] = naming.IMPLICIT_OP end
  end
  return combos
end

-- For each axis name over all specs, its scalar values in order of first appearance (the
-- valid values of the CLI filters, and the sort order of string fields).
function M.axis_values(specs)
  local out = {}
  for _, spec in ipairs(specs) do
    for _, axis in ipairs(spec.axes) do
      local list = out[axis.name] or {}
      out[axis.name] = list
      for _, v in ipairs(axis.values) do
        local known = false
        for _, w in ipairs(list) do known = known or w == v end
        if is_scalar(v) and not known then list[#list + 1] = v end
      end
    end
  end
  return out
end

-- A deep copy holding only strings, numbers, booleans and tables (what templates can use).
local function plain(v, where)
  if is_scalar(v) then return v end
  if type(v) ~= "table" then fail("%s is a %s; derive may only return data", where, type(v)) end
  local out = {}
  for key, x in pairs(v) do
    if type(key) ~= "string" and math.type(key) ~= "integer" then
      fail("%s has a %s key; use strings or integers", where, type(key))
    end
    out[key] = plain(x, where .. "." .. tostring(key))
  end
  return out
end

-- The family parameters of a kernel descriptor (mgen_kernel_desc.params): the spec declares
-- their names and order once (spec.params: { { name = "stages", doc = ... }, ... }, rendered
-- into mgen_params_<family>.h for its runtime file); derive returns their values by name
-- (params = { stages = 4, ... }). Returns them as the list the table and banner show
-- ({ { name = "stages", value = 4 }, ... }, in declared order) and the manifest's text
-- "stages=4,warps=8". How many fit mgen_kernel_desc.params, the header's static assertion
-- checks where the C compiler knows MGEN_FAMILY_PARAMS.
local function params_of(spec, values, where)
  local declared = spec.params or {}
  if type(values) ~= "table" then
    fail("%s: params must be a table { name = integer } of the names in the spec's params", where)
  end
  local list, parts, known = {}, {}, {}
  for i, p in ipairs(declared) do
    local v = values[p.name]
    if math.type(v) ~= "integer" then
      fail("%s: params.%s (params[%d] of the spec) must be an integer, not %s", where, p.name, i,
        type(v) == "number" and "a float" or type(v))
    end
    list[i], parts[i], known[p.name] = { name = p.name, value = v }, p.name .. "=" .. v, true
  end
  for key in next, values do
    if not known[key] then
      fail("%s: params.%s is not one of the spec's params", where, tostring(key))
    end
  end
  return list, table.concat(parts, ",")
end

local function plain_handler(e)
  return type(e) == "table" and e.message or tostring(e)
end

local function verbose_handler(e)
  return debug.traceback(plain_handler(e), 2)
end

-- Calls a spec function with a frozen copy of k (and `...`); errors name the spec entry and
-- `label` (the kernel's name or field list, or a function giving it: computed only then).
local function call(file, what, label, fn, k, verbose, ...)
  local ok, a, b = xpcall(fn, verbose and verbose_handler or plain_handler,
    template.freeze(k, "k"), ...)
  if not ok then
    fail("%s: %s(%s): %s", file, what, type(label) == "function" and label() or label, a)
  end
  return a, b
end

-- Enumerates one spec. opts.keep(k) (optional) filters combinations before valid();
-- opts.verbose adds tracebacks; opts.quiet leaves the rejected list empty (saves naming
-- them). Returns the kernels (plain tables with `family`, every axis field, the derived fields
-- and `name`, in enumeration order) and the rejected combinations ({ label = name or field
-- list, reason = "..." }).
function M.run(spec, file, opts)
  opts = opts or {}
  local kernels, rejected = {}, {}
  for _, k in ipairs(M.cross(spec)) do
    if opts.keep == nil or opts.keep(k) then
      local ok, reason = true, nil
      if spec.valid then
        ok, reason = call(file, "valid", function() return M.label(spec, k) end, spec.valid, k,
          opts.verbose)
        if ok ~= true and ok ~= false then
          fail("%s: valid(%s): returned %s; expected true, or false and a reason", file,
            M.label(spec, k), tostring(ok))
        end
      end
      if not ok then
        if not opts.quiet then
          rejected[#rejected + 1] = { label = M.label(spec, k), reason = reason ~= nil
            and tostring(reason) or "(no reason given)" }
        end
      else
        -- Named before derive where the axes name it (the label of errors), else after.
        local named, name = pcall(naming.kernel_name, spec.naming, k)
        if spec.derive then
          local label = named and name or M.field_list(k)
          local derived = call(file, "derive", label, spec.derive, k, opts.verbose,
            named and name or nil)
          local where = string.format("%s: derive(%s)", file, label)
          if type(derived) ~= "table" then
            fail("%s: returned a %s, not a table", where, type(derived))
          end
          local bad = false
          for key in next, derived do
            bad = bad or type(key) ~= "string" or k[key] ~= nil or key == "name"
          end
          if bad and not template.orderable_keys(derived) then -- a table key: no first to name
            fail("%s: returned a key that is not a string, number or boolean", where)
          end
          for _, key in ipairs(bad and template.sorted_keys(derived) or {}) do -- name the first
            if type(key) ~= "string" then fail("%s: returned a %s key", where, type(key)) end
            if k[key] ~= nil or key == "name" then
              fail("%s: key '%s' would override a field of k", where, key)
            end
          end
          local values = derived.params
          for key, v in next, derived do
            if key ~= "params" then k[key] = is_scalar(v) and v or plain(v, where .. ": " .. key) end
          end
          if values ~= nil or spec.params ~= nil then
            k.params, k.params_text = params_of(spec, values or {}, where)
          end
        end
        if not named then named, name = pcall(naming.kernel_name, spec.naming, k) end
        if not named then fail("%s: cannot name kernel %s: %s", file, M.field_list(k), name) end
        -- The name becomes a file name (kernels/<name>.cu) and C identifiers: checked here,
        -- before anything is written, whatever naming.lua was made to produce.
        if not name:match("^[A-Za-z0-9_]+$") then
          fail("%s: kernel name '%s' holds characters other than letters, digits and '_'", file,
            naming.printable(name))
        end
        k.name = name
        kernels[#kernels + 1] = k
      end
    end
  end
  return kernels, rejected
end

-- ---------------------------------------------------------------- shared-memory proof

-- The shared-memory accesses of named kernel k (spec.smem_accesses(k, rows), checked), or nil
-- when the spec has no model. rows: live rows in the epilogue (nil: the whole tile).
function M.smem_accesses(spec, file, k, rows, verbose)
  if spec.smem_accesses == nil then return nil end
  local list = call(file, "smem_accesses", k.name, spec.smem_accesses, k, verbose, rows)
  if not checked[list] then
    local where = string.format("%s: smem_accesses(%s)", file, k.name)
    if type(list) ~= "table" or #list == 0 then fail("%s: must return a non-empty list", where) end
    for i, a in ipairs(list) do
      if not checked[a] then banks.check(a, string.format("%s[%d]", where, i), spec.smem_kinds) end
      checked[a] = true
    end
    checked[list] = true
  end
  return list
end

-- The bank proof of kernel k (banks.prove of its accesses), or nil without a model.
function M.prove(spec, file, k, verbose)
  local list = M.smem_accesses(spec, file, k, nil, verbose)
  return list and banks.prove(list)
end

-- Per-launch totals on shape { m, n, k, sms }, by access kind: a list of { kind, instructions,
-- wavefronts, min, conflicts }, sorted by kind, and the spec's launch info; nil without a model.
function M.launch(spec, file, k, shape, verbose)
  if spec.smem_launch == nil or spec.smem_accesses == nil then return nil end
  local events, info = call(file, "smem_launch", k.name, spec.smem_launch, k, verbose, shape)
  local where = string.format("%s: smem_launch(%s)", file, k.name)
  if type(events) ~= "table" then fail("%s: must return a list", where) end
  local by_kind, kinds = {}, {}
  for i, e in ipairs(events) do
    if type(e) ~= "table" or type(e.event) ~= "string" or math.type(e.rows) ~= "integer"
        or math.type(e.times) ~= "integer" then
      fail("%s: [%d] must be { event = string, rows = integer, times = integer }", where, i)
    end
    for _, a in ipairs(M.smem_accesses(spec, file, k, e.rows, verbose)) do
      if a.event == e.event then
        local p = banks.prove_access(a)
        local t = by_kind[a.kind]
        if t == nil then
          t = { kind = a.kind, instructions = 0, wavefronts = 0, min = 0, conflicts = 0 }
          by_kind[a.kind], kinds[#kinds + 1] = t, a.kind
        end
        t.instructions = t.instructions + e.times * p.instances
        t.wavefronts = t.wavefronts + e.times * p.wavefronts
        t.min = t.min + e.times * p.min
        t.conflicts = t.conflicts + e.times * p.conflicts
      end
    end
  end
  table.sort(kinds)
  local out = {}
  for i, kind in ipairs(kinds) do out[i] = by_kind[kind] end
  return out, info
end

return M
