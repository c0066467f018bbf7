/* marlin_tune.c -- marlin-tune: tunes libmgen's kernel choice on this GPU for a list of weight
 * shapes and M values, and writes (by default merges into) an autotune cache file; with
 * --show FILE it prints which kernel won where (tune_show.c).
 *
 *   marlin-tune --preset llama-70b -o h200.cache            tune, merge into h200.cache
 *   marlin-tune 12288,4096 4096,4096 --m 1,16,256 --fmt g128,gc
 *   marlin-tune --show h200.cache
 *
 * Shapes are N,K (out_features,in_features of the nn.Linear). M values falling in one bucket
 * are tuned once, at the bucket's upper M. The file is saved after every shape, so an
 * interrupted run keeps what it measured. Exit status: 0, 1 on any error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "marlin_tune.h"

#define MAX_LIST 64

typedef struct shape { int n, k; } shape;
typedef struct preset { const char *name; shape shapes[8]; int count; } preset;

/* nn.Linear (out, in) of each projection: fused qkv, o, fused gate_up, down. */
static const preset kPresets[] = {
    {"llama-7b", {{12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008}}, 4},
    {"llama-13b", {{15360, 5120}, {5120, 5120}, {27648, 5120}, {5120, 13824}}, 4},
    {"llama-70b", {{10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}}, 4},
    {"llama3-8b", {{6144, 4096}, {4096, 4096}, {28672, 4096}, {4096, 14336}}, 4},
    /* bench/bench_gemm.c's 8 shapes: llama-7b and llama-70b */
    {"bench", {{12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008}, {10240, 8192},
               {8192, 8192}, {57344, 8192}, {8192, 28672}}, 8},
};
static const int kDefaultMs[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
static const struct { const char *name; int group; } kFmts[] = {
    {"g32", 32}, {"g64", 64}, {"g128", 128}, {"gc", MGEN_GROUP_CHANNEL}};

typedef struct opts {
  shape shapes[MAX_LIST];
  int nshapes, ms[MAX_LIST], nms, groups[4], ngroups, act, reps, device, replace, verbose;
  const char *output;
} opts;

static void usage(FILE *f) {
  fputs("usage: marlin-tune [options] [N,K ...]\n"
        "       marlin-tune --show FILE\n"
        "Times every generated kernel for each weight shape N,K (out_features,in_features) and\n"
        "M value on this GPU and merges the winners into an autotune cache file.\n"
        "  --preset NAME   add shapes: llama-7b, llama-13b, llama-70b, llama3-8b, bench\n"
        "  --m LIST        M values, e.g. 1,16,256 (default 1,2,4,...,4096)\n"
        "  --fmt LIST      u4b8 scale groups: g32,g64,g128,gc (default g128)\n"
        "  --act f16|bf16  activation type (default f16)\n"
        "  -o FILE         the cache file (default: $MGEN_CACHE)\n"
        "  --replace       write only this run's records (default: merge into FILE)\n"
        "  --reps N        timed runs per kernel (default 20)\n"
        "  --device D      CUDA device (default 0)\n"
        "  -v              print libmgen's info messages\n"
        "  --show FILE     print which kernel won where and its speedup over the default\n", f);
}

static void die(const char *fmt, const char *arg) {
  fprintf(stderr, "marlin-tune: ");
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  exit(1);
}

static int parse_int(const char *s, const char *what) {
  char *end;
  long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 0 || v > (1 << 30)) die("bad %s", what);
  return (int)v;
}

static int split(const char *s, char items[MAX_LIST][32]) {
  int n = 0;
  for (const char *p = s; *p;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (n == MAX_LIST || len == 0 || len >= 32) die("bad list '%s'", s);
    memcpy(items[n], p, len);
    items[n++][len] = '\0';
    p += len + (comma != NULL);
  }
  return n;
}

static void add_shape(opts *o, int n, int k) {
  for (int i = 0; i < o->nshapes; i++)
    if (o->shapes[i].n == n && o->shapes[i].k == k) return;
  if (o->nshapes == MAX_LIST) die("too many shapes%s", "");
  o->shapes[o->nshapes++] = (shape){n, k};
}

