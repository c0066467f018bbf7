/* budget.c -- the memory and instruction limits of marlin-gen's Lua state (budget.h). */
#include "budget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>

#include "fileio.h"

void *mgen__limit_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  mgen_limits *lim = (mgen_limits *)ud;
  if (ptr == NULL) osize = 0; /* then osize is the kind of object, not a size */
  if (nsize == 0) {
    free(ptr);
    lim->bytes -= osize;
    return NULL;
  }
  if (nsize > osize && lim->max_bytes != 0 &&
      (nsize - osize > lim->max_bytes || lim->bytes > lim->max_bytes - (nsize - osize))) {
    lim->memory_hit = 1; /* Lua collects and tries once more, then raises "not enough memory" */
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (p == NULL) return NULL;
  lim->bytes = lim->bytes - osize + nsize;
  if (lim->bytes > lim->peak_bytes) lim->peak_bytes = lim->bytes;
  return p;
}

/* The file a limit is charged to: the innermost Lua frame that is not the generator's own
 * code (a spec, a module it requires, a template), as "file:line"; else the file emit.lua
 * declared it runs (mgen_host.running); else the generator itself. */
static void find_culprit(lua_State *L, char *out, size_t size) {
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar); level++) {
    if (lua_getinfo(L, "Sl", &ar) == 0 || ar.source[0] != '@' || ar.currentline < 0) continue;
    if (strncmp(ar.source, "@gen/lua/", 9) == 0) continue;
    snprintf(out, size, "%s:%d", ar.source + 1, ar.currentline);
    return;
  }
  lua_getfield(L, LUA_REGISTRYINDEX, MGEN_RUNNING_KEY);
  const char *running = lua_tostring(L, -1);
  snprintf(out, size, "%s", running != NULL ? running : "marlin-gen's own Lua code");
  lua_pop(L, 1);
}

static void hook(lua_State *L, lua_Debug *ar) {
  (void)ar;
  mgen_limits *lim;
  lua_getallocf(L, (void **)&lim);
  if (!lim->instructions_hit) {
    lim->instructions += MGEN_HOOK_EVERY;
    if (lim->max_instructions == 0 || lim->instructions <= lim->max_instructions) return;
    lim->instructions_hit = 1;
    find_culprit(L, lim->where, sizeof lim->where);
    /* From now on every instruction raises, so that no pcall can catch the error and loop on:
     * only C code (main's message handler and report) runs after it. */
    lua_sethook(L, hook, LUA_MASKCOUNT, 1);
  }
  lua_pushfstring(L, "%s: instruction limit reached", lim->where);
  lua_error(L);
}

void mgen__limit_start(lua_State *L) {
  lua_sethook(L, hook, LUA_MASKCOUNT, MGEN_HOOK_EVERY);
}

const char *mgen__limit_message(lua_State *L, const mgen_limits *lim) {
  static char msg[1024];
  if (lim->instructions_hit) {
    snprintf(msg, sizeof msg,
             "%s: instruction limit of %lld reached (an endless loop? --max-instructions N "
             "raises it)",
             lim->where, lim->max_instructions);
    return msg;
  }
  if (lim->memory_hit) {
    char where[512];
    lua_getfield(L, LUA_REGISTRYINDEX, MGEN_RUNNING_KEY);
    const char *running = lua_tostring(L, -1);
    snprintf(where, sizeof where, "%s", running != NULL ? running : "marlin-gen");
    lua_pop(L, 1);
    snprintf(msg, sizeof msg,
             "%s: memory limit of %zu MiB reached (--max-memory MB raises it)", where,
             lim->max_bytes >> 20);
    return msg;
  }
  return NULL;
}
