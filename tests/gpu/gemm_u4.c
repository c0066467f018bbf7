/* gemm_u4.c -- the GEMM test's u4 rows (gemm_formats.h): random asymmetric int4 weights
 * through mgen_pack_weights (codes, scales and zero points over all of 0..15) and through
 * mgen_quantize (tests/common/ref_u4.c's rule on the CPU gives the reference's codes, scales
 * and zeros; the GPU's are the same bits, tests/gpu/test_pack_gpu.c). The exact weights
 * (code - zero) * scale come from ref_gemm.cu's u4 dequantization.
 * The bound is u4b8's (gemm_formats.c): the kernels compute code - zero exactly in 16 bits
 * (templates/formats/u4/mma_*.cuh, tests/runtime/test_dequant_u4.c) and then scale it as u4b8's
 * do, one rounding per weight for grouped scales, the FP32 sums per channel. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "act.h"
#include "check.h"
#include "gemm_formats.h"
#include "ref.h"
#include "ref_u4.h"

static void *upload(const void *host, size_t bytes) {
  void *d = gpu_alloc(bytes);
  gpu_upload(d, host, bytes);
  return d;
}

/* The reference weights of unpacked codes, scales and zeros (host), into d_w and d_slack. */
static void u4_reference(const gemm_env *env, const mgen_weights *w, const uint8_t *codes,
                         const uint16_t *scales, const uint8_t *zeros, double *d_w,
                         double *d_slack) {
  const size_t nk = (size_t)w->n * w->k, rn = (size_t)ref_scale_rows(w->k, w->group) * w->n;
  uint8_t *d_codes = upload(codes, nk), *d_zeros = upload(zeros, rn);
  uint16_t *d_scales = upload(scales, rn * 2);
  const ref_weights rw = {.wfmt = MGEN_WFMT_U4, .act = w->act, .scheme = w->scheme,
                          .group = w->group, .n = w->n, .k = w->k, .codes = d_codes,
                          .scales = d_scales, .zeros = d_zeros};
  CUDA_CHECK((cudaError_t)gpu_dequant(&rw, d_w, d_slack, env->stream));
  gemm_sync(env, "the u4 reference");
  CUDA_CHECK(cudaFree(d_codes));
  CUDA_CHECK(cudaFree(d_zeros));
  CUDA_CHECK(cudaFree(d_scales));
}

/* Random codes, zero points (both uniform over 0..15) and scales of the act, magnitudes
 * uniform in [0.002, 0.02] and either sign, through mgen_pack_weights. */
void gemm_prepare_u4_pack(const gemm_env *env, rng *r, mgen_weights *w, double *d_w,
                          double *d_slack) {
  const int act = w->act, n = w->n, k = w->k;
  const size_t nk = (size_t)n * k, rn = (size_t)ref_scale_rows(k, w->group) * n;
  uint8_t *codes = malloc(nk), *zeros = malloc(rn);
  uint16_t *scales = malloc(sizeof *scales * rn);
  for (size_t i = 0; i < nk; i++) codes[i] = (uint8_t)rng_below(r, 16);
  for (size_t i = 0; i < rn; i++) {
    zeros[i] = (uint8_t)rng_below(r, 16);
    scales[i] = act_from_double(act, (rng_below(r, 2) ? -1.0 : 1.0) * rng_uniform(r, 0.002, 0.02));
  }
  uint8_t *d_codes = upload(codes, nk), *d_zeros = upload(zeros, rn);
  uint16_t *d_scales = upload(scales, rn * 2);
  const mgen_pack_src src = {.codes = d_codes, .codes_bytes = nk, .scales = d_scales,
                             .scales_bytes = rn * 2, .zeros = d_zeros, .zeros_bytes = rn};
  MGEN_CHECK(env->ctx, mgen_pack_weights(env->ctx, &src, w, env->stream));
  gemm_sync(env, "mgen_pack_weights (u4)");
  CUDA_CHECK(cudaFree(d_codes));
  CUDA_CHECK(cudaFree(d_zeros));
  CUDA_CHECK(cudaFree(d_scales));
  u4_reference(env, w, codes, scales, zeros, d_w, d_slack);
  free(codes), free(zeros), free(scales);
}

/* Random weights of the act (a sum of two uniforms, row scales 2^-4..2^1, each row shifted by
 * up to 0.9 of its spread, so that the zero points spread over 0..15) through mgen_quantize. */
void gemm_prepare_u4_quantize(const gemm_env *env, rng *r, mgen_weights *w, double *d_w,
                              double *d_slack) {
  const int act = w->act, n = w->n, k = w->k;
  const size_t nk = (size_t)n * k, rn = (size_t)ref_scale_rows(k, w->group) * n;
  uint8_t *codes = malloc(nk), *zeros = malloc(rn);
  uint16_t *scales = malloc(sizeof *scales * rn), *wt = malloc(sizeof *wt * nk);
  for (int j = 0; j < n; j++) {
    const double row_scale = ldexp(1.0, (int)rng_below(r, 6) - 4);
    const double shift = rng_uniform(r, -1.8, 1.8);
    for (int i = 0; i < k; i++)
      wt[(size_t)j * k + i] = act_from_double(
          act, (rng_uniform(r, -1, 1) + rng_uniform(r, -1, 1) + shift) * row_scale);
  }
  ref_u4_quantize(act, wt, n, k, w->group, codes, scales, zeros);
  void *d_wt = upload(wt, sizeof *wt * nk);
  MGEN_CHECK(env->ctx, mgen_quantize(env->ctx, d_wt, w, env->stream));
  gemm_sync(env, "mgen_quantize (u4)");
  CUDA_CHECK(cudaFree(d_wt));
  u4_reference(env, w, codes, scales, zeros, d_w, d_slack);
  free(codes), free(zeros), free(scales), free(wt);
}
