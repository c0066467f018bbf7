/* test_tune_gpu.c -- the autotuner on a real GPU:
 *   1. tuning on the benchmark shapes (f16 u4b8 g128, 8 shapes x 13 M; --quick: 2 shapes x
 *      4 M) reports its wall time, and its choice is checked by an independent, paired timing
 *      (time_paired: batches of back-to-back launches of two kernels, ~100 us each, weights
 *      rotated past 2x L2 so they come from DRAM, in xy/yx order, behind a device spin so the
 *      host never starves the GPU; per repetition the ratio of the two batches' times):
 *      a. where the tuner picked another kernel than the cost model's default: over 41 paired
 *         repetitions, the 99.9% sign-test lower bound of the median ratio tuned/default is at
 *         most 1 + 3%, or the excess is at most 0.5 us per launch;
 *      b. where it kept the default: every other candidate of the key (the table's kernels of
 *         the key that run here and implement the shape) is screened with 9 pairs (5 for
 *         launches over 1 ms), and any whose median beats the default by 3% and 0.5 us is
 *         timed with 41 pairs: the 99.9% lower bound of default/candidate must not exceed
 *         1 + 3% (by over 0.5 us).
 *      What this proves: on this GPU, at these shapes, the tuner's choice is not slower than
 *      the default beyond 3% (with 99.9% confidence per key, whatever the distribution of the
 *      noise: the sign test assumes only independent pairs), nor the kept default slower than
 *      any candidate: the tuner's timing is not biased against what a steady stream of
 *      launches measures. What it does not prove: that the choice is the fastest (candidates
 *      within 3% count as ties), anything at other shapes, M, formats or GPUs, or single-launch
 *      and graph-replay latency (the batches run back to back). A kernel pair within 3% fails
 *      a key with probability <= 0.1%, so over the ~100 keys a chance failure stays unlikely
 *      but possible: re-run once before looking for a bug.
 *   2. a cache saved here is loaded by another process (this program, re-executed with
 *      --child) which makes the same choices and computes bit-identical outputs;
 *   3. under stream capture, a cache miss with MGEN_TUNE_ON_MISS is not tuned (the log says
 *      so), mgen_tune refuses, the capture stays valid and the graph computes the default's C;
 *   4. GEMMs from 6 threads on 6 streams through one context (more streams than workspaces)
 *      match the single-stream results bit for bit.
 * Run: build/tests/test_tune_gpu [--quick]   (exits 77 without a GPU) */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "dispatch/select.h"
#include "gpu_aux.h"
#include "gpu_util.h"

static int log_warns, capture_logged;
static void log_fn(void *user, mgen_log_level level, const char *message) {
  (void)user;
  if (level == MGEN_LOG_WARN) {
    log_warns++;
    capture_logged += strstr(message, "captured into a CUDA graph") != NULL;
    printf("  warning: %s\n", message);
  }
}

/* Random bytes at d: a host block, then doubling device copies. `scales` != 0 writes the
 * constant 0x3c bytes (a valid scale in every format) instead. */
static void fill(void *d, size_t bytes, uint64_t seed, int scales) {
  if (scales) {
    gpu_fill(d, 0x3c, bytes);
    return;
  }
  enum { BLOCK = 1 << 16 };
  static uint16_t host[BLOCK / 2];
  for (size_t i = 0; i < BLOCK / 2; i++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    /* FP16 in +-[2^-5, 1): also fine as 4-bit codes */
    host[i] = (uint16_t)((seed >> 40 & 0x8000) | (10 + seed % 5) << 10 | (seed >> 20 & 0x3ff));
  }
  size_t first = bytes < BLOCK ? bytes : BLOCK;
  gpu_upload(d, host, first);
  for (size_t done = first; done < bytes; done *= 2)
    CUDA_CHECK(cudaMemcpy((char *)d + done, d, done < bytes - done ? done : bytes - done,
                          cudaMemcpyDeviceToDevice));
  /* A device-to-device cudaMemcpy returns before it ends, on the legacy stream, which the
   * tests' non-blocking streams do not wait for: without this, a GEMM launched next can read
   * the buffer half copied (test_capture's eager C then differed from its graph's). */
  CUDA_CHECK(cudaDeviceSynchronize());
}