static opts parse_args(int argc, char **argv) {
  opts o = {.act = MGEN_ACT_F16, .device = 0};
  char items[MAX_LIST][32];
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int takes = !strcmp(a, "--preset") || !strcmp(a, "--m") || !strcmp(a, "--fmt") ||
                !strcmp(a, "--act") || !strcmp(a, "-o") || !strcmp(a, "--reps") ||
                !strcmp(a, "--device") || !strcmp(a, "--show");
    if (takes && v == NULL) die("%s needs a value", a);
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) usage(stdout), exit(0);
    else if (!strcmp(a, "--show")) exit(marlin_tune_show(v));
    else if (!strcmp(a, "--replace")) o.replace = 1;
    else if (!strcmp(a, "-v")) o.verbose = 1;
    else if (!strcmp(a, "-o")) o.output = v;
    else if (!strcmp(a, "--reps")) o.reps = parse_int(v, "--reps");
    else if (!strcmp(a, "--device")) o.device = parse_int(v, "--device");
    else if (!strcmp(a, "--act")) {
      if (strcmp(v, "f16") && strcmp(v, "bf16")) die("--act is f16 or bf16, not '%s'", v);
      o.act = strcmp(v, "f16") ? MGEN_ACT_BF16 : MGEN_ACT_F16;
    } else if (!strcmp(a, "--m")) {
      o.nms = split(v, items);
      for (int j = 0; j < o.nms; j++) o.ms[j] = parse_int(items[j], "M");
    } else if (!strcmp(a, "--fmt")) {
      int n = split(v, items);
      if (n > 4) die("--fmt: at most 4 formats%s", "");
      for (int j = 0; j < n; j++) {
        int g = -1;
        for (size_t f = 0; f < sizeof kFmts / sizeof kFmts[0]; f++)
          if (!strcmp(items[j], kFmts[f].name)) g = kFmts[f].group;
        if (g < 0) die("--fmt: unknown format '%s' (g32, g64, g128, gc)", items[j]);
        o.groups[o.ngroups++] = g;
      }
    } else if (!strcmp(a, "--preset")) {
      const preset *p = NULL;
      for (size_t j = 0; j < sizeof kPresets / sizeof kPresets[0]; j++)
        if (!strcmp(v, kPresets[j].name)) p = &kPresets[j];
      if (p == NULL) die("unknown preset '%s' (llama-7b, llama-13b, llama-70b, llama3-8b, bench)", v);
      for (int j = 0; j < p->count; j++) add_shape(&o, p->shapes[j].n, p->shapes[j].k);
    } else if (a[0] >= '0' && a[0] <= '9' && strchr(a, ',') != NULL) {
      if (split(a, items) != 2) die("a shape is N,K: '%s'", a);
      add_shape(&o, parse_int(items[0], "N"), parse_int(items[1], "K"));
    } else {
      usage(stderr);
      die("unknown argument '%s'", a);
    }
    i += takes;
  }
  if (o.nshapes == 0) usage(stderr), die("no shapes: give N,K or --preset%s", "");
  if (o.nms == 0) memcpy(o.ms, kDefaultMs, sizeof kDefaultMs), o.nms = 13;
  if (o.ngroups == 0) o.groups[o.ngroups++] = 128;
  if (o.output == NULL) o.output = getenv("MGEN_CACHE");
  if (o.output == NULL || !*o.output) die("no cache file: give -o FILE or set MGEN_CACHE%s", "");
  for (int i = 0; i < o.nms; i++)
    if (o.ms[i] < 1) die("M must be at least 1%s", "");
  return o;
}

