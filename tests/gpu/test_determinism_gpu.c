/* test_determinism_gpu.c -- mgen_gemm gives bit-identical C for the same inputs (same A, W and
 * M, hence the same kernel and grid), for every (act, wfmt, scheme, group) key of the built-in
 * table that runs on this device (u4b8 and u4 g32/g64/g128/per channel, fe2m1 NVFP4 and MXFP4; FP16
 * and BF16), weights from mgen_quantize of random values:
 *   1. N = K = 2048, M = 1, 7, 64, 300, the default choice: repeated calls on one stream, and
 *      calls on a second and a third stream (each with its own workspace);
 *   2. the split-K / stream-K shape N = 512, K = 8192 (4-8 column tiles over 132 SMs: the
 *      kernels split K across blocks and reduce across them), M = 1 and 16: every kernel of the
 *      key that runs here, twice on one stream and once on another;
 *   3. M = 7 and 300 on the shape of 1: mgen_tune's winner through the cache against the same
 *      kernel named, the untuned call against its default named, and after a cache round
 *      trip (saved, loaded into a new context: the same kernel runs, the same C).
 * It also reports, without asserting, whether a row of A gives the same output row for
 * different M (README: not batch-invariant, since M picks the kernel and the split of K).
 * Every key of the table that runs here is covered, or the test fails.
 * Run: build/tests/test_determinism_gpu */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "act.h"
#include "check.h"
#include "dispatch/select.h"
#include "formats/formats.h"
#include "gpu_util.h"
#include "rng.h"

enum { N = 2048, K = 2048, SPLIT_N = 512, SPLIT_K = 8192, M_MAX = 300, KEYS_MAX = 64 };

static const int kMs[] = {1, 7, 64, 300};
static const int kTunedMs[] = {7, 300};
static const int kSplitMs[] = {1, 16};

typedef struct key {
  int act, wfmt, scheme, group;
} key;

/* Host data of one activation type, shared by its keys. */
typedef struct host_data {
  uint16_t *w, *w_split, *a; /* N x K, SPLIT_N x SPLIT_K, M_MAX x SPLIT_K */
} host_data;

typedef struct problem {
  mgen_weights w;
  void *a; /* M_MAX x w.k */
} problem;

static problem make_problem(mgen_ctx *ctx, const key *k, int n, int kk, const uint16_t *w,
                            const uint16_t *a) {
  problem p = {.w = {.wfmt = (mgen_wfmt)k->wfmt, .act = (mgen_act)k->act,
                     .scheme = (mgen_scheme)k->scheme, .group = k->group, .n = n, .k = kk}};
  gpu_quantize(ctx, &p.w, w);
  /* A's rows of length kk from the M_MAX x SPLIT_K block. */
  uint16_t *rows = malloc((size_t)M_MAX * kk * 2);
  for (int i = 0; i < M_MAX; i++) memcpy(rows + (size_t)i * kk, a + (size_t)i * SPLIT_K, (size_t)kk * 2);
  p.a = gpu_alloc((size_t)M_MAX * kk * 2);
  gpu_upload(p.a, rows, (size_t)M_MAX * kk * 2);
  free(rows);
  return p;
}

static void free_problem(problem *p) {
  CUDA_CHECK(cudaFree(p->w.d_q));
  CUDA_CHECK(cudaFree(p->w.d_scales));
  CUDA_CHECK(cudaFree(p->a));
}