/* One weight shape with `copies` packed copies, and A / C for up to m_max rows. */
typedef struct problem {
  mgen_weights w[64];
  int copies, m_max;
  void *a, *c;
} problem;

static void problem_init(problem *p, int n, int k, int m_max, int copies) {
  memset(p, 0, sizeof *p);
  size_t qb, sb;
  p->copies = copies;
  p->m_max = m_max;
  for (int i = 0; i < copies; i++) {
    p->w[i] = (mgen_weights){.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16,
                             .scheme = MGEN_SCHEME_GROUP, .group = 128, .n = n, .k = k};
    MGEN_CHECK(NULL, mgen_weights_bytes(&p->w[i], &qb, &sb));
    p->w[i].d_q = gpu_alloc(qb);
    p->w[i].d_scales = gpu_alloc(sb);
    fill(p->w[i].d_q, qb, 7 + (uint64_t)i, 0);
    fill(p->w[i].d_scales, sb, 0, 1);
  }
  p->a = gpu_alloc((size_t)m_max * k * 2);
  p->c = gpu_alloc((size_t)m_max * n * 2);
  fill(p->a, (size_t)m_max * k * 2, 99, 0);
}

static void problem_free(problem *p) {
  for (int i = 0; i < p->copies; i++) {
    CUDA_CHECK(cudaFree(p->w[i].d_q));
    CUDA_CHECK(cudaFree(p->w[i].d_scales));
  }
  CUDA_CHECK(cudaFree(p->a));
  CUDA_CHECK(cudaFree(p->c));
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The verdicts' parameters. A kernel counts as slower than another only where the 99.9% lower
 * confidence bound of the median of paired time ratios exceeds 1 + kMargin and the excess is
 * over kFloorUs per launch: kMargin allows for this test and the tuner timing differently
 * (batches of back-to-back launches here, single launches there) and for the tuner's own
 * 5% runoff window; kFloorUs for sub-microsecond launch effects. */
enum { REPS = 41, SCREEN_REPS = 9, WARMUP = 2, BATCH_MAX = 64 };
static const double kMargin = 0.03, kFloorUs = 0.5, kAlpha = 0.001, kBatchUs = 100.0;

/* Sign-test bound: the largest j with P(Binomial(reps, 1/2) <= j) <= kAlpha, so that the
 * (j+1)-th smallest of `reps` paired ratios is below their median with probability >= 99.9%
 * whatever their distribution (-1: none at this count). */
static int order_stat(int reps) {
  double term = pow(0.5, reps), cdf = 0.0;
  int j = -1;
  for (int i = 0; i <= reps; i++) {
    cdf += term;
    if (cdf > kAlpha) break;
    j = i;
    term = term * (reps - i) / (i + 1);
  }
  return j;
}

/* Paired timing of kernels x and y: `reps` repetitions, each a batch of x and a batch of y
 * launches (the same count, each launch on the next weight copy, so weights come from DRAM)
 * timed with events, in the order xy, yx, xy, ... (neither always first), each pair behind a
 * device spin long enough for the host to queue the pair (no launch gaps in the timing).
 * ratio[r] = x's time / y's time of repetition r. reps < 0 screens: -reps pairs, 5 where a
 * launch takes over 1 ms. */
typedef struct paired {
  double lo, median, hi; /* the median ratio x/y and its two-sided sign-test bounds */
  double us_x, us_y;     /* median microseconds per launch */
  int batch, reps;
} paired;

static void launch(mgen_ctx *ctx, problem *p, const char *name, int m, int *run, cudaStream_t s) {
  MGEN_CHECK(ctx, mgen_gemm_kernel(ctx, name, MGEN_ACT_F16, m, p->a, &p->w[*run % p->copies],
                                   p->c, s));
  ++*run;
}

static void time_paired(mgen_ctx *ctx, problem *p, int m, const char *x, const char *y,
                        cudaStream_t s, int reps, paired *out) {
  const char *names[2] = {x, y};
  const int most = reps < 0 ? -reps : reps;
  cudaEvent_t (*ev)[2][2] = malloc(sizeof *ev * (size_t)most);
  double *t[2] = {malloc(sizeof(double) * most), malloc(sizeof(double) * most)};
  double *ratio = malloc(sizeof(double) * most);
  int run = 0;
  /* The batch: about kBatchUs of work, from one timed launch of each. */
  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  double est = 0;
  for (int j = 0; j < 2; j++) {
    launch(ctx, p, names[j], m, &run, s);
    CUDA_CHECK(cudaEventRecord(e0, s));
    launch(ctx, p, names[j], m, &run, s);
    CUDA_CHECK(cudaEventRecord(e1, s));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    est = fmax(est, 1000.0 * ms);
  }
  CUDA_CHECK(cudaEventDestroy(e0));
  CUDA_CHECK(cudaEventDestroy(e1));
  if (reps < 0) reps = est > 1000.0 ? 5 : -reps; /* screening: fewer pairs of long kernels */
  int batch = (int)ceil(kBatchUs / fmax(est, 1.0));
  batch = batch < 1 ? 1 : batch > BATCH_MAX ? BATCH_MAX : batch;
  for (int r = 0; r < reps; r++)
    for (int j = 0; j < 2; j++)
      for (int e = 0; e < 2; e++) CUDA_CHECK(cudaEventCreate(&ev[r][j][e]));
  for (int r = -WARMUP; r < reps; r++) {
    CUDA_CHECK((cudaError_t)aux_spin(fmax(30.0, 2 * batch * 6.0), s)); /* ~6 us per launch */
    for (int jj = 0; jj < 2; jj++) {
      const int j = (r & 1) ? 1 - jj : jj;
      if (r >= 0) CUDA_CHECK(cudaEventRecord(ev[r][j][0], s));
      for (int b = 0; b < batch; b++) launch(ctx, p, names[j], m, &run, s);
      if (r >= 0) CUDA_CHECK(cudaEventRecord(ev[r][j][1], s));
    }
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  for (int r = 0; r < reps; r++) {
    for (int j = 0; j < 2; j++) {
      float ms;
      CUDA_CHECK(cudaEventElapsedTime(&ms, ev[r][j][0], ev[r][j][1]));
      t[j][r] = 1000.0 * ms / batch;
      for (int e = 0; e < 2; e++) CUDA_CHECK(cudaEventDestroy(ev[r][j][e]));
    }
    ratio[r] = t[0][r] / t[1][r];
  }
  qsort(ratio, (size_t)reps, sizeof *ratio, cmp_double);
  qsort(t[0], (size_t)reps, sizeof *t[0], cmp_double);
  qsort(t[1], (size_t)reps, sizeof *t[1], cmp_double);
  const int j = order_stat(reps);
  out->median = ratio[reps / 2];
  out->lo = j >= 0 ? ratio[j] : 0.0;
  out->hi = j >= 0 ? ratio[reps - 1 - j] : INFINITY;
  out->us_x = t[0][reps / 2];
  out->us_y = t[1][reps / 2];
  out->batch = batch;
  out->reps = reps;
  free(ev), free(t[0]), free(t[1]), free(ratio);
}

/* Whether x is slower than y beyond the bound: the lower bound of x/y over 1 + kMargin, by
 * more than kFloorUs per launch. */
static int slower(const paired *pr) {
  return pr->lo > 1.0 + kMargin && (pr->lo - 1.0) * pr->us_y > kFloorUs;
}

/* ---------------------------------------------------------------- 1. tuned vs default */

static const int kShapes[8][2] = {{12288, 4096}, {4096, 4096}, {22016, 4096}, {4096, 11008},
                                  {10240, 8192}, {8192, 8192}, {57344, 8192}, {8192, 28672}};
static const int kMs[13] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};

/* The tuner kept the default: no candidate beats it beyond the bound. Every candidate is
 * screened with SCREEN_REPS pairs; one whose median beats the default by more than the margin
 * is timed again with REPS pairs, which decide. Returns the candidates screened. */
static int check_kept_default(mgen_ctx *ctx, problem *p, int m, const mgen_tune_result *tr,
                              cudaStream_t s) {
  const mgen_table *table = mgen_builtin_table();
  const int n = p->w[0].n, k = p->w[0].k, sm = mgen_ctx_sm(ctx);
  int screened = 0;
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (d->op != MGEN_OP_DENSE || d->act != MGEN_ACT_F16 || d->wfmt != MGEN_WFMT_U4B8 ||
        d->group != 128 || !gpu_default_layout(d) || !mgen_kernel_runs_on(d, sm) || !mgen__can_implement(d, m, n, k, NULL, 0) ||
        strcmp(d->name, tr->default_kernel) == 0)
      continue;
    screened++;
    paired pr;
    time_paired(ctx, p, m, tr->default_kernel, d->name, s, -SCREEN_REPS, &pr);
    if (!(pr.median > 1.0 + kMargin && (pr.median - 1.0) * pr.us_y > kFloorUs)) continue;
    time_paired(ctx, p, m, tr->default_kernel, d->name, s, REPS, &pr);
    printf("  N=%d K=%d M=%d: kept default %s vs %s: default/candidate median %.3f, 99.9%% "
           "bounds [%.3f, %.3f] (%.2f vs %.2f us)\n", n, k, m, tr->default_kernel + 5,
           d->name + 5, pr.median, pr.lo, pr.hi, pr.us_x, pr.us_y);
    CHECK(!slower(&pr), "N=%d K=%d M=%d: the tuner kept the default %s (it timed %.2f us) but "
          "%s is faster: %d paired batches of %d launches, default/candidate median %.3f, 99.9%% "
          "lower bound %.3f > 1 + %.2f (%.2f vs %.2f us per launch)", n, k, m,
          tr->default_kernel, tr->default_us, d->name, pr.reps, pr.batch, pr.median, pr.lo,
          kMargin, pr.us_x, pr.us_y);
  }
  return screened;
}

