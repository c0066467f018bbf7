/* bench_tune_method.c -- two kernels of one key timed by each method the project uses, side by
 * side, in rounds: where the tuner and an independent timing disagree, which part of the
 * tuner's method makes the difference (bench/notes/v30.md: on the whole-space default set the
 * tuner chose f16 u4b8 g128 32x192 wg3 s12 over 64x128 wg2 s12 at N = K = 4096, M = 64, which
 * bench_gemm and test_tune_gpu both time ~8% slower).
 *
 *   tuner A,B   the tuner's own timer (tune_timer.c: its copies in one allocation, rounds that
 *               run every candidate once in a fixed order, medians) over the two, A first
 *   tuner B,A   the same, B first
 *   tuner ABBA  the tuner's timer over the two with its order reversed every other round
 *               (MGEN__TUNE_ALTERNATE): ABBA in the tuner's own allocation and data
 *   all         the tuner's timer over the key's every candidate in the order tuning lists
 *               them (mgen__candidates: best predicted, the default, first), a fixed order
 *   all alt / all rotate / all shuffle
 *               the same in the timer's other orders (internal.h mgen__tune_order)
 *   all A<->B   fixed order with A and B swapped in the list: a penalty that stays with the
 *               position (not the kernel) moves from A to B
 *   all plain   fixed order, ordinary launches (mgen_ctx_opts.plain_launches) instead of
 *               programmatic dependent launches
 *   all primed  fixed order, each timed launch right after an untimed one of the same kernel
 *   all sm90a   fixed order, the key's wgmma candidates only
 *   sm80 + A,B  fixed order, A and B then the key's mma candidates
 *   after other / after other big / after self big / after memset
 *               each kernel timed one launch at a time, right after an untimed launch of the
 *               other kernel on the next copy, of the other or of the same kernel on 49152 x
 *               8192 weights (201 MB through L2: what was there, the kernels' code included, is
 *               gone), or after a memset of those bytes (bench/notes/v31.md: a kernel is slow
 *               after other kernels; these tell which part of "other" does it)
 *   then, per other candidate X: A's and B's times when each round runs X then the kernel
 *               (the tuner's timer over the pair), which predecessors slow them
 *   alone       each kernel repeated by itself, each run on the next copy, as bench_gemm times
 *               a kernel (bench_time_us)
 * (test_tune_gpu, which times the pair in ABBA order over separate weight allocations and now
 * prints the tuner's times beside its own, is the other method: run it in the same call.)
 * Every method rotates the weights past 2x L2. Printed per round and method: A's and B's
 * median us and B / A. The data is the tuner's (mgen__fill_random: random code bytes, finite
 * activations), or with --bytes random-byte activations (NaN and Inf among them), as
 * test_tune_gpu fills them.
 *
 * Run (GPU machine, the kernels in the build's table):
 *   build/bench/bench_tune_method --kernels A,B [--shape NxK] [--m M] [--rounds R] [--reps R]
 * Exit status: 0; 1 on a runtime error; 2 on a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <mgen/mgen.h>

#include "bench_util.h"
#include "cli.h"
#define MGEN_INTERNAL_CTX /* the tuner's timer */
#include "mgen_internal.h"

enum { MAX_COPIES = 64, MAX_CANDIDATES = 64 };

typedef struct problem {
  mgen_ctx *ctx;
  const mgen_table *table;
  const char *name[2];
  int index[2];          /* table indexes of A and B */
  mgen_weights w[MAX_COPIES];
  int copies, m;
  void *a, *c;
  cudaStream_t stream;
  int which;             /* the kernel bench_time_us launches */
  mgen_weights big;      /* BIG_N x BIG_K weights: a launch on them streams 201 MB through L2 */
  size_t big_bytes;      /* its codes */
  void *c_big;
} problem;

enum { BIG_N = 49152, BIG_K = 8192 }; /* N: a multiple of every tile_n (64, 128, 192, 256) */