/* C of one GEMM (by `kernel` if not NULL), on `stream`, copied to the host (caller frees). */
static uint16_t *run(mgen_ctx *ctx, const problem *p, int m, const char *kernel,
                     cudaStream_t stream) {
  const size_t bytes = (size_t)m * p->w.n * 2;
  void *c = gpu_alloc(bytes);
  gpu_fill(c, 0xEE, bytes);
  if (kernel != NULL)
    MGEN_CHECK(ctx, mgen_gemm_kernel(ctx, kernel, p->w.act, m, p->a, &p->w, c, stream));
  else
    MGEN_CHECK(ctx, mgen_gemm(ctx, p->w.act, m, p->a, &p->w, c, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  uint16_t *host = malloc(bytes);
  CUDA_CHECK(cudaMemcpy(host, c, bytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaFree(c));
  return host;
}

static void same(const uint16_t *x, const uint16_t *y, const problem *p, int m, const char *what,
                 const char *desc) {
  const size_t count = (size_t)m * p->w.n;
  size_t diff = 0, first = 0;
  for (size_t i = count; i-- > 0;)
    if (x[i] != y[i]) diff++, first = i;
  CHECK(diff == 0, "%s: %s, m=%d n=%d k=%d: %zu of %zu outputs differ (first at row %zu col "
        "%zu: 0x%04x vs 0x%04x)", desc, what, m, p->w.n, p->w.k, diff, count, first / p->w.n,
        first % p->w.n, x[first], y[first]);
}

/* "f16/u4/g128", "bf16/fe2m1/g16/nvfp4": the table's text of the key (formats.h). */
static void describe(const key *k, char *out, size_t size) {
  mgen__format_text(k->act, k->wfmt, k->scheme, k->group, out, size);
}

/* 1 and 3 on the N x K shape. */
static void test_default(mgen_ctx *ctx, const key *k, const host_data *h, const char *desc,
                         cudaStream_t s1, cudaStream_t s2, const char *cache_path) {
  problem p = make_problem(ctx, k, N, K, h->w, h->a);
  uint16_t *first_rows[sizeof kMs / sizeof kMs[0]];
  for (size_t i = 0; i < sizeof kMs / sizeof kMs[0]; i++) {
    const int m = kMs[i];
    uint16_t *base = run(ctx, &p, m, NULL, NULL), *again = run(ctx, &p, m, NULL, NULL);
    same(base, again, &p, m, "repeated call", desc);
    uint16_t *other = run(ctx, &p, m, NULL, s1), *third = run(ctx, &p, m, NULL, s2);
    same(base, other, &p, m, "another stream", desc);
    same(base, third, &p, m, "a third stream", desc);
    first_rows[i] = malloc((size_t)N * 2);
    memcpy(first_rows[i], base, (size_t)N * 2);
    free(again), free(other), free(third);
    int tuned_m = 0;
    for (size_t j = 0; j < sizeof kTunedMs / sizeof kTunedMs[0]; j++) tuned_m |= kTunedMs[j] == m;
    if (!tuned_m) {
      free(base);
      continue;
    }
    /* Tuned: the winner from the cache, and the same kernel named. */
    mgen_tune_result tr;
    MGEN_CHECK(ctx, mgen_tune(ctx, m, &p.w, NULL, &tr));
    uint16_t *tuned = run(ctx, &p, m, NULL, NULL), *named = run(ctx, &p, m, tr.kernel, NULL);
    same(tuned, named, &p, m, "tuned choice vs the same kernel by name", desc);
    uint16_t *by_default = run(ctx, &p, m, tr.default_kernel, NULL);
    same(base, by_default, &p, m, "untuned call vs its default kernel by name", desc);
    /* Cache round trip: a new context loading the file runs the tuned kernel. */
    mgen_ctx *fresh;
    MGEN_CHECK(ctx, mgen_cache_save(ctx, cache_path, MGEN_CACHE_REPLACE));
    MGEN_CHECK(NULL, mgen_ctx_create(&fresh, mgen_builtin_table(), NULL));
    MGEN_CHECK(fresh, mgen_cache_load(fresh, cache_path, NULL));
    const char *chosen = NULL;
    MGEN_CHECK(fresh, mgen_gemm_choice(fresh, p.w.act, m, &p.w, &chosen));
    CHECK(strcmp(chosen, tr.kernel) == 0, "%s m=%d: after the round trip %s runs, not %s", desc,
          m, chosen, tr.kernel);
    uint16_t *loaded = run(fresh, &p, m, NULL, NULL);
    same(tuned, loaded, &p, m, "after a cache round trip", desc);
    mgen_ctx_destroy(fresh);
    MGEN_CHECK(ctx, mgen_cache_clear(ctx));
    free(base), free(tuned), free(named), free(by_default), free(loaded);
  }
  /* Batch invariance, reported: row 0 of A at each M against M = 1. */
  for (size_t i = 1; i < sizeof kMs / sizeof kMs[0]; i++) {
    size_t diff = 0;
    for (int j = 0; j < N; j++) diff += first_rows[i][j] != first_rows[0][j];
    printf("test_determinism_gpu: %s: row 0 at m=%d vs m=1: %zu of %d outputs differ%s\n", desc,
           kMs[i], diff, N, diff ? " (not batch-invariant: README)" : "");
  }
  for (size_t i = 0; i < sizeof kMs / sizeof kMs[0]; i++) free(first_rows[i]);
  free_problem(&p);
}

/* 2: every kernel of the key on the split shape. Returns the kernels run. */
static int test_split(mgen_ctx *ctx, const key *k, const host_data *h, const char *desc,
                      cudaStream_t s1, cudaStream_t s2) {
  problem p = make_problem(ctx, k, SPLIT_N, SPLIT_K, h->w_split, h->a);
  const mgen_table *table = mgen_builtin_table();
  int kernels = 0;
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (d->op != MGEN_OP_DENSE || d->act != k->act || d->wfmt != k->wfmt ||
        !gpu_default_layout(d) || /* W4A8's: test_w4a8_gpu */
        d->scheme != k->scheme || d->group != k->group || !mgen_kernel_runs_on(d, mgen_ctx_sm(ctx)))
      continue;
    int ran = 0;
    for (size_t j = 0; j < sizeof kSplitMs / sizeof kSplitMs[0]; j++) {
      const int m = kSplitMs[j];
      if (!mgen__can_implement(d, m, SPLIT_N, SPLIT_K, NULL, 0)) continue;
      char what[160];
      uint16_t *x = run(ctx, &p, m, d->name, s1), *y = run(ctx, &p, m, d->name, s1);
      snprintf(what, sizeof what, "%s twice on one stream", d->name);
      same(x, y, &p, m, what, desc);
      uint16_t *z = run(ctx, &p, m, d->name, s2);
      snprintf(what, sizeof what, "%s on another stream", d->name);
      same(x, z, &p, m, what, desc);
      free(x), free(y), free(z);
      ran = 1;
    }
    kernels += ran;
  }
  free_problem(&p);
  return kernels;
}

int main(void) {
  gpu_require_device("test_determinism_gpu");
  rng r;
  rng_seed(&r, rng_test_seed("test_determinism_gpu"));
  char path[] = "/tmp/mgen-determinism-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0, "mkstemp");
  close(fd);
  unlink(path); /* mgen_cache_save creates it */

  mgen_ctx *ctx;
  MGEN_CHECK(NULL, mgen_ctx_create(&ctx, mgen_builtin_table(), NULL));
  const mgen_table *table = mgen_builtin_table();
  key keys[KEYS_MAX];
  int nkeys = 0;
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (!mgen_kernel_runs_on(d, mgen_ctx_sm(ctx))) continue;
    if (!gpu_default_layout(d)) continue; /* W4A8's: test_w4a8_gpu */
    const key k = {d->act, d->wfmt, d->scheme, d->group};
    int seen = 0;
    for (int j = 0; j < nkeys; j++) seen |= memcmp(&keys[j], &k, sizeof k) == 0;
    if (!seen && nkeys < KEYS_MAX) keys[nkeys++] = k;
  }
  CHECK(nkeys > 0, "no kernel of the table runs on this device");
  cudaStream_t s1, s2;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  for (int act = MGEN_ACT_F16; act <= MGEN_ACT_BF16; act++) {
    host_data h = {malloc((size_t)N * K * 2), malloc((size_t)SPLIT_N * SPLIT_K * 2),
                   malloc((size_t)M_MAX * SPLIT_K * 2)};
    for (size_t i = 0; i < (size_t)N * K; i++) h.w[i] = act_from_double(act, rng_uniform(&r, -1, 1));
    for (size_t i = 0; i < (size_t)SPLIT_N * SPLIT_K; i++)
      h.w_split[i] = act_from_double(act, rng_uniform(&r, -1, 1));
    for (size_t i = 0; i < (size_t)M_MAX * SPLIT_K; i++)
      h.a[i] = act_from_double(act, rng_uniform(&r, -1, 1));
    for (int i = 0; i < nkeys; i++) {
      if (keys[i].act != act) continue;
      char desc[64];
      describe(&keys[i], desc, sizeof desc);
      const double t0 = gpu_seconds();
      test_default(ctx, &keys[i], &h, desc, s1, s2, path);
      const int kernels = test_split(ctx, &keys[i], &h, desc, s1, s2);
      CHECK(kernels > 0, "%s: no kernel of the key ran the split shape N=%d K=%d", desc, SPLIT_N,
            SPLIT_K);
      printf("test_determinism_gpu: %s: default at M=1,7,64,300, tuned at M=7,300, %d kernels "
             "at N=%d K=%d: %.2f s\n", desc, kernels, SPLIT_N, SPLIT_K, gpu_seconds() - t0);
    }
    free(h.w), free(h.w_split), free(h.a);
  }
  printf("test_determinism_gpu: %d keys\n", nkeys);
  CUDA_CHECK(cudaStreamDestroy(s1));
  CUDA_CHECK(cudaStreamDestroy(s2));
  mgen_ctx_destroy(ctx);
  unlink(path);
  char lock[sizeof path + 8];
  snprintf(lock, sizeof lock, "%s.lock", path);
  unlink(lock);
  return check_exit("test_determinism_gpu");
}