static void test_tuned_vs_default(mgen_ctx *ctx, cudaStream_t s, int quick, size_t l2) {
  const int shapes[2] = {1, 6}, qms[4] = {1, 16, 256, 4096};
  const int nshapes = quick ? 2 : 8, nms = quick ? 4 : 13;
  double tune_s = 0, check_s = 0, worst = 0;
  int keys = 0, changed = 0, screened = 0;
  printf("%-14s %5s  %-46s %9s  %-46s %9s  %21s  %15s\n", "N,K", "M", "tuned", "us", "default",
         "us", "tuned/default [99.9%]", "by the tuner");
  for (int si = 0; si < nshapes; si++) {
    const int *sh = kShapes[quick ? shapes[si] : si];
    size_t qb, sb;
    mgen_weights d = {.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_GROUP,
                      .group = 128, .n = sh[0], .k = sh[1]};
    MGEN_CHECK(ctx, mgen_weights_bytes(&d, &qb, &sb));
    int copies = (int)(2 * l2 / (qb + sb)) + 1;
    problem p;
    problem_init(&p, sh[0], sh[1], 4096, copies > 64 ? 64 : copies);
    for (int mi = 0; mi < nms; mi++) {
      const int m = quick ? qms[mi] : kMs[mi];
      mgen_tune_result r;
      double t0 = gpu_seconds();
      MGEN_CHECK(ctx, mgen_tune(ctx, m, &d, s, &r));
      tune_s += gpu_seconds() - t0;
      keys++;
      t0 = gpu_seconds();
      if (strcmp(r.kernel, r.default_kernel) == 0) {
        screened += check_kept_default(ctx, &p, m, &r, s);
        check_s += gpu_seconds() - t0;
        continue;
      }
      changed++;
      paired pr;
      time_paired(ctx, &p, m, r.kernel, r.default_kernel, s, REPS, &pr);
      check_s += gpu_seconds() - t0;
      CHECK(!slower(&pr), "N=%d K=%d M=%d: the tuned %s is slower than the default %s: %d "
            "paired batches of %d launches, tuned/default median %.3f, 99.9%% lower bound %.3f > "
            "1 + %.2f (%.2f vs %.2f us per launch; the tuner timed them %.2f and %.2f us)", sh[0],
            sh[1], m, r.kernel, r.default_kernel, pr.reps, pr.batch, pr.median, pr.lo, kMargin,
            pr.us_x, pr.us_y, r.us, r.default_us);
      worst = fmax(worst, pr.median);
      printf("%6d,%-7d %5d  %-46s %9.2f  %-46s %9.2f  %.3f [%.3f,%.3f]  %7.2f %7.2f\n", sh[0],
             sh[1], m, r.kernel + 5, pr.us_x, r.default_kernel + 5, pr.us_y, pr.median, pr.lo,
             pr.hi, r.us, r.default_us);
    }
    problem_free(&p);
  }
  printf("tuning: %d keys in %.2f s (mgen_tune wall time); it changed the kernel for %d (worst "
         "median tuned/default %.3f) and kept the default for %d, against %d candidates "
         "screened; the checks took %.2f s\n", keys, tune_s, changed, worst, keys - changed,
         screened, check_s);
}