static int verbose;
static void log_cb(void *user, mgen_log_level level, const char *message) {
  (void)user;
  if (level == MGEN_LOG_WARN || verbose)
    fprintf(stderr, "\n%s: %s\n", level == MGEN_LOG_WARN ? "warning" : "info", message);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void progress(int done, int total, const char *what, double elapsed) {
  const int width = 30, filled = total ? done * width / total : width;
  if (isatty(2)) {
    fprintf(stderr, "\r[%.*s%.*s] %3d/%-3d %6.1f s  %-44.44s", filled,
            "##############################", width - filled, "..............................",
            done, total, elapsed, what);
    if (done == total) fputc('\n', stderr);
  } else {
    fprintf(stderr, "[%d/%d] %6.1f s  %s\n", done, total, elapsed, what);
  }
}

int main(int argc, char **argv) {
  opts o = parse_args(argc, argv);
  verbose = o.verbose;
  mgen_ctx *ctx = NULL;
  mgen_ctx_opts co = {o.device, log_cb, NULL};
  mgen_status st = mgen_ctx_create(&ctx, mgen_builtin_table(), &co);
  if (st != MGEN_OK) {
    fprintf(stderr, "marlin-tune: mgen_ctx_create: %s\n", mgen_status_str(st));
    return 1;
  }
  if (o.reps) mgen_ctx_set_tune(ctx, MGEN_TUNE_NEVER, o.reps);
  cudaStream_t stream;
  if (cudaSetDevice(o.device) != cudaSuccess ||
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    fprintf(stderr, "marlin-tune: cannot create a stream on device %d\n", o.device);
    return 1;
  }
  const int total = o.ngroups * o.nshapes * o.nms;
  int done = 0, tuned = 0, failed = 0, changed = 0;
  double start = now(), log_speedup = 0;
  char what[128];
  for (int s = 0; s < o.nshapes; s++) {
    for (int g = 0; g < o.ngroups; g++) {
      mgen_weights w = {.wfmt = MGEN_WFMT_U4B8, .act = (mgen_act)o.act,
                        .scheme = MGEN_SCHEME_GROUP, .group = o.groups[g],
                        .n = o.shapes[s].n, .k = o.shapes[s].k};
      int lo[MAX_LIST], hi[MAX_LIST], nb = 0; /* buckets tuned for this shape and format */
      char group[16];
      if (w.group == MGEN_GROUP_CHANNEL) snprintf(group, sizeof group, "gc");
      else snprintf(group, sizeof group, "g%d", w.group);
      for (int i = 0; i < o.nms; i++, done++) {
        snprintf(what, sizeof what, "%s/u4b8/%s n=%d k=%d M=%d",
                 o.act == MGEN_ACT_F16 ? "f16" : "bf16", group, w.n, w.k, o.ms[i]);
        progress(done, total, what, now() - start);
        int seen = 0;
        for (int b = 0; b < nb; b++) seen |= o.ms[i] >= lo[b] && o.ms[i] <= hi[b];
        if (seen) continue; /* its bucket is tuned already */
        mgen_tune_result r;
        st = mgen_tune(ctx, o.ms[i], &w, stream, &r);
        if (st != MGEN_OK) {
          fprintf(stderr, "\nmarlin-tune: %s: %s: %s\n", what, mgen_status_str(st),
                  mgen_ctx_last_error(ctx));
          failed++;
          continue;
        }
        lo[nb] = r.m_lo, hi[nb++] = r.m_hi;
        tuned++;
        changed += strcmp(r.kernel, r.default_kernel) != 0;
        if (r.default_us > 0) log_speedup += log(r.default_us / r.us);
      }
    }
    st = mgen_cache_save(ctx, o.output, o.replace && s == 0 ? MGEN_CACHE_REPLACE : 0);
    if (st != MGEN_OK) {
      fprintf(stderr, "\nmarlin-tune: saving %s: %s: %s\n", o.output, mgen_status_str(st),
              mgen_ctx_last_error(ctx));
      return 1;
    }
  }
  progress(total, total, "done", now() - start);
  printf("marlin-tune: %d keys tuned in %.1f s (%d failed); tuning changed the kernel for %d; "
         "geometric-mean speedup over the default %.3fx; wrote %s\n", tuned, now() - start,
         failed, changed, tuned ? exp(log_speedup / tuned) : 1.0, o.output);
  cudaStreamDestroy(stream);
  mgen_ctx_destroy(ctx);
  return failed ? 1 : 0;
}
