-- engine_test.lua -- unit tests of gen/lua/{template,naming,enumerate}.lua (pure Lua).
--   lua5.4 tests/gen/engine_test.lua gen/lua
local lua_dir = assert(arg[1], "usage: engine_test.lua GEN_LUA_DIR")
package.path = lua_dir .. "/?.lua;" .. package.path

local template = require("template")
local naming = require("naming")
local enumerate = require("enumerate")

package.path = debug.getinfo(1, "S").source:match("^@(.*[/\\])") .. "?.lua;" .. package.path
local t = require("testlib")
local test, eq, raises = t.test, t.eq, t.raises

local function render(src, vars, name)
  return template.compile(src, name or "templates/t.tpl")(vars or {})
end

-- ---------------------------------------------------------------- template engine

test("text passes through, last line without newline", function()
  eq(render("a\nb"), "a\nb")
  eq(render("a\nb\n"), "a\nb\n")
  eq(render(""), "")
  eq(render("\n\n"), "\n\n")
  eq(render("x\r\ny\r\n"), "x\r\ny\r\n")
  eq(render('quotes " and \\ and \t tabs\n'), 'quotes " and \\ and \t tabs\n')
end)

test("one Lua line per template line", function()
  local src = "a ${x}\n//% for i = 1, 2 do\n${i}\n//% end\nz\n"
  local _, n_src = src:gsub("\n", "")
  local _, n_lua = template.translate(src, "t"):gsub("\n", "")
  eq(n_lua, n_src, "newlines (the Lua chunk has one extra line: return)")
end)

test("${expr} values", function()
  eq(render("${x} ${y} ${z} ${w}", { x = 3, y = "s", z = true, w = 1.5 }), "3 s true 1.5")
  eq(render("${x + 1}", { x = 41 }), "42")
  eq(render("${({ 1, 2 })[2]}"), "2")
  eq(render('${"}"}{${"{"}'), "}{{")
  eq(render("$ {x} $x ${'a'}${'b'}"), "$ {x} $x ab")
  eq(render('${string.format("%02d", 7)}'), "07")
end)

test("statement lines", function()
  local src = "//% for _, v in ipairs(list) do\n  - ${v}\n   //% end\n"
  eq(render(src, { list = { "a", "b" } }), "  - a\n  - b\n")
  eq(render("//% if flag then\nyes\n//% else\nno\n//% end\n", { flag = false }), "no\n")
  eq(render("//% local n = #list\n${n}\n", { list = { 1, 2, 3 } }), "3\n")
end)

test("errors carry the template line", function()
  raises("templates/t.tpl:2: undefined name 'tile_q'", render, "a\n${tile_q}\n")
  raises("templates/t.tpl:3: ${l[3]} is nil", render, "\n\n${l[3]}", { l = { 1 } })
  raises("templates/t.tpl:1: undefined name 'x'", render, "${x}", { x = nil })
  raises("templates/t.tpl:1: ${t} is a table", render, "${t}", { t = {} })
  raises("templates/t.tpl:2: k has no field 'nope'", render, "\n${k.nope}", { k = { a = 1 } })
  raises("templates/t.tpl:1: cannot assign k.a: k is read-only", render, "//% k.a = 2", { k = { a = 1 } })
  raises("templates/t.tpl:1: cannot assign 'g'", render, "//% g = 2")
  raises("templates/t.tpl:2: unterminated ${", render, "ok\n${x")
  raises("templates/t.tpl:1: empty ${}", render, "${ }")
  raises("templates/t.tpl:2:", render, "//% if x then\n//% if then\n//% end\n//% end\n", { x = 1 })
  raises("undefined name 'io'", render, "${io}")
  raises("undefined name 'require'", render, "//% require('os')")
  raises("string has no field 'nope'", render, "${string.nope}")
end)