/* ---------------------------------------------------------------- 2. another process */

static const int kCrossShapes[2][2] = {{4096, 4096}, {12288, 4096}};
static const int kCrossMs[3] = {1, 48, 300};

/* Runs the cross-process GEMMs and writes "choice checksum" lines to `out`. */
static void cross_outputs(mgen_ctx *ctx, cudaStream_t s, FILE *out) {
  for (int si = 0; si < 2; si++) {
    problem p;
    problem_init(&p, kCrossShapes[si][0], kCrossShapes[si][1], 300, 1);
    size_t bytes = (size_t)300 * p.w[0].n * 2;
    uint16_t *h = malloc(bytes);
    for (int mi = 0; mi < 3; mi++) {
      const char *name;
      MGEN_CHECK(ctx, mgen_gemm_choice(ctx, MGEN_ACT_F16, kCrossMs[mi], &p.w[0], &name));
      CUDA_CHECK(cudaMemsetAsync(p.c, 0xff, bytes, s));
      MGEN_CHECK(ctx, mgen_gemm(ctx, MGEN_ACT_F16, kCrossMs[mi], p.a, &p.w[0], p.c, s));
      CUDA_CHECK(cudaMemcpyAsync(h, p.c, (size_t)kCrossMs[mi] * p.w[0].n * 2,
                                 cudaMemcpyDeviceToHost, s));
      CUDA_CHECK(cudaStreamSynchronize(s));
      uint64_t sum = 1469598103934665603ULL;
      for (size_t i = 0; i < (size_t)kCrossMs[mi] * p.w[0].n; i++) sum = (sum ^ h[i]) * 1099511628211ULL;
      fprintf(out, "%s %016llx\n", name, (unsigned long long)sum);
    }
    free(h);
    problem_free(&p);
  }
}

