/* tune_args.c -- marlin-tune's command line: tune_args.h. */
#include "tune_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mgen/mgen.h"
#include "mgen_internal.h"

typedef struct preset { tune_shape shapes[8]; int count; } preset;

/* --preset NAME: kPresets[i] is the i-th name. */
static const char kPresetNames[] = "llama-7b,llama-13b,llama-70b,llama3-8b,bench";
/* nn.Linear (out, in) of each projection: fused qkv, o, fused gate_up, down. */
static const preset kPresets[] = {
    /* llama-7b */ {{{12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008}}, 4},
    /* llama-13b */ {{{15360, 5120}, {5120, 5120}, {27648, 5120}, {5120, 13824}}, 4},
    /* llama-70b */ {{{10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}}, 4},
    /* llama3-8b */ {{{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}}, 4},
    /* bench: bench/bench_gemm.c's 8 shapes, llama-7b and llama-70b */
    {{{12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008}, {10240, 8192}, {8192, 8192},
      {57344, 8192}, {8192, 28672}}, 8},
};
static const int kDefaultMs[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
static const char kUsage[] =
    "usage: marlin-tune [options] [NxK ...]\n"
    "       marlin-tune --show FILE [--json]\n"
    "Times every generated kernel for each weight shape NxK (N = out_features, K = in_features,\n"
    "nn.Linear's weight.shape; e.g. 12288x4096) and M value on this GPU and merges the winners\n"
    "into an autotune cache file.\n"
    "  --preset NAME   add shapes: llama-7b, llama-13b, llama-70b, llama3-8b, bench\n"
    "  --m LIST        M values, e.g. 1,16,256 (default 1,2,4,...,4096)\n"
    "  --fmt LIST      weight formats, by short name (gc,g32,g64,g128: u4b8 groups;\n"
    "                  nvfp4, mxfp4: fe2m1 schemes; u4_gc,u4_g32,u4_g64,u4_g128: u4 groups)\n"
    "                  or key (u4b8/g128, fe2m1/g16/nvfp4, u4/g128);\n"
    "                  all: every format (default g128)\n"
    "  --act NAME      activation type: f16 or bf16 (default f16); e4m3 (e4m3bf16): W4A8,\n"
    "                  FP8 E4M3 activations and FP16 (BF16) output, weights in the e4m3\n"
    "                  layout (u4b8, MXFP4, u4; all: those with kernels in the table)\n"
    "  -o, --output FILE  the cache file (default: $MGEN_CACHE)\n"
    "  --replace       write only this run's records (default: merge into FILE)\n"
    "  --reps N        timed runs per kernel, 1 to 10000 (default 20)\n"
    "  --device D      CUDA device (default 0)\n"
    "  -v              print libmgen's info messages\n"
    "  --progress      show progress (keys done / total, elapsed, estimate) even where\n"
    "                  stderr is not a terminal (default: on a terminal, outside CI)\n"
    "  --quiet         no progress\n"
    "  --show FILE     print which kernel won where and its speedup over the default\n"
    "  --json          with --show: the whole file as JSON on stdout, for scripts\n"
    "  -h, --help      print this help and exit\n"
    "  --version       print the version and exit\n"
    "Options take \"--opt value\" or \"--opt=value\". Exit status: 0; 1 runtime error (a key that\n"
    "failed to tune included); 2 usage error (unknown option, bad value, shape or list).\n";

/* Adds a format once: a repeat (by name, key or through "all") would tune the same keys again.
 * Every append goes through here, so o->fmts never overflows whatever the list holds. */
static void add_fmt(tune_opts *o, tune_fmt f, const char *arg) {
  for (int i = 0; i < o->nfmts; i++)
    if (o->fmts[i].wfmt == f.wfmt && o->fmts[i].scheme == f.scheme && o->fmts[i].group == f.group) {
      if (!f.from_all) o->fmts[i].from_all = 0; /* named too */
      return;
    }
  if (o->nfmts == TUNE_MAX_LIST) cli_usage_error("too many formats (at most 64) at", arg);
  o->fmts[o->nfmts++] = f;
}

/* --fmt LIST: each item a SHORT or KEY name of a format of the table (formats.h), or "all". */
static void parse_fmts(tune_opts *o, const char *arg) {
  cli_item items[TUNE_MAX_LIST];
  int count = cli_list("--fmt", arg, items, TUNE_MAX_LIST);
  o->nfmts = 0;
  for (int j = 0; j < count; j++) {
    tune_fmt f = {.from_all = strcmp(items[j], "all") == 0};
    if (f.from_all) {
      for (int i = 0; mgen__format_at(i, &f.wfmt, &f.scheme, &f.group); i++)
        add_fmt(o, f, items[j]);
      continue;
    }
    if (mgen__format_name_parse(MGEN__FORMAT_SHORT, items[j], &f.wfmt, &f.scheme, &f.group) != 0 &&
        mgen__format_name_parse(MGEN__FORMAT_KEY, items[j], &f.wfmt, &f.scheme, &f.group) != 0) {
      char what[256], names[160];
      mgen__format_short_list(names, sizeof names);
      snprintf(what, sizeof what, "--fmt needs one of %s,all (or a key such as u4b8/g128), not",
               names);
      cli_usage_error(what, items[j]);
    }
    add_fmt(o, f, items[j]);
  }
}

/* --act NAME: an activation type of the table, or a W4A8 name (the output type; *layout
 * MGEN_LAYOUT_E4M3). */
static int parse_act(const char *arg, int *layout) {
  int act = mgen__act_parse(arg, strlen(arg));
  *layout = MGEN_LAYOUT_DEFAULT;
  if (act >= 0) return act;
  act = mgen__a8_act_parse(arg, strlen(arg));
  if (act >= 0) return *layout = MGEN_LAYOUT_E4M3, act;
  char what[160], names[128] = "", name[32];
  size_t used = 0;
  for (int i = 0, a; (a = mgen__act_at(i)) >= 0 && used < sizeof names; i++)
    used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? "," : "",
                             mgen__act_name(a));
  for (int i = 0, a; (a = mgen__act_at(i)) >= 0 && used < sizeof names; i++) {
    mgen__a8_act_name(a, name, sizeof name);
    used += (size_t)snprintf(names + used, sizeof names - used, ",%s", name);
  }
  snprintf(what, sizeof what, "--act needs one of %s, not", names);
  cli_usage_error(what, arg);
  return -1;
}