static const char kUsage[] =
    "usage: bench_tune_method --kernels A,B [--shape NxK] [--m M] [--rounds R] [--reps R]\n"
    "                         [--bytes]\n"
    "Two kernels of one key timed by the tuner's method (in both orders, ABBA, among all\n"
    "candidates) and alone\n"
    "(bench/notes/v30.md).\n"
    "  --kernels A,B  two kernel names of the built table, the same key (act, format, group)\n"
    "  --shape NxK    the weights' shape, N = out_features (default 4096x4096)\n"
    "  --m M          rows of A, 1 to 4096 (default 64)\n"
    "  --rounds R     rounds of every method (default 3)\n"
    "  --reps R       timed runs per kernel and method (default 20, the tuner's)\n"
    "  --bytes        activations as random bytes (as test_tune_gpu), not the tuner's values\n"
    "Exit status: 0; 1 on a runtime error; 2 on a usage error.\n";

/* The tuner's data at d (mgen__fill_random), on the problem's stream. */
static void fill(problem *p, void *d, size_t bytes, int act, uint64_t seed) {
  static uint16_t pattern[MGEN__FILL_PATTERN_BYTES / 2];
  CUDA_CHECK(mgen__fill_random(d, bytes, act, seed, p->stream, pattern));
}

static void launch_kernel(problem *p, int which, int copy) {
  MGEN_CHECK(p->ctx, mgen_gemm_kernel(p->ctx, p->name[which], p->w[0].act, p->m, p->a,
                                      &p->w[copy % p->copies], p->c, p->stream));
}

/* What runs, untimed, before each timed launch in time_after. */
enum { PRE_OTHER, PRE_OTHER_BIG, PRE_SELF_BIG, PRE_MEMSET };

/* Median us of kernel `which` when each timed launch comes right after `pre`: the other
 * kernel on the next weight copy, the other kernel or the same one on the big weights (201 MB
 * streamed through L2 first), or a memset of the big weights' bytes. */
static double time_after(problem *p, int which, int pre, int reps) {
  enum { WARMUP = 3 };
  cudaEvent_t ev[2];
  float *t = malloc((size_t)reps * sizeof *t);
  if (t == NULL) bench_die("out of host memory");
  CUDA_CHECK(cudaEventCreate(&ev[0]));
  CUDA_CHECK(cudaEventCreate(&ev[1]));
  for (int r = -WARMUP, run = 0; r < reps; r++, run += 2) {
    const int before = pre == PRE_SELF_BIG ? which : 1 - which;
    if (pre == PRE_OTHER) launch_kernel(p, before, run);
    if (pre == PRE_OTHER_BIG || pre == PRE_SELF_BIG)
      MGEN_CHECK(p->ctx, mgen_gemm_kernel(p->ctx, p->name[before], p->big.act, p->m, p->a,
                                          &p->big, p->c_big, p->stream));
    if (pre == PRE_MEMSET) CUDA_CHECK(cudaMemsetAsync(p->big.d_q, run & 0xff, p->big_bytes,
                                                      p->stream));
    CUDA_CHECK(cudaEventRecord(ev[0], p->stream));
    launch_kernel(p, which, run + 1);
    CUDA_CHECK(cudaEventRecord(ev[1], p->stream));
    CUDA_CHECK(cudaEventSynchronize(ev[1])); /* one at a time: the host never runs behind */
    if (r >= 0) CUDA_CHECK(cudaEventElapsedTime(&t[r], ev[0], ev[1]));
  }
  CUDA_CHECK(cudaEventDestroy(ev[0]));
  CUDA_CHECK(cudaEventDestroy(ev[1]));
  const double us = bench_median_us(t, reps);
  free(t);
  return us;
}

static int launch_alone(void *self, int i) {
  problem *p = self;
  launch_kernel(p, p->which, i);
  return 0;
}

/* The tuner's timer over `count` table indexes, in `order` (mgen__tune_order), through ctx;
 * fills us[] (negative: could not run). */
static void time_tuner(problem *p, mgen_ctx *ctx, const int *cand, int count, int reps,
                       int order, int prime, double *us) {
  mgen__tune_problem tp = {mgen__choice_key_of(&p->w[0], p->m), p->m, cand, count, reps,
                           MGEN__TUNE_WARMUP, p->stream, order, prime};
  MGEN_CHECK(ctx, mgen__gpu_timer(ctx, &tp, us));
}

