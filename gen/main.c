/* main.c -- marlin-gen: argv, the Lua state and error reporting; the work is in gen/lua/.
 *
 * Shaped like lua.c: `main` creates the state and calls `pmain` under lua_pcall with a message
 * handler, so that every error (including out-of-memory while parsing argv) is caught in one
 * place. pmain turns argv into an options table and calls `require("emit").main(opts)`.
 *
 * Exit codes: 0 success; 1 template, spec or IO error; 2 usage error. Lua code reports a usage
 * error by raising a table {usage = "message"}, and an error it has already formatted (with
 * its own traceback under -v) as {message = "text"}; any other error is a string.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "fileio.h"
#include "budget.h"

#ifndef MGEN_VERSION
#define MGEN_VERSION "0.0.0"
#endif

#define MGEN_STR_(x) #x
#define MGEN_STR(x) MGEN_STR_(x)

enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, STOP_OK = -1 /* --help, --version */ };

static const char *progname = "marlin-gen";
static int verbose = 0; /* -v: the message handler adds a traceback */
static mgen_limits limits = {
    .max_bytes = (size_t)MGEN_DEFAULT_MAX_MEMORY_MB << 20,
    .max_instructions = MGEN_DEFAULT_MAX_INSTRUCTIONS,
};

static const char usage_text[] =
    "usage: marlin-gen [options]\n"
    "Generates the Marlin-style W4A16 kernels, their dispatch table, shards and manifest.\n"
    "\n"
    "  --formats LIST   weight formats, comma-separated (e.g. u4b8); default: all in the specs\n"
    "  --act LIST       activation types (e.g. f16); default: all\n"
    "  --arch LIST      minimum SM of the kernels (e.g. sm80); default: all\n"
    "  --out DIR        output directory (default: ./generated)\n"
    "  --kernels GLOBS  only kernels whose name matches GLOB (fnmatch), or one of a\n"
    "                   comma-separated list of globs; selecting no kernel is a usage error\n"
    "                   (with --why-not: matching no kernel and no rejected combination)\n"
    "  --space SPACE    default: the default set (the specs' defaults); full: every valid,\n"
    "                   bank-conflict-free configuration (the benchmark sweep)\n"
    "  --allow-conflicts  also emit kernels whose shared-memory accesses conflict\n"
    "  --shards N       number of shard files, 1 to 4096 (default: 8)\n"
    "  --list           print the kernel names instead of generating\n"
    "  --why-not        with --list: also print rejected combinations and the reason\n"
    "  --decode NAME    print the fields of a kernel name, one field=value per line\n"
    "  --explain NAME   print the kernel's bank proof: per shared-memory access, the\n"
    "                   lane -> address -> bank table, wavefronts and conflicts\n"
    "  --shape MxNxK    with --explain: predicted totals of one launch on this problem\n"
    "  --sms N          with --shape: SMs of the device (default: 132)\n"
    "  --templates DIR  read templates from DIR instead of the embedded copy\n"
    "  --max-memory MB  most memory the specs and templates may use (default: " MGEN_STR(
        MGEN_DEFAULT_MAX_MEMORY_MB) ";\n"
    "                   0: no limit)\n"
    "  --max-instructions N  most Lua instructions a run may take (default: " MGEN_STR(
        MGEN_DEFAULT_MAX_INSTRUCTIONS) ";\n"
    "                   0: no limit); either limit ends the run with an error naming the file\n"
    "  -v               add a Lua traceback to error messages\n"
    "  --version        print the version and exit\n"
    "  -h, --help       print this help and exit\n"
    "\n"
    "Options take \"--opt value\" or \"--opt=value\", spelled in full. Exit status: 0 success;\n"
    "1 template, spec or IO error; 2 usage error (unknown option, missing or bad value,\n"
    "a --kernels filter that selects nothing).\n";

/* The long options. Each sets the field of the opts table named like it ('-' -> '_'): a
 * string, or true for a flag; --shards is checked here (an integer). */
enum { OPT_HELP = 'h', OPT_VERBOSE = 'v', OPT_VERSION = 0x100, OPT_FIELD = 0x101, OPT_LIMIT = 0x102 };
static const struct option long_options[] = {
    {"formats", required_argument, NULL, OPT_FIELD},   {"act", required_argument, NULL, OPT_FIELD},
    {"arch", required_argument, NULL, OPT_FIELD},      {"out", required_argument, NULL, OPT_FIELD},
    {"kernels", required_argument, NULL, OPT_FIELD},   {"shards", required_argument, NULL, OPT_FIELD},
    {"decode", required_argument, NULL, OPT_FIELD},    {"templates", required_argument, NULL, OPT_FIELD},
    {"space", required_argument, NULL, OPT_FIELD},     {"explain", required_argument, NULL, OPT_FIELD},
    {"shape", required_argument, NULL, OPT_FIELD},     {"sms", required_argument, NULL, OPT_FIELD},
    {"list", no_argument, NULL, OPT_FIELD},            {"why-not", no_argument, NULL, OPT_FIELD},
    {"allow-conflicts", no_argument, NULL, OPT_FIELD}, {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},       {"max-memory", required_argument, NULL, OPT_LIMIT},
    {"max-instructions", required_argument, NULL, OPT_LIMIT}, {NULL, 0, NULL, 0}};

