/* bench_gemm.c -- libmgen W4A16 GEMM against cuBLAS FP16 / BF16, roofline measured in the same
 * run.
 *
 * Version 2: for each activation type (--act: FP16, BF16), weight shape NxK and M, times
 * mgen_gemm (the default kernel choice; with --all-kernels every applicable kernel through
 * mgen_gemm_kernel) and cublasGemmEx of the same type (CUDA_R_16F / CUDA_R_16BF, FP32
 * compute) on the same C[M,N] = A[M,K] * W^T, and measures the ceilings of this GPU
 * (device-to-device copy bandwidth, cuBLAS 8192^3 of each type) that give each row's roofline
 * time max(bytes/BW, flops/peak). BF16 rows: A, W, C and the u4b8 scales are BF16.
 * Formats: u4b8 per group of 128 (g128) or per channel (gc); fe2m1 NVFP4 (E4M3 per 16 + FP32
 * global) and MXFP4 (E8M0 per 32); fe2m1 weight bytes count the packed codes, the block scales
 * and the FP32 column factors.
 *
 * Method (llm.c, ThunderKittens; the device notes' METHOD.md):
 * - CUDA events around each launch, after warm-up runs; the median of --reps runs (default 30).
 * - Weights rotated: enough copies of the packed weights, and of the 16-bit weights for cuBLAS,
 *   that copies * bytes >= 2 * L2, so no run finds its weights in L2 from the last run of the
 *   same copy. Activations are not rotated: in a model they come from the layer before.
 * - Each timed batch starts with a 1 GiB memset, so the host has queued the runs before the
 *   GPU reaches them and launch latency stays out of the first samples of short kernels.
 * - Random data, never zeros: A and W ~ N(0,1) (the same draws in both types); W quantized on
 *   the GPU by mgen_quantize from the 16-bit W of the row's type.
 * - Sanity check per row: mgen's C (poisoned first) against cuBLAS of the same type on the
 *   unquantized W. 4-bit rounding alone gives ~0.1-0.2 relative error, so this catches
 *   garbage, not subtle bugs (tests/gpu compares exactly); failures are reported and make the
 *   exit status 1.
 *
 * Version 3, W4A8 (--act e4m3: FP16 output; e4m3bf16: BF16 output): FP8 E4M3 activations with
 * an FP32 scale per row (mgen_quantize_act of the row's random 16-bit A, once, untimed) times
 * u4b8 weights quantized into MGEN_LAYOUT_E4M3, timed through mgen_gemm_a8 (with --all-kernels
 * every kernel of the e4m3 layout for (act, format, group) through mgen_gemm_a8_kernel; kernels
 * exist for g128 and gc, other --fmt rows say "no kernel"). Timed in the same run on the same
 * shapes: cuBLAS of the output type (cublas_us and speedup, as for W4A16 rows) and cuBLASLt's
 * FP8 GEMM, W8A8 E4M3 x E4M3 -> output type with per-tensor FP32 scales (lt_plan_make says how
 * it is set up), on E4M3 copies of the same A and W rotated past 2x L2 like the others; its
 * rows are checked against the same reference. Where cuBLASLt has no FP8 GEMM (before sm_89)
 * its columns stay empty. The W4A8 roofline counts 1-byte A, FP32 row scales and the cuBLASLt
 * FP8 8192^3 rate (measured in this run; twice the FP16 rate where it cannot be).
 *
 * Run (GPU machine, repository root; bench/run_device.sh does the same):
 *   cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="80;90"
 *   cmake --build build --target bench_gemm && ./build/bench/bench_gemm --csv bench.csv
 * Options: --act f16|bf16|all|e4m3|e4m3bf16, a list (default f16; all: f16,bf16)
 *          --fmt gc|g32|g64|g128|nvfp4|mxfp4 (formats.h), a list,
 *          or all (default g128)  --all-kernels  --sweep PCT [--coarse-reps N]  --quick
 *          --shapes 12288x4096,57344x8192 (NxK: out_features x in_features)  --m 1,16,256
 *          --reps 30  --warmup 5  --graph N  --plain-launches  --max-sms N  --csv FILE (default
 *          stdout); exit 2 on a usage error
 * --plain-launches: libmgen launches its kernels in plain stream order instead of as
 * programmatic dependent launches (sm_90; mgen_ctx_opts.plain_launches), for an A/B.
 * --cold N (1..32): rows of M <= 256 are timed cold, as a GEMM runs in an engine: before each
 * warm-up and timed run, untimed, a 256 MB memset (the host stays ahead) and N other kernels of
 * the row's key on the row's problem (a copy of its weights no timed run reads), so the timed
 * kernel's code has left the SMs (bench/notes/v31.md: up to 2 us on the 79-85 KB wgmma tiles);
 * cuBLAS rows after the first format's kernels alike. Not with --graph rows' replay.
 * --max-sms N: libmgen's GEMMs spread over at most N SMs (mgen_ctx_opts.max_sms), as in an
 * engine that keeps SMs for other kernels; cuBLAS and the ceilings keep the whole device.
 * --graph N (decode: M <= 16; N launches per graph, e.g. 20): those rows, cuBLAS included, are also
 * timed under CUDA graph replay (bench_time_graph_us: N launches on the rotated copies
 * captured into one graph, the median over --reps replays of the mean per launch); the CSV
 * gets the columns mgen_graph_us and cublas_graph_us and the summary a second table.
 * --sweep PCT (the configuration sweep, implies --all-kernels): every kernel of the table is
 * first timed coarsely (the probe run, then the median of --coarse-reps runs, default 2); the
 * kernels within PCT % of the coarse best are then timed as usual (warm-up, median of --reps)
 * and checked. A coarse run of a few launches is noisy by a few %, so PCT (10 is safe) must
 * exceed that noise plus the margin the selection keeps (3 %).
 * Output: CSV gpu,act,fmt,kernel,M,K,N,mgen_us,cublas_us,speedup,mgen_roofline_frac,
 * cublas_roofline_frac,weight_GBps,reps (cublas_* is cuBLAS of the row's act; reps: how many
 * runs mgen_us is the median of, --coarse-reps for the sweep's unrefined rows); then a summary
 * on stdout with the geometric-mean speedup over cuBLAS per M bucket, one column per (act, fmt),
 * and the M=1 weight stream on 57344x8192.
 * With an e4m3 act the CSV gets the columns cublaslt_fp8_us,speedup_fp8 (cublaslt_fp8_us /
 * mgen_us) and, with --graph, cublaslt_fp8_graph_us, after all others: empty where not measured
 * (W4A16 rows, no cuBLASLt FP8). W4A8 rows have act e4m3 or e4m3bf16 (cublas_us is cuBLAS FP16
 * or BF16), and the summary a "vs FP8" column beside each e4m3 (act, fmt).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <mgen/mgen.h>

#include "bench_util.h"
#include "cli.h"
#define MGEN_INTERNAL_CTX /* the context's device model, for mgen__candidates */
#include "mgen_internal.h"

/* "f16", "bf16" (kernel-name field, CSV column). */
static const char *bench_act_name(mgen_act act) { return mgen__act_name((int)act); }

#define die bench_die

// --------------------------------------------------------------------------- configuration

typedef struct shape { int n, k; } shape; /* a weight shape NxK, as --shapes */
typedef struct fmt_desc { const char *name; int group, wfmt, scheme; } fmt_desc;

/* Llama-2/3 7B..70B projections (the shapes of the reference measurements). */
static const shape kShapes[] = {{12288, 4096}, {4096, 4096},  {22016, 4096}, {4096, 11008},
                                {10240, 8192}, {8192, 8192},  {57344, 8192}, {8192, 28672}};
