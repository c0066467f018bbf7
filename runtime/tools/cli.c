/* cli.c -- the command line of marlin-tune and the bench programs (cli.h). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MGEN_VERSION
#error "MGEN_VERSION (the project version) must be defined: runtime/CMakeLists.txt does"
#endif

static const char *prog = "?", *usage_text = "";
static cli_exit_fn exit_fn = exit;
static int ended; /* getopt_long is done; after "--" the rest are operands (cli_next) */

void cli_begin(const char *name, const char *usage) {
  prog = name;
  usage_text = usage;
  optind = 0; /* glibc: 0 re-initializes getopt completely (its scan position included) */
  ended = 0;
}

void cli_set_exit(cli_exit_fn fn) { exit_fn = fn != NULL ? fn : exit; }

const char *cli_prog(void) { return prog; }

_Noreturn void cli_usage_error(const char *what, const char *arg) {
  fprintf(stderr, "%s: %s '%s'\nTry '%s --help'.\n", prog, what, arg, prog);
  exit_fn(CLI_EXIT_USAGE);
  abort(); /* an exit function must not return */
}

/* An option getopt_long returned from argv[at]: usage errors exit, --help and --version exit 0. */
static int checked(int c, const char *token, int index, const struct option *longopts) {
  const int is_long = strncmp(token, "--", 2) == 0;
  const char shortname[3] = {'-', (char)optopt, '\0'};
  if (c == ':') cli_usage_error("missing value for option", is_long ? token : shortname);
  if (c == '?' && !is_long) cli_usage_error("unknown option", shortname);
  if (c == '?') /* getopt_long names the option (optopt) when it exists but was given a value */
    cli_usage_error(optopt ? "option takes no value" : "unknown option", token);
  if (index >= 0 && strcspn(token + 2, "=") != strlen(longopts[index].name))
    cli_usage_error("unknown option", token); /* an abbreviation */
  if (c == 'h') {
    fputs(usage_text, stdout);
    exit_fn(CLI_EXIT_OK);
    abort();
  }
  if (c == CLI_OPT_VERSION) {
    printf("%s %s\n", prog, MGEN_VERSION);
    exit_fn(CLI_EXIT_OK);
    abort();
  }
  return c;
}

int cli_next(int argc, char **argv, const char *shortopts, const struct option *longopts) {
  /* "-": operands come back as 1, in order (no permutation), so argv[optind] before the call
   * is the element a long option is read from; ":": a missing value returns ':'. */
  static char spec[64];
  if (!ended) {
    if (snprintf(spec, sizeof spec, "-:%s", shortopts) >= (int)sizeof spec) abort();
    opterr = 0; /* the messages are ours: "prog: what 'arg'" */
    const int at = optind == 0 ? 1 : optind; /* 0 (cli_begin): getopt starts at argv[1] */
    int index = -1;
    const int c = getopt_long(argc, argv, spec, longopts, &index);
    if (c != -1) return checked(c, at < argc ? argv[at] : "", index, longopts);
    ended = 1;
  }
  if (optind >= argc) return -1;
  optarg = argv[optind++];
  return 1;
}

int cli_int(const char *option, const char *s, int lo, int hi) {
  char *end, what[128];
  errno = 0;
  long v = strtol(s, &end, 10);
  if ((isdigit((unsigned char)s[0]) || s[0] == '-') && errno == 0 && *end == '\0' && v >= lo &&
      v <= hi)
    return (int)v;
  snprintf(what, sizeof what, "%s needs a number from %d to %d, not", option, lo, hi);
  cli_usage_error(what, s);
}

int cli_list(const char *option, const char *s, cli_item *items, int max) {
  int n = 0;
  for (const char *p = s;; p++) {
    size_t len = strcspn(p, ",");
    if (len >= CLI_ITEM_LEN) {
      char what[128];
      snprintf(what, sizeof what, "%s: an item of its list is longer than %d characters in",
               option, CLI_ITEM_LEN - 1);
      cli_usage_error(what, s);
    }
    if (n == max || len == 0) {
      char what[128];
      snprintf(what, sizeof what, "%s needs a comma-separated list of at most %d items, not",
               option, max);
      cli_usage_error(what, s);
    }
    memcpy(items[n], p, len);
    items[n++][len] = '\0';
    p += len;
    if (*p == '\0') return n;
  }
}

int cli_int_list(const char *option, const char *s, int *out, int max, int lo, int hi) {
  cli_item items[64];
  int n = cli_list(option, s, items, max < 64 ? max : 64);
  for (int i = 0; i < n; i++) out[i] = cli_int(option, items[i], lo, hi);
  return n;
}

int cli_choice(const char *option, const char *s, const char *names) {
  int index = 0;
  for (const char *p = names;; index++) {
    size_t len = strcspn(p, ",");
    if (len == strlen(s) && strncmp(p, s, len) == 0) return index;
    p += len;
    if (*p++ == '\0') break;
  }
  char what[256];
  snprintf(what, sizeof what, "%s needs one of %s, not", option, names);
  cli_usage_error(what, s);
}

void cli_shape_nk(const char *option, const char *s, int *n, int *k) {
  char *x, *end;
  errno = 0;
  long vn = strtol(s, &x, 10), vk = 0;
  int ok = isdigit((unsigned char)s[0]) && *x == 'x' && isdigit((unsigned char)x[1]);
  if (ok) vk = strtol(x + 1, &end, 10);
  if (ok && errno == 0 && *end == '\0' && vn >= 1 && vn <= CLI_DIM_MAX && vk >= 1 &&
      vk <= CLI_DIM_MAX) {
    *n = (int)vn;
    *k = (int)vk;
    return;
  }
  char what[128];
  snprintf(what, sizeof what, "%s needs NxK (N = out_features, K = in_features), not", option);
  cli_usage_error(what, s);
}
