/* test_fresh_weights_gpu.c -- a GEMM right after the call that writes its weights reads the new
 * weights, though the GEMM kernels copy their first weights before waiting for the stream's
 * previous kernel (mgen.h "Weights are read-only"; the library's writing calls end with a
 * fence, runtime/src/prepare/fence.cu).
 *
 * Two weight sets X and Y (n = 2048, k = 4096) are written in turn into the SAME buffers, each
 * followed at once by GEMMs at M = 1, 16 and 100 (the decode tiles, which copy weights early,
 * and a prefill tile), whose outputs must equal bit for bit those of the same set prepared and
 * synchronized alone (the kernels are deterministic; X's and Y's outputs are checked to differ
 * in most elements, so a stale read shows):
 *   1. mgen_quantize (f16 u4b8 g128, f16 fe2m1/nvfp4, bf16 u4 g64), eagerly, many rounds;
 *   2. the same captured into one CUDA graph (quantize X, GEMMs, quantize Y, GEMMs) and replayed
 *      many times, the comparisons captured with it;
 *   3. mgen_pack (f16 u4b8 g128: X's and Y's codes differ, the scales are the same), eagerly.
 * And the check can fail: on sm_90 and later, the packed codes of X written over Y's by a
 * kernel that lets its dependents start at once and writes 20 us later (no fence: what mgen.h
 * tells callers not to do) make the M = 1 GEMM read stale codes in at least one of 20 tries
 * (the early copies exist, and this comparison sees them); with plain_launches = 1 (ordinary
 * launches) never.
 * Run: build/tests/test_fresh_weights_gpu   (exits 77 without a GPU) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "act.h"
#include "check.h"
#include "gpu_aux.h"
#include "gpu_util.h"
#include "ref_gemm.h"

enum { N = 2048, K = 4096, M_MAX = 100, ROUNDS = 50, REPLAYS = 50, LATE_TRIES = 20 };
static const int kMs[] = {1, 16, 100};
#define NM (int)(sizeof kMs / sizeof kMs[0])

static mgen_ctx *ctx, *ctx_plain;
static cudaStream_t stream;

typedef struct key {
  int act, wfmt, scheme, group;
  const char *name;
} key;
static const key kKeys[] = {
    {MGEN_ACT_F16, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128, "f16 u4b8 g128"},
    {MGEN_ACT_F16, MGEN_WFMT_FE2M1, MGEN_SCHEME_NVFP4, 16, "f16 fe2m1/nvfp4"},
    {MGEN_ACT_BF16, MGEN_WFMT_U4, MGEN_SCHEME_ASYM, 64, "bf16 u4 g64"},
};

typedef struct bufs {
  mgen_weights w;
  uint16_t *a, *c[NM], *ref[2][NM]; /* ref[set][m]: the outputs of set X (0) or Y (1) alone */
  unsigned long long *diff;          /* device: differing outputs, accumulated */
} bufs;

static void gemms(mgen_ctx *cx, const bufs *b, uint16_t *const out[NM], const char *what) {
  for (int j = 0; j < NM; j++) {
    const mgen_status st = mgen_gemm(cx, b->w.act, kMs[j], b->a, &b->w, out[j], stream);
    CHECK(st == MGEN_OK, "%s: mgen_gemm m=%d: %s: %s", what, kMs[j], mgen_status_str(st),
          mgen_ctx_last_error(cx));
  }
}

/* Adds to b->diff the outputs of the last gemms() that differ from set s's reference. */
static void compare(const bufs *b, int s) {
  for (int j = 0; j < NM; j++)
    CUDA_CHECK((cudaError_t)gpu_count_diff(b->c[j], b->ref[s][j], (size_t)kMs[j] * N, b->diff,
                                           stream));
}

static unsigned long long take_diff(const bufs *b, const char *what) {
  unsigned long long d = 0;
  CUDA_CHECK(cudaMemcpyAsync(&d, b->diff, sizeof d, cudaMemcpyDeviceToHost, stream));
  gpu_sync(stream, what);
  CUDA_CHECK(cudaMemsetAsync(b->diff, 0, sizeof d, stream));
  return d;
}

static void quantize(const bufs *b, const void *d_src, const char *what) {
  mgen_weights w = b->w;
  const mgen_status st = mgen_quantize(ctx, d_src, &w, stream);
  CHECK(st == MGEN_OK, "%s: mgen_quantize: %s: %s", what, mgen_status_str(st),
        mgen_ctx_last_error(ctx));
}

/* The references of both sets, each prepared by `prep` and synchronized before its GEMMs; then
 * how many outputs the two sets share (few, or stale reads could go unseen). */