static const int kMs[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
static const shape kQuickShapes[] = {{4096, 4096}, {57344, 8192}};
static const int kQuickMs[] = {1, 16, 256, 4096};
/* --fmt: the formats of the table (runtime/src/formats/formats.h), by their short names, then all. */
enum { NFMT = 16 };                 /* capacity; nfmt formats are in use */
static fmt_desc fmts[NFMT];         /* the table's formats in its order, names "u4b8_g128" */
static char fmt_names[NFMT][32];
static int nfmt;

/* Fills fmts from the format table; returns the index of `dflt` (a short name). */
static int load_formats(const char *dflt) {
  int found = 0;
  for (int i = 0, w, s, g; nfmt < NFMT && mgen__format_at(i, &w, &s, &g); i++, nfmt++) {
    char shortname[32];
    mgen__format_name(MGEN__FORMAT_BENCH, w, s, g, fmt_names[i], sizeof fmt_names[i]);
    mgen__format_name(MGEN__FORMAT_SHORT, w, s, g, shortname, sizeof shortname);
    fmts[i] = (fmt_desc){fmt_names[i], g, w, s};
    if (strcmp(shortname, dflt) == 0) found = i;
  }
  return found;
}
static const mgen_act kActs[] = {MGEN_ACT_F16, MGEN_ACT_BF16}; /* --act bits 0, 1 */
enum { NACT = 2, MAXLIST = 64, CHECK_ROWS = 16, NBUCKET = 4 };
/* W4A8 rows by output type kActs[t] (--act, CSV act): FP16 is the plain name, as mgen_gemm_a8's
 * output is FP16 unless the weights were packed for BF16. */
static char a8_names[NACT][16]; /* mgen__a8_act_name of kActs[t], filled by parse_args */
static const size_t kLtWorkspaceBytes = (size_t)32 << 20; /* cuBLASLt's, as engines give it */
static const double kCheckTol = 0.35; /* relative error vs 16-bit W: 4-bit rounding gives 0.1-0.2 */
static const size_t kSpacerBytes = (size_t)1 << 30;

/* --cold N: at most 32 other kernels, for rows up to M = 256 (where ~2 us of a cold start
 * matters; larger M would spend minutes on the other kernels). */
enum { COLD_MAX = 32, COLD_MAX_M = 256 };
static const size_t kColdSpacerBytes = (size_t)256 << 20;

typedef struct opts {
  shape shapes[MAXLIST];
  int nshapes, ms[MAXLIST], nms, reps, warmup, fmt_mask, act_mask, all_kernels;
  int a8_mask;                /* --act e4m3, e4m3bf16: W4A8 rows, bit t for output kActs[t] */
  int sweep_pct, coarse_reps; /* --sweep: 0 off */
  int graph;                  /* --graph: launches per graph; 0 off */
  int plain_launches;         /* --plain-launches: mgen_ctx_opts.plain_launches (no PDL) */
  int max_sms;                /* --max-sms: mgen_ctx_opts.max_sms (0: all; cuBLAS keeps all) */
  int cold;                   /* --cold: other kernels before each run; 0 off */
  const char *csv;
} opts;

static const char kUsage[] =
    "usage: bench_gemm [--act f16|bf16|all|e4m3|e4m3bf16,...]\n"
    "                  [--fmt gc|g32|g64|g128|nvfp4|mxfp4|u4_gc|u4_g32|u4_g64|u4_g128|all]\n"
    "                  [--all-kernels] [--sweep PCT [--coarse-reps N]] [--quick]\n"
    "                  [--shapes NxK,...] [--m M,...] [--reps N] [--warmup N] [--graph N]\n"
    "                  [--plain-launches] [--max-sms N] [--cold N] [--csv FILE]\n"
    "Shapes are NxK weight shapes (N = out_features, K = in_features), e.g. 57344x8192.\n"
    "--act e4m3 (e4m3bf16): W4A8, FP8 activations and FP16 (BF16) output, beside cuBLAS and\n"
    "cuBLASLt FP8 (columns cublaslt_fp8_us, speedup_fp8); all is f16,bf16.\n"
    "Exit status: 0; 1 runtime error or a failed sanity check; 2 usage error.\n";

enum { OPT_ACT = CLI_OPT_FIRST_FREE, OPT_FMT, OPT_ALL, OPT_SWEEP, OPT_COARSE, OPT_QUICK,
       OPT_SHAPES, OPT_M, OPT_REPS, OPT_WARMUP, OPT_GRAPH, OPT_CSV, OPT_PLAIN, OPT_MAX_SMS,
       OPT_COLD };
static const struct option kOptions[] = {
    {"act", required_argument, NULL, OPT_ACT},      {"fmt", required_argument, NULL, OPT_FMT},
    {"all-kernels", no_argument, NULL, OPT_ALL},    {"sweep", required_argument, NULL, OPT_SWEEP},
    {"coarse-reps", required_argument, NULL, OPT_COARSE}, {"quick", no_argument, NULL, OPT_QUICK},
    {"shapes", required_argument, NULL, OPT_SHAPES}, {"m", required_argument, NULL, OPT_M},
    {"reps", required_argument, NULL, OPT_REPS},    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"graph", required_argument, NULL, OPT_GRAPH},  {"csv", required_argument, NULL, OPT_CSV},
    {"plain-launches", no_argument, NULL, OPT_PLAIN}, {"max-sms", required_argument, NULL, OPT_MAX_SMS},
    {"cold", required_argument, NULL, OPT_COLD}, CLI_STD_OPTIONS, {NULL, 0, NULL, 0}};

static opts parse_args(int argc, char **argv) {
  opts o = {.reps = 30, .warmup = 5, .act_mask = 1, .coarse_reps = 2};
  char fmt_flags[256];
  o.fmt_mask = 1 << load_formats("g128");
  mgen__format_short_list(fmt_flags, sizeof fmt_flags - 4);
  strcat(fmt_flags, ",all");
  char act_flags[64] = ""; /* the names of kActs (cuBLAS types: bench_util.c), all, a8_names */
  for (int t = 0; t < NACT; t++)
    snprintf(act_flags + strlen(act_flags), sizeof act_flags - strlen(act_flags), "%s,",
             mgen__act_name((int)kActs[t]));
  strcat(act_flags, "all");
  for (int t = 0; t < NACT; t++) {
    mgen__a8_act_name((int)kActs[t], a8_names[t], sizeof a8_names[t]);
    snprintf(act_flags + strlen(act_flags), sizeof act_flags - strlen(act_flags), ",%s",
             a8_names[t]);
  }
  int quick = 0, reps = 0, warmup = -1, c;
  cli_item items[MAXLIST];
  cli_begin("bench_gemm", kUsage);
  while ((c = cli_next(argc, argv, "h", kOptions)) != -1) {
    switch (c) {
    case 1: cli_usage_error("unexpected argument", optarg);
    case OPT_QUICK: quick = 1; break;
    case OPT_ALL: o.all_kernels = 1; break;
    case OPT_SWEEP: o.sweep_pct = cli_int("--sweep", optarg, 1, 1000), o.all_kernels = 1; break;
    case OPT_COARSE: o.coarse_reps = cli_int("--coarse-reps", optarg, 1, 10000); break;
    case OPT_M: o.nms = cli_int_list("--m", optarg, o.ms, MAXLIST, 1, CLI_DIM_MAX); break;
    case OPT_REPS: reps = cli_int("--reps", optarg, 1, 10000); break;
    case OPT_WARMUP: warmup = cli_int("--warmup", optarg, 0, 10000); break;
    case OPT_GRAPH: o.graph = cli_int("--graph", optarg, 1, 1000); break;
    case OPT_CSV: o.csv = optarg; break;
    case OPT_PLAIN: o.plain_launches = 1; break;
    case OPT_MAX_SMS: o.max_sms = cli_int("--max-sms", optarg, 1, 1 << 20); break;
    case OPT_COLD: o.cold = cli_int("--cold", optarg, 1, COLD_MAX); break;
    case OPT_SHAPES:
      o.nshapes = cli_list("--shapes", optarg, items, MAXLIST);
      for (int i = 0; i < o.nshapes; i++)
        cli_shape_nk("--shapes", items[i], &o.shapes[i].n, &o.shapes[i].k);
      break;
    case OPT_FMT:
      o.fmt_mask = 0;
      for (int i = 0, n = cli_list("--fmt", optarg, items, MAXLIST); i < n; i++) {
        int f = cli_choice("--fmt", items[i], fmt_flags);
        o.fmt_mask |= f == nfmt ? (1 << nfmt) - 1 : 1 << f;
      }
      break;
    case OPT_ACT: /* kActs in order, all, then a8_names; a list adds up, a later --act replaces */
      o.act_mask = o.a8_mask = 0;
      for (int i = 0, n = cli_list("--act", optarg, items, MAXLIST); i < n; i++) {
        int t = cli_choice("--act", items[i], act_flags);
        if (t > NACT) o.a8_mask |= 1 << (t - NACT - 1);
        else o.act_mask |= t == NACT ? (1 << NACT) - 1 : 1 << t;
      }
      break;
    }
  }
  if (quick) { o.reps = 20; o.warmup = 3; }
  if (reps) o.reps = reps;
  if (warmup >= 0) o.warmup = warmup;
  if (o.reps < 20)
    fprintf(stderr, "bench_gemm: warning: --reps %d < 20: medians are noisy\n", o.reps);
  if (!o.nshapes) {
    const shape *s = quick ? kQuickShapes : kShapes;
    o.nshapes = quick ? 2 : (int)(sizeof kShapes / sizeof *kShapes);
    memcpy(o.shapes, s, (size_t)o.nshapes * sizeof *s);
  }
  if (!o.nms) {
    const int *m = quick ? kQuickMs : kMs;
    o.nms = quick ? 4 : (int)(sizeof kMs / sizeof *kMs);
    memcpy(o.ms, m, (size_t)o.nms * sizeof *m);
  }
  return o;
}

// --------------------------------------------------------------------------- timing

typedef struct bench {
  cudaStream_t stream;
  cublasHandle_t cublas;
  mgen_ctx *ctx;
  bench_timer timer, coarse; /* coarse: the sweep's first pass (no warm-up, --coarse-reps) */
  int sm, sm_count, graph; /* graph: --graph */
  size_t l2;
  char gpu[256];
  double bw;            /* measured ceiling: bytes/s (read + written) */
  double peak[NACT];    /* cuBLAS 8192^3 FLOP/s per act (0 for acts not benchmarked) */
  int cold;             /* --cold */
  void *cold_spacer;    /* kColdSpacerBytes, with --cold */
  int a8;               /* W4A8 rows in this run (--act e4m3...): the cuBLASLt FP8 columns */
  cublasLtHandle_t lt;  /* with a8, on `stream` through each matmul call */
  void *lt_ws;          /* kLtWorkspaceBytes */
  int lt_ok;            /* cuBLASLt has an FP8 GEMM on this device (its 8192^3 rate ran) */
  double peak8;         /* the W4A8 compute ceiling: cuBLASLt FP8 8192^3 FLOP/s, else 2 x FP16 */
} bench;

