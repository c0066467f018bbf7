-- naming.lua -- kernel names: each family declares its name's parts (spec.name); this module
-- compiles that declaration, builds names from it and parses them back.
--
--   M.name = {                                      -- templates/mma/spec.lua
--     "sm{arch}", "{act:word}", "{wfmt:word}",
--     { "g{group}", alias = { "gc", when = { group = 0 } } },
--     "{tile_m}x{tile_n}x{tile_k}", "s{stages}", "w{warps}",
--     { "sw{swz_bits}x{swz_base}x{swz_shift}",
--       alias = { "swnone", when = { swz_bits = 0 }, requires = { swz_base = 0, swz_shift = 0 } } },
--   }
--   -> mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3
--
-- A name is "mgen_" and the parts joined by "_". The first part is the family's architecture
-- token ("sm80", "sm90a"): it starts with "sm". In a part, {field} is a non-negative integer
-- field of k and {field:word} a lower-case word (letters and digits); other characters are
-- literal. A part may be { text, alias = { "other", when = {...}, requires = {...} } }: where k
-- has the `when` values the part is written as the alias text, and then k must also have the
-- `requires` values. parse(schema, kernel_name(schema, k)) gives back the fields, and only
-- canonical names parse (no leading zeros, no "g0" where "gc" is meant).
--
-- The operation (k.op: "dense", a grouped GEMM's own word) is every family's field, not
-- declared in spec.name: its token has one fixed place in every name, right after the
-- architecture token, and the plain GEMM, IMPLICIT_OP, has no token, so dense names read as
-- they always did and a name with one more part than its family declares carries an op:
--   mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3        op = "dense"
--   mgen_sm80_moe_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3    op = "moe"
local M = {}

M.OP_FIELD = "op"
M.IMPLICIT_OP = "dense" -- templates/formats.lua's enum-0 operation
M.OP_POSITION = 2       -- the op token's part index: after the architecture token

local function fail(fmt, ...)
  error(string.format(fmt, ...), 0)
end

local function sorted_pairs_text(t)
  local keys = {}
  for key in next, t do keys[#keys + 1] = key end
  table.sort(keys)
  local parts = {}
  for _, key in ipairs(keys) do parts[#parts + 1] = string.format("%s = %s", key, tostring(t[key])) end
  return table.concat(parts, ", ")
end

-- Compiles one part's text: its pieces (literal strings and { field, word }) and its pattern.
local function compile_text(text, where, fields, words)
  local pieces, pattern, pos = {}, {}, 1
  while pos <= #text do
    local s, e, field, kind = text:find("{([%a_][%w_]*)(:?[%a]*)}", pos)
    local literal = text:sub(pos, (s or #text + 1) - 1)
    if literal:find("[{}]") then fail("%s: bad placeholder in '%s'", where, text) end
    if literal ~= "" then
      if not literal:match("^[%w]+$") then
        fail("%s: '%s': literal text must be letters and digits ('_' separates parts)", where, text)
      end
      pieces[#pieces + 1] = literal
      pattern[#pattern + 1] = literal
    end
    if s == nil then break end
    if kind ~= "" and kind ~= ":word" then fail("%s: '%s': unknown kind '%s'", where, text, kind) end
    if words[field] ~= nil then fail("%s: field '%s' appears twice in the name", where, field) end
    if field == M.OP_FIELD then
      fail("%s: '%s': the op has a fixed place in every name (naming.lua), not a declared one",
        where, text)
    end
    local word = kind == ":word"
    words[field] = word
    fields[#fields + 1] = field
    pieces[#pieces + 1] = { field = field, word = word }
    -- Integers and words are separated by literals or part boundaries: each piece is greedy.
    pattern[#pattern + 1] = word and "([a-z][a-z0-9]*)" or "(%d+)"
    pos = e + 1
  end
  if #pieces == 0 then fail("%s: empty part", where) end
  return pieces, "^" .. table.concat(pattern) .. "$"
end

-- Compiles a spec's name declaration (`decl`, from `file`); raises "<file>: name: ...".
function M.schema(decl, file)
  local where = string.format("%s: name", file)
  if type(decl) ~= "table" or #decl == 0 then fail("%s: must be a non-empty list of parts", where) end
  local schema = { parts = {}, fields = {}, words = {} }
  for i, part in ipairs(decl) do
    local pwhere = string.format("%s[%d]", where, i)
    local text, alias = part, nil
    if type(part) == "table" then text, alias = part[1], part.alias end
    if type(text) ~= "string" then fail("%s: must be a string or { string, alias = ... }", pwhere) end
    local pieces, pattern = compile_text(text, pwhere, schema.fields, schema.words)
    local p = { text = text, pieces = pieces, pattern = pattern }
    if alias ~= nil then
      if type(alias) ~= "table" or type(alias[1]) ~= "string" or not alias[1]:match("^[%w]+$")
          or type(alias.when) ~= "table" or next(alias.when) == nil
          or (alias.requires ~= nil and type(alias.requires) ~= "table") then
        fail("%s: alias must be { \"text\", when = { field = value, ... }, requires = {...} }",
          pwhere)
      end
      p.alias = { text = alias[1], when = alias.when, requires = alias.requires or {} }
    end
    schema.parts[i] = p
  end
  local first = schema.parts[1].pieces[1]
  if type(first) ~= "string" or first:sub(1, 2) ~= "sm" then
    fail("%s[1]: the first part is the architecture token and starts with 'sm' ('sm{arch}')",
      where)
  end
  for _, p in ipairs(schema.parts) do
    -- field names: kernel_name's message sorts them, parse sets them
    for _, set in ipairs(p.alias and { p.alias.when, p.alias.requires } or {}) do
      for f in next, set do
        if type(f) ~= "string" then fail("%s: alias fields must be names (strings)", where) end
      end
    end
    for f in next, p.alias and p.alias.when or {} do
      if schema.words[f] == nil then fail("%s: alias names field '%s', which is not in the name", where, f) end
    end
  end
  return schema
end

-- The fields a name encodes, in name order (also the order of `marlin-gen --decode`).
function M.fields(schema)
  return schema.fields
end

local function field(schema, k, f)
  local v = k[f]
  if schema.words[f] then
    if type(v) ~= "string" or not v:match("^[a-z][a-z0-9]*$") then
      fail("field '%s' must be a lower-case word of letters and digits, not %s",
        f, type(v) == "string" and string.format("%q", v) or tostring(v))
    end
    return v
  end
  if math.type(v) ~= "integer" or v < 0 then
    fail("field '%s' must be a non-negative integer, not %s", f, tostring(v))
  end
  return string.format("%d", v)
end

local function matches(k, values)
  for f, v in next, values do
    if k[f] ~= v then return false end
  end
  return true
end

-- The name of kernel `k` (a table with at least the schema's fields). Raises a plain message
-- (no position) if a field is missing or cannot be written in a name.
function M.kernel_name(schema, k)
  local out = {}
  for i, p in ipairs(schema.parts) do
    local text = {}
    for _, piece in ipairs(p.pieces) do
      text[#text + 1] = type(piece) == "string" and piece or field(schema, k, piece.field)
    end
    if p.alias and matches(k, p.alias.when) then
      if not matches(k, p.alias.requires) then
        fail("%s (%s) needs %s", sorted_pairs_text(p.alias.when), p.alias.text,
          sorted_pairs_text(p.alias.requires))
      end
      out[i] = p.alias.text
    else
      out[i] = table.concat(text)
    end
  end
  local op = k[M.OP_FIELD]
  if op ~= nil and op ~= M.IMPLICIT_OP then
    if type(op) ~= "string" or not op:match("^[a-z][a-z0-9]*$") then
      fail("field '%s' must be a lower-case word of letters and digits, not %s", M.OP_FIELD,
        type(op) == "string" and string.format("%q", op) or tostring(op))
    end
    table.insert(out, M.OP_POSITION, op)
  end
  return "mgen_" .. table.concat(out, "_")
end

-- The shape of the family's names, for messages: mgen_sm<arch>_<act>_...
function M.shape(schema)
  local parts = {}
  for i, p in ipairs(schema.parts) do
    local text = p.text:gsub("{([%a_][%w_]*):?%a*}", "<%1>")
    parts[i] = p.alias and (text .. "|" .. p.alias.text) or text
  end
  return "mgen_" .. table.concat(parts, "_")
end

-- `s` with control bytes (and DEL) as \xNN, for messages that show outside input: a name
-- given on the command line must not send escape sequences to the terminal.
function M.printable(s)
  return (s:gsub("[%c\127]", function(c) return string.format("\\x%02X", c:byte()) end))
end

-- The fields of a kernel name (with op, IMPLICIT_OP where the name has no op token), or nil
-- and a message.
function M.parse(schema, name)
  local bad = string.format("not a kernel name: '%s' (expected %s)", M.printable(name),
    M.shape(schema))
  if name:sub(1, 5) ~= "mgen_" then return nil, bad end
  local texts = {}
  for t in (name:sub(6) .. "_"):gmatch("([^_]*)_") do texts[#texts + 1] = t end
  local k = { [M.OP_FIELD] = M.IMPLICIT_OP }
  if #texts == #schema.parts + 1 then -- an op token (kernel_name below checks it is canonical)
    k[M.OP_FIELD] = table.remove(texts, M.OP_POSITION)
  end
  if #texts ~= #schema.parts then return nil, bad end
  for i, p in ipairs(schema.parts) do
    if p.alias and texts[i] == p.alias.text then
      for f, v in next, p.alias.when do k[f] = v end
      for f, v in next, p.alias.requires do k[f] = v end
    else
      local caps = { texts[i]:match(p.pattern) }
      if #caps == 0 then return nil, bad end
      local c = 0
      for _, piece in ipairs(p.pieces) do
        if type(piece) ~= "string" then
          c = c + 1
          local v = caps[c]
          if not piece.word then v = math.tointeger(tonumber(v)) end
          if v == nil then return nil, bad end -- a number too large for an integer
          k[piece.field] = v
        end
      end
    end
  end
  for _, f in ipairs(schema.fields) do
    if k[f] == nil then return nil, bad end
  end
  local ok, back = pcall(M.kernel_name, schema, k)
  if not ok or back ~= name then return nil, bad end
  return k
end

return M