static void row(int round, const char *method, double a, double b) {
  printf("%5d  %-10s %10.2f %10.2f %8.3f\n", round, method, a, b, a > 0 ? b / a : 0.0);
}

int main(int argc, char **argv) {
  enum { OPT_KERNELS = CLI_OPT_FIRST_FREE, OPT_SHAPE, OPT_M, OPT_ROUNDS, OPT_REPS, OPT_BYTES };
  static const struct option options[] = {{"kernels", required_argument, NULL, OPT_KERNELS},
                                          {"shape", required_argument, NULL, OPT_SHAPE},
                                          {"m", required_argument, NULL, OPT_M},
                                          {"rounds", required_argument, NULL, OPT_ROUNDS},
                                          {"reps", required_argument, NULL, OPT_REPS},
                                          {"bytes", no_argument, NULL, OPT_BYTES},
                                          CLI_STD_OPTIONS, {NULL, 0, NULL, 0}};
  cli_item names[2];
  const char *kernels_arg = "";
  int nnames = 0, n = 4096, k = 4096, m = 64, rounds = 3, reps = MGEN__DEFAULT_TUNE_REPS;
  int bytes = 0, c;
  cli_begin("bench_tune_method", kUsage);
  while ((c = cli_next(argc, argv, "h", options)) != -1) {
    if (c == 1) cli_usage_error("unexpected argument", optarg);
    if (c == OPT_KERNELS) kernels_arg = optarg, nnames = cli_list("--kernels", optarg, names, 2);
    if (c == OPT_SHAPE) cli_shape_nk("--shape", optarg, &n, &k);
    if (c == OPT_M) m = cli_int("--m", optarg, 1, 4096);
    if (c == OPT_ROUNDS) rounds = cli_int("--rounds", optarg, 1, 100);
    if (c == OPT_REPS) reps = cli_int("--reps", optarg, 3, 1000);
    if (c == OPT_BYTES) bytes = 1;
  }
  if (nnames != 2) cli_usage_error("--kernels needs two kernel names, A,B; got", kernels_arg);

  problem p;
  memset(&p, 0, sizeof p);
  p.m = m;
  p.table = mgen_builtin_table();
  mgen_ctx_opts opts = {.device = -1};
  MGEN_CHECK(NULL, mgen_ctx_create(&p.ctx, p.table, &opts));
  CUDA_CHECK(cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking));
  for (int j = 0; j < 2; j++) {
    p.name[j] = names[j];
    p.index[j] = mgen_table_find(p.table, names[j]);
    if (p.index[j] < 0) bench_die("no kernel %s in the built table", names[j]);
  }
  const mgen_kernel_desc *da = &p.table->kernels[p.index[0]], *db = &p.table->kernels[p.index[1]];
  if (da->act != db->act || da->wfmt != db->wfmt || da->scheme != db->scheme ||
      da->group != db->group || da->layout != db->layout)
    bench_die("%s and %s are of different keys", da->name, db->name);

  /* Weight copies past 2x L2, each its own allocation: codes random, scales the scheme's safe
   * byte (a valid scale of every format), as the tuner writes them. */
  const mgen_weights proto = {.wfmt = (mgen_wfmt)da->wfmt, .act = (mgen_act)da->act,
                              .scheme = (mgen_scheme)da->scheme, .group = da->group, .n = n, .k = k,
                              .layout = (mgen_layout)da->layout};
  size_t qb, sb;
  MGEN_CHECK(p.ctx, mgen_weights_bytes(&proto, &qb, &sb));
  int l2 = 0, dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  p.copies = (int)(2 * (size_t)l2 / (qb + sb)) + 1;
  if (p.copies > MAX_COPIES) p.copies = MAX_COPIES;
  for (int i = 0; i < p.copies; i++) {
    p.w[i] = proto;
    p.w[i].d_q = bench_dmalloc(qb);
    p.w[i].d_scales = bench_dmalloc(sb);
    fill(&p, p.w[i].d_q, qb, -1, 7 + (uint64_t)i); /* no activation type: random bytes */
    CUDA_CHECK(cudaMemset(p.w[i].d_scales, mgen__scheme_safe_scale_byte(da->scheme), sb));
  }
  p.big = proto;
  p.big.n = BIG_N, p.big.k = BIG_K;
  size_t big_sb;
  MGEN_CHECK(p.ctx, mgen_weights_bytes(&p.big, &p.big_bytes, &big_sb));
  p.big.d_q = bench_dmalloc(p.big_bytes);
  p.big.d_scales = bench_dmalloc(big_sb);
  fill(&p, p.big.d_q, p.big_bytes, -1, 5);
  CUDA_CHECK(cudaMemset(p.big.d_scales, mgen__scheme_safe_scale_byte(da->scheme), big_sb));
  p.c_big = bench_dmalloc((size_t)m * BIG_N * 2);
  const size_t a_bytes = (size_t)m * (k > BIG_K ? k : BIG_K) * 2; /* A for either weights */
  p.a = bench_dmalloc(a_bytes);
  p.c = bench_dmalloc((size_t)m * n * 2);
  fill(&p, p.a, a_bytes, bytes ? -1 : da->act, 99);
  CUDA_CHECK(cudaStreamSynchronize(p.stream));

  int cand[MAX_CANDIDATES];
  const mgen__choice_key ck = mgen__choice_key_of(&proto, m);
  const int total =
      mgen__candidates(p.table, &p.ctx->model, &ck.key, m, n, k, cand, MAX_CANDIDATES);
  const int count = total < MAX_CANDIDATES ? total : MAX_CANDIDATES;
  int pos[2] = {-1, -1};
  printf("bench_tune_method: N=%d K=%d M=%d, %d weight copies, %s activations; A = %s, B = %s\n",
         n, k, m, p.copies, bytes ? "random-byte" : "finite", names[0], names[1]);
  printf("the key's candidates in tuning order:");
  for (int i = 0; i < count; i++) {
    printf("%s %s", i ? "," : "", p.table->kernels[cand[i]].name + 5);
    for (int j = 0; j < 2; j++)
      if (cand[i] == p.index[j]) pos[j] = i;
  }
  printf("\n");
  if (pos[0] < 0 || pos[1] < 0) bench_die("A or B cannot run M=%d N=%d K=%d", m, n, k);

  bench_timer t;
  bench_timer_init(&t, p.stream, reps, 5, (size_t)32 << 20);
  printf("%5s  %-10s %10s %10s %8s\n", "round", "method", "A us", "B us", "B / A");
  /* The key's candidates with A and B swapped: whether a slow slot follows the position. */
  int swapped[MAX_CANDIDATES];
  memcpy(swapped, cand, sizeof cand);
  swapped[pos[0]] = cand[pos[1]], swapped[pos[1]] = cand[pos[0]];
  /* The key's wgmma candidates alone, and its mma ones after A and B: whether the mix of
   * families makes the difference. */
  int wg[MAX_CANDIDATES], sm80ab[MAX_CANDIDATES], nwg = 0, nab = 2, wpos[2] = {-1, -1};
  sm80ab[0] = p.index[0], sm80ab[1] = p.index[1];
  for (int i = 0; i < count; i++) {
    for (int j = 0; j < 2; j++)
      if (cand[i] == p.index[j]) wpos[j] = nwg;
    if (p.table->kernels[cand[i]].family == MGEN_FAMILY_WGMMA) wg[nwg++] = cand[i];
    else sm80ab[nab++] = cand[i];
  }
  if (wpos[0] < 0 || wpos[1] < 0) bench_die("A and B must be wgmma kernels");
  mgen_ctx *plain = NULL; /* ordinary launches, no programmatic dependent launch */
  mgen_ctx_opts plain_opts = {.device = -1, .plain_launches = 1};
  MGEN_CHECK(NULL, mgen_ctx_create(&plain, p.table, &plain_opts));
  static const struct { const char *name; int order; } kAll[] = {
      {"all", MGEN__TUNE_FIXED}, {"all alt", MGEN__TUNE_ALTERNATE},
      {"all rotate", MGEN__TUNE_ROTATE}, {"all shuffle", MGEN__TUNE_SHUFFLE}};
  for (int r = 0; r < rounds; r++) {
    double us[MAX_CANDIDATES], pair[2];
    time_tuner(&p, p.ctx, p.index, 2, reps, MGEN__TUNE_FIXED, 0, us);
    row(r, "tuner A,B", us[0], us[1]);
    const int ba[2] = {p.index[1], p.index[0]};
    time_tuner(&p, p.ctx, ba, 2, reps, MGEN__TUNE_FIXED, 0, us);
    row(r, "tuner B,A", us[1], us[0]);
    time_tuner(&p, p.ctx, p.index, 2, reps, MGEN__TUNE_ALTERNATE, 0, us);
    row(r, "tuner ABBA", us[0], us[1]);
    for (size_t j = 0; j < sizeof kAll / sizeof kAll[0]; j++) {
      time_tuner(&p, p.ctx, cand, count, reps, kAll[j].order, 0, us);
      row(r, kAll[j].name, us[pos[0]], us[pos[1]]);
    }
    time_tuner(&p, p.ctx, swapped, count, reps, MGEN__TUNE_FIXED, 0, us);
    row(r, "all A<->B", us[pos[1]], us[pos[0]]);
    time_tuner(&p, plain, cand, count, reps, MGEN__TUNE_FIXED, 0, us);
    row(r, "all plain", us[pos[0]], us[pos[1]]);
    time_tuner(&p, p.ctx, cand, count, reps, MGEN__TUNE_FIXED, 1, us);
    row(r, "all primed", us[pos[0]], us[pos[1]]);
    time_tuner(&p, p.ctx, wg, nwg, reps, MGEN__TUNE_FIXED, 0, us);
    row(r, "all sm90a", us[wpos[0]], us[wpos[1]]);
    time_tuner(&p, p.ctx, sm80ab, nab, reps, MGEN__TUNE_FIXED, 0, us);
    row(r, "sm80 + A,B", us[0], us[1]);
    for (int j = 0; j < 2; j++) {
      p.which = j;
      pair[j] = bench_time_us(&t, launch_alone, &p);
    }
    row(r, "alone", pair[0], pair[1]);
    static const struct { const char *name; int pre; } kAfter[] = {
        {"after other", PRE_OTHER}, {"after other big", PRE_OTHER_BIG},
        {"after self big", PRE_SELF_BIG}, {"after memset", PRE_MEMSET}};
    for (size_t j = 0; j < sizeof kAfter / sizeof kAfter[0]; j++)
      row(r, kAfter[j].name, time_after(&p, 0, kAfter[j].pre, reps),
          time_after(&p, 1, kAfter[j].pre, reps));
  }
  /* Which predecessors slow A and B: the tuner's timer over the pair {X, A} (and {X, B}), X
   * each other candidate, so that A runs right after X every round, back to back. */
  printf("\n%-52s %10s %10s\n", "back to back after X (tuner, X then the kernel)", "A us",
         "B us");
  for (int i = 0; i < count; i++) {
    double us[2], after[2] = {0, 0};
    for (int j = 0; j < 2; j++) {
      const int pair[2] = {cand[i], p.index[j]};
      if (cand[i] == p.index[j]) continue;
      time_tuner(&p, p.ctx, pair, 2, reps, MGEN__TUNE_FIXED, 0, us);
      after[j] = us[1];
    }
    printf("%-52s %10.2f %10.2f\n", p.table->kernels[cand[i]].name + 5, after[0], after[1]);
  }
  bench_timer_free(&t);
  for (int i = 0; i < p.copies; i++) {
    CUDA_CHECK(cudaFree(p.w[i].d_q));
    CUDA_CHECK(cudaFree(p.w[i].d_scales));
  }
  CUDA_CHECK(cudaFree(p.big.d_q));
  CUDA_CHECK(cudaFree(p.big.d_scales));
  CUDA_CHECK(cudaFree(p.c_big));
  CUDA_CHECK(cudaFree(p.a));
  CUDA_CHECK(cudaFree(p.c));
  CUDA_CHECK(cudaStreamDestroy(p.stream));
  mgen_ctx_destroy(plain);
  mgen_ctx_destroy(p.ctx);
  return 0;
}
