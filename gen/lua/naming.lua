-- naming.lua -- kernel names: the only place that builds them, and their parser.
--
--   mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3
--        sm   act wfmt group MxNxK stages warps swizzle bits x base x shift
--
-- group 0 (one scale per output channel) is written "gc"; swz_bits 0 (no swizzle, which
-- needs swz_base = swz_shift = 0) is written "swnone". parse(kernel_name(k)) gives back the
-- fields below, and kernel_name(parse(name)) == name for every valid name.
local M = {}

-- The fields a name encodes, in name order (also the order of `marlin-gen --decode`).
M.fields = {
  "arch", "act", "wfmt", "group", "tile_m", "tile_n", "tile_k",
  "stages", "warps", "swz_bits", "swz_base", "swz_shift",
}

local words = { act = true, wfmt = true }

local function field(k, f)
  local v = k[f]
  if words[f] then
    if type(v) ~= "string" or not v:match("^[a-z][a-z0-9]*$") then
      error(string.format("field '%s' must be a lower-case word of letters and digits, not %s",
        f, type(v) == "string" and string.format("%q", v) or tostring(v)), 0)
    end
  elseif math.type(v) ~= "integer" or v < 0 then
    error(string.format("field '%s' must be a non-negative integer, not %s", f, tostring(v)), 0)
  end
  return v
end

-- The name of kernel `k` (a table with at least M.fields). Raises a plain message (no
-- position) if a field is missing or cannot be written in a name.
function M.kernel_name(k)
  local v = {}
  for _, f in ipairs(M.fields) do v[f] = field(k, f) end
  local group = v.group == 0 and "c" or string.format("%d", v.group)
  local swz
  if v.swz_bits == 0 then
    if v.swz_base ~= 0 or v.swz_shift ~= 0 then
      error(string.format("swz_bits = 0 (no swizzle) needs swz_base = swz_shift = 0, not %d, %d",
        v.swz_base, v.swz_shift), 0)
    end
    swz = "none"
  else
    swz = string.format("%dx%dx%d", v.swz_bits, v.swz_base, v.swz_shift)
  end
  return string.format("mgen_sm%d_%s_%s_g%s_%dx%dx%d_s%d_w%d_sw%s", v.arch, v.act, v.wfmt,
    group, v.tile_m, v.tile_n, v.tile_k, v.stages, v.warps, swz)
end

local shape = "mgen_sm<arch>_<act>_<wfmt>_g<group|c>_<m>x<n>x<k>_s<stages>_w<warps>"
  .. "_sw<bits>x<base>x<shift|none>"

-- The fields of a kernel name, or nil and a message. Only canonical names parse (no leading
-- zeros, no "g0"): the result always names back to `name`.
function M.parse(name)
  local bad = string.format("not a kernel name: '%s' (expected %s)", name, shape)
  local arch, act, wfmt, group, m, n, kk, stages, warps, swz = name:match("^mgen_sm(%d+)"
    .. "_([a-z][a-z0-9]*)_([a-z][a-z0-9]*)_g(%w+)_(%d+)x(%d+)x(%d+)_s(%d+)_w(%d+)_sw(%w+)$")
  if arch == nil then return nil, bad end
  local k = {
    arch = math.tointeger(arch), act = act, wfmt = wfmt,
    tile_m = math.tointeger(m), tile_n = math.tointeger(n), tile_k = math.tointeger(kk),
    stages = math.tointeger(stages), warps = math.tointeger(warps),
  }
  if group == "c" then
    k.group = 0
  elseif group:match("^%d+$") then
    k.group = math.tointeger(group)
  else
    return nil, bad
  end
  if swz == "none" then
    k.swz_bits, k.swz_base, k.swz_shift = 0, 0, 0
  else
    local b, s, h = swz:match("^(%d+)x(%d+)x(%d+)$")
    if b == nil then return nil, bad end
    k.swz_bits, k.swz_base, k.swz_shift = math.tointeger(b), math.tointeger(s), math.tointeger(h)
  end
  for _, f in ipairs(M.fields) do
    if k[f] == nil then return nil, bad end -- a number too large for an integer
  end
  local ok, back = pcall(M.kernel_name, k)
  if not ok or back ~= name then return nil, bad end
  return k
end

return M
