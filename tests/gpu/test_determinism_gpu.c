/* test_determinism_gpu.c -- mgen_gemm gives bit-identical C for the same inputs (same A, W and
 * M, hence the same kernel and grid):
 * - across repeated calls on one stream;
 * - across streams (a second stream gets its own workspace);
 * - across a tuned and an untuned choice of the same kernel (mgen_tune's winner through the
 *   cache, and mgen_gemm_kernel naming it);
 * - after a cache round trip (saved, loaded into a new context: the same kernel runs).
 * For every format of the table (f16 and bf16), at several M. It also reports, without
 * asserting, whether a row of A gives the same output row for different M (README: not
 * batch-invariant, since M picks the kernel and the split of K).
 * Run: build/tests/test_determinism_gpu */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "act.h"
#include "check.h"
#include "gpu_util.h"
#include "rng.h"

enum { N = 4096, K = 4096, M_MAX = 300 };

static const int kMs[] = {1, 7, 64, 300};

typedef struct problem {
  mgen_weights w;
  void *a;
  uint16_t *host_a;
} problem;

static problem make_problem(mgen_ctx *ctx, rng *r, int act) {
  problem p = {.w = {.wfmt = MGEN_WFMT_U4B8, .act = (mgen_act)act, .scheme = MGEN_SCHEME_GROUP,
                     .group = 128, .n = N, .k = K}};
  uint16_t *host = malloc((size_t)N * K * 2);
  for (size_t i = 0; i < (size_t)N * K; i++) host[i] = act_from_double(act, rng_uniform(r, -1, 1));
  gpu_quantize(ctx, &p.w, host);
  p.host_a = malloc((size_t)M_MAX * K * 2);
  for (size_t i = 0; i < (size_t)M_MAX * K; i++)
    p.host_a[i] = act_from_double(act, rng_uniform(r, -1, 1));
  p.a = gpu_alloc((size_t)M_MAX * K * 2);
  gpu_upload(p.a, p.host_a, (size_t)M_MAX * K * 2);
  free(host);
  return p;
}

/* C of one GEMM (by `kernel` if not NULL), on `stream`, copied to the host (caller frees). */
static uint16_t *run(mgen_ctx *ctx, const problem *p, int m, const char *kernel,
                     cudaStream_t stream) {
  const size_t bytes = (size_t)m * N * 2;
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

static void same(const uint16_t *x, const uint16_t *y, int m, const char *what, int act) {
  const size_t count = (size_t)m * N;
  size_t diff = 0;
  for (size_t i = 0; i < count; i++) diff += x[i] != y[i];
  CHECK(diff == 0, "%s, m=%d: %zu of %zu outputs differ", what, m, diff, count);
  (void)act;
}

static void test_act(int act, rng *r, const char *cache_path) {
  mgen_ctx *ctx, *fresh;
  MGEN_CHECK(ctx, mgen_ctx_create(&ctx, mgen_builtin_table(), NULL));
  const mgen_weights probe = {.wfmt = MGEN_WFMT_U4B8, .act = (mgen_act)act,
                              .scheme = MGEN_SCHEME_GROUP, .group = 128, .n = N, .k = K};
  const char *any = NULL;
  if (mgen_gemm_choice(ctx, (mgen_act)act, 1, &probe, &any) != MGEN_OK) {
    printf("test_determinism_gpu: %s/u4b8/g128: no kernel in this build, not tested\n",
           act_name(act));
    mgen_ctx_destroy(ctx);
    return;
  }
  problem p = make_problem(ctx, r, act);
  cudaStream_t s1, s2;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  const char *name = act_name(act);
  uint16_t *first_rows[sizeof kMs / sizeof kMs[0]];
  for (size_t i = 0; i < sizeof kMs / sizeof kMs[0]; i++) {
    const int m = kMs[i];
    uint16_t *base = run(ctx, &p, m, NULL, NULL);
    uint16_t *again = run(ctx, &p, m, NULL, NULL);
    same(base, again, m, "repeated call", act);
    uint16_t *other = run(ctx, &p, m, NULL, s1);
    same(base, other, m, "another stream", act);
    uint16_t *third = run(ctx, &p, m, NULL, s2);
    same(base, third, m, "a third stream", act);

    /* Tuned: the winner from the cache, and the same kernel named. */
    mgen_tune_result tr;
    MGEN_CHECK(ctx, mgen_tune(ctx, m, &p.w, NULL, &tr));
    uint16_t *tuned = run(ctx, &p, m, NULL, NULL);
    uint16_t *named = run(ctx, &p, m, tr.kernel, NULL);
    same(tuned, named, m, "tuned choice vs the same kernel by name", act);
    const char *untuned_default = tr.default_kernel;
    uint16_t *by_default = run(ctx, &p, m, untuned_default, NULL);
    same(base, by_default, m, "untuned call vs its default kernel by name", act);

    /* Cache round trip: a new context loading the file runs the tuned kernel. */
    MGEN_CHECK(ctx, mgen_cache_save(ctx, cache_path, MGEN_CACHE_REPLACE));
    MGEN_CHECK(fresh, mgen_ctx_create(&fresh, mgen_builtin_table(), NULL));
    MGEN_CHECK(fresh, mgen_cache_load(fresh, cache_path, NULL));
    const char *chosen = NULL;
    MGEN_CHECK(fresh, mgen_gemm_choice(fresh, p.w.act, m, &p.w, &chosen));
    CHECK(strcmp(chosen, tr.kernel) == 0, "after the round trip %s runs, not %s", chosen,
          tr.kernel);
    uint16_t *loaded = run(fresh, &p, m, NULL, NULL);
    same(tuned, loaded, m, "after a cache round trip", act);
    mgen_ctx_destroy(fresh);
    MGEN_CHECK(ctx, mgen_cache_clear(ctx));

    first_rows[i] = malloc((size_t)N * 2);
    memcpy(first_rows[i], base, (size_t)N * 2);
    free(base), free(again), free(other), free(third), free(tuned), free(named),
        free(by_default), free(loaded);
  }
  /* Batch invariance, reported: row 0 of A at each M against M = 1. */
  for (size_t i = 1; i < sizeof kMs / sizeof kMs[0]; i++) {
    size_t diff = 0;
    for (int j = 0; j < N; j++) diff += first_rows[i][j] != first_rows[0][j];
    printf("test_determinism_gpu: %s: row 0 at m=%d vs m=1: %zu of %d outputs differ%s\n", name,
           kMs[i], diff, N, diff ? " (not batch-invariant: README)" : "");
  }
  for (size_t i = 0; i < sizeof kMs / sizeof kMs[0]; i++) free(first_rows[i]);
  CUDA_CHECK(cudaStreamDestroy(s1));
  CUDA_CHECK(cudaStreamDestroy(s2));
  CUDA_CHECK(cudaFree(p.w.d_q));
  CUDA_CHECK(cudaFree(p.w.d_scales));
  CUDA_CHECK(cudaFree(p.a));
  free(p.host_a);
  mgen_ctx_destroy(ctx);
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
  test_act(MGEN_ACT_F16, &r, path);
  test_act(MGEN_ACT_BF16, &r, path);
  unlink(path);
  char lock[sizeof path + 8];
  snprintf(lock, sizeof lock, "%s.lock", path);
  unlink(lock);
  return check_exit("test_determinism_gpu");
}
