-- template.lua -- the template engine: `${expr}` and `//%` statement lines, nothing else.
--
-- A template compiles to a Lua chunk with exactly one Lua line per template line, loaded with
-- chunk name "@<template name>", so Lua's own messages carry the template line:
--
--   template line                          Lua line
--   //% for _, p in ipairs(k.partials) do  for _, p in ipairs(k.partials) do
--   #include "${p}"                        _o[#_o + 1] = "#include \"" .. _s(p, "p") .. "\"\n"
--   //% end                                end
--
-- Rendering runs in a strict, read-only environment: the caller's variables (deep-frozen) and
-- a few builtins. Reading an undefined name, a missing field of a frozen table, or a nil
-- `${expr}` is an error at the template line; so is any assignment to a global or a field.
local M = {}

-- Builtins visible to templates, besides the caller's variables (pairs is M.pairs).
local builtins = {
  ipairs = ipairs, tostring = tostring, tonumber = tonumber,
  select = select, type = type, error = error,
}

-- ---------------------------------------------------------------- frozen tables

local frozen = setmetatable({}, { __mode = "k" }) -- proxy -> raw table

-- The key types that sort the same in every run (tables and functions would sort by address).
local orderable = { boolean = true, number = true, string = true }

-- Whether every key of t is a boolean, number or string (so M.sorted_keys can order them).
function M.orderable_keys(t)
  for key in next, t do
    if not orderable[type(key)] then return false end
  end
  return true
end

-- Keys in a deterministic order: booleans (false first), then numbers (ascending), then
-- strings (ascending). Every key must be one of these (M.orderable_keys).
function M.sorted_keys(t)
  local keys = {}
  for key in next, t do keys[#keys + 1] = key end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == "boolean" then return b and not a end
    return a < b
  end)
  return keys
end

-- pairs() in sorted key order, for any table: Lua 5.4 seeds its string hashes per process,
-- so plain pairs() would make the output differ from run to run. Errors are raised at the
-- caller's line (a template's or a spec's), as Lua's own pairs() raises them.
function M.pairs(t)
  if frozen[t] then return pairs(t) end -- a proxy's __pairs is already sorted
  if type(t) ~= "table" then
    error(string.format("bad argument #1 to 'pairs' (table expected, got %s)", type(t)), 2)
  end
  if not M.orderable_keys(t) then
    error("pairs: keys must be booleans, numbers or strings (an order that is the same in "
      .. "every run)", 2)
  end
  local keys, i = M.sorted_keys(t), 0
  return function()
    i = i + 1
    local key = keys[i]
    if key ~= nil then return key, t[key] end
  end, t, nil
end

-- One metatable for every proxy (no closures per table: kernels are frozen by the thousand).
local labels = setmetatable({}, { __mode = "k" }) -- proxy -> label

local proxy_mt = {
  __index = function(proxy, key)
    local v = frozen[proxy][key]
    if v == nil and math.type(key) ~= "integer" then
      error(string.format("%s has no field '%s'", labels[proxy], tostring(key)), 2)
    end
    return v
  end,
  __newindex = function(proxy, key)
    local label = labels[proxy]
    error(string.format("cannot assign %s.%s: %s is read-only", label, tostring(key), label), 2)
  end,
  __len = function(proxy) return #frozen[proxy] end,
  __pairs = function(proxy)
    local raw = frozen[proxy]
    local keys, i = M.sorted_keys(raw), 0
    return function()
      i = i + 1
      local key = keys[i]
      if key ~= nil then return key, raw[key] end
    end, nil, nil
  end,
  __metatable = "frozen",
}

-- A read-only proxy of `t` (deeply). Reading a missing string key raises "<label> has no
-- field 'x'"; missing integer keys read as nil so that ipairs works. pairs() iterates in
-- sorted key order, so that templates stay byte-deterministic.
function M.freeze(t, label)
  if type(t) ~= "table" or frozen[t] then return t end
  label = label or "table"
  local raw = {}
  for key, v in next, t do
    if type(v) == "table" then
      v = M.freeze(v, type(key) == "number" and string.format("%s[%s]", label, key)
        or label .. "." .. tostring(key))
    end
    raw[key] = v
  end
  local proxy = setmetatable({}, proxy_mt)
  frozen[proxy], labels[proxy] = raw, label
  return proxy
end

-- The raw table behind a frozen proxy (shared, do not modify), or `t` itself.
function M.thaw(t)
  return frozen[t] or t
end

