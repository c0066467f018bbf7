/* layer_weights.c -- bench_layer's weights (layer_weights.h): a random checkpoint of one format
 * (layer_ckpt.c), packed by libmgen, and its exact dequantization for cuBLAS. */
#include "layer_weights.h"

#include "bench_util.h"
#include "layer_ckpt.h"
#include "layer_kernels.h"

static void *upload(const void *h, size_t bytes) {
  if (!h) return NULL;
  void *d = bench_dmalloc(bytes);
  CUDA_CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
  return d;
}

void layer_weight_make(layer_weight *w, mgen_ctx *ctx, cudaStream_t stream, mgen_act act, int wfmt,
                       int scheme, int group, int n, int k, uint64_t seed) {
  char why[160];
  layer_ckpt h;
  if (layer_ckpt_make(&h, act, scheme, group, n, k, seed, why, sizeof why)) bench_die("%s", why);
  *w = (layer_weight){.q = {.wfmt = (mgen_wfmt)wfmt, .act = act, .scheme = (mgen_scheme)scheme,
                            .group = group, .n = n, .k = k}};
  MGEN_CHECK(ctx, mgen_weights_bytes(&w->q, &w->qbytes, &w->sbytes));
  w->q.d_q = bench_dmalloc(w->qbytes);
  w->q.d_scales = bench_dmalloc(w->sbytes);
  w->w16 = bench_dmalloc((size_t)n * k * 2);

  const size_t nk = (size_t)n * k, ng = (size_t)n * h.groups;
  uint8_t *d_codes = upload(h.codes, nk), *d_packed = upload(h.packed, nk / 2);
  uint8_t *d_zero = upload(h.zero, ng), *d_ck_zeros = upload(h.ck_zeros, ng);
  void *d_ck_scales = upload(h.ck_scales, h.ck_scales_bytes);
  float *d_scale = upload(h.scale, ng * sizeof(float));
  /* A pageable copy may return before its DMA lands, and `stream` may be non-blocking (no
   * order with the legacy stream): wait for the device before the stream reads them. */
  CUDA_CHECK(cudaDeviceSynchronize());
  mgen_pack_src src = {.codes = d_packed ? d_packed : d_codes,
                       .codes_bytes = d_packed ? nk / 2 : nk,
                       .scales = d_ck_scales, .scales_bytes = h.ck_scales_bytes,
                       .global_scale = h.global, .zeros = d_ck_zeros,
                       .zeros_bytes = d_ck_zeros ? ng : 0};
  MGEN_CHECK(ctx, mgen_pack_weights(ctx, &src, &w->q, stream));
  CUDA_CHECK((cudaError_t)layer_dequant(act == MGEN_ACT_BF16, n, k, k / h.groups, d_codes, h.values,
                                        d_scale, d_zero, h.global, w->w16, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  void *tmp[] = {d_codes, d_packed, d_zero, d_ck_zeros, d_ck_scales, d_scale};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++)
    if (tmp[i]) CUDA_CHECK(cudaFree(tmp[i]));
  layer_ckpt_free(&h);
}

void layer_weight_clone(layer_weight *dst, const layer_weight *src, cudaStream_t stream) {
  const size_t w16_bytes = (size_t)src->q.n * src->q.k * 2;
  *dst = *src;
  dst->q.d_q = bench_dmalloc(src->qbytes);
  dst->q.d_scales = bench_dmalloc(src->sbytes);
  dst->w16 = bench_dmalloc(w16_bytes);
  CUDA_CHECK(
      cudaMemcpyAsync(dst->q.d_q, src->q.d_q, src->qbytes, cudaMemcpyDeviceToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(dst->q.d_scales, src->q.d_scales, src->sbytes,
                             cudaMemcpyDeviceToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(dst->w16, src->w16, w16_bytes, cudaMemcpyDeviceToDevice, stream));
}

void layer_weight_free(layer_weight *w) {
  CUDA_CHECK(cudaFree(w->q.d_q));
  CUDA_CHECK(cudaFree(w->q.d_scales));
  CUDA_CHECK(cudaFree(w->w16));
  *w = (layer_weight){0};
}
