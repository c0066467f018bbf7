/* test_launch_gpu.c -- mgen_ctx_opts.plain_launches = 1 (ordinary launches) against the
 * default (programmatic dependent launches on sm_90 and later), on every kernel of six keys
 * that span both families, both activation types and every scale scheme:
 *   f16 u4b8 g128, bf16 u4b8 per channel, f16 fe2m1/nvfp4, bf16 fe2m1/mxfp4, f16 u4 g64,
 *   bf16 u4 per channel
 * (weights from gemm_formats.c's rows: mgen_pack / mgen_pack_fp4 / mgen_pack_weights of random data, the exact
 * FP64 weights and the row's error bound), N = 512, K = 2048, M = 7 and 100:
 *   1. Each kernel runs right after a kernel that writes its A (aux_copy: on sm_90 it lets its
 *      dependents launch at once, then spins 20 us before copying; A holds NaNs before), so a
 *      programmatic launch that read A before waiting for it would see NaNs. In both modes C
 *      passes the row's bound against the FP64 reference (none NaN, none unwritten, none
 *      written past M x N), and the two modes' C are bit-identical.
 *   2. On sm_90 and later, the option takes effect: a stream capture of (aux_copy, GEMM) has a
 *      programmatic edge into the GEMM (cudaGraphDependencyTypeProgrammatic) with the default
 *      context, and none with plain_launches = 1. Below sm_90 both modes are ordinary
 *      launches (reported).
 * Run: build/tests/test_launch_gpu   (exits 77 without a GPU) */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "dispatch/select.h"
#include "gemm_formats.h"
#include "gpu_aux.h"
#include "gpu_util.h"
#include "ref_gemm.h"
#include "rng.h"

enum { N = 512, K = 2048, M_MAX = 100 };
static const int kMs[] = {7, 100};
static const double kDelayUs = 20.0;

typedef struct key {
  int act, wfmt, scheme, group;
} key;
static const key kKeys[] = {
    {MGEN_ACT_F16, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128},
    {MGEN_ACT_BF16, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, MGEN_GROUP_CHANNEL},
    {MGEN_ACT_F16, MGEN_WFMT_FE2M1, MGEN_SCHEME_NVFP4, 16},
    {MGEN_ACT_BF16, MGEN_WFMT_FE2M1, MGEN_SCHEME_MXFP4, 32},
    {MGEN_ACT_F16, MGEN_WFMT_U4, MGEN_SCHEME_ASYM, 64},
    {MGEN_ACT_BF16, MGEN_WFMT_U4, MGEN_SCHEME_ASYM, MGEN_GROUP_CHANNEL},
};

static mgen_ctx *ctx_pdl, *ctx_plain;
static cudaStream_t stream;

/* The row of gemm_formats.c that prepares key k through the packers (not mgen_quantize). */
static const gemm_format *row_of(const key *k) {
  for (size_t i = 0; i < gemm_format_count; i++) {
    const gemm_format *f = &gemm_formats[i];
    if (f->act == k->act && f->wfmt == k->wfmt && f->scheme == k->scheme && !f->small_only &&
        (f->group == GEMM_TABLE_GROUPS || f->group == k->group))
      return f;
  }
  return NULL;
}


typedef struct bufs {
  mgen_weights w;
  gemm_bound bound;
  uint16_t *a_src, *a, *c[2]; /* c[0]: default context, c[1]: plain launches */
  gemm_ref ref;
  gemm_check *check;
} bufs;

/* Programmatic edges of a capture of (aux_copy, GEMM on ctx) on the stream. */
static int programmatic_edges(mgen_ctx *ctx, const bufs *b, const char *kernel, int m) {
  cudaGraph_t g;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  CUDA_CHECK((cudaError_t)aux_copy(b->a, b->a_src, (size_t)m * K * 2, kDelayUs, stream));
  const mgen_status st = mgen_gemm_kernel(ctx, kernel, b->w.act, m, b->a, &b->w, b->c[0], stream);
  CUDA_CHECK(cudaStreamEndCapture(stream, &g));
  CHECK(st == MGEN_OK, "%s under capture: %s: %s", kernel, mgen_status_str(st),
        mgen_ctx_last_error(ctx));
  size_t count = 0;
  CUDA_CHECK(cudaGraphGetEdges(g, NULL, NULL, NULL, &count));
  cudaGraphNode_t *from = calloc(count + 1, sizeof *from), *to = calloc(count + 1, sizeof *to);
  cudaGraphEdgeData *data = calloc(count + 1, sizeof *data);
  CUDA_CHECK(cudaGraphGetEdges(g, from, to, data, &count));
  int programmatic = 0;
  for (size_t i = 0; i < count; i++) programmatic += data[i].type == cudaGraphDependencyTypeProgrammatic;
  free(from), free(to), free(data);
  CUDA_CHECK(cudaGraphDestroy(g));
  return programmatic;
}