/* --cold: before each warm-up and timed run (bench_timer.pre), a memset that keeps the host
 * ahead of the GPU, then up to b->cold other kernels of the row's key on the row's M, N, K,
 * each once on a copy of the weights no timed run reads. In an engine a GEMM kernel runs
 * after attention, norms and other GEMMs, not after itself, and a kernel whose code the SMs no
 * longer hold starts slower: up to 2 us for the 79-85 KB wgmma tiles (bench/notes/v31.md). */
typedef struct evictor {
  bench *b;
  int m, count;
  const char *names[COLD_MAX + 1]; /* one more than b->cold, for the excluded one */
  const char *exclude;             /* the kernel timed now (NULL: cuBLAS): skipped */
  const void *a;
  const float *a_scales;           /* W4A8: A's row scales (a: its E4M3 codes); NULL: W4A16 */
  void *c;
  const mgen_weights *w;
} evictor;

static void evict(void *self) {
  const evictor *e = self;
  bench *b = e->b;
  CUDA_CHECK(cudaMemsetAsync(b->cold_spacer, 0, kColdSpacerBytes, b->stream));
  for (int i = 0, ran = 0; i < e->count && ran < b->cold; i++) {
    if (e->exclude && strcmp(e->names[i], e->exclude) == 0) continue;
    if (e->a_scales)
      MGEN_CHECK(b->ctx, mgen_gemm_a8_kernel(b->ctx, e->names[i], e->w->act, e->m, e->a,
                                             e->a_scales, 1, e->w, e->c, b->stream));
    else
      MGEN_CHECK(b->ctx, mgen_gemm_kernel(b->ctx, e->names[i], e->w->act, e->m, e->a, e->w, e->c,
                                          b->stream));
    ran++;
  }
}

static int cmp_int(const void *x, const void *y) {
  const int a = *(const int *)x, b = *(const int *)y;
  return (a > b) - (a < b);
}

/* The kernels of w's key that this device runs and that accept (m, n, k) -- the runtime's own
 * candidates (mgen__candidates) -- in table order, up to b->cold + 1 (one of them may be the
 * timed kernel); fewer are said on stderr. */
static void evictor_setup(evictor *e, bench *b, int m, const mgen_weights *w, const void *a,
                          const float *a_scales, void *c) {
  enum { CAP = 64 }; /* mgen__candidates' own limit; a key of the default set has ~22 */
  *e = (evictor){.b = b, .m = m, .a = a, .a_scales = a_scales, .c = c, .w = w};
  const mgen_table *t = mgen_builtin_table();
  const mgen__choice_key ck = mgen__choice_key_of(w, m);
  int idx[CAP];
  int got = mgen__candidates(t, &b->ctx->model, &ck.key, m, w->n, w->k, idx, CAP);
  if (got > CAP) got = CAP;
  qsort(idx, (size_t)got, sizeof *idx, cmp_int); /* best predicted first -> table order */
  for (int i = 0; i < got && e->count <= b->cold; i++) e->names[e->count++] = t->kernels[idx[i]].name;
  if (e->count <= b->cold)
    fprintf(stderr, "bench_gemm: --cold %d: only %d kernels of the key run M=%d N=%d K=%d\n",
            b->cold, e->count, m, w->n, w->k);
}

/* Arms the timer's pre-run hook with e for a row of M = m, or disarms it. */
static void cold_arm(bench *b, evictor *e, int m) {
  const int on = b->cold && m <= COLD_MAX_M && e != NULL;
  b->timer.pre = on ? evict : NULL;
  b->timer.pre_self = on ? e : NULL;
}

/* cuBLASLt's FP8 GEMM for one (M, N, K): the W8A8 baseline of the W4A8 rows. */
typedef struct lt_plan {
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t wl, al, cl; /* Lt's A (the weights), B (the activations), C and D */
  cublasLtMatmulAlgo_t algo;
} lt_plan;

static void lt_plan_free(lt_plan *p) {
  if (p->cl) CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(p->cl));
  if (p->al) CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(p->al));
  if (p->wl) CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(p->wl));
  if (p->desc) CUBLAS_CHECK(cublasLtMatmulDescDestroy(p->desc));
  *p = (lt_plan){0};
}

/* The cuBLASLt call that failed last (its text), for the message that says why no FP8 row ran. */
static const char *lt_failed_call = "";
#define LT_TRY(call)                                                                          \
  do {                                                                                        \
    if ((st = (call)) != CUBLAS_STATUS_SUCCESS) {                                             \
      lt_failed_call = #call;                                                                 \
      goto out;                                                                               \
    }                                                                                         \
  } while (0)

/* Row-major C[m,n] = A8[m,k] * W8^T, both E4M3, C of type `out`, in the only form cuBLASLt runs
 * FP8 in on Hopper, "TN": as column-major C^T[n,m] = op(W8) * A8^T, Lt's A is W8 (row-major
 * n x k = column-major k x n, ld k) with op T, Lt's B is A8 (row-major m x k = column-major
 * k x m, ld k) with op N, both K-major. FP32 compute and scale type; per-tensor FP32 scales on
 * the device (A_SCALE_POINTER = w_scale, B_SCALE_POINTER = a_scale: D = sa sb op(A) op(B));
 * no fast accumulation (cuBLASLt's default: partial sums promoted to FP32, as the W4A8 kernels
 * sum in FP32). The algorithm is cuBLASLt's heuristic's first for a kLtWorkspaceBytes workspace.
 * Returns CUBLAS_STATUS_SUCCESS, or why there is none (p is then empty). */
static cublasStatus_t lt_plan_make(const bench *b, lt_plan *p, mgen_act out, int m, int n, int k,
                                   const float *w_scale, const float *a_scale) {
  const cublasOperation_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
  const cudaDataType ct = out == MGEN_ACT_BF16 ? CUDA_R_16BF : CUDA_R_16F;
  const uint64_t ws = kLtWorkspaceBytes;
  cublasLtMatmulPreference_t pref = NULL;
  cublasLtMatmulHeuristicResult_t h;
  int found = 0;
  cublasStatus_t st;
  *p = (lt_plan){0};
  LT_TRY(cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  LT_TRY(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t));
  LT_TRY(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof op_n));
  LT_TRY(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &w_scale,
                                        sizeof w_scale));
  LT_TRY(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a_scale,
                                        sizeof a_scale));
  LT_TRY(cublasLtMatrixLayoutCreate(&p->wl, CUDA_R_8F_E4M3, (uint64_t)k, (uint64_t)n, k));
  LT_TRY(cublasLtMatrixLayoutCreate(&p->al, CUDA_R_8F_E4M3, (uint64_t)k, (uint64_t)m, k));
  LT_TRY(cublasLtMatrixLayoutCreate(&p->cl, ct, (uint64_t)n, (uint64_t)m, n));
  LT_TRY(cublasLtMatmulPreferenceCreate(&pref));
  LT_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                              sizeof ws));
  LT_TRY(cublasLtMatmulAlgoGetHeuristic(b->lt, p->desc, p->wl, p->al, p->cl, p->cl, pref, 1, &h,
                                        &found));
  if (found < 1) st = CUBLAS_STATUS_NOT_SUPPORTED;
  else p->algo = h.algo;
out:
  if (pref) CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
  if (st != CUBLAS_STATUS_SUCCESS) lt_plan_free(p);
  return st;
}
#undef LT_TRY

/* C = A8 * W8^T by plan p on the bench's stream (C is D; beta 0 never reads it). */
static cublasStatus_t lt_matmul(const bench *b, const lt_plan *p, const void *w8, const void *a8,
                                void *c) {
  const float one = 1.0f, zero = 0.0f;
  return cublasLtMatmul(b->lt, p->desc, &one, w8, p->wl, a8, p->al, &zero, c, p->cl, c, p->cl,
                        &p->algo, b->lt_ws, kLtWorkspaceBytes, b->stream);
}

typedef enum op_kind { OP_MGEN, OP_MGEN_KERNEL, OP_CUBLAS, OP_CUBLASLT } op_kind;

/* One timed GEMM. Run i uses weight copy i % nw (packed), i % nw16 (FP16) or i % nw8 (E4M3). */
typedef struct op {
  bench *b;
  op_kind kind;
  mgen_act act;             /* A, C (and cuBLAS's W) type; W4A8 and cuBLASLt FP8: C's */
  int m, n, k;
  const char *kernel;       /* the mgen kernel's name (or "cublas", "cublaslt_fp8") */
  const void *a;            /* W4A8, cuBLASLt FP8: E4M3 codes */
  const float *a_scales;    /* OP_MGEN*: W4A8 (mgen_gemm_a8*), A's row scales; NULL: W4A16 */
  void *c;
  const mgen_weights *w;    /* OP_MGEN*: nw packed copies */
  void *const *w16;         /* OP_CUBLAS: nw16 copies of the 16-bit W, each n x k row-major */
  void *const *w8;          /* OP_CUBLASLT: nw8 copies of the E4M3 W, each n x k row-major */
  const lt_plan *lt;        /* OP_CUBLASLT */
  int nw, nw16, nw8;
} op;

/* bench_launch_fn over an op: 1 when libmgen (or cuBLASLt) says the first run cannot run this
 * call. */