static int child(const char *cache, const char *out_path) {
  mgen_ctx *ctx;
  mgen_ctx_opts opts = {.device = -1, .log = log_fn};
  MGEN_CHECK(NULL, mgen_ctx_create(&ctx, mgen_builtin_table(), &opts));
  int applied = 0;
  MGEN_CHECK(ctx, mgen_cache_load(ctx, cache, &applied));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  FILE *out = fopen(out_path, "w");
  fprintf(out, "applied %d\n", applied);
  cross_outputs(ctx, s, out);
  fclose(out);
  mgen_ctx_destroy(ctx);
  return 0;
}

static void test_other_process(mgen_ctx *ctx, cudaStream_t s, const char *self) {
  char cache[] = "/tmp/mgen-tune-gpu-XXXXXX", mine[64], theirs[64], cmd[512];
  int fd = mkstemp(cache);
  CHECK(fd >= 0, "mkstemp");
  close(fd);
  remove(cache); /* mgen_cache_save creates it */
  snprintf(mine, sizeof mine, "%s.mine", cache);
  snprintf(theirs, sizeof theirs, "%s.theirs", cache);
  mgen_cache_clear(ctx);
  for (int si = 0; si < 2; si++)
    for (int mi = 0; mi < 3; mi++) {
      mgen_weights d = {.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_GROUP,
                        .group = 128, .n = kCrossShapes[si][0], .k = kCrossShapes[si][1]};
      MGEN_CHECK(ctx, mgen_tune(ctx, kCrossMs[mi], &d, s, NULL));
    }
  MGEN_CHECK(ctx, mgen_cache_save(ctx, cache, MGEN_CACHE_REPLACE));
  FILE *out = fopen(mine, "w");
  fprintf(out, "applied 6\n");
  cross_outputs(ctx, s, out);
  fclose(out);
  snprintf(cmd, sizeof cmd, "'%s' --child '%s' '%s'", self, cache, theirs);
  CHECK(system(cmd) == 0, "child: %s", cmd);
  snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", mine, theirs);
  int same = system(cmd) == 0;
  CHECK(same, "the other process chose or computed differently (%s vs %s)", mine, theirs);
  if (same) {
    remove(mine), remove(theirs), remove(cache);
    snprintf(cmd, sizeof cmd, "%s.lock", cache);
    remove(cmd);
  }
}

