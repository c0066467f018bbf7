/* cli.h -- the command line of marlin-tune and the bench programs (bench/): one getopt_long loop
 * with the same usage errors, --help and --version everywhere, and parsers for bounded integers,
 * comma-separated lists, names and NxK weight shapes. Plain C, no CUDA, so that every usage
 * error is found before the program touches the GPU.
 *
 * Exit status of these programs: 0 success, 1 runtime error, 2 usage error (unknown option,
 * missing or bad value, bad shape, bad list). A usage error prints on stderr
 *     prog: what 'arg'
 *     Try 'prog --help'.
 * and exits 2: the helpers below never return on bad input (programs only; libmgen never
 * exits). marlin-gen (gen/main.c) follows the same conventions on its own: gen/ builds without
 * runtime/.
 *
 * Shapes: one notation, dimensions in the order M, N, K with 'x' between them. A weight shape is
 * NxK (N = out_features, K = in_features: nn.Linear's weight.shape), a GEMM problem MxNxK.
 */
#ifndef MGEN_CLI_H
#define MGEN_CLI_H

#include <getopt.h>

enum { CLI_EXIT_OK = 0, CLI_EXIT_ERROR = 1, CLI_EXIT_USAGE = 2 };

/* Largest M, N or K accepted on a command line (a 2^20 x 2^20 FP16 matrix is 2 TiB). */
enum { CLI_DIM_MAX = 1 << 20 };

/* What cli_next returns for --version; --help is 'h'. Add both to the options with
 * CLI_STD_OPTIONS, and 'h' to the short options (-h). */
enum { CLI_OPT_VERSION = 0x100, CLI_OPT_FIRST_FREE = 0x101 };
#define CLI_STD_OPTIONS \
  {"help", no_argument, NULL, 'h'}, { "version", no_argument, NULL, CLI_OPT_VERSION }

/* Names the program in every message (the prefix) and gives the --help text. Call first; a
 * second call starts a new command line (getopt's state is reset: tests and fuzzers parse many). */
void cli_begin(const char *prog, const char *usage);

/* What ends the program where a helper below "exits": exit() unless replaced. A fuzzer or test
 * installs a function that does not return either (it longjmps back to its caller), so that
 * parsing many command lines needs no process per line. NULL restores exit(). */
typedef void (*cli_exit_fn)(int status);
void cli_set_exit(cli_exit_fn fn);
/* The name given to cli_begin. */
const char *cli_prog(void);

/* The next option, getopt_long-style: its val, with `optarg` set for options that take a
 * value; 1 for an operand (in `optarg`: operands come back in order, wherever they stand); -1
 * at the end. Long options take "--opt value" or "--opt=value" and must be spelled in full (an
 * abbreviation that a new option would make ambiguous is refused from the start). --help and
 * -h print the usage text on stdout and exit 0; --version prints "prog <version>" and exits 0.
 * Unknown options, missing values and values given to flags are usage errors. `shortopts` as
 * getopt's, without a leading '-', '+' or ':'. */
int cli_next(int argc, char **argv, const char *shortopts, const struct option *longopts);

/* Prints "prog: what 'arg'" and "Try 'prog --help'." on stderr and exits 2. */
_Noreturn void cli_usage_error(const char *what, const char *arg);

/* The integer in `s`, from lo to hi; else "<option> needs a number from lo to hi, not 's'". */
int cli_int(const char *option, const char *s, int lo, int hi);

/* Splits the comma-separated list `s` into at most `max` non-empty items, each shorter than
 * CLI_ITEM_LEN; returns the count. Items include kernel names (bench_tune_method --kernels),
 * which the cache file allows up to 127 characters (MGEN__CACHE_NAME_MAX). */
enum { CLI_ITEM_LEN = 128 };
typedef char cli_item[CLI_ITEM_LEN];
int cli_list(const char *option, const char *s, cli_item *items, int max);

/* cli_list of integers from lo to hi each, into out[0..max). */
int cli_int_list(const char *option, const char *s, int *out, int max, int lo, int hi);

/* The index of `s` in `names`, a comma-separated list ("f16,bf16,all"); else
 * "<option> needs one of <names>, not 's'". */
int cli_choice(const char *option, const char *s, const char *names);

/* A weight shape "NxK", each from 1 to CLI_DIM_MAX; else
 * "<option> needs NxK (N = out_features, K = in_features), not 's'". */
void cli_shape_nk(const char *option, const char *s, int *n, int *k);

#endif /* MGEN_CLI_H */