test("frozen tables", function()
  local k = template.freeze({ a = 1, list = { "x", "y" }, sub = { b = 2 } }, "k")
  eq(#k.list, 2, "#")
  local seen = {}
  for i, v in ipairs(k.list) do seen[#seen + 1] = i .. v end
  eq(table.concat(seen, ","), "1x,2y", "ipairs")
  raises("k.sub has no field 'c'", function() return k.sub.c end)
  raises("cannot assign k.list.3", function() k.list[3] = "z" end)
  eq(k.list[3], nil, "missing integer key")
  eq(template.freeze(k), k, "freezing twice")
  eq(table.concat(k.list, "+"), "x+y", "table.concat")
end)

test("pairs is sorted, for frozen and plain tables", function()
  local src = "//% for key, v in pairs(t) do\n${key}=${v} \n//% end\n"
  eq(render(src, { t = { zeta = 1, alpha = 2, mid = 3, [2] = "b", [1] = "a" } }),
    "1=a \n2=b \nalpha=2 \nmid=3 \nzeta=1 \n")
  eq(render("//% for key in pairs({ c = 1, b = 2, a = 3 }) do\n${key}\n//% end\n"), "a\nb\nc\n")
  eq(render("//% for key in pairs({ [true] = 1, [2] = 2, [false] = 3, x = 4 }) do\n${key}\n//% end\n"),
    "false\ntrue\n2\nx\n", "booleans, then numbers, then strings")
end)

-- fuzz_gen_templates found `//% pairs')'(k.list) {}` (pairs of a string) failing inside
-- template.lua; keys without a run-independent order (two booleans compared, tables) did too.
test("pairs errors carry the template line", function()
  raises("templates/t.tpl:2: bad argument #1 to 'pairs' (table expected, got string)", render,
    "\n//% pairs')'(k.list) {}\n", { k = { list = { 1 } } })
  raises("templates/t.tpl:1: bad argument #1 to 'pairs' (table expected, got nil)", render,
    "//% for _ in pairs(nil) do end")
  raises("templates/t.tpl:1: pairs: keys must be booleans, numbers or strings", render,
    "//% for _ in pairs({ [{}] = 1, [{}] = 2 }) do end")
  raises("templates/t.tpl:1: pairs: keys must be booleans, numbers or strings", render,
    "//% for _ in pairs({ [print] = 1 }) do end", { print = print })
end)

-- ---------------------------------------------------------------- naming

-- The mma family's name declaration (templates/mma/spec.lua), restated as a fixture of the
-- naming engine; gen.roundtrip checks the real one against the manifest.
local mma_decl = {
  "sm{arch}", "{act:word}", "{wfmt:word}", { "g{group}", alias = { "gc", when = { group = 0 } } },
  "{tile_m}x{tile_n}x{tile_k}", "s{stages}", "w{warps}",
  { "sw{swz_bits}x{swz_base}x{swz_shift}",
    alias = { "swnone", when = { swz_bits = 0 }, requires = { swz_base = 0, swz_shift = 0 } } },
}
local mma = naming.schema(mma_decl, "templates/mma/spec.lua")
local name_of = function(k) return naming.kernel_name(mma, k) end

local base = {
  arch = 80, act = "f16", wfmt = "u4b8", group = 128, tile_m = 16, tile_n = 256, tile_k = 64,
  stages = 4, warps = 8, swz_bits = 3, swz_base = 4, swz_shift = 3,
}

local function with(changes)
  local k = {}
  for key, v in pairs(base) do k[key] = v end
  for key, v in pairs(changes) do k[key] = v end
  return k
end

test("kernel_name", function()
  eq(name_of(base), "mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3")
  eq(name_of(with({ group = 0 })), "mgen_sm80_f16_u4b8_gc_16x256x64_s4_w8_sw3x4x3")
  eq(name_of(with({ swz_bits = 0, swz_base = 0, swz_shift = 0 })),
    "mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_swnone")
  raises("swz_bits = 0 (swnone) needs swz_base = 0, swz_shift = 0", name_of, with({ swz_bits = 0 }))
  raises("field 'act'", name_of, with({ act = "f_16" }))
  raises("field 'group'", name_of, with({ group = 64.5 }))
  raises("field 'tile_m'", name_of, with({ tile_m = "16" }))
  local no_warps = with({})
  no_warps.warps = nil
  raises("field 'warps'", name_of, no_warps)
  eq(table.concat(naming.fields(mma), ","),
    "arch,act,wfmt,group,tile_m,tile_n,tile_k,stages,warps,swz_bits,swz_base,swz_shift")
  eq(naming.shape(mma), "mgen_sm<arch>_<act>_<wfmt>_g<group>|gc_<tile_m>x<tile_n>x<tile_k>"
    .. "_s<stages>_w<warps>_sw<swz_bits>x<swz_base>x<swz_shift>|swnone")
end)

test("parse inverts kernel_name", function()
  local n = 0
  for _, arch in ipairs({ 80, 90, 100 }) do
    for _, act in ipairs({ "f16", "bf16" }) do
      for _, wfmt in ipairs({ "u4b8", "fe2m1" }) do
        for _, group in ipairs({ 0, 32, 128 }) do
          for _, swz in ipairs({ { 0, 0, 0 }, { 3, 4, 3 }, { 2, 4, 10 } }) do
            local k = with({ arch = arch, act = act, wfmt = wfmt, group = group,
              swz_bits = swz[1], swz_base = swz[2], swz_shift = swz[3] })
            local name = name_of(k)
            local back = assert(naming.parse(mma, name))
            for _, f in ipairs(naming.fields(mma)) do eq(back[f], k[f], name .. " " .. f) end
            eq(name_of(back), name, "renamed")
            n = n + 1
          end
        end
      end
    end
  end
  eq(n, 108, "names checked")
end)

test("parse rejects non-canonical names", function()
  for _, bad in ipairs({
    "", "mgen", "mgen_sm80_f16_u4b8_g0_16x256x64_s4_w8_sw3x4x3",
    "mgen_sm80_f16_u4b8_g0128_16x256x64_s4_w8_sw3x4x3",
    "mgen_sm080_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3",
    "mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_sw0x4x3",
    "mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_sw3x4",
    "mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_swNone",
    "mgen_sm80_f16_u4b8_gx_16x256x64_s4_w8_sw3x4x3",
    "mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3 ",
    "mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3_x",
    "mgen_sm99999999999999999999_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3",
    "mgen_sm90a_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3",
  }) do
    local k, err = naming.parse(mma, bad)
    eq(k, nil, "parse(" .. bad .. ")")
    assert(err:find("not a kernel name", 1, true), err)
  end
end)

test("the op has a fixed place: after the architecture token, none for dense", function()
  local name = "mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3"
  eq(naming.OP_POSITION, 2)
  eq(name_of(with({ op = naming.IMPLICIT_OP })), name, "dense: today's name")
  local moe = name_of(with({ op = "moe" }))
  eq(moe, "mgen_sm80_moe_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3")
  eq(name_of(with({ op = "grouped2", group = 0, swz_bits = 0, swz_base = 0, swz_shift = 0 })),
    "mgen_sm80_grouped2_f16_u4b8_gc_16x256x64_s4_w8_swnone")
  eq(assert(naming.parse(mma, name)).op, "dense", "a name without an op token is dense")
  local back = assert(naming.parse(mma, moe))
  eq(back.op, "moe")
  for _, f in ipairs(naming.fields(mma)) do eq(back[f], base[f], f) end
  eq(name_of(back), moe, "renamed")
  for _, bad in ipairs({
    "mgen_sm80_dense_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3", -- dense is written as nothing
    "mgen_sm80_Moe_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3",
    "mgen_sm80_moe_moe_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3",
    "mgen_moe_sm80_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3",
    "mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3_moe",
    "mgen_sm80__f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3",
  }) do
    eq(naming.parse(mma, bad), nil, "parse(" .. bad .. ")")
  end
  raises("field 'op'", name_of, with({ op = "m_oe" }))
  raises("field 'op'", name_of, with({ op = 1 }))
  raises("the op has a fixed place", naming.schema, { "sm{arch}", "{op:word}", "{act:word}" },
    "templates/x/spec.lua")
  -- every family's names take it at the same place
  local wg = naming.schema({ "sm{arch}a", "{act:word}", "{tile_m}x{tile_n}" }, "templates/wg/spec.lua")
  local k = assert(naming.parse(wg, "mgen_sm90a_moe_bf16_64x128"))
  eq(k.op .. " " .. k.arch .. " " .. k.act, "moe 90 bf16")
  eq(naming.kernel_name(wg, k), "mgen_sm90a_moe_bf16_64x128")
end)

test("a second family declares its own name fields", function()
  -- A Hopper-like family: an exact-architecture token, other knobs than mma's.
  local wg = naming.schema({ "sm{arch}a", "{act:word}", "{wfmt:word}",
    { "g{group}", alias = { "gc", when = { group = 0 } } }, "{tile_m}x{tile_n}x{tile_k}",
    "c{cluster}", "p{pipe}", "wg{warpgroups}", "{schedule:word}" }, "templates/wg/spec.lua")
  local k = { arch = 90, act = "bf16", wfmt = "u4b8", group = 0, tile_m = 64, tile_n = 128,
    tile_k = 64, cluster = 2, pipe = 4, warpgroups = 2, schedule = "pingpong" }
  local name = naming.kernel_name(wg, k)
  eq(name, "mgen_sm90a_bf16_u4b8_gc_64x128x64_c2_p4_wg2_pingpong")
  local back = assert(naming.parse(wg, name))
  for key, v in pairs(k) do eq(back[key], v, key) end
  eq(naming.parse(wg, "mgen_sm80_f16_u4b8_g128_16x256x64_s4_w8_sw3x4x3"), nil, "mma name")
  eq(naming.parse(mma, name), nil, "not an mma name")
end)

test("name declarations are checked", function()
  local f = "templates/t/spec.lua"
  raises("templates/t/spec.lua: name: must be a non-empty list of parts", naming.schema, nil, f)
  raises("name[1]: the first part is the architecture token", naming.schema, { "{act:word}" }, f)
  raises("name[2]: field 'arch' appears twice", naming.schema, { "sm{arch}", "x{arch}" }, f)
  raises("unknown kind ':wrd'", naming.schema, { "sm{arch}", "{act:wrd}" }, f)
  raises("literal text must be letters and digits", naming.schema, { "sm{arch}", "a-{x}" }, f)
  raises("alias names field 'y', which is not in the name", naming.schema,
    { "sm{arch}", { "g{x}", alias = { "gc", when = { y = 0 } } } }, f)
  raises("alias must be", naming.schema, { "sm{arch}", { "g{x}", alias = { when = { x = 0 } } } }, f)
  raises("alias must be", naming.schema,
    { "sm{arch}", { "g{x}", alias = { "gc", when = { x = 0 }, requires = 5 } } }, f)
  raises("templates/t/spec.lua: name: alias fields must be names (strings)", naming.schema,
    { "sm{arch}", { "g{x}", alias = { "gc", when = { x = 0 }, requires = { [true] = 1, [false] = 2 } } } }, f)
  raises("alias fields must be names", naming.schema,
    { "sm{arch}", { "g{x}", alias = { "gc", when = { x = 0, [{}] = 1 } } } }, f)
end)

-- ---------------------------------------------------------------- enumerate

local function spec(extra)
  local src = [[
local M = { family = "t", template = "templates/t.cu.tpl" }
M.name = {
  "sm{arch}", "{act:word}", "{wfmt:word}", { "g{group}", alias = { "gc", when = { group = 0 } } },
  "{tile_m}x{tile_n}x{tile_k}", "s{stages}", "w{warps}",
  { "sw{swz_bits}x{swz_base}x{swz_shift}",
    alias = { "swnone", when = { swz_bits = 0 }, requires = { swz_base = 0, swz_shift = 0 } } },
}
M.axes = {
  { name = "arch", values = { 80 } },
  { name = "act", values = { "f16" } },
  { name = "wfmt", values = { "u4b8" } },
  { name = "group", values = { 0, 128 } },
  { name = "tile", values = { { m = 16, n = 64, k = 64 }, { m = 32, n = 64, k = 64 } } },
  { name = "stages", values = { 4 } },
  { name = "warps", values = { 4 } },
  { name = "swz", values = { { bits = 0, base = 0, shift = 0 } } },
}
]] .. (extra or "") .. "\nreturn M\n"
  return enumerate.load_spec(src, "templates/t.spec.lua")
end

test("cross and flatten", function()
  local combos = enumerate.cross(spec())
  eq(#combos, 4, "combinations")
  eq(combos[1].group, 0)
  eq(combos[1].tile_m, 16)
  eq(combos[2].tile_m, 32, "last axis varies fastest among multi-valued ones")
  eq(combos[3].group, 128)
  eq(combos[1].tile, nil, "table axis flattened away")
  eq(combos[1].family, "t")
end)

test("valid and derive", function()
  local s = spec([[
function M.valid(k) if k.tile_m > 16 then return false, "TILE: " .. k.tile_m end return true end
function M.derive(k) return { threads = k.warps * 32, partials = { "a.cuh" } } end
]])
  local kernels, rejected = enumerate.run(s, "templates/t.spec.lua")
  eq(#kernels, 2)
  eq(#rejected, 2)
  eq(kernels[1].threads, 128)
  eq(kernels[1].partials[1], "a.cuh")
  eq(kernels[1].name, "mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_swnone")
  eq(rejected[1].label, "mgen_sm80_f16_u4b8_gc_32x64x64_s4_w4_swnone")
  eq(rejected[1].reason, "TILE: 32")
  local kept = enumerate.run(s, "templates/t.spec.lua", { keep = function(k) return k.group > 0 end })
  eq(#kept, 1, "keep filter")
end)

test("spec errors name the spec entry", function()
  local file = "templates/t.spec.lua"
  raises("templates/t.spec.lua: derive(mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_swnone): key 'group' would override",
    enumerate.run, spec("function M.derive(k) return { group = 1 } end"), file)
  raises("derive(mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_swnone): key 'name' would override",
    enumerate.run, spec("function M.derive(k) return { name = 1 } end"), file)
  raises("derive(mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_swnone): templates/t.spec.lua:18: k has no field 'x'",
    enumerate.run, spec("function M.derive(k) return { y = k.x } end"), file)
  raises("derive(mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_swnone): templates/t.spec.lua:18: cannot assign k.y",
    enumerate.run, spec("function M.derive(k) k.y = 1 return {} end"), file)
  raises("is a function; derive may only return data",
    enumerate.run, spec("function M.derive(k) return { f = tostring } end"), file)
  raises("valid(mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_swnone): returned nil",
    enumerate.run, spec("function M.valid(k) end"), file)
  raises("templates/t.spec.lua:18: undefined name 'os'", spec, "local t = os.time()")
  raises("templates/t.spec.lua:18: cannot assign global 'x'", spec, "x = 1")
  raises("templates/t.spec.lua: axes[9] (tile): field 'tile_m' already comes from axes[5] (tile)",
    spec, 'M.axes[9] = { name = "tile", values = { { m = 1 } } }')
  raises("values[2] must have the fields {k, m, n} of values[1]",
    spec, 'M.axes[5].values[2] = { m = 1 }')
  raises("field 'family' already comes from M.family",
    spec, 'M.axes[9] = { name = "family", values = { "x" } }')
  raises("templates/t.spec.lua: template must be a string", spec, "M.template = nil")
  -- keys that sort() could not order, or that cannot be field names, are named as such
  raises("templates/t.spec.lua: axes[9] (t2): values[1] has a key that is not a string",
    spec, 'M.axes[9] = { name = "t2", values = { { [true] = 1, [false] = 2 } } }')
  raises("axes[9] (t2): values[2] has a key that is not a string",
    spec, 'M.axes[9] = { name = "t2", values = { { a = 1 }, { a = 1, [{}] = 2 } } }')
  raises("derive(mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_swnone): returned a key that is not a string, number or boolean",
    enumerate.run, spec("function M.derive(k) return { [{}] = 1, [{}] = 2 } end"), file)
  raises("derive(mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_swnone): returned a boolean key",
    enumerate.run, spec("function M.derive(k) return { [true] = 1, [false] = 2 } end"), file)
  raises("derive(mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_swnone): templates/t.spec.lua:18: bad argument #1 to 'pairs'",
    enumerate.run, spec('function M.derive(k) for _ in pairs("x") do end return {} end'), file)
end)

test("specs and templates cannot change the generator's libraries", function()
  local format, rep, sort = string.format, string.rep, table.sort
  raises("templates/t.spec.lua:18: cannot assign string.format: string is read-only", spec,
    'string.format = function() return "/../x\\0" end')
  raises("cannot assign table.sort: table is read-only", spec, "table.sort = nil")
  raises("cannot assign math.floor: math is read-only", spec, "math.floor = nil")
  raises("cannot assign utf8.char: utf8 is read-only", spec, "utf8.char = nil")
  raises("rawset: the table is read-only", spec, 'rawset(string, "format", tostring)')
  -- the strings' metatable's __index is the host's string table
  raises("attempt to index a nil value", spec, 'getmetatable("").__index.rep = nil')
  raises("cannot assign string.rep: string is read-only",
    render, "//% string.rep = nil\n", {}, "templates/t.tpl")
  eq(string.format, format, "string.format")
  eq(string.rep, rep, "string.rep")
  eq(table.sort, sort, "table.sort")
  -- tables keep their metatables visible; strings' reads still work
  eq(#enumerate.run(spec('assert(getmetatable(setmetatable({}, { x = 1 })).x == 1)\n'
    .. 'assert(("%d"):format(3) == "3" and string.format("%02d", 7) == "07")'),
    "templates/t.spec.lua"), 4)
end)

test("a kernel name that is not letters, digits and '_' is refused before any file", function()
  -- as if a spec had still replaced the generator's string.format (the names' integers)
  local format = string.format
  string.format = function(fmt, ...)
    if fmt == "%d" and ... == 64 then return "64/../../x\0" end
    return format(fmt, ...)
  end
  local ok, err = pcall(enumerate.run, spec(), "templates/t.spec.lua")
  string.format = format
  eq(ok, false, "enumerate.run")
  local msg = type(err) == "table" and err.message or tostring(err)
  eq(msg, "templates/t.spec.lua: kernel name 'mgen_sm80_f16_u4b8_gc_16x64/../../x\\x00x64/../../x\\x00_s4_w4_swnone'"
    .. " holds characters other than letters, digits and '_'")
end)

test("require loads templates/<name, dots as slashes>.lua in the sandbox, once", function()
  local loads = 0
  local function loader(path)
    loads = loads + 1
    eq(path, "templates/t/model.lua", "path")
    return "local M = {} function M.twice(x) return 2 * x end return M"
  end
  local s = enumerate.load_spec([[
local a, b = require("t.model"), require("t.model")
assert(a == b)
return { family = "t", template = "templates/t.cu.tpl", name = { "sm{x}" },
  axes = { { name = "x", values = { a.twice(2) } } } }
]], "templates/t.spec.lua", loader)
  eq(s.axes[1].values[1], 4)
  eq(loads, 1, "loads")
  raises("require: no modules here ('t.model')", enumerate.load_spec, 'require("t.model")',
    "templates/t.spec.lua")
  raises("templates/t/model.lua:1: undefined name 'os'", enumerate.load_spec,
    'require("t.model")', "templates/t.spec.lua", function() return "os.exit()" end)
  raises("require: bad module name ../x", enumerate.load_spec, 'require("../x")',
    "templates/t.spec.lua", loader)
end)

test("load_module runs a data module (templates/formats.lua) in the spec sandbox", function()
  local function loader(path)
    eq(path, "templates/formats.lua", "path")
    return "return { acts = { { name = 'f16', enum = 1 } } }"
  end
  eq(enumerate.load_module("formats", loader).acts[1].enum, 1, "enum")
  raises("templates/formats.lua:1: undefined name 'io'", enumerate.load_module, "formats",
    function() return "io.write('x')" end)
end)

test("the real format table loads and names one scheme per (wfmt, group)", function()
  local formats = enumerate.load_module("formats", t.reader(lua_dir .. "/../..")) -- the root
  eq(formats.scheme_of("fe2m1", 16).name, "nvfp4", "fe2m1 g16")
  eq(formats.scheme_of("u4b8", 0).name, "group", "u4b8 gc")
  eq(formats.scheme_of("u4b8", 16), nil, "u4b8 g16")
  eq(formats.wfmt.u4b8.layouts[1], "mma", "u4b8's default layout")
end)

test("defaults and the shared-memory functions are checked", function()
  raises("templates/t.spec.lua: defaults[1] must be a string (a glob)", spec, "M.defaults = { 1 }")
  raises("templates/t.spec.lua: smem_accesses must be a function", spec, "M.smem_accesses = 1")
  raises("templates/t.spec.lua: smem_launch must be a function", spec, "M.smem_launch = {}")
end)

test("prove and launch run the spec's model", function()
  local model = [[
function M.smem_accesses(k, rows)
  local addrs = {}
  for l = 0, 31 do addrs[l + 1] = (l % 8) * 128 end
  return { { name = "x", kind = "ld", instr = "LDS.32", width = WIDTH, event = "e",
             instances = { { label = "i", addrs = addrs } } } }
end
function M.smem_launch(k, shape) return { { event = "e", rows = k.tile_m, times = shape.m } } end
]]
  local file = "templates/t.spec.lua"
  local s = spec(model:gsub("WIDTH", "4"))
  local k = enumerate.run(s, file)[1]
  local proof = enumerate.prove(s, file, k)
  -- 8 words 128 bytes apart, each read by 4 lanes: 8 words in bank 0, 8 wavefronts, min 1.
  eq(#proof.conflicted, 1, "conflicted accesses")
  eq(proof.accesses[1].wavefronts, 8, "wavefronts")
  eq(proof.accesses[1].worst.result.ways, 8, "ways")
  local totals = enumerate.launch(s, file, k, { m = 3, n = 64, k = 64, sms = 1 })
  eq(totals[1].kind, "ld")
  eq(totals[1].instructions, 3, "instructions")
  eq(totals[1].conflicts, 21, "conflicts: 3 x (8 - 1)")
  s = spec(model:gsub("WIDTH", "12"))
  k = enumerate.run(s, file)[1]
  raises("templates/t.spec.lua: smem_accesses(mgen_sm80_f16_u4b8_gc_16x64x64_s4_w4_swnone)[1] (x): "
    .. "width must be 1, 2, 4, 8 or 16 bytes", enumerate.prove, s, file, k)
  eq(enumerate.prove(spec(), file, k), nil, "no model, no proof")
end)

test("axis_values keeps the declaration order", function()
  local s = spec('M.axes[2].values = { "f16", "bf16" }')
  local v = enumerate.axis_values({ s, s })
  eq(table.concat(v.act, ","), "f16,bf16")
  eq(table.concat(v.group, ","), "0,128")
  eq(#v.tile, 0, "table-valued axes have no CLI values")
end)

io.write(string.format("engine_test: %d/%d passed\n", t.count - t.failures, t.count))
os.exit(t.failures == 0 and 0 or 1)