/* ---------------------------------------------------------------- 3. capture */

/* Where two differing outputs of m x n halves differ: how many, the first and last place. */
static void describe_diff(const char *what, const uint16_t *x, const uint16_t *y, int m, int n) {
  size_t count = 0, first = 0, last = 0;
  for (size_t i = 0; i < (size_t)m * n; i++)
    if (x[i] != y[i]) {
      if (count++ == 0) first = i;
      last = i;
    }
  printf("  %s: %zu of %zu halves differ, first row %zu col %zu (%04x vs %04x), last row %zu "
         "col %zu\n", what, count, (size_t)m * n, first / n, first % n, x[first], y[first],
         last / n, last % n);
}

static void test_capture(cudaStream_t s) {
  mgen_ctx *ctx;
  mgen_ctx_opts opts = {.device = -1, .log = log_fn};
  MGEN_CHECK(NULL, mgen_ctx_create(&ctx, mgen_builtin_table(), &opts));
  MGEN_CHECK(ctx, mgen_ctx_set_tune(ctx, MGEN_TUNE_ON_MISS, 0));
  problem p;
  problem_init(&p, 4096, 4096, 64, 1);
  const size_t bytes = (size_t)64 * 4096 * 2;
  uint16_t *eager = malloc(bytes), *graph = malloc(bytes);
  const char *def;
  MGEN_CHECK(ctx, mgen_gemm_choice(ctx, MGEN_ACT_F16, 64, &p.w[0], &def));
  MGEN_CHECK(ctx, mgen_gemm_kernel(ctx, def, MGEN_ACT_F16, 64, p.a, &p.w[0], p.c, s));
  CUDA_CHECK(cudaMemcpyAsync(eager, p.c, bytes, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  CUDA_CHECK(cudaMemsetAsync(p.c, 0, bytes, s));
  CUDA_CHECK(cudaStreamSynchronize(s));

  cudaGraph_t g;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  MGEN_CHECK(ctx, mgen_gemm(ctx, MGEN_ACT_F16, 64, p.a, &p.w[0], p.c, s));
  mgen_status st = mgen_tune(ctx, 64, &p.w[0], s, NULL);
  CUDA_CHECK(cudaStreamEndCapture(s, &g));
  CHECK(st == MGEN_ERR_STREAM_CAPTURING, "mgen_tune under capture: %s", mgen_status_str(st));
  CHECK(capture_logged == 1, "the miss under capture was logged once (%d)", capture_logged);
  CHECK(mgen_cache_count(ctx) == 0, "nothing tuned under capture");
  CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
  CUDA_CHECK(cudaGraphLaunch(exec, s));
  CUDA_CHECK(cudaMemcpyAsync(graph, p.c, bytes, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  const int same = memcmp(eager, graph, bytes) == 0;
  CHECK(same, "the graph computed the default's C (%s)", def);
  if (!same) describe_diff("graph vs eager", eager, graph, 64, 4096);
  /* After the capture, the same call tunes. */
  MGEN_CHECK(ctx, mgen_gemm(ctx, MGEN_ACT_F16, 64, p.a, &p.w[0], p.c, s));
  CHECK(mgen_cache_count(ctx) == 1, "tuned after the capture");
  CUDA_CHECK(cudaStreamSynchronize(s));
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(g));
  free(eager), free(graph);
  problem_free(&p);
  mgen_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------- 4. threads and streams */

enum { THREADS = 6, ITERS = 40 };
typedef struct job {
  mgen_ctx *ctx;
  problem *p;
  int m;
  void *c;
  int failures;
} job;

static void *run_job(void *arg) {
  job *j = arg;
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int i = 0; i < ITERS; i++)
    j->failures += mgen_gemm(j->ctx, MGEN_ACT_F16, j->m, j->p->a, &j->p->w[0], j->c, s) != MGEN_OK;
  CUDA_CHECK(cudaStreamSynchronize(s));
  CUDA_CHECK(cudaStreamDestroy(s));
  return NULL;
}

static void test_threads(mgen_ctx *ctx, cudaStream_t s) {
  problem p;
  problem_init(&p, 8192, 8192, 64, 1);
  const size_t bytes = (size_t)64 * 8192 * 2;
  job jobs[THREADS];
  pthread_t t[THREADS];
  uint16_t *want = malloc(bytes), *got = malloc(bytes);
  int bad = 0;
  for (int i = 0; i < THREADS; i++) {
    jobs[i] = (job){ctx, &p, 1 + 12 * i, gpu_alloc(bytes), 0}; /* M = 1..61, <= 64 rows */
    gpu_fill(jobs[i].c, 0, bytes);
  }
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, run_job, &jobs[i]);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < THREADS; i++) {
    CHECK(jobs[i].failures == 0, "thread %d: %d failures", i, jobs[i].failures);
    const size_t n = (size_t)jobs[i].m * 8192 * 2;
    MGEN_CHECK(ctx, mgen_gemm(ctx, MGEN_ACT_F16, jobs[i].m, p.a, &p.w[0], p.c, s));
    CUDA_CHECK(cudaMemcpyAsync(want, p.c, n, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaMemcpyAsync(got, jobs[i].c, n, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    bad += memcmp(want, got, n) != 0;
    CUDA_CHECK(cudaFree(jobs[i].c));
  }
  CHECK(bad == 0, "%d of %d threads computed other results than one stream", bad, THREADS);
  free(want), free(got);
  problem_free(&p);
}

int main(int argc, char **argv) {
  if (argc == 4 && strcmp(argv[1], "--child") == 0) return child(argv[2], argv[3]);
  gpu_require_device("test_tune_gpu");
  const int quick = gpu_quick_mode(argc, argv);
  int l2 = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  mgen_ctx *ctx;
  mgen_ctx_opts opts = {.device = -1, .log = log_fn};
  MGEN_CHECK(NULL, mgen_ctx_create(&ctx, mgen_builtin_table(), &opts));
  cudaStream_t s;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  test_tuned_vs_default(ctx, s, quick, (size_t)l2);
  test_other_process(ctx, s, argv[0]);
  test_capture(s);
  test_threads(ctx, s);
  CHECK(cudaGetLastError() == cudaSuccess, "a CUDA error is left");
  CUDA_CHECK(cudaStreamDestroy(s));
  mgen_ctx_destroy(ctx);
  return check_exit("test_tune_gpu");
}
