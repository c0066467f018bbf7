/* fuzz_gen.c -- libFuzzer targets for the generator's parsers of outside input, run in one Lua
 * state set up like marlin-gen's (gen/main.c; the embedded gen/lua modules):
 *
 *   fuzz_gen_decode     (FUZZ_GEN_DECODE)  the input is a name for `marlin-gen --decode`,
 *                       decoded by emit.decoder over the embedded specs (loaded once);
 *   fuzz_gen_templates  (FUZZ_GEN_TEMPLATES) what `--templates DIR` reads: the first byte picks
 *                       a spec (the rest is templates/fuzz/spec.lua, loaded and enumerated by
 *                       enumerate.load_spec / enumerate.run, `require` served from the embedded
 *                       templates) or a template (templates/fuzz.cu.tpl, compiled and rendered
 *                       by template.compile with a small k).
 *
 * Properties, beyond "no crash, no sanitizer report":
 * - decode: a name either decodes (it starts with "mgen_", the first line is "family=...", and
 *   naming.parse has checked that the fields name it back) or raises --decode's usage error;
 * - templates: a failure is the generator's error (a string, or a { message = ... } table),
 *   and never points into gen/lua/: an error located in the generator's own code means input
 *   reached it unchecked (it must name the user's file instead); kernel names are letters,
 *   digits and '_'; and the input leaves the host's libraries (string, table, math, utf8, the
 *   strings' metatable) as they were: a spec that changes them escapes the sandbox.
 * Specs are Lua code, so each call runs under an instruction limit and the state under a
 * memory limit; reaching either is not a finding.
 *
 * Coverage of the Lua code: libFuzzer sees only C edges, so a line hook counts (chunk, line)
 * pairs into libFuzzer's extra counters, and new Lua lines count as new coverage. Only the
 * generator's lines count (gen/lua, the embedded templates), not those of the input's own
 * chunks (the fuzzed spec or compiled template), which measure the input rather than the code.
 * Build and run: tests/fuzz/run.sh BUILD_DIR fuzz_gen_decode RUNS (or fuzz_gen_templates). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "fileio.h"

#define REQUIRE(cond, ...)                                                               \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      fprintf(stderr, "fuzz_gen: %s:%d: property failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                      \
      fputc('\n', stderr);                                                               \
      abort();                                                                           \
    }                                                                                    \
  } while (0)

enum { FUZZ_MAX_INPUT = 4096, FUZZ_INSTRUCTIONS = 5000000, FUZZ_MEMORY = 256 << 20 };

/* The names the input is loaded under (the harness below; Lua prefixes chunk names with @). */
#define FUZZ_SPEC_FILE "templates/fuzz/spec.lua"
#define FUZZ_TEMPLATE_FILE "templates/fuzz.cu.tpl"

/* ---------------------------------------------------------------- Lua lines as coverage */

__attribute__((used, section("__libfuzzer_extra_counters"))) static uint8_t lua_lines[1 << 15];

static long instructions;
static const char kLimit[] = "fuzz: instruction limit";

static void hook(lua_State *L, lua_Debug *ar) {
  if (ar->event == LUA_HOOKCOUNT) {
    instructions += 1000;
    if (instructions > FUZZ_INSTRUCTIONS) luaL_error(L, "%s", kLimit);
    return;
  }
  if (lua_getinfo(L, "S", ar) == 0) return;
  if (strcmp(ar->source, "@" FUZZ_SPEC_FILE) == 0 ||
      strcmp(ar->source, "@" FUZZ_TEMPLATE_FILE) == 0)
    return;
  /* The chunk by its name's text (FNV-1a), not the name string's address: the input's chunks
   * and the modules a spec requires are loaded anew per input, under a name string built anew,
   * which lands at a new address once the last one is collected, so nearly every input looked
   * new: from the committed seeds, 120 s with -seed=1 kept 15,287 of 302,369 inputs; keyed by
   * text and without the input's chunks, 140 of 113,231. */
  uint32_t key = 2166136261u;
  for (const char *c = ar->source; *c != '\0'; c++) key = (key ^ (uint8_t)*c) * 16777619u;
  key ^= (uint32_t)ar->currentline * 2654435761u;
  lua_lines[key % sizeof lua_lines]++;
}

/* ---------------------------------------------------------------- a state with a memory cap */

static size_t in_use;

static void *capped_alloc(void *ud, void *ptr, size_t old, size_t size) {
  (void)ud;
  if (ptr == NULL) old = 0;
  if (size == 0) {
    free(ptr);
    in_use -= old;
    return NULL;
  }
  if (size > old && in_use + (size - old) > FUZZ_MEMORY) return NULL; /* Lua: "not enough memory" */
  void *p = realloc(ptr, size);
  if (p != NULL) in_use = in_use - old + size;
  return p;
}

static lua_State *L;

/* The harness itself, in Lua: one function per target, called with the input string; it
 * returns nothing when the input was handled as the properties allow, else a message. */