/* Writes "marlin-gen: <msg>\n" to stderr with control bytes as \xNN (newlines and tabs of
 * tracebacks apart): messages quote arguments and spec text, which must not reach the
 * terminal as escape sequences. UTF-8 sequences pass, except the C1 controls (U+0080-U+009F);
 * a byte of no sequence is escaped. */
static void print_error(const char *msg) {
  fprintf(stderr, "%s: ", progname);
  for (const unsigned char *p = (const unsigned char *)msg; *p != '\0'; p++) {
    int n = *p >= 0xf0 && *p <= 0xf4 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 && *p < 0xe0 ? 2 : 1;
    if (*p >= 0xf5) n = 1;
    for (int i = 1; i < n; i++)
      if (p[i] < 0x80 || p[i] > 0xbf) n = 1; /* stops at the NUL too */
    if (n == 2 && *p == 0xc2 && p[1] <= 0x9f) n = 1;
    if (n > 1) {
      fwrite(p, 1, (size_t)n, stderr);
      p += n - 1;
    } else if (*p >= 0x80 || (*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f) {
      fprintf(stderr, "\\x%02X", *p);
    } else {
      fputc(*p, stderr);
    }
  }
  fputc('\n', stderr);
}

/* Prints "marlin-gen: <what> '<arg>'" and a pointer to --help. */
static int usage_error(const char *what, const char *arg) {
  size_t size = strlen(what) + strlen(arg) + 4;
  char *msg = malloc(size);
  if (msg == NULL) {
    fprintf(stderr, "%s: %s\n", progname, what);
  } else {
    snprintf(msg, size, "%s '%s'", what, arg);
    print_error(msg);
    free(msg);
  }
  fprintf(stderr, "Try '%s --help'.\n", progname);
  return EXIT_USAGE;
}

/* Sets opts[<long option's name, '-' -> '_'>] from one getopt_long result. */
static int set_field(lua_State *L, const struct option *opt, const char *value) {
  char field[32];
  snprintf(field, sizeof field, "%s", opt->name);
  for (char *p = field; *p; p++) *p = *p == '-' ? '_' : *p;
  if (value == NULL) {
    lua_pushboolean(L, 1);
  } else if (strcmp(field, "shards") == 0) {
    char *end;
    errno = 0;
    long n = strtol(value, &end, 10);
    if (errno != 0 || end == value || *end != '\0' || n < 1 || n > 4096)
      return usage_error("--shards needs a number from 1 to 4096, not", value);
    lua_pushinteger(L, (lua_Integer)n);
  } else {
    lua_pushstring(L, value);
  }
  lua_setfield(L, -2, field);
  return EXIT_OK;
}

/* --max-memory MB (0 to 1 TiB) or --max-instructions N (0 or more; 0: no limit). */
static int set_limit(const struct option *opt, const char *value) {
  const int memory = strcmp(opt->name, "max-memory") == 0;
  char *end;
  errno = 0;
  long long n = strtoll(value, &end, 10);
  if (errno != 0 || end == value || *end != '\0' || n < 0 || (memory && n > (1 << 20)))
    return usage_error(memory ? "--max-memory needs a number of MiB from 0 (no limit) to 1048576, not"
                              : "--max-instructions needs a number, 0 (no limit) or more, not",
                       value);
  if (memory)
    limits.max_bytes = (size_t)n << 20;
  else
    limits.max_instructions = n;
  return EXIT_OK;
}

/* Message handler: usage/message tables pass through; strings get a traceback under -v. */
static int msghandler(lua_State *L) {
  if (lua_type(L, 1) == LUA_TTABLE) return 1;
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  if (verbose)
    luaL_traceback(L, L, msg, 1);
  else
    lua_pushstring(L, msg);
  return 1;
}

/* Builds the options table from argv with getopt_long; returns EXIT_OK to go on, STOP_OK
 * after --help or --version, or EXIT_USAGE. The messages are ours (opterr = 0), in the form
 * "marlin-gen: what 'arg'", the same as marlin-tune's and the bench programs'. */
static int parse_args(lua_State *L, int argc, char **argv) {
  lua_newtable(L);
  lua_pushliteral(L, MGEN_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushliteral(L, "generated");
  lua_setfield(L, -2, "out");
  lua_pushinteger(L, 8);
  lua_setfield(L, -2, "shards");
  opterr = 0;
  for (;;) {
    /* "-": operands come back as 1 in order (no permutation), so argv[at] is the element an
     * option is read from; ":": a missing value returns ':'. */
    const int at = optind;
    int index = -1;
    const int c = getopt_long(argc, argv, "-:hv", long_options, &index);
    if (c == -1) break;
    const char *token = argv[at];
    const int is_long = strncmp(token, "--", 2) == 0;
    char shortname[3] = {'-', (char)optopt, '\0'};
    if (c == 1) return usage_error("unexpected argument", optarg);
    if (c == ':') return usage_error("missing value for option", is_long ? token : shortname);
    if (c == '?' && is_long && optopt != 0) return usage_error("option takes no value", token);
    if (c == '?') return usage_error("unknown option", is_long ? token : shortname);
    /* Names in full: an abbreviation would change meaning when an option is added. */
    if (index >= 0 && strcspn(token + 2, "=") != strlen(long_options[index].name))
      return usage_error("unknown option", token);
    if (c == OPT_HELP) {
      fputs(usage_text, stdout);
      return STOP_OK;
    }
    if (c == OPT_VERSION) {
      printf("%s %s\n", progname, MGEN_VERSION);
      return STOP_OK;
    }
    if (c == OPT_LIMIT) {
      if (set_limit(&long_options[index], optarg) != EXIT_OK) return EXIT_USAGE;
    } else if (c == OPT_VERBOSE) {
      verbose = 1;
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, "verbose");
    } else if (set_field(L, &long_options[index], optarg) != EXIT_OK) {
      return EXIT_USAGE;
    }
  }
  if (optind < argc) return usage_error("unexpected argument", argv[optind]); /* after "--" */
  return EXIT_OK;
}

static int pmain(lua_State *L) {
  luaL_checkversion(L);
  int argc = (int)lua_tointeger(L, 1);
  char **argv = (char **)lua_touserdata(L, 2);
  int code = parse_args(L, argc, argv);
  if (code != EXIT_OK) {
    lua_pushinteger(L, code == STOP_OK ? EXIT_OK : code);
    return 1;
  }
  int opts = lua_gettop(L);
  luaL_openlibs(L);
  mgen__register_modules(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "emit");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "main");
  lua_pushvalue(L, opts);
  lua_call(L, 1, 0);
  lua_pushinteger(L, EXIT_OK);
  return 1;
}

