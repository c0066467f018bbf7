/* tune_args.h -- marlin-tune's command line (tune_args.c): shapes, presets, M values, formats
 * and options into a tune_opts, before any CUDA call. Usage errors end the program through
 * cli.h (exit status 2). Apart from marlin_tune.c so that tests/fuzz/fuzz_tune_args.c can parse
 * command lines without CUDA. */
#ifndef MGEN_TUNE_ARGS_H
#define MGEN_TUNE_ARGS_H

#include "progress.h"

enum { TUNE_MAX_LIST = 64 }; /* shapes, M values and formats, each */
/* mgen_ctx_set_tune's range (runtime/src/context/ctx.c); 0 there means the default, 20. */
enum { TUNE_REPS_MAX = 10000 };

typedef struct tune_shape { int n, k; } tune_shape;
/* A weight format of the table (formats.h): what --fmt names. */
typedef struct tune_fmt { int wfmt, scheme, group, from_all; } tune_fmt; /* from_all: only through "all" */

typedef struct tune_opts {
  tune_shape shapes[TUNE_MAX_LIST];
  tune_fmt fmts[TUNE_MAX_LIST];
  int nshapes, ms[TUNE_MAX_LIST], nms, nfmts, act, reps, device, replace, verbose;
  int layout;             /* MGEN_LAYOUT_DEFAULT, or MGEN_LAYOUT_E4M3 for --act e4m3 (W4A8) */
  int json;               /* --json: with --show only */
  progress_flag progress; /* --progress, --quiet (not both), else AUTO */
  const char *output;     /* -o FILE, else $MGEN_CACHE */
  const char *show;       /* --show FILE: print it (as JSON with json) and do nothing else */
} tune_opts;

/* The options of argv (see marlin-tune --help). The whole command line is read first, so an
 * unknown option or bad value is a usage error wherever it stands, --show included. With
 * `show` set: no shapes were given (a usage error otherwise) and the tuning fields are as given
 * (nothing defaulted or checked for presence). Otherwise: 1 to 64 distinct shapes with N and K
 * from 1 to CLI_DIM_MAX; 1 to 64 M values from 1 to CLI_DIM_MAX, no two in one M bucket
 * (bucket.h: the first given of each bucket is kept, the others would tune the same key); 1 to
 * 64 distinct formats of the table, in the order first named (a format named again, by short
 * name, key or through "all", is kept once); an activation type of the table, or with --act
 * e4m3 / e4m3<act> (W4A8: FP8 activations, output f16 or <act>) the output type and layout
 * MGEN_LAYOUT_E4M3, the formats packed in it (a format "all" brought that is not is left out;
 * one named is a usage error); reps 0
 * (default) to TUNE_REPS_MAX; device 0 to 1023; a non-empty output path; json 0. */
tune_opts tune_parse_args(int argc, char **argv);

#endif /* MGEN_TUNE_ARGS_H */