static int launch(void *self, int i) {
  const op *o = self;
  bench *b = o->b;
  mgen_status s = MGEN_OK;
  const mgen_weights *w = o->nw ? &o->w[i % o->nw] : NULL;
  if (o->kind == OP_MGEN && o->a_scales)
    s = mgen_gemm_a8(b->ctx, w->act, o->m, o->a, o->a_scales, 1, w, o->c, b->stream);
  else if (o->kind == OP_MGEN)
    s = mgen_gemm(b->ctx, o->w[i % o->nw].act, o->m, o->a, &o->w[i % o->nw], o->c, b->stream);
  else if (o->kind == OP_MGEN_KERNEL && o->a_scales)
    s = mgen_gemm_a8_kernel(b->ctx, o->kernel, w->act, o->m, o->a, o->a_scales, 1, w, o->c,
                            b->stream);
  else if (o->kind == OP_MGEN_KERNEL)
    s = mgen_gemm_kernel(b->ctx, o->kernel, o->w[i % o->nw].act, o->m, o->a, &o->w[i % o->nw], o->c, b->stream);
  else if (o->kind == OP_CUBLASLT) {
    cublasStatus_t ls = lt_matmul(b, o->lt, o->w8[i % o->nw8], o->a, o->c);
    if (i == 0 && ls != CUBLAS_STATUS_SUCCESS) {
      fprintf(stderr, "bench_gemm: cuBLASLt FP8 M=%d K=%d N=%d: %s\n", o->m, o->k, o->n,
              cublasGetStatusString(ls));
      return 1;
    }
    CUBLAS_CHECK(ls);
  } else
    bench_cublas_gemm_act(b->cublas, o->act, o->m, o->n, o->k, o->a, o->w16[i % o->nw16], o->c);
  if (i == 0 && (s == MGEN_ERR_UNSUPPORTED_SHAPE || s == MGEN_ERR_UNSUPPORTED_FORMAT)) return 1;
  MGEN_CHECK(b->ctx, s);
  CUDA_CHECK(cudaGetLastError());
  return 0;
}

static void launch_ok(op *o) {
  if (launch(o, 0)) die("%s cannot run M=%d K=%d N=%d", o->kernel, o->m, o->k, o->n);
}

static double time_us(op *o) { return bench_time_us(&o->b->timer, launch, o); }
static double time_coarse_us(op *o) { return bench_time_us(&o->b->coarse, launch, o); }
/* Under graph replay with --graph, for decode M (<= GRAPH_MAX_M), else -1 (not measured). Not
 * for larger M: N back-to-back compute-bound launches (cuBLAS's replay comes right before the
 * row's kernels) run the GPU into its power limit, and the kernels timed next ran at lower
 * clocks: on an H200 the same wgmma kernel measured 22% slower at M = 4096 with --graph than
 * without (bench/notes/v11.md, "wgmma v4"). */
enum { GRAPH_MAX_M = 16 };
static double time_graph_us(op *o) {
  return o->b->graph && o->m <= GRAPH_MAX_M ? bench_time_graph_us(&o->b->timer, launch, o, o->b->graph) : -1.0;
}

/* The W4A8 rows' compute ceiling: cuBLASLt's FP8 8192^3 rate (FP16 output) on random E4M3 data
 * (mgen_quantize_act of N(0,1) FP16, each matrix quantized as one row: one per-tensor scale).
 * Sets b->lt_ok. Where cuBLASLt has no FP8 GEMM (before sm_89) it says so and returns twice the
 * FP16 rate, Hopper's FP8 tensor rate over its FP16 one. */
static double fp8_peak(bench *b) {
  const int d = 8192;
  const size_t count = (size_t)d * d;
  void *x = bench_dmalloc(count * 2), *a8 = bench_dmalloc(count), *w8 = bench_dmalloc(count);
  /* A's at 0, W's at 64: each scale 256-byte aligned, as from its own cudaMalloc, like the
   * rows' scales (with W's 4 bytes after A's, cublasLtMatmul answered NOT_SUPPORTED on an H200) */
  float *scales = bench_dmalloc(128 * sizeof *scales);
  bench_fill_random(x, count, 1);
  MGEN_CHECK(b->ctx, mgen_quantize_act(b->ctx, MGEN_ACT_F16, 1, (int)count, x, a8, &scales[0],
                                       b->stream));
  CUDA_CHECK(cudaStreamSynchronize(b->stream)); /* x is refilled by a copy on another stream */
  bench_fill_random(x, count, 2);
  MGEN_CHECK(b->ctx, mgen_quantize_act(b->ctx, MGEN_ACT_F16, 1, (int)count, x, w8, &scales[64],
                                       b->stream));
  lt_plan p;
  double us = -1;
  cublasStatus_t st = lt_plan_make(b, &p, MGEN_ACT_F16, d, d, d, &scales[64], &scales[0]);
  if (st == CUBLAS_STATUS_SUCCESS) {
    op g = {.b = b, .kind = OP_CUBLASLT, .act = MGEN_ACT_F16, .m = d, .n = d, .k = d,
            .kernel = "cublaslt_fp8", .a = a8, .c = x, .w8 = &w8, .nw8 = 1, .lt = &p};
    us = time_us(&g);
    lt_plan_free(&p);
  } else {
    fprintf(stderr, "bench_gemm: no cuBLASLt FP8 GEMM here (%s in %s): its columns stay empty\n",
            cublasGetStatusString(st), lt_failed_call);
  }
  CUDA_CHECK(cudaFree(x));
  CUDA_CHECK(cudaFree(a8));
  CUDA_CHECK(cudaFree(w8));
  CUDA_CHECK(cudaFree(scales));
  b->lt_ok = us > 0;
  return us > 0 ? 2.0 * d * d * (double)d / (us * 1e-6) : 2.0 * b->peak[0];
}

// --------------------------------------------------------------------------- rows

/* One (act, fmt, M, K, N) point: what the summary needs; act is an index into kActs (W4A8:
 * the output type). */
typedef struct point {
  int act, a8, fmt, m, k, n;                     /* a8: a W4A8 row (--act e4m3...) */
  double cublas_us, default_us, best_us, wbytes; /* *_us < 0: not measured */
  double cublas_graph_us, default_graph_us;      /* --graph */
  double lt_us, lt_graph_us;                     /* W4A8: cuBLASLt FP8 */
  const char *default_kernel, *best_kernel;
} point;

/* What the rows of one (shape, M) are compared with: cuBLAS of their (output) type and, for
 * W4A8 rows, cuBLASLt FP8; *_us < 0: not measured. */
typedef struct baselines {
  double cublas_us, cublas_graph_us, lt_us, lt_graph_us;
} baselines;

typedef struct results {
  point *v;
  size_t len, cap;
  int rows, check_fail;
  double check_max;
} results;

static void add_point(results *r, point p) {
  if (r->len == r->cap) {
    r->cap = r->cap ? 2 * r->cap : 256;
    if (!(r->v = realloc(r->v, r->cap * sizeof *r->v))) die("out of host memory");
  }
  r->v[r->len++] = p;
}

/* Roofline time of a GEMM with activations kActs[t]: its type's cuBLAS peak. */
static double roofline_s(const bench *b, int t, double bytes, double flops) {
  return fmax(bytes / b->bw, flops / b->peak[t]);
}

/* Roofline time of a 4-bit row (M, N, K) over `wbytes` of packed weights: W4A16 reads 16-bit A
 * at the act's 16-bit peak; W4A8 reads E4M3 A and an FP32 scale per row at the FP8 peak. C is
 * 16-bit in both. */
static double roofline4_s(const bench *b, int t, int a8, double m, double n, double k,
                          double wbytes) {
  const double flops = 2.0 * m * n * k;
  if (!a8) return roofline_s(b, t, 2.0 * (m * k + m * n) + wbytes, flops);
  return fmax((m * k + 4.0 * m + 2.0 * m * n + wbytes) / b->bw, flops / b->peak8);
}

/* ||c - ref|| / ||ref|| over the first rows of C after one run into a poisoned C (0xffff is
 * a NaN in FP16 and BF16, so an element the kernel did not write makes the result NaN). */
static double check_rows(op *o, const uint16_t *ref, uint16_t *h, int rows) {
  cudaStream_t st = o->b->stream;
  CUDA_CHECK(cudaMemsetAsync(o->c, 0xff, (size_t)o->m * o->n * 2, st));
  launch_ok(o);
  CUDA_CHECK(cudaMemcpyAsync(h, o->c, (size_t)rows * o->n * 2, cudaMemcpyDeviceToHost, st));
  CUDA_CHECK(cudaStreamSynchronize(st));
  double num = 0, den = 0;
  for (size_t i = 0; i < (size_t)rows * o->n; i++) {
    double x = bench_act_to_f32(o->act, h[i]), y = bench_act_to_f32(o->act, ref[i]);
    num += (x - y) * (x - y);
    den += y * y;
  }
  return sqrt(num / den);
}

/* Counts a checked row of op o (relative error err against cuBLAS of o->act on the 16-bit W);
 * past kCheckTol, or NaN, it fails, and stderr says so. */
static void count_check(results *r, const char *kernel, const op *o, double err) {
  r->rows++;
  if (!(err <= kCheckTol)) {
    r->check_fail++;
    fprintf(stderr, "bench_gemm: SANITY FAIL %s M=%d K=%d N=%d: relative error %.3g vs cuBLAS "
            "%s (tolerance %.2f)\n", kernel, o->m, o->k, o->n, err, bench_act_name(o->act),
            kCheckTol);
  }
  if (err > r->check_max || isnan(err)) r->check_max = err;
}