/* Prints the error left by pmain and returns the exit code. A limit that was hit is reported
 * as such, whatever error it became on its way up (a handler that failed on it, a spec's pcall,
 * a message that wraps "not enough memory"). */
static int report(lua_State *L, int status) {
  int code = EXIT_ERROR;
  const char *msg = NULL;
  /* Raw reads: nothing here may run Lua code (it would run unprotected). */
  if (lua_type(L, -1) == LUA_TTABLE) {
    lua_pushliteral(L, "usage");
    if (lua_rawget(L, -2) == LUA_TSTRING) {
      code = EXIT_USAGE;
    } else {
      lua_pop(L, 1);
      lua_pushliteral(L, "message");
      lua_rawget(L, -2);
    }
  }
  if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) msg = lua_tostring(L, -1);
  const int out_of_memory = status == LUA_ERRMEM || status == LUA_ERRERR ||
                            (msg != NULL && strstr(msg, "not enough memory") != NULL);
  if (limits.instructions_hit || (limits.memory_hit && out_of_memory)) {
    msg = mgen__limit_message(L, &limits);
    code = EXIT_ERROR;
  }
  print_error(msg != NULL ? msg : "(error object is not a string)");
  if (code == EXIT_USAGE) fprintf(stderr, "Try '%s --help'.\n", progname);
  return code;
}

static int panic(lua_State *L) {
  fprintf(stderr, "%s: unprotected Lua error: %s\n", progname, lua_tostring(L, -1));
  return 0; /* then Lua aborts */
}

int main(int argc, char **argv) {
  lua_State *L = lua_newstate(mgen__limit_alloc, &limits);
  if (L == NULL) {
    fprintf(stderr, "%s: cannot create the Lua state: not enough memory\n", progname);
    return EXIT_ERROR;
  }
  lua_atpanic(L, panic);
  mgen__limit_start(L);
  lua_pushcfunction(L, msghandler);
  lua_pushcfunction(L, pmain);
  lua_pushinteger(L, argc);
  lua_pushlightuserdata(L, argv);
  int code;
  const int status = lua_pcall(L, 2, 1, 1);
  if (status == LUA_OK)
    code = (int)lua_tointeger(L, -1);
  else
    code = report(L, status);
  if (verbose)
    fprintf(stderr, "%s: Lua peak memory %zu MiB, %lld instructions\n", progname,
            limits.peak_bytes >> 20, limits.instructions);
  if (fflush(stdout) != 0 && code == EXIT_OK) {
    fprintf(stderr, "%s: stdout: %s\n", progname, strerror(errno));
    code = EXIT_ERROR;
  }
  lua_close(L);
  return code;
}