static void references(bufs *b, const key *k, void (*prep)(const bufs *, int, void *), void *arg) {
  for (int s = 0; s < 2; s++) {
    prep(b, s, arg);
    gpu_sync(stream, "preparing a reference");
    gemms(ctx, b, b->ref[s], k->name);
  }
  for (int j = 0; j < NM; j++)
    CUDA_CHECK((cudaError_t)gpu_count_diff(b->ref[0][j], b->ref[1][j], (size_t)kMs[j] * N, b->diff,
                                           stream));
  size_t total = 0;
  for (int j = 0; j < NM; j++) total += (size_t)kMs[j] * N;
  const unsigned long long d = take_diff(b, "comparing the references");
  CHECK(d * 10 >= total * 9, "%s: the two weight sets' outputs differ in only %llu of %zu "
        "elements: a stale read could go unseen", k->name, d, total);
}

typedef struct sources {
  void *w[2];                  /* quantize: the two FP16/BF16 weight sets */
  uint8_t *codes[2];           /* pack: the two code sets */
  uint16_t *scales;            /* pack: the scales both share */
} sources;

static void prep_quantize(const bufs *b, int s, void *arg) {
  quantize(b, ((sources *)arg)->w[s], "quantize");
}

static void prep_pack(const bufs *b, int s, void *arg) {
  const sources *src = arg;
  mgen_weights w = b->w;
  const mgen_status st = mgen_pack(ctx, src->codes[s], src->scales, &w, stream);
  CHECK(st == MGEN_OK, "mgen_pack: %s: %s", mgen_status_str(st), mgen_ctx_last_error(ctx));
}

/* Rounds of (prepare X, GEMMs, prepare Y, GEMMs) with no synchronization between: 0 stale. */
static void rounds(const bufs *b, const key *k, void (*prep)(const bufs *, int, void *), void *arg,
                   const char *how) {
  for (int r = 0; r < ROUNDS; r++)
    for (int s = 0; s < 2; s++) {
      prep(b, s, arg);
      gemms(ctx, b, b->c, k->name);
      compare(b, s);
    }
  const unsigned long long d = take_diff(b, how);
  CHECK(d == 0, "%s: %s then GEMM at once, %d rounds: %llu outputs differ from the weights' own "
        "(stale weights read)", k->name, how, ROUNDS, d);
  printf("test_fresh_weights_gpu: %s: %s then GEMM, %d rounds x 2 sets x M = 1, 16, 100: "
         "%llu stale\n", k->name, how, ROUNDS, d);
}

static void replayed(const bufs *b, const key *k, sources *src) {
  cudaGraph_t g;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int s = 0; s < 2; s++) {
    prep_quantize(b, s, src);
    gemms(ctx, b, b->c, k->name);
    compare(b, s);
  }
  CUDA_CHECK(cudaStreamEndCapture(stream, &g));
  CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
  for (int r = 0; r < REPLAYS; r++) CUDA_CHECK(cudaGraphLaunch(exec, stream));
  const unsigned long long d = take_diff(b, "graph replays");
  CHECK(d == 0, "%s: a graph of (quantize, GEMMs) x 2 sets replayed %d times: %llu outputs "
        "differ from the weights' own (stale weights read)", k->name, REPLAYS, d);
  printf("test_fresh_weights_gpu: %s: graph of quantize + GEMMs, %d replays: %llu stale\n",
         k->name, REPLAYS, d);
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(g));
}

/* Y's codes in the buffers, X's written over them late by a kernel that lets the GEMM start at
 * once; the M = 1 GEMM's outputs against X's. Returns the stale outputs over `tries`. */
static unsigned long long late_writer(const bufs *b, mgen_ctx *cx, const void *q_x, size_t qbytes,
                                      const sources *src) {
  unsigned long long stale = 0;
  for (int t = 0; t < LATE_TRIES; t++) {
    prep_pack(b, 1, (void *)src);
    gpu_sync(stream, "packing Y");
    CUDA_CHECK((cudaError_t)aux_copy_blocks(b->w.d_q, q_x, qbytes, 20.0, 8, stream));
    const mgen_status st = mgen_gemm(cx, b->w.act, 1, b->a, &b->w, b->c[0], stream);
    CHECK(st == MGEN_OK, "late writer: mgen_gemm: %s: %s", mgen_status_str(st),
          mgen_ctx_last_error(cx));
    CUDA_CHECK((cudaError_t)gpu_count_diff(b->c[0], b->ref[0][0], N, b->diff, stream));
    stale += take_diff(b, "late writer");
  }
  return stale;
}

