/* budget.h -- marlin-gen's limits on the memory and time of the Lua code it runs.
 *
 * Specs and templates are code: a `while true do end` or an allocating loop in one of them
 * must end in an error that names the file, not hang or exhaust the machine. The state is
 * created with mgen__limit_alloc (every byte Lua holds is counted; an allocation past the
 * limit fails, which Lua raises as "not enough memory") and runs under mgen__limit_hook, a
 * count hook that raises once the instruction budget is spent. Both record the file being run
 * (the innermost Lua frame outside gen/lua/, else what emit.lua declared through
 * mgen_host.running, fileio.h) so that gen/main.c can report the limit whatever became of the
 * error on its way up (a spec may pcall it; handlers may fail on it in turn).
 */
#ifndef MGEN_BUDGET_H
#define MGEN_BUDGET_H

#include <stddef.h>

#include <lua.h>

/* The defaults: about 10x what `marlin-gen --space full` takes over the shipped templates
 * (measured with -v, which prints both: 401 MiB and 587 million instructions on 2026-12-01;
 * 6e9 instructions are about 20 s of an endless loop). */
#define MGEN_DEFAULT_MAX_MEMORY_MB 4096
#define MGEN_DEFAULT_MAX_INSTRUCTIONS 6000000000

/* The hook runs every MGEN_HOOK_EVERY instructions. */
enum { MGEN_HOOK_EVERY = 1000 };

typedef struct mgen_limits {
  size_t max_bytes;            /* 0: no limit */
  long long max_instructions;  /* 0: no limit */
  size_t bytes, peak_bytes;    /* held by Lua now, and at most */
  long long instructions;      /* run so far, in steps of MGEN_HOOK_EVERY */
  int memory_hit;              /* an allocation was refused for the limit */
  int instructions_hit;        /* the budget is spent: every later hook call raises */
  char where[512];             /* the file (and line) running when a limit was hit */
} mgen_limits;

/* lua_Alloc over realloc/free; `ud` is the mgen_limits. */
void *mgen__limit_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

/* Installs the count hook on L (created by lua_newstate(mgen__limit_alloc, limits)). */
void mgen__limit_start(lua_State *L);

/* The message for a limit that was hit ("<where>: memory limit of 4096 MiB reached
 * (--max-memory MB raises it)"), or NULL if neither was. Points into a static buffer. */
const char *mgen__limit_message(lua_State *L, const mgen_limits *limits);

#endif /* MGEN_BUDGET_H */
