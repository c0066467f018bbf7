/* host_test.c -- runs tests/gen/host_test.lua (argv[1]) with the generator's C module
 * `mgen_host` (gen/fileio.c) and no embedded files: the checks of its write functions, which
 * marlin-gen's Lua code cannot reach with bad names (it checks them first).
 *   host_test HOST_TEST_LUA TESTLIB_DIR TMPDIR */
#include <stdio.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "fileio.h"

const mgen_embedded_file mgen__embedded[] = {{NULL, NULL, 0}};
const size_t mgen__embedded_count = 0;

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: host_test HOST_TEST_LUA TESTLIB_DIR TMPDIR\n");
    return 2;
  }
  lua_State *L = luaL_newstate();
  if (L == NULL) return 1;
  luaL_openlibs(L);
  mgen__register_modules(L);
  int rc = luaL_loadfile(L, argv[1]);
  if (rc == LUA_OK) {
    lua_pushstring(L, argv[2]);
    lua_pushstring(L, argv[3]);
    rc = lua_pcall(L, 2, 1, 0);
  }
  if (rc != LUA_OK) {
    fprintf(stderr, "host_test: %s\n", lua_tostring(L, -1));
    lua_close(L);
    return 1;
  }
  int ok = lua_toboolean(L, -1);
  lua_close(L);
  return ok ? 0 : 1;
}