/* One CSV row (and a progress line). Minimum bytes: A + C, plus packed W + scales (`wbytes`)
 * for the 4-bit kernel or the 16-bit W for cuBLAS; roofline time = max(bytes/BW, flops/peak)
 * with the peak of the row's act (kActs[t]; W4A8 rows: roofline4_s). `us` is the median of
 * `reps` runs; err < 0: the row was not checked (a sweep's coarse-only row). */
static void emit_row(FILE *csv, results *r, int t, int f, const char *kernel, const op *o,
                     double wbytes, double us, int reps, const baselines *bl, double err,
                     double graph_us) {
  const bench *b = o->b;
  const int a8 = o->a_scales != NULL, lt = a8 && bl->lt_us > 0;
  const char *an = a8 ? a8_names[t] : bench_act_name(kActs[t]);
  const double cublas_us = bl->cublas_us;
  double m = o->m, n = o->n, k = o->k, flops = 2.0 * m * n * k, act = 2.0 * (m * k + m * n);
  double frac4 = roofline4_s(b, t, a8, m, n, k, wbytes) / (us * 1e-6);
  double frac16 = roofline_s(b, t, act + 2.0 * n * k, flops) / (cublas_us * 1e-6);
  fprintf(csv, "%s,%s,%s,%s,%d,%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.1f,%d", b->gpu, an,
          fmts[f].name, kernel, o->m, o->k, o->n, us, cublas_us, cublas_us / us, frac4, frac16,
          wbytes / us * 1e-3, reps);
  if (b->graph) fprintf(csv, ",%.3f,%.3f", graph_us, bl->cublas_graph_us);
  if (b->a8) { /* cuBLASLt FP8's columns: empty but on W4A8 rows it ran for */
    if (lt) fprintf(csv, ",%.3f,%.3f", bl->lt_us, bl->lt_us / us);
    else fputs(",,", csv);
    if (b->graph && lt && bl->lt_graph_us > 0) fprintf(csv, ",%.3f", bl->lt_graph_us);
    else if (b->graph) fputc(',', csv);
  }
  fputc('\n', csv);
  fflush(csv);
  if (err < 0) return; /* coarse-only rows: the CSV is their record */
  fprintf(stderr, "  %-4s %-9s M=%-5d K=%-5d N=%-5d %-46s %9.2f us  cuBLAS %9.2f us  %5.2fx"
          "  roof %.2f/%.2f  err %.3f", an, fmts[f].name, o->m, o->k, o->n, kernel, us,
          cublas_us, cublas_us / us, frac4, frac16, err);
  if (lt) fprintf(stderr, "  FP8 %9.2f us %5.2fx", bl->lt_us, bl->lt_us / us);
  fputc('\n', stderr);
  count_check(r, kernel, o, err);
}

// --------------------------------------------------------------------------- one shape

/* Device buffers of one (act, K, N): A and C for the largest M, the 16-bit weights and, per
 * format, the packed weights, each in enough byte-identical copies to rotate past 2x L2. All
 * 16-bit data (A, C, W, scales) is of type kActs[t]. W4A8 (a8) adds A's E4M3 codes, by row
 * for libmgen and by tensor for cuBLASLt, and the E4M3 W copies cuBLASLt rotates over. */
typedef struct shape_bufs {
  int t, k, n, mmax, mask;          /* t: act index; mask: formats that apply to this shape */
  int a8;                           /* W4A8 rows: packed weights in MGEN_LAYOUT_E4M3 */
  void *a, *c, *cref, **w16;
  int n16, nq[NFMT];
  size_t w16_bytes, qbytes[NFMT], sbytes[NFMT];
  mgen_weights *wq[NFMT];
  mgen_weights wcold[NFMT];         /* --cold: one more copy of wq[f][0], only the evictor's */
  void *ccold;                      /* --cold: the evictor's C */
  uint16_t *href, *hc;              /* CHECK_ROWS x n on the host */
  void *a8q, *a8t, **w8;            /* a8: A's E4M3 codes with row scales (mgen_gemm_a8), with
                                       one scale (cuBLASLt); n8 E4M3 W copies (cuBLASLt) */
  float *a8_scales, *a8t_scale, *w8_scale;
  int n8;                           /* 0: no cuBLASLt FP8 on this shape */
} shape_bufs;

static int copies_for(const bench *b, size_t bytes) {
  return (int)((2 * b->l2 + bytes - 1) / bytes);
}

/* Copy counts: 2x L2 each, fewer (16-bit W first) when free memory (less 1 GiB) is short. */
static void plan_copies(const bench *b, shape_bufs *s) {
  size_t a_c = (size_t)s->mmax * (s->k + 2 * (size_t)s->n) * 2, free_b, total_b;
  const size_t w8_bytes = (size_t)s->n * s->k;
  if (s->a8) a_c += (size_t)s->mmax * (2 * (size_t)s->k + 4); /* a8q, a8t, row scales */
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  size_t budget = free_b > ((size_t)1 << 30) ? free_b - ((size_t)1 << 30) : 0;
  s->n16 = copies_for(b, s->w16_bytes);
  if (s->n8) s->n8 = copies_for(b, w8_bytes);
  for (int f = 0; f < nfmt; f++)
    if (s->mask & (1 << f)) s->nq[f] = copies_for(b, s->qbytes[f] + s->sbytes[f]);
  for (;;) {
    size_t need = a_c + (size_t)s->n16 * s->w16_bytes + (size_t)s->n8 * w8_bytes, big = 0;
    int fbig = -1;
    for (int f = 0; f < nfmt; f++) {
      size_t q = (size_t)s->nq[f] * (s->qbytes[f] + s->sbytes[f]);
      need += q;
      if (s->nq[f] > 1 && q > big) big = q, fbig = f;
    }
    if (need <= budget) break;
    if (s->n16 > 1) s->n16--;
    else if (s->n8 > 1) s->n8--;
    else if (fbig >= 0) s->nq[fbig]--;
    else die("K=%d N=%d needs %.2f GiB, %.2f GiB free", s->k, s->n, need / 0x1p30, free_b / 0x1p30);
  }
  fprintf(stderr, "shape K=%d N=%d: rotating %d %s weight copies (%.0f MB)", s->k, s->n, s->n16,
          bench_act_name(kActs[s->t]), s->n16 * s->w16_bytes / 1e6);
  for (int f = 0; f < nfmt; f++)
    if (s->mask & (1 << f))
      fprintf(stderr, ", %d %s copies (%.0f MB)", s->nq[f], fmts[f].name,
              s->nq[f] * (s->qbytes[f] + s->sbytes[f]) / 1e6);
  if (s->n8) fprintf(stderr, ", %d e4m3 copies (%.0f MB)", s->n8, s->n8 * w8_bytes / 1e6);
  fputc('\n', stderr);
  if ((size_t)s->n16 * s->w16_bytes < 2 * b->l2)
    fprintf(stderr, "bench_gemm: warning: %s weight rotation below 2x L2 (memory is short)\n",
            bench_act_name(kActs[s->t]));
  if (s->n8 && (size_t)s->n8 * w8_bytes < 2 * b->l2)
    fprintf(stderr, "bench_gemm: warning: e4m3 weight rotation below 2x L2 (memory is short)\n");
}

/* A byte copy of src's codes and scales in new buffers, on the stream. */
static void clone_weights(bench *b, mgen_weights *dst, const mgen_weights *src, size_t qbytes,
                          size_t sbytes) {
  *dst = *src;
  dst->d_q = bench_dmalloc(qbytes);
  dst->d_scales = bench_dmalloc(sbytes);
  CUDA_CHECK(cudaMemcpyAsync(dst->d_q, src->d_q, qbytes, cudaMemcpyDeviceToDevice, b->stream));
  CUDA_CHECK(cudaMemcpyAsync(dst->d_scales, src->d_scales, sbytes, cudaMemcpyDeviceToDevice,
                             b->stream));
}