static const char kHarness[] =
    "local emit, enumerate, template = require('emit'), require('enumerate'), require('template')\n"
    "local host = require('mgen_host')\n"
    "local limit = ...\n"
    "local function allowed(e)\n"
    "  local text = type(e) == 'table' and (e.message or e.usage) or e\n"
    "  if type(text) ~= 'string' then return false, 'error value ' .. tostring(e) end\n"
    "  if text:find(limit, 1, true) or text:find('not enough memory', 1, true) then return true end\n"
    "  -- the error's location (\"chunk:line:\"), not its text: a syntax error quotes the input,\n"
    "  -- which may well mention gen/lua/ (a fuzzed comment did)\n"
    "  local where = text:match('^([^\\n]-):%d+:')\n"
    "  if where and where:find('gen/lua/', 1, true) then return false, text end\n"
    "  return true\n"
    "end\n"
    "local libraries = { string = string, table = table, math = math, utf8 = utf8 }\n"
    "local saved = {}\n"
    "for lib, t in next, libraries do\n"
    "  saved[lib] = {}\n"
    "  for key, v in next, t do saved[lib][key] = v end\n"
    "end\n"
    "local string_mt = getmetatable('')\n"
    "local function changed()\n"
    "  if getmetatable('') ~= string_mt or string_mt.__index ~= string then\n"
    "    return 'the strings\\' metatable changed'\n"
    "  end\n"
    "  for lib, t in next, libraries do\n"
    "    for key, v in next, t do\n"
    "      if saved[lib][key] ~= v then return lib .. '.' .. tostring(key) .. ' changed' end\n"
    "    end\n"
    "    for key, v in next, saved[lib] do\n"
    "      if t[key] ~= v then return lib .. '.' .. tostring(key) .. ' changed' end\n"
    "    end\n"
    "  end\n"
    "end\n"
    "local decoder = emit.decoder(nil, {})\n"
    "local M = {}\n"
    "function M.decode(name)\n"
    "  local ok, r = pcall(decoder, name)\n"
    "  if ok then\n"
    "    if name:sub(1, 5) ~= 'mgen_' or type(r[1]) ~= 'string' or r[1]:sub(1, 7) ~= 'family=' then\n"
    "      return 'decoded ' .. name .. ' to ' .. tostring(r[1])\n"
    "    end\n"
    "    return nil\n"
    "  end\n"
    "  if type(r) ~= 'table' then return 'not a usage error: ' .. tostring(r) end\n"
    "  if r.usage and r.usage:find('--decode: not a kernel name', 1, true) then return nil end\n"
    "  if r.message and r.message:find('parses as a kernel of', 1, true) then return nil end\n"
    "  return 'unexpected error: ' .. tostring(r.usage or r.message)\n"
    "end\n"
    "local function embedded(path)\n"
    "  local src = host.embedded(path)\n"
    "  if src == nil then error({ message = path .. ': no such template' }, 0) end\n"
    "  return src\n"
    "end\n"
    "function M.spec(src)\n"
    "  local ok, e = pcall(function()\n"
    "    local file = '" FUZZ_SPEC_FILE "'\n"
    "    local spec = enumerate.load_spec(src, file, embedded)\n"
    "    for _, k in ipairs(enumerate.run(spec, file, { quiet = true })) do\n"
    "      if not k.name:match('^[A-Za-z0-9_]+$') then return 'kernel name ' .. k.name end\n"
    "    end\n"
    "  end)\n"
    "  local escaped = changed()\n"
    "  if escaped then return escaped end\n"
    "  if ok then return e end\n"
    "  local fine, why = allowed(e)\n"
    "  if not fine then return why end\n"
    "end\n"
    "local k = { name = 'mgen_fuzz', n = 64, list = { 1, 2, 3 }, sub = { a = 'x' } }\n"
    "function M.template(src)\n"
    "  local ok, e = pcall(function()\n"
    "    local render = template.compile(src, '" FUZZ_TEMPLATE_FILE "')\n"
    "    local text = render({ k = k, version = '0.0.0' })\n"
    "    assert(type(text) == 'string')\n"
    "  end)\n"
    "  local escaped = changed()\n"
    "  if escaped then return escaped end\n"
    "  if ok then return nil end\n"
    "  local fine, why = allowed(e)\n"
    "  if not fine then return why end\n"
    "end\n"
    "return M\n";

static int harness_ref;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  L = lua_newstate(capped_alloc, NULL);
  REQUIRE(L != NULL, "no Lua state");
  luaL_openlibs(L);
  mgen__register_modules(L);
  REQUIRE(luaL_loadbufferx(L, kHarness, sizeof kHarness - 1, "=fuzz_gen", "t") == LUA_OK, "%s",
          lua_tostring(L, -1));
  lua_pushstring(L, kLimit);
  REQUIRE(lua_pcall(L, 1, 1, 0) == LUA_OK, "harness: %s", lua_tostring(L, -1));
  harness_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return 0;
}

/* Calls harness function `fn` on the input; its message, if any, is a finding. */
static void run(const char *fn, const uint8_t *data, size_t size) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, harness_ref);
  lua_getfield(L, -1, fn);
  lua_pushlstring(L, (const char *)data, size);
  instructions = 0;
  lua_sethook(L, hook, LUA_MASKLINE | LUA_MASKCOUNT, 1000);
  const int rc = lua_pcall(L, 1, 1, 0);
  lua_sethook(L, NULL, 0, 0);
  /* The harness's own pcalls catch every error of the code under test; what escapes them is a
   * limit hit in the harness's glue (or a memory error while reporting), not a finding. */
  if (rc == LUA_OK && !lua_isnil(L, -1)) {
    fprintf(stderr, "fuzz_gen: %s: %s\n", fn, lua_tostring(L, -1));
    abort();
  }
  lua_settop(L, 0);
  lua_gc(L, LUA_GCSTEP, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > FUZZ_MAX_INPUT) return 0;
#if defined(FUZZ_GEN_DECODE)
  run("decode", data, size);
#elif defined(FUZZ_GEN_TEMPLATES)
  if (size == 0) return 0;
  run(data[0] & 1 ? "template" : "spec", data + 1, size - 1);
#else
#error "define FUZZ_GEN_DECODE or FUZZ_GEN_TEMPLATES"
#endif
  return 0;
}