/* One kernel at one M in both modes: each correct, and the two bit-identical. */
static void run_kernel(const bufs *b, const gemm_format *f, const char *kernel, int m) {
  mgen_ctx *ctxs[2] = {ctx_pdl, ctx_plain};
  static const char *mode[2] = {"default launches", "plain_launches=1"};
  for (int x = 0; x < 2; x++) {
    CUDA_CHECK(cudaMemsetAsync(b->a, 0xFF, (size_t)M_MAX * K * 2, stream)); /* NaN */
    CUDA_CHECK(cudaMemsetAsync(b->c[x], 0xFF, (size_t)M_MAX * N * 2, stream));
    CUDA_CHECK((cudaError_t)aux_copy(b->a, b->a_src, (size_t)m * K * 2, kDelayUs, stream));
    const mgen_status st = mgen_gemm_kernel(ctxs[x], kernel, b->w.act, m, b->a, &b->w, b->c[x],
                                            stream);
    CHECK(st == MGEN_OK, "%s %s m=%d (%s): %s: %s", f->name, kernel, m, mode[x],
          mgen_status_str(st), mgen_ctx_last_error(ctxs[x]));
    gemm_check init = {0, 0, 0, 0, ~0ull, 0, 0.0, 0.0, 0.0}, res;
    CUDA_CHECK(cudaMemcpyAsync(b->check, &init, sizeof init, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK((cudaError_t)gpu_check_gemm(b->w.act, m, N, &b->bound, b->c[x], (size_t)M_MAX * N,
                                           &b->ref, NULL, 0, b->check, stream));
    CUDA_CHECK(cudaMemcpyAsync(&res, b->check, sizeof res, cudaMemcpyDeviceToHost, stream));
    gpu_sync(stream, kernel);
    double ratio;
    memcpy(&ratio, &res.max_ratio_bits, sizeof ratio);
    CHECK(res.bad == 0 && res.nonfinite == 0 && res.unwritten == 0 && res.guard_bad == 0,
          "%s %s %s m=%d n=%d k=%d (%s): %llu over the bound (max |error|/bound %.3g; first at "
          "row %llu col %llu), %llu NaN/inf (A read before its producer finished?), %llu "
          "unwritten, %llu written past m x n", act_name(b->w.act), f->name, kernel, m, N, K,
          mode[x], res.bad, ratio, res.first_bad / N, res.first_bad % N, res.nonfinite,
          res.unwritten, res.guard_bad);
  }
  unsigned long long diff = 0, *d_diff = gpu_alloc(sizeof diff);
  CUDA_CHECK(cudaMemsetAsync(d_diff, 0, sizeof diff, stream));
  CUDA_CHECK((cudaError_t)gpu_count_diff(b->c[0], b->c[1], (size_t)m * N, d_diff, stream));
  CUDA_CHECK(cudaMemcpyAsync(&diff, d_diff, sizeof diff, cudaMemcpyDeviceToHost, stream));
  gpu_sync(stream, "comparing the two modes");
  CHECK(diff == 0, "%s %s %s m=%d: plain_launches=1 and default launches differ in %llu of %d "
        "outputs", act_name(b->w.act), f->name, kernel, m, diff, m * N);
  CUDA_CHECK(cudaFree(d_diff));
}

static int run_key(const key *k, rng *r, int *edges_checked) {
  const gemm_format *f = row_of(k);
  CHECK(f != NULL, "no row of gemm_formats.c prepares act %d wfmt %d scheme %d", k->act, k->wfmt,
        k->scheme);
  if (f == NULL) return 0;
  const gemm_env env = {ctx_pdl, stream};
  bufs b = {.w = {.wfmt = (mgen_wfmt)k->wfmt, .act = (mgen_act)k->act,
                  .scheme = (mgen_scheme)k->scheme, .group = k->group, .n = N, .k = K}};
  gemm_weights_alloc(&env, &b.w);
  double *d_w = gpu_alloc(sizeof(double) * N * K), *d_slack = gpu_alloc(sizeof(double) * N * K);
  f->prepare(&env, r, &b.w, d_w, d_slack);
  f->bound(k->act, K, &b.bound);
  uint16_t *host_a = malloc((size_t)M_MAX * K * 2);
  for (size_t i = 0; i < (size_t)M_MAX * K; i++) host_a[i] = act_from_double(k->act, rng_uniform(r, -1, 1));
  b.a_src = gpu_alloc((size_t)M_MAX * K * 2);
  b.a = gpu_alloc((size_t)M_MAX * K * 2);
  gpu_upload(b.a_src, host_a, (size_t)M_MAX * K * 2);
  b.c[0] = gpu_alloc((size_t)M_MAX * N * 2);
  b.c[1] = gpu_alloc((size_t)M_MAX * N * 2);
  b.ref.ref = gpu_alloc(sizeof(double) * M_MAX * N);
  b.ref.abs_sum = gpu_alloc(sizeof(double) * M_MAX * N);
  b.ref.werr = gpu_alloc(sizeof(double) * M_MAX * N);
  b.ref.sq_sum = gpu_alloc(sizeof(double) * M_MAX * N);
  b.check = gpu_alloc(sizeof *b.check);
  CUDA_CHECK((cudaError_t)gpu_ref_gemm(k->act, M_MAX, N, K, b.a_src, d_w, d_slack, &b.ref,
                                       stream));
  gpu_sync(stream, "the reference");

  const mgen_table *table = mgen_builtin_table();
  const int sm = mgen_ctx_sm(ctx_pdl);
  int ran = 0, families = 0;
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (d->op != MGEN_OP_DENSE || d->act != k->act || d->wfmt != k->wfmt ||
        !gpu_default_layout(d) || /* (W4A8's: test_w4a8_gpu) */
        d->scheme != k->scheme || d->group != k->group || !mgen_kernel_runs_on(d, sm) ||
        !gpu_kernel_selected(d->name))
      continue;
    for (size_t j = 0; j < sizeof kMs / sizeof kMs[0]; j++) {
      if (!mgen__can_implement(d, kMs[j], N, K, NULL, 0)) continue;
      run_kernel(&b, f, d->name, kMs[j]);
      ran++;
    }
    /* The option's effect, once per family of the key. */
    if (sm >= 90 && !(families & (1 << d->family)) && mgen__can_implement(d, 7, N, K, NULL, 0)) {
      families |= 1 << d->family;
      const int pdl = programmatic_edges(ctx_pdl, &b, d->name, 7);
      const int plain = programmatic_edges(ctx_plain, &b, d->name, 7);
      CHECK(pdl >= 1, "%s (sm_%d): the default context's GEMM after a kernel is captured with "
            "%d programmatic edges, expected >= 1 (a programmatic dependent launch)", d->name,
            sm, pdl);
      CHECK(plain == 0, "%s: with plain_launches=1 the capture has %d programmatic edges, "
            "expected 0 (ordinary launches)", d->name, plain);
      (*edges_checked)++;
    }
  }
  printf("test_launch_gpu: %s %s group %d: %d kernel runs in both modes\n", act_name(k->act),
         f->name, k->group, ran);
  gemm_weights_free(&b.w);
  CUDA_CHECK(cudaFree(d_w));
  CUDA_CHECK(cudaFree(d_slack));
  CUDA_CHECK(cudaFree(b.a_src));
  CUDA_CHECK(cudaFree(b.a));
  CUDA_CHECK(cudaFree(b.c[0]));
  CUDA_CHECK(cudaFree(b.c[1]));
  CUDA_CHECK(cudaFree(b.ref.ref));
  CUDA_CHECK(cudaFree(b.ref.abs_sum));
  CUDA_CHECK(cudaFree(b.ref.werr));
  CUDA_CHECK(cudaFree(b.ref.sq_sum));
  CUDA_CHECK(cudaFree(b.check));
  free(host_a);
  return ran;
}

int main(void) {
  gpu_require_device("test_launch_gpu");
  rng r;
  rng_seed(&r, rng_test_seed("test_launch_gpu"));
  const mgen_ctx_opts pdl = {.device = -1}, plain = {.device = -1, .plain_launches = 1};
  MGEN_CHECK(NULL, mgen_ctx_create(&ctx_pdl, mgen_builtin_table(), &pdl));
  MGEN_CHECK(NULL, mgen_ctx_create(&ctx_plain, mgen_builtin_table(), &plain));
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  int ran = 0, edges = 0, keys = 0;
  for (size_t i = 0; i < sizeof kKeys / sizeof kKeys[0]; i++) {
    const int n = run_key(&kKeys[i], &r, &edges);
    ran += n, keys += n > 0;
  }
  CHECK(ran > 0, "no kernel of the six keys runs on this device");
  if (mgen_ctx_sm(ctx_pdl) >= 90)
    CHECK(edges > 0, "sm_%d: the launch mode was never checked in a capture", mgen_ctx_sm(ctx_pdl));
  else
    printf("test_launch_gpu: sm_%d: no programmatic launches below sm_90; both modes are "
           "ordinary launches\n", mgen_ctx_sm(ctx_pdl));
  printf("test_launch_gpu: %d kernel runs over %d keys, launch mode checked in %d captures\n",
         ran, keys, edges);
  CUDA_CHECK(cudaStreamDestroy(stream));
  mgen_ctx_destroy(ctx_pdl);
  mgen_ctx_destroy(ctx_plain);
  return check_exit("test_launch_gpu");
}