/* With --act e4m3: the formats packed in the e4m3 layout; one that "all" brought and is not is
 * left out, one named is a usage error. */
static void keep_a8_formats(tune_opts *o) {
  int kept = 0;
  for (int i = 0; i < o->nfmts; i++) {
    const tune_fmt f = o->fmts[i];
    if (mgen__format_layout_fits(f.wfmt, f.scheme, o->layout)) {
      o->fmts[kept++] = f;
    } else if (!f.from_all) {
      char what[160], name[48], act[32];
      mgen__format_text(o->act, f.wfmt, f.scheme, f.group, name, sizeof name);
      mgen__a8_act_name(o->act, act, sizeof act);
      snprintf(what, sizeof what, "--act %s (W4A8) tunes weights in the %s layout; not packed in it:",
               act, mgen__layout_name(o->layout));
      cli_usage_error(what, name);
    }
  }
  o->nfmts = kept;
}

static void add_shape(tune_opts *o, int n, int k, const char *arg) {
  for (int i = 0; i < o->nshapes; i++)
    if (o->shapes[i].n == n && o->shapes[i].k == k) return;
  if (o->nshapes == TUNE_MAX_LIST) cli_usage_error("too many shapes (at most 64) at", arg);
  o->shapes[o->nshapes++] = (tune_shape){n, k};
}

enum { OPT_PRESET = CLI_OPT_FIRST_FREE, OPT_M, OPT_FMT, OPT_ACT, OPT_REPLACE, OPT_REPS,
       OPT_DEVICE, OPT_SHOW, OPT_JSON, OPT_PROGRESS, OPT_QUIET };