static void run_key(const key *k, int sm) {
  bufs b = {.w = {.wfmt = (mgen_wfmt)k->wfmt, .act = (mgen_act)k->act,
                  .scheme = (mgen_scheme)k->scheme, .group = k->group, .n = N, .k = K}};
  size_t qbytes, sbytes;
  MGEN_CHECK(ctx, mgen_weights_bytes(&b.w, &qbytes, &sbytes));
  b.w.d_q = gpu_alloc(qbytes);
  b.w.d_scales = gpu_alloc(sbytes);
  b.a = gpu_alloc((size_t)M_MAX * K * 2);
  CUDA_CHECK((cudaError_t)aux_fill_act(b.a, (size_t)M_MAX * K, 7, k->act, stream));
  for (int j = 0; j < NM; j++) {
    b.c[j] = gpu_alloc((size_t)kMs[j] * N * 2);
    for (int s = 0; s < 2; s++) b.ref[s][j] = gpu_alloc((size_t)kMs[j] * N * 2);
  }
  b.diff = gpu_alloc(sizeof *b.diff);
  CUDA_CHECK(cudaMemsetAsync(b.diff, 0, sizeof *b.diff, stream));

  sources src = {{NULL, NULL}, {NULL, NULL}, NULL};
  for (int s = 0; s < 2; s++) {
    src.w[s] = gpu_alloc((size_t)N * K * 2);  /* weights of magnitude <= 1, on the act's grid */
    CUDA_CHECK((cudaError_t)aux_fill_act(src.w[s], (size_t)N * K, 100 + s, k->act, stream));
  }
  references(&b, k, prep_quantize, &src);
  rounds(&b, k, prep_quantize, &src, "mgen_quantize");
  replayed(&b, k, &src);

  if (k->wfmt == MGEN_WFMT_U4B8) {
    for (int s = 0; s < 2; s++) {
      src.codes[s] = gpu_alloc((size_t)N * K);
      CUDA_CHECK((cudaError_t)aux_fill_codes(src.codes[s], (size_t)N * K, 200 + s, stream));
    }
    src.scales = gpu_alloc((size_t)K / k->group * N * 2);
    CUDA_CHECK((cudaError_t)aux_fill_scales(src.scales, (size_t)K / k->group * N, 300, k->act, stream));
    references(&b, k, prep_pack, &src);
    rounds(&b, k, prep_pack, &src, "mgen_pack");
    /* The check can fail: X's packed codes, kept aside, written late without a fence. */
    void *q_x = gpu_alloc(qbytes);
    prep_pack(&b, 0, &src);
    CUDA_CHECK(cudaMemcpyAsync(q_x, b.w.d_q, qbytes, cudaMemcpyDeviceToDevice, stream));
    gpu_sync(stream, "keeping X's codes");
    const unsigned long long plain = late_writer(&b, ctx_plain, q_x, qbytes, &src);
    CHECK(plain == 0, "%s: with plain_launches=1 a GEMM after a late writer of its codes read "
          "%llu stale outputs (an ordinary launch waits for the previous kernel)", k->name, plain);
    if (sm >= 90) {
      const unsigned long long early = late_writer(&b, ctx, q_x, qbytes, &src);
      CHECK(early > 0, "%s (sm_%d): a GEMM after a late writer of its codes (no fence) read no "
            "stale output in %d tries: either the weights are no longer copied before the "
            "dependency wait, or this check cannot see a stale read", k->name, sm, LATE_TRIES);
      printf("test_fresh_weights_gpu: %s: a late writer without a fence: %llu stale outputs "
             "in %d tries (early copies seen); plain launches: 0\n", k->name, early, LATE_TRIES);
    } else {
      printf("test_fresh_weights_gpu: sm_%d: no programmatic launches, the early-copy check "
             "does not apply\n", sm);
    }
    CUDA_CHECK(cudaFree(q_x));
    for (int s = 0; s < 2; s++) CUDA_CHECK(cudaFree(src.codes[s]));
    CUDA_CHECK(cudaFree(src.scales));
  }
  for (int s = 0; s < 2; s++) CUDA_CHECK(cudaFree(src.w[s]));
  for (int j = 0; j < NM; j++) {
    CUDA_CHECK(cudaFree(b.c[j]));
    for (int s = 0; s < 2; s++) CUDA_CHECK(cudaFree(b.ref[s][j]));
  }
  CUDA_CHECK(cudaFree(b.a));
  CUDA_CHECK(cudaFree(b.diff));
  CUDA_CHECK(cudaFree(b.w.d_q));
  CUDA_CHECK(cudaFree(b.w.d_scales));
}

int main(void) {
  gpu_require_device("test_fresh_weights_gpu");
  const mgen_ctx_opts pdl = {.device = -1}, plain = {.device = -1, .plain_launches = 1};
  MGEN_CHECK(NULL, mgen_ctx_create(&ctx, mgen_builtin_table(), &pdl));
  MGEN_CHECK(NULL, mgen_ctx_create(&ctx_plain, mgen_builtin_table(), &plain));
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const int sm = mgen_ctx_sm(ctx);
  for (size_t i = 0; i < sizeof kKeys / sizeof kKeys[0]; i++) run_key(&kKeys[i], sm);
  CUDA_CHECK(cudaStreamDestroy(stream));
  mgen_ctx_destroy(ctx_plain);
  mgen_ctx_destroy(ctx);
  return check_exit("test_fresh_weights_gpu");
}