-- Whether t is a frozen proxy (sandboxed code's rawset must not write into one).
function M.is_frozen(t)
  return frozen[t] ~= nil
end

-- Read-only copies of the standard libraries for sandboxed code (templates here, specs in
-- enumerate.lua), never the host's own tables: were a spec or template to replace
-- string.format, the generator's own naming.lua and emit.lua would call the replacement when
-- they write kernel names and paths.
function M.frozen_libraries()
  return { string = M.freeze(string, "string"), table = M.freeze(table, "table"),
    math = M.freeze(math, "math"), utf8 = M.freeze(utf8, "utf8") }
end

builtins.pairs = M.pairs
do
  local libs = M.frozen_libraries()
  builtins.string, builtins.table, builtins.math = libs.string, libs.table, libs.math
end

-- ---------------------------------------------------------------- compiling

-- A Lua string literal that stays on one line.
local function quote(s)
  local escaped = s:gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' end
    if c == "\\" then return "\\\\" end
    if c == "\n" then return "\\n" end
    if c == "\t" then return "\\t" end
    if c == "\r" then return "\\r" end
    return string.format("\\%03d", c:byte())
  end)
  return '"' .. escaped .. '"'
end

-- End position of the `${...}` that starts at `open` (the "$"): matches braces, skips quoted
-- strings. Returns nil if the line ends first.
local function close_of(line, open)
  local depth, i, n = 0, open + 1, #line
  while i <= n do
    local c = line:sub(i, i)
    if c == '"' or c == "'" then
      i = i + 1
      while i <= n and line:sub(i, i) ~= c do
        if line:sub(i, i) == "\\" then i = i + 1 end
        i = i + 1
      end
    elseif c == "{" then
      depth = depth + 1
    elseif c == "}" then
      depth = depth - 1
      if depth == 0 then return i end
    end
    i = i + 1
  end
  return nil
end

-- Lua code for one text line (no newline inside); `eol` is "\n" or "" for the last line.
local function text_line(line, eol, chunkname, lineno)
  local parts, pos = {}, 1
  while true do
    local open = line:find("${", pos, true)
    if open == nil then break end
    local close = close_of(line, open)
    if close == nil then
      error(string.format("%s:%d: unterminated ${", chunkname, lineno), 0)
    end
    local expr = line:sub(open + 2, close - 1)
    if expr:match("^%s*$") then
      error(string.format("%s:%d: empty ${}", chunkname, lineno), 0)
    end
    if open > pos then parts[#parts + 1] = quote(line:sub(pos, open - 1)) end
    parts[#parts + 1] = string.format("_s((%s), %s)", expr, quote(expr))
    pos = close + 1
  end
  local rest = line:sub(pos) .. eol
  if rest ~= "" then parts[#parts + 1] = quote(rest) end
  if #parts == 0 then return "" end
  return "_o[#_o + 1] = " .. table.concat(parts, " .. ")
end

-- Translates template source to Lua source (exported for tests).
function M.translate(src, chunkname)
  local lines = {}
  for line in (src .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
  -- `src` ending in "\n" leaves an empty last element: the end of the file, not a line.
  local last_eol = ""
  if src:sub(-1) == "\n" then
    lines[#lines] = nil
    last_eol = "\n"
  end
  local out = {}
  for i, line in ipairs(lines) do
    local stmt = line:match("^%s*//%%(.*)$")
    if stmt then
      out[i] = stmt:gsub("\r$", "")
    else
      out[i] = text_line(line, i == #lines and last_eol or "\n", chunkname, i)
    end
  end
  -- The prologue shares line 1, the epilogue gets a line of its own after the last one.
  out[1] = "local _ENV, _o, _s, _concat = ...; " .. (out[1] or "")
  out[#out + 1] = "return _concat(_o)"
  return table.concat(out, "\n")
end

-- Converts the value of a `${expr}`; errors point at the template line (level 2).
local function to_text(v, expr)
  local t = type(v)
  if t == "string" then return v end
  if t == "number" then
    if math.type(v) == "integer" then return string.format("%d", v) end
    return tostring(v)
  end
  if t == "boolean" then return tostring(v) end
  if v == nil then error(string.format("${%s} is nil", expr), 2) end
  error(string.format("${%s} is a %s, not a string or number", expr, t), 2)
end

local function make_env(vars)
  local values = {}
  for name, v in pairs(vars) do values[name] = M.freeze(v, name) end
  return setmetatable({}, {
    __index = function(_, name)
      local v = values[name]
      if v == nil then v = builtins[name] end
      if v == nil then error(string.format("undefined name '%s'", tostring(name)), 2) end
      return v
    end,
    __newindex = function(_, name)
      error(string.format("cannot assign '%s': the template environment is read-only",
        tostring(name)), 2)
    end,
    __metatable = "frozen",
  })
end

-- Compiles template source. `chunkname` is the template's name ("templates/mma/kernel.cu.tpl").
-- Returns render(vars) -> string; raises "<chunkname>:<line>: message" on errors.
function M.compile(src, chunkname)
  local code = M.translate(src, chunkname)
  local chunk, err = load(code, "@" .. chunkname, "t", {})
  if chunk == nil then error(err, 0) end
  return function(vars)
    return chunk(make_env(vars), {}, to_text, table.concat)
  end
end

return M
