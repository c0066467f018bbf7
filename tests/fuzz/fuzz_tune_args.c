/* fuzz_tune_args.c -- libFuzzer target for marlin-tune's command line (runtime/tools/tune_args.c
 * over cli.c: options, NxK shapes, presets, M lists, formats). The input is argv after the
 * program's name, split at NUL bytes.
 *
 * cli.h's exit is replaced by a longjmp back here, so each command line is parsed in-process.
 * Properties, beyond "no crash, no sanitizer report":
 * - a command line ends through cli's exit only with status 0 (--help, --version) or 2 (a usage
 *   error), never 1;
 * - one that parses gives options inside tune_args.h's stated ranges (every shape, M value,
 *   format, count and number; M values in distinct buckets; formats distinct; --json only
 *   with --show; a progress flag), so marlin-tune's main never sees a value it did not check.
 * Build and run: tests/fuzz/run.sh BUILD_DIR fuzz_tune_args RUNS (stdout and stderr closed). */
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dispatch/bucket.h"
#include "formats/formats.h"
#include "tune_args.h"

#include "fuzz_require.h"

enum { MAX_INPUT = 4096, MAX_ARGS = 256 };

static jmp_buf back;
static int exit_status;

static void fuzz_exit(int status) {
  exit_status = status;
  longjmp(back, 1);
}

static void check_opts(const tune_opts *o) {
  REQUIRE(o->progress == PROGRESS_FLAG_AUTO || o->progress == PROGRESS_FLAG_ON ||
          o->progress == PROGRESS_FLAG_OFF);
  if (o->show != NULL) { /* --show FILE [--json]: no shapes; nothing else is used */
    REQUIRE(o->nshapes == 0);
    return;
  }
  REQUIRE(o->json == 0);
  REQUIRE(o->nshapes >= 1 && o->nshapes <= TUNE_MAX_LIST);
  for (int i = 0; i < o->nshapes; i++) {
    REQUIRE(o->shapes[i].n >= 1 && o->shapes[i].n <= CLI_DIM_MAX);
    REQUIRE(o->shapes[i].k >= 1 && o->shapes[i].k <= CLI_DIM_MAX);
    for (int j = 0; j < i; j++)
      REQUIRE(o->shapes[j].n != o->shapes[i].n || o->shapes[j].k != o->shapes[i].k);
  }
  REQUIRE(o->nms >= 1 && o->nms <= TUNE_MAX_LIST);
  for (int i = 0; i < o->nms; i++) {
    REQUIRE(o->ms[i] >= 1 && o->ms[i] <= CLI_DIM_MAX);
    for (int j = 0; j < i; j++) REQUIRE(mgen__bucket_of(o->ms[j]) != mgen__bucket_of(o->ms[i]));
  }
  REQUIRE(mgen__act_valid(o->act));
  REQUIRE(o->nfmts >= 1 && o->nfmts <= TUNE_MAX_LIST);
  for (int i = 0; i < o->nfmts; i++) {
    const tune_fmt *f = &o->fmts[i];
    REQUIRE(mgen__format_valid(o->act, f->wfmt, f->scheme, f->group,
                               mgen__wfmt_default_layout(f->wfmt)));
    for (int j = 0; j < i; j++) /* a format named twice is kept once */
      REQUIRE(o->fmts[j].wfmt != f->wfmt || o->fmts[j].scheme != f->scheme ||
              o->fmts[j].group != f->group);
  }
  REQUIRE(o->reps >= 0 && o->reps <= TUNE_REPS_MAX);
  REQUIRE(o->device >= 0 && o->device <= 1023);
  REQUIRE(o->output != NULL && o->output[0] != '\0');
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  unsetenv("MGEN_CACHE"); /* the output comes from -o only */
  cli_set_exit(fuzz_exit);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > MAX_INPUT) return 0;
  char *copy = malloc(size + 1);
  REQUIRE(copy != NULL);
  memcpy(copy, data, size);
  copy[size] = '\0';
  char *argv[MAX_ARGS + 2];
  int argc = 0;
  argv[argc++] = "marlin-tune";
  for (size_t at = 0; at <= size && argc <= MAX_ARGS; at += strlen(copy + at) + 1)
    argv[argc++] = copy + at;
  argv[argc] = NULL;
  if (setjmp(back) == 0) {
    tune_opts o = tune_parse_args(argc, argv);
    check_opts(&o);
  } else {
    REQUIRE(exit_status == CLI_EXIT_OK || exit_status == CLI_EXIT_USAGE);
  }
  free(copy);
  return 0;
}