static void shape_setup(bench *b, const opts *o, int t, int a8, shape sh, shape_bufs *s) {
  *s = (shape_bufs){.t = t, .k = sh.k, .n = sh.n, .mask = o->fmt_mask, .a8 = a8};
  const mgen_act act = kActs[t];
  const mgen_layout layout = a8 ? MGEN_LAYOUT_E4M3 : MGEN_LAYOUT_DEFAULT;
  const int k = sh.k, n = sh.n;
  for (int i = 0; i < o->nms; i++) s->mmax = o->ms[i] > s->mmax ? o->ms[i] : s->mmax;
  s->w16_bytes = (size_t)n * k * 2;
  /* cuBLASLt's E4M3 copies are quantized as one row each (one scale per tensor), and
   * mgen_quantize_act's k is an int: larger tensors go without that baseline. */
  if (a8 && b->lt_ok) {
    if ((long long)n * k <= INT32_MAX && (long long)s->mmax * k <= INT32_MAX) s->n8 = 1;
    else fprintf(stderr, "bench_gemm: no cuBLASLt FP8 on K=%d N=%d: over 2^31 elements\n", k, n);
  }
  for (int f = 0; f < nfmt; f++) {
    if (!(s->mask & (1 << f))) continue;
    mgen_weights w = {.wfmt = (mgen_wfmt)fmts[f].wfmt, .act = act,
                      .scheme = (mgen_scheme)fmts[f].scheme, .group = fmts[f].group, .n = n,
                      .k = k, .layout = layout};
    mgen_status st = mgen_weights_bytes(&w, &s->qbytes[f], &s->sbytes[f]);
    if (st != MGEN_OK) {
      fprintf(stderr, "bench_gemm: skipping %s on K=%d N=%d: %s\n", fmts[f].name, k, n,
              mgen_status_str(st));
      s->mask &= ~(1 << f);
    }
  }
  plan_copies(b, s);

  s->a = bench_dmalloc((size_t)s->mmax * k * 2);
  s->c = bench_dmalloc((size_t)s->mmax * n * 2);
  s->cref = bench_dmalloc((size_t)s->mmax * n * 2);
  s->w16 = calloc((size_t)s->n16, sizeof *s->w16);
  s->href = malloc((size_t)CHECK_ROWS * n * 2);
  s->hc = malloc((size_t)CHECK_ROWS * n * 2);
  if (!s->w16 || !s->href || !s->hc) die("out of host memory");
  bench_fill_random_act(s->a, (size_t)s->mmax * k, 3 + (uint64_t)k * 131 + (uint64_t)n, act);
  for (int j = 0; j < s->n16; j++) {
    s->w16[j] = bench_dmalloc(s->w16_bytes);
    if (j == 0)
      bench_fill_random_act(s->w16[0], (size_t)n * k, 7 + (uint64_t)k * 977 + (uint64_t)n, act);
    else CUDA_CHECK(cudaMemcpyAsync(s->w16[j], s->w16[0], s->w16_bytes, cudaMemcpyDeviceToDevice,
                                    b->stream));
  }
  if (a8) { /* the FP8 operands, from the same random A and W, once and untimed */
    const size_t ak = (size_t)s->mmax * k;
    s->a8q = bench_dmalloc(ak);
    s->a8_scales = bench_dmalloc((size_t)s->mmax * sizeof *s->a8_scales);
    MGEN_CHECK(b->ctx, mgen_quantize_act(b->ctx, act, s->mmax, k, s->a, s->a8q, s->a8_scales,
                                         b->stream));
  }
  if (s->n8) {
    s->a8t = bench_dmalloc((size_t)s->mmax * k);
    s->a8t_scale = bench_dmalloc(sizeof *s->a8t_scale);
    s->w8_scale = bench_dmalloc(sizeof *s->w8_scale);
    if (!(s->w8 = calloc((size_t)s->n8, sizeof *s->w8))) die("out of host memory");
    MGEN_CHECK(b->ctx, mgen_quantize_act(b->ctx, act, 1, s->mmax * k, s->a, s->a8t, s->a8t_scale,
                                         b->stream));
    for (int j = 0; j < s->n8; j++) {
      s->w8[j] = bench_dmalloc((size_t)n * k);
      if (j == 0)
        MGEN_CHECK(b->ctx, mgen_quantize_act(b->ctx, act, 1, n * k, s->w16[0], s->w8[0],
                                             s->w8_scale, b->stream));
      else CUDA_CHECK(cudaMemcpyAsync(s->w8[j], s->w8[0], (size_t)n * k, cudaMemcpyDeviceToDevice,
                                      b->stream));
    }
  }
  for (int f = 0; f < nfmt; f++) {
    if (!(s->mask & (1 << f))) continue;
    if (!(s->wq[f] = calloc((size_t)s->nq[f], sizeof *s->wq[f]))) die("out of host memory");
    mgen_weights *w0 = &s->wq[f][0];
    *w0 = (mgen_weights){.wfmt = (mgen_wfmt)fmts[f].wfmt, .act = act,
                         .scheme = (mgen_scheme)fmts[f].scheme, .group = fmts[f].group,
                         .n = n, .k = k, .layout = layout,
                         .d_q = bench_dmalloc(s->qbytes[f]),
                         .d_scales = bench_dmalloc(s->sbytes[f])};
    MGEN_CHECK(b->ctx, mgen_quantize(b->ctx, s->w16[0], w0, b->stream));
    for (int j = 1; j < s->nq[f]; j++)
      clone_weights(b, &s->wq[f][j], w0, s->qbytes[f], s->sbytes[f]);
    if (b->cold) clone_weights(b, &s->wcold[f], w0, s->qbytes[f], s->sbytes[f]);
  }
  if (b->cold) s->ccold = bench_dmalloc((size_t)s->mmax * n * 2);
  CUDA_CHECK(cudaStreamSynchronize(b->stream));
}

static void shape_free(shape_bufs *s) {
  for (int f = 0; f < nfmt; f++) {
    for (int j = 0; s->wq[f] && j < s->nq[f]; j++) {
      CUDA_CHECK(cudaFree(s->wq[f][j].d_q));
      CUDA_CHECK(cudaFree(s->wq[f][j].d_scales));
    }
    free(s->wq[f]);
    if (s->wcold[f].d_q) CUDA_CHECK(cudaFree(s->wcold[f].d_q));
    if (s->wcold[f].d_scales) CUDA_CHECK(cudaFree(s->wcold[f].d_scales));
  }
  if (s->ccold) CUDA_CHECK(cudaFree(s->ccold));
  for (int j = 0; j < s->n16; j++) CUDA_CHECK(cudaFree(s->w16[j]));
  CUDA_CHECK(cudaFree(s->a));
  CUDA_CHECK(cudaFree(s->c));
  CUDA_CHECK(cudaFree(s->cref));
  for (int j = 0; j < s->n8; j++) CUDA_CHECK(cudaFree(s->w8[j]));
  void *a8_bufs[] = {s->a8q, s->a8_scales, s->a8t, s->a8t_scale, s->w8_scale};
  for (size_t i = 0; i < sizeof a8_bufs / sizeof *a8_bufs; i++)
    if (a8_bufs[i]) CUDA_CHECK(cudaFree(a8_bufs[i]));
  free(s->w8);
  free(s->w16);
  free(s->href);
  free(s->hc);
}

/* The --act name of rows of output kActs[t]: W4A16 (a8 0) or W4A8. */
static const char *row_act_name(int t, int a8) {
  return a8 ? a8_names[t] : bench_act_name(kActs[t]);
}

/* Format f at one M: the default kernel, or with --all-kernels every kernel of the table for
 * (act, format, group) and the weights' kind of layout (W4A8: MGEN_LAYOUT_E4M3, else any
 * other) that this device runs and that accepts the shape. */
static void bench_fmt(bench *b, const opts *o, shape_bufs *s, int f, int m, const baselines *bl,
                      FILE *csv, results *res) {
  const char *choice;
  mgen_status st = mgen_gemm_choice(b->ctx, s->wq[f][0].act, m, &s->wq[f][0], &choice);
  if (st != MGEN_OK) {
    fprintf(stderr, "bench_gemm: no kernel for %s %s M=%d K=%d N=%d: %s: %s\n",
            row_act_name(s->t, s->a8), fmts[f].name, m, s->k, s->n, mgen_status_str(st),
            mgen_ctx_last_error(b->ctx));
    return;
  }
  double wbytes = (double)(s->qbytes[f] + s->sbytes[f]);
  point p = {.act = s->t, .a8 = s->a8, .fmt = f, .m = m, .k = s->k, .n = s->n,
             .cublas_us = bl->cublas_us, .default_us = -1, .best_us = -1, .wbytes = wbytes,
             .default_kernel = choice, .cublas_graph_us = bl->cublas_graph_us,
             .default_graph_us = -1, .lt_us = bl->lt_us, .lt_graph_us = bl->lt_graph_us};
  op g = {.b = b, .kind = o->all_kernels ? OP_MGEN_KERNEL : OP_MGEN, .act = kActs[s->t], .m = m,
          .n = s->n, .k = s->k, .kernel = choice, .a = s->a8 ? s->a8q : s->a,
          .a_scales = s->a8_scales, .c = s->c, .w = s->wq[f], .nw = s->nq[f]};
  evictor ev = {0};
  if (b->cold) evictor_setup(&ev, b, m, &s->wcold[f], g.a, g.a_scales, s->ccold);
  const mgen_table *t = mgen_builtin_table();
  size_t nk = o->all_kernels ? t->count : 1;
  double *coarse = o->sweep_pct ? malloc(nk * sizeof *coarse) : NULL, coarse_best = -1;
  if (o->sweep_pct && !coarse) die("out of host memory");
  for (int pass = o->sweep_pct ? 0 : 1; pass < 2; pass++) {
    for (size_t i = 0; i < nk; i++) {
      if (o->all_kernels) {
        const mgen_kernel_desc *d = &t->kernels[i];
        if (d->op != MGEN_OP_DENSE || d->act != (int)kActs[s->t] || d->wfmt != fmts[f].wfmt ||
            d->scheme != fmts[f].scheme || d->group != fmts[f].group ||
            (d->layout == MGEN_LAYOUT_E4M3) != s->a8 || !mgen_kernel_runs_on(d, b->sm))
          continue;
        g.kernel = d->name;
      }
      if (pass == 0) { /* the sweep's coarse pass: keep the time, emit nothing yet */
        coarse[i] = time_coarse_us(&g);
        if (coarse[i] >= 0 && (coarse_best < 0 || coarse[i] < coarse_best)) coarse_best = coarse[i];
        continue;
      }
      if (coarse && coarse[i] < 0) continue;
      if (coarse && coarse[i] > coarse_best * (1 + o->sweep_pct / 100.0) &&
          strcmp(g.kernel, choice)) { /* the default choice is always timed in full */
        emit_row(csv, res, s->t, f, g.kernel, &g, wbytes, coarse[i], o->coarse_reps, bl, -1, -1);
        continue;
      }
      ev.exclude = g.kernel;
      cold_arm(b, &ev, m);
      double us = time_us(&g);
      cold_arm(b, NULL, m);
      if (us < 0) continue; /* this kernel cannot run this shape */
      double graph_us = time_graph_us(&g);
      double err = check_rows(&g, s->href, s->hc, m < CHECK_ROWS ? m : CHECK_ROWS);
      emit_row(csv, res, s->t, f, g.kernel, &g, wbytes, us, o->reps, bl, err, graph_us);
      if (!strcmp(g.kernel, choice)) p.default_us = us, p.default_graph_us = graph_us;
      if (p.best_us < 0 || us < p.best_us) p.best_us = us, p.best_kernel = g.kernel;
    }
  }
  free(coarse);
  add_point(res, p);
}