static const struct option kOptions[] = {
    {"preset", required_argument, NULL, OPT_PRESET}, {"m", required_argument, NULL, OPT_M},
    {"fmt", required_argument, NULL, OPT_FMT},       {"act", required_argument, NULL, OPT_ACT},
    {"output", required_argument, NULL, 'o'},        {"replace", no_argument, NULL, OPT_REPLACE},
    {"reps", required_argument, NULL, OPT_REPS},     {"device", required_argument, NULL, OPT_DEVICE},
    {"show", required_argument, NULL, OPT_SHOW},     {"json", no_argument, NULL, OPT_JSON},
    {"progress", no_argument, NULL, OPT_PROGRESS},   {"quiet", no_argument, NULL, OPT_QUIET},
    CLI_STD_OPTIONS, {NULL, 0, NULL, 0}};

tune_opts tune_parse_args(int argc, char **argv) {
  tune_opts o = {.act = MGEN_ACT_F16, .device = 0};
  int c, n, k;
  cli_begin("marlin-tune", kUsage);
  while ((c = cli_next(argc, argv, "ho:v", kOptions)) != -1) {
    switch (c) {
    case 1: /* an operand: a weight shape */
      cli_shape_nk("shape", optarg, &n, &k);
      add_shape(&o, n, k, optarg);
      break;
    case OPT_SHOW: o.show = optarg; break;
    case OPT_JSON: o.json = 1; break;
    case OPT_PROGRESS:
    case OPT_QUIET:
      if (o.progress != PROGRESS_FLAG_AUTO &&
          o.progress != (c == OPT_PROGRESS ? PROGRESS_FLAG_ON : PROGRESS_FLAG_OFF))
        cli_usage_error("--progress and --quiet exclude each other, not both with",
                        argv[optind - 1]);
      o.progress = c == OPT_PROGRESS ? PROGRESS_FLAG_ON : PROGRESS_FLAG_OFF;
      break;
    case OPT_REPLACE: o.replace = 1; break;
    case 'v': o.verbose = 1; break;
    case 'o': o.output = optarg; break;
    case OPT_REPS: o.reps = cli_int("--reps", optarg, 1, TUNE_REPS_MAX); break;
    case OPT_DEVICE: o.device = cli_int("--device", optarg, 0, 1023); break;
    case OPT_ACT: o.act = parse_act(optarg, &o.layout); break;
    case OPT_M: o.nms = cli_int_list("--m", optarg, o.ms, TUNE_MAX_LIST, 1, CLI_DIM_MAX); break;
    case OPT_FMT: parse_fmts(&o, optarg); break;
    case OPT_PRESET: {
      const preset *p = &kPresets[cli_choice("--preset", optarg, kPresetNames)];
      for (int j = 0; j < p->count; j++) add_shape(&o, p->shapes[j].n, p->shapes[j].k, optarg);
      break;
    }
    }
  }
  if (o.json && !o.show) cli_usage_error("--json goes with --show FILE:", "--json");
  if (o.show) {
    if (o.nshapes) {
      char first[32];
      snprintf(first, sizeof first, "%dx%d", o.shapes[0].n, o.shapes[0].k);
      cli_usage_error("--show FILE takes no shapes to tune, not", first);
    }
    return o;
  }
  if (o.nshapes == 0) cli_usage_error("no shapes: give NxK or --preset NAME, as in", "12288x4096");
  if (o.nms == 0) memcpy(o.ms, kDefaultMs, sizeof kDefaultMs), o.nms = 13;
  /* One M per bucket (the first given): the others would time the same key again. */
  int kept = 0;
  for (int i = 0; i < o.nms; i++) {
    int seen = 0;
    for (int j = 0; j < kept; j++) seen |= mgen__bucket_of(o.ms[j]) == mgen__bucket_of(o.ms[i]);
    if (!seen) o.ms[kept++] = o.ms[i];
  }
  o.nms = kept;
  if (o.nfmts == 0) parse_fmts(&o, "g128");
  if (o.layout != MGEN_LAYOUT_DEFAULT) keep_a8_formats(&o);
  if (o.output == NULL) o.output = getenv("MGEN_CACHE");
  if (o.output == NULL || !*o.output)
    cli_usage_error("no cache file: give -o FILE or set", "MGEN_CACHE");
  return o;
}