/* cuBLASLt FP8 at one M of a W4A8 shape, as cuBLAS (cold alike, graph replay, checked against
 * the same reference): its times into bl, -1 where it does not run. */
static void bench_lt(bench *b, shape_bufs *s, int m, evictor *ev, baselines *bl, results *res) {
  lt_plan plan;
  cublasStatus_t st = lt_plan_make(b, &plan, kActs[s->t], m, s->n, s->k, s->w8_scale,
                                   s->a8t_scale);
  if (st != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "bench_gemm: no cuBLASLt FP8 algorithm for M=%d K=%d N=%d: %s\n", m, s->k,
            s->n, cublasGetStatusString(st));
    return;
  }
  op lt = {.b = b, .kind = OP_CUBLASLT, .act = kActs[s->t], .m = m, .n = s->n, .k = s->k,
           .kernel = "cublaslt_fp8", .a = s->a8t, .c = s->c, .w8 = s->w8, .nw8 = s->n8,
           .lt = &plan};
  cold_arm(b, ev, m);
  bl->lt_us = time_us(&lt);
  cold_arm(b, NULL, m);
  if (bl->lt_us >= 0) {
    bl->lt_graph_us = time_graph_us(&lt);
    double err = check_rows(&lt, s->href, s->hc, m < CHECK_ROWS ? m : CHECK_ROWS);
    fprintf(stderr, "  %-4s %-9s M=%-5d K=%-5d N=%-5d %-46s %9.2f us  err %.3f\n",
            a8_names[s->t], "w8a8", m, s->k, s->n, lt.kernel, bl->lt_us, err);
    count_check(res, lt.kernel, &lt, err);
  }
  lt_plan_free(&plan);
}

/* One (act, K, N), W4A16 or W4A8 (a8): its buffers, then every M: cuBLAS of the act (and for
 * W4A8 cuBLASLt FP8), then each format. */
static void bench_shape(bench *b, const opts *o, int t, int a8, shape sh, FILE *csv,
                        results *res) {
  shape_bufs s;
  shape_setup(b, o, t, a8, sh, &s);
  for (int mi = 0; mi < o->nms; mi++) {
    const int m = o->ms[mi], rows = m < CHECK_ROWS ? m : CHECK_ROWS;
    op cub = {.b = b, .kind = OP_CUBLAS, .act = kActs[t], .m = m, .n = s.n, .k = s.k,
              .kernel = "cublas", .a = s.a, .c = s.cref, .w16 = s.w16, .nw16 = s.n16};
    evictor ev = {0}; /* --cold: cuBLAS after the first format's kernels */
    int f0 = 0;
    while (f0 < nfmt && !(s.mask & (1 << f0))) f0++;
    if (b->cold && f0 < nfmt)
      evictor_setup(&ev, b, m, &s.wcold[f0], a8 ? s.a8q : s.a, s.a8_scales, s.ccold);
    cold_arm(b, f0 < nfmt ? &ev : NULL, m);
    baselines bl = {.cublas_us = time_us(&cub), .lt_us = -1, .lt_graph_us = -1};
    cold_arm(b, NULL, m);
    bl.cublas_graph_us = time_graph_us(&cub);
    launch_ok(&cub); /* the reference for the checks: cuBLAS on copy 0, the one quantized */
    CUDA_CHECK(cudaMemcpyAsync(s.href, s.cref, (size_t)rows * s.n * 2, cudaMemcpyDeviceToHost,
                               b->stream));
    CUDA_CHECK(cudaStreamSynchronize(b->stream));
    if (s.n8) bench_lt(b, &s, m, f0 < nfmt ? &ev : NULL, &bl, res);
    for (int f = 0; f < nfmt; f++)
      if (s.mask & (1 << f)) bench_fmt(b, o, &s, f, m, &bl, csv, res);
  }
  shape_free(&s);
}

// --------------------------------------------------------------------------- summary

static int bucket_of(int m) { return m <= 16 ? 0 : m <= 128 ? 1 : m <= 256 ? 2 : 3; }

/* Geometric mean of cuBLAS time over `which` time (0 default kernel, 1 best kernel, 2 the
 * roofline ideal, 3 the default kernel against cuBLAS, both under graph replay; W4A8: 4 the
 * default kernel against cuBLASLt FP8, 5 the same under graph replay) over the points of one
 * (act, a8, format) and M bucket, those measured; 0 if there are none.
 * cuBLAS is always the act's own (FP16 rows over cuBLAS FP16, BF16 rows over cuBLAS BF16). */
static double geomean(const bench *b, const results *r, int t, int a8, int f, int bucket,
                      int which) {
  double sum = 0;
  int cnt = 0;
  for (size_t i = 0; i < r->len; i++) {
    const point *p = &r->v[i];
    if (p->act != t || p->a8 != a8 || p->fmt != f || bucket_of(p->m) != bucket) continue;
    double us = which == 1 ? p->best_us : which == 3 || which == 5 ? p->default_graph_us : p->default_us;
    double base = which == 3 ? p->cublas_graph_us : which == 4 ? p->lt_us
                : which == 5 ? p->lt_graph_us : p->cublas_us;
    if (us < 0 || base < 0) continue;
    double m = p->m, n = p->n, k = p->k, flops = 2 * m * n * k, act = 2 * (m * k + m * n);
    if (which == 2)
      sum += log(roofline_s(b, t, act + 2 * n * k, flops) /
                 roofline4_s(b, t, p->a8, m, n, k, p->wbytes));
    else
      sum += log(base / us);
    cnt++;
  }
  return cnt ? exp(sum / cnt) : 0.0;
}

static void summary(const bench *b, const opts *o, const results *r) {
  int cuda_rt = 0, cublas_v = 0, lo[NBUCKET], hi[NBUCKET], col[2 * NACT * NFMT][3], ncol = 0;
  for (int a8 = 0; a8 < 2; a8++) /* the table's columns: every (act, format) run, act-major, */
    for (int t = 0; t < NACT; t++) /* W4A8's (--act e4m3...) after W4A16's */
      for (int f = 0; f < nfmt; f++)
        if (((a8 ? o->a8_mask : o->act_mask) & (1 << t)) && (o->fmt_mask & (1 << f)))
          col[ncol][0] = t, col[ncol][1] = f, col[ncol++][2] = a8;
  const mgen_table *tab = mgen_builtin_table();
  CUDA_CHECK(cudaRuntimeGetVersion(&cuda_rt));
  CUBLAS_CHECK(cublasGetVersion(b->cublas, &cublas_v));
  printf("\n# bench_gemm summary\n");
  printf("device: %s, %d SMs, sm_%d, L2 %.1f MB; CUDA runtime %d, cuBLAS %d; "
         "libmgen %d, %s, %zu kernels\n", b->gpu, b->sm_count, b->sm, b->l2 / 1e6, cuda_rt,
         cublas_v, mgen_version_number(), tab->generator ? tab->generator : "?", tab->count);
  printf("ceilings (this run): copy %.1f GB/s (read + written)", b->bw / 1e9);
  for (int t = 0; t < NACT; t++)
    if (b->peak[t] > 0)
      printf(", cuBLAS %s 8192^3 %.1f TFLOP/s", bench_act_name(kActs[t]), b->peak[t] / 1e12);
  if (b->a8 && b->lt_ok) printf(", cuBLASLt FP8 8192^3 %.1f TFLOP/s", b->peak8 / 1e12);
  else if (b->a8) printf(", FP8 taken as 2 x FP16 (no cuBLASLt FP8)");
  printf("\ntiming: median of %d runs after %d warm-up, weights rotated past 2x L2; %d shapes\n",
         o->reps, o->warmup, o->nshapes);
  if (o->cold)
    printf("cold (--cold %d): every run of M <= %d, cuBLAS's too, after %d other kernels of the "
           "row's key (cuBLAS: of its first format)\n", o->cold, COLD_MAX_M, o->cold);
  if (b->a8)
    printf("W4A8 (e4m3 rows): A in E4M3 with FP32 row scales (mgen_quantize_act); vs FP8 = "
           "cuBLASLt %zu E4M3 x E4M3 (TN, per-tensor scales, FP32 compute) / mgen\n",
           cublasLtGetVersion());
  printf("sanity vs cuBLAS of the same type on unquantized W (first %d rows, tolerance %.2f): "
         "%d of %d rows failed, max error %.3f\n", CHECK_ROWS, kCheckTol, r->check_fail, r->rows,
         r->check_max);
  for (int i = 0; i < NBUCKET; i++) lo[i] = 1 << 30, hi[i] = 0;
  for (int i = 0; i < o->nms; i++) {
    int bk = bucket_of(o->ms[i]);
    lo[bk] = o->ms[i] < lo[bk] ? o->ms[i] : lo[bk];
    hi[bk] = o->ms[i] > hi[bk] ? o->ms[i] : hi[bk];
  }
  printf("\ngeometric-mean speedup over cuBLAS of the same type over the shapes "
         "(ideal = 16-bit roofline time / 4-bit roofline time):\n\n| M |");
  for (int c = 0; c < ncol; c++) {
    const char *an = row_act_name(col[c][0], col[c][2]), *fn = fmts[col[c][1]].name;
    if (o->all_kernels) printf(" %s %s default | %s %s best |", an, fn, an, fn);
    else printf(" %s %s |", an, fn);
    printf(col[c][2] ? " vs FP8 | ideal |" : " ideal |");
  }
  printf("\n|---|");
  for (int c = 0; c < ncol; c++)
    printf("%s%s", o->all_kernels ? "---|---|---|" : "---|---|", col[c][2] ? "---|" : "");
  printf("\n");
  for (int bk = 0; bk < NBUCKET; bk++) {
    if (!hi[bk]) continue;
    if (lo[bk] == hi[bk]) printf("| %d |", lo[bk]);
    else printf("| %d-%d |", lo[bk], hi[bk]);
    for (int c = 0; c < ncol; c++) {
      const int t = col[c][0], f = col[c][1], a8 = col[c][2];
      printf(" %.2fx |", geomean(b, r, t, a8, f, bk, 0));
      if (o->all_kernels) printf(" %.2fx |", geomean(b, r, t, a8, f, bk, 1));
      if (a8) printf(" %.2fx |", geomean(b, r, t, a8, f, bk, 4));
      printf(" %.2fx |", geomean(b, r, t, a8, f, bk, 2));
    }
    printf("\n");
  }
  if (o->graph) {
    printf("\nthe same under CUDA graph replay (%d launches per graph, mean per launch; default "
           "kernel and cuBLAS both replayed):\n\n| M |", o->graph);
    for (int c = 0; c < ncol; c++)
      printf(" %s %s |%s", row_act_name(col[c][0], col[c][2]), fmts[col[c][1]].name,
             col[c][2] ? " vs FP8 |" : "");
    printf("\n|---|");
    for (int c = 0; c < ncol; c++) printf(col[c][2] ? "---|---|" : "---|");
    printf("\n");
    for (int bk = 0; bk < NBUCKET; bk++) {
      if (!hi[bk] || lo[bk] > GRAPH_MAX_M) continue;
      if (lo[bk] == hi[bk]) printf("| %d |", lo[bk]);
      else printf("| %d-%d |", lo[bk], hi[bk]);
      for (int c = 0; c < ncol; c++) {
        printf(" %.2fx |", geomean(b, r, col[c][0], col[c][2], col[c][1], bk, 3));
        if (col[c][2]) printf(" %.2fx |", geomean(b, r, col[c][0], col[c][2], col[c][1], bk, 5));
      }
      printf("\n");
    }
  }
  printf("\nM=1 weight stream on K=8192 N=57344 (weight bytes / time):\n");
  for (int t = 0; t < NACT; t++) {
    for (size_t i = 0, cublas_done = 0, lt_done = 0; i < r->len; i++) {
      const point *p = &r->v[i];
      const char *an = row_act_name(t, p->a8);
      if (p->act != t || p->m != 1 || p->k != 8192 || p->n != 57344) continue;
      if (p->default_us > 0)
        printf("  %s %s %s: %.1f GB/s (%.2f us)\n", an, fmts[p->fmt].name, p->default_kernel,
               p->wbytes / p->default_us * 1e-3, p->default_us);
      if (p->default_graph_us > 0)
        printf("  %s %s %s, graph replay: %.1f GB/s (%.2f us)\n", an, fmts[p->fmt].name,
               p->default_kernel, p->wbytes / p->default_graph_us * 1e-3, p->default_graph_us);
      if (o->all_kernels && p->best_us > 0)
        printf("  %s %s best %s: %.1f GB/s (%.2f us)\n", an, fmts[p->fmt].name, p->best_kernel,
               p->wbytes / p->best_us * 1e-3, p->best_us);
      if (!cublas_done++)
        printf("  cuBLAS %s: %.1f GB/s (%.2f us)\n", bench_act_name(kActs[t]),
               8192.0 * 57344 * 2 / p->cublas_us * 1e-3, p->cublas_us);
      if (p->a8 && p->lt_us > 0 && !lt_done++)
        printf("  cuBLASLt FP8 (%s): %.1f GB/s (%.2f us)\n", an, 8192.0 * 57344 / p->lt_us * 1e-3,
               p->lt_us);
    }
  }
}

static void log_cb(void *user, mgen_log_level level, const char *message) {
  (void)user;
  fprintf(stderr, "libmgen %s: %s\n", level == MGEN_LOG_WARN ? "warning" : "info", message);
}

int main(int argc, char **argv) {
  opts o = parse_args(argc, argv);
  bench b = {0};
  struct cudaDeviceProp prop;
  bench_device_name(b.gpu, sizeof b.gpu, &prop);
  b.sm = 10 * prop.major + prop.minor;
  b.sm_count = prop.multiProcessorCount;
  b.l2 = (size_t)prop.l2CacheSize;
  b.graph = o.graph;
  b.cold = o.cold;
  b.a8 = o.a8_mask != 0;

  CUDA_CHECK(cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
  CUBLAS_CHECK(cublasCreate(&b.cublas));
  CUBLAS_CHECK(cublasSetStream(b.cublas, b.stream));
  if (b.a8) {
    CUBLAS_CHECK(cublasLtCreate(&b.lt));
    b.lt_ws = bench_dmalloc(kLtWorkspaceBytes);
  }
  mgen_ctx_opts mo = {.device = -1, .log = log_cb, .plain_launches = o.plain_launches,
                      .max_sms = o.max_sms};
  mgen_status st = mgen_ctx_create(&b.ctx, mgen_builtin_table(), &mo);
  if (st != MGEN_OK) die("mgen_ctx_create: %s", mgen_status_str(st));
  CUDA_CHECK(cudaDeviceSynchronize()); /* the ctx's setup may use the legacy stream */
  bench_timer_init(&b.timer, b.stream, o.reps, o.warmup, kSpacerBytes);
  if (b.cold) b.cold_spacer = bench_dmalloc(kColdSpacerBytes);
  if (o.sweep_pct) /* its own spacer: 1 GiB less for weight copies, only when sweeping */
    bench_timer_init(&b.coarse, b.stream, o.coarse_reps, 0, kSpacerBytes);
  FILE *csv = o.csv ? fopen(o.csv, "w") : stdout;
  if (!csv) die("cannot write %s", o.csv);

  fprintf(stderr, "%s: %d SMs, L2 %.1f MB; measuring ceilings...\n", b.gpu, b.sm_count,
          b.l2 / 1e6);
  bench_ceilings(&b.timer, b.cublas, &b.bw, &b.peak[0]); /* kActs[0] is FP16 */
  for (int t = 1; t < NACT; t++)
    if ((o.act_mask | o.a8_mask) & (1 << t))
      b.peak[t] = bench_gemm_peak(&b.timer, b.cublas, kActs[t]);
  if (b.a8) b.peak8 = fp8_peak(&b);
  fprintf(stderr, "copy %.1f GB/s", b.bw / 1e9);
  for (int t = 0; t < NACT; t++)
    if (b.peak[t] > 0) fprintf(stderr, ", %s %.1f TFLOP/s", bench_act_name(kActs[t]), b.peak[t] / 1e12);
  if (b.lt_ok) fprintf(stderr, ", cuBLASLt FP8 %.1f TFLOP/s", b.peak8 / 1e12);
  fputc('\n', stderr);
  fprintf(csv, "gpu,act,fmt,kernel,M,K,N,mgen_us,cublas_us,speedup,mgen_roofline_frac,"
               "cublas_roofline_frac,weight_GBps,reps%s%s%s\n",
          o.graph ? ",mgen_graph_us,cublas_graph_us" : "",
          b.a8 ? ",cublaslt_fp8_us,speedup_fp8" : "", b.a8 && o.graph ? ",cublaslt_fp8_graph_us" : "");
  results res = {0};
  for (int i = 0; i < o.nshapes; i++)
    for (int a8 = 0; a8 < 2; a8++)
      for (int t = 0; t < NACT; t++)
        if ((a8 ? o.a8_mask : o.act_mask) & (1 << t))
          bench_shape(&b, &o, t, a8, o.shapes[i], csv, &res);
  if (csv != stdout && fclose(csv)) die("cannot write %s", o.csv);
  summary(&b, &o, &res);

  bench_timer_free(&b.timer);
  if (b.cold_spacer) CUDA_CHECK(cudaFree(b.cold_spacer));
  if (o.sweep_pct) bench_timer_free(&b.coarse);
  mgen_ctx_destroy(b.ctx);
  if (b.a8) {
    CUDA_CHECK(cudaFree(b.lt_ws));
    CUBLAS_CHECK(cublasLtDestroy(b.lt));
  }
  CUBLAS_CHECK(cublasDestroy(b.cublas));
  CUDA_CHECK(cudaStreamDestroy(b.stream));
  free(res.v);
  if (res.check_fail) {
    fprintf(stderr, "bench_gemm: %d rows failed the sanity check\n", res.check_fail);
    return 1;
  }
  return 0;
}
