/* test_pack_gpu.c -- mgen_pack and mgen_quantize on the GPU against the CPU reference
 * (tests/common/ref.c, which uses runtime/src/formats/layout.h): packed codes and scales must be
 * bit-identical, for every group size and both activation types (FP16 and BF16 weights and
 * scales), on random data plus edge cases (an all-zero group, a group whose
 * scale underflows, exact .5 ties of w / s; BF16: magnitudes up to 3e38 and down to the BF16
 * subnormals, far outside FP16's range); k not a multiple of 128 included, where both must
 * write the K padding (layout.h) exactly as the reference does (into buffers poisoned first);
 * and mgen_pack's input check: a code above 15 or an inf/NaN scale is ERR_INVALID_ARG naming
 * the first one, and packs nothing. mgen_pack_weights packs the same bytes as mgen_pack and
 * mgen_pack_fp4 (fe2m1 checkpoints, NVFP4 and MXFP4) into buffers poisoned otherwise.
 * u4 (test_u4_shape): mgen_pack_weights of random codes, scales and zero points (0..15) and
 * mgen_quantize (edge groups: all zero, all positive and all negative, which clamp the zero
 * point, BF16 near FLT_MAX) against tests/common/ref_u4.c bit for bit, the padding included;
 * the quantization's round trip (the GPU's packed buffers dequantized where layout.h puts each
 * code, scale and zero) within s (1/2 + 16 u) of the weights where the group straddles 0 and s
 * is normal; a code or a zero above 15 and a non-finite scale refused, naming the first.
 * u4b8 in the e4m3 layout (W4A8 words): mgen_pack and mgen_quantize write the words layout.h's
 * mgen__e4m3_source / mgen__e4m3_word make of the same codes (the K padding's code 8 included)
 * and the mma layout's scales, bit for bit; u4 likewise (mgen_quantize, then mgen_pack_weights
 * of the CPU quantizer's codes, scales and zeros: the words of the codes as they are, the mma
 * layout's scale buffer with its zero rows).
 * Run: build/tests/test_pack_gpu [--quick]   (fresh seed each run; MGEN_TEST_SEED) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "formats/layout.h"
#include "gpu_util.h"
#include "ref.h"
#include "ref_u4.h"
#include "rng.h"

static mgen_ctx *ctx;

/* Index of the first difference, or -1. */
static long first_diff(const void *x, const void *y, size_t bytes) {
  const unsigned char *a = x, *b = y;
  for (size_t i = 0; i < bytes; i++)
    if (a[i] != b[i]) return (long)i;
  return -1;
}

/* mgen_pack refuses a code above 15 and an inf or NaN scale, naming the first, and leaves the
 * packed scales untouched; the device copies of codes and scales are restored afterwards. */
static void test_rejects(mgen_weights *w, const uint8_t *codes, uint8_t *d_codes,
                         const uint16_t *scales, uint16_t *d_scales, size_t nk, size_t nscales,
                         const char *an) {
  size_t sbytes = nscales * 2;
  uint16_t *before = malloc(sbytes), *after = malloc(sbytes);
  const size_t bad_code = nk / 3 + 1, bad_scale = nscales / 2;
  const uint8_t codes_bad[2] = {16, 0xff};
  for (int i = 0; i < 2; i++) {
    uint8_t two[2] = {codes_bad[i], codes_bad[i]};
    CUDA_CHECK(cudaMemcpy(d_codes + bad_code, two, 2, cudaMemcpyHostToDevice));
    gpu_fill(w->d_scales, 0x5A, sbytes);
    CUDA_CHECK(cudaMemcpy(before, w->d_scales, sbytes, cudaMemcpyDeviceToHost));
    mgen_status st = mgen_pack(ctx, d_codes, d_scales, w, NULL);
    char want[64];
    snprintf(want, sizeof want, "d_codes[%zu]", bad_code);
    CHECK(st == MGEN_ERR_INVALID_ARG, "pack %s: code %u: %s", an, codes_bad[i], mgen_status_str(st));
    CHECK(strstr(mgen_ctx_last_error(ctx), want) != NULL, "pack %s: '%s' lacks '%s'", an,
          mgen_ctx_last_error(ctx), want);
    CUDA_CHECK(cudaMemcpy(after, w->d_scales, sbytes, cudaMemcpyDeviceToHost));
    CHECK(memcmp(before, after, sbytes) == 0, "pack %s: a rejected pack wrote the scales", an);
    CUDA_CHECK(cudaMemcpy(d_codes + bad_code, codes + bad_code, 2, cudaMemcpyHostToDevice));
  }
  /* inf and NaN of the scales' type: an all-ones exponent with a zero or non-zero mantissa. */
  const uint16_t inf = (uint16_t)act_inf_bits(w->act);
  const uint16_t bad[3] = {inf, (uint16_t)(inf | 1), (uint16_t)(0x8000 | inf)};
  for (int i = 0; i < 3; i++) {
    CUDA_CHECK(cudaMemcpy(d_scales + bad_scale, &bad[i], 2, cudaMemcpyHostToDevice));
    mgen_status st = mgen_pack(ctx, d_codes, d_scales, w, NULL);
    char want[64];
    snprintf(want, sizeof want, "d_scales[%zu]", bad_scale);
    CHECK(st == MGEN_ERR_INVALID_ARG && strstr(mgen_ctx_last_error(ctx), want) != NULL,
          "pack %s: scale 0x%04x: %s: %s", an, bad[i], mgen_status_str(st),
          mgen_ctx_last_error(ctx));
    CUDA_CHECK(cudaMemcpy(d_scales + bad_scale, scales + bad_scale, 2, cudaMemcpyHostToDevice));
  }
  free(before), free(after);
}

/* mgen_pack_weights packs exactly what the old entry point packed (q_old, s_old: its output):
 * the same bytes, K padding included, into buffers poisoned with another byte; and its input
 * check names src's fields. */
static void test_pack_weights_same(mgen_weights *w, const void *d_codes, size_t codes_bytes,
                                   const void *d_scales, size_t scales_bytes, float global_scale,
                                   const void *q_old, const void *s_old, size_t qbytes,
                                   size_t sbytes, const char *an) {
  const mgen_pack_src src = {d_codes, codes_bytes, d_scales, scales_bytes, global_scale, NULL, 0};
  void *q_new = malloc(qbytes), *s_new = malloc(sbytes);
  gpu_fill(w->d_q, 0x37, qbytes);
  gpu_fill(w->d_scales, 0x37, sbytes);
  MGEN_CHECK(ctx, mgen_pack_weights(ctx, &src, w, NULL));
  CUDA_CHECK(cudaMemcpy(q_new, w->d_q, qbytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(s_new, w->d_scales, sbytes, cudaMemcpyDeviceToHost));
  long d = first_diff(q_old, q_new, qbytes);
  CHECK(d < 0, "mgen_pack_weights %s wfmt %d n=%d k=%d g=%d: codes differ from the old call's "
        "at byte %ld", an, (int)w->wfmt, w->n, w->k, w->group, d);
  d = first_diff(s_old, s_new, sbytes);
  CHECK(d < 0, "mgen_pack_weights %s wfmt %d n=%d k=%d g=%d: scales differ from the old call's "
        "at byte %ld", an, (int)w->wfmt, w->n, w->k, w->group, d);
  free(q_new), free(s_new);
}

/* fe2m1: mgen_pack_fp4 and mgen_pack_weights on the same random checkpoint (E2M1 pairs, finite
 * E4M3 or E8M0 block scales), byte for byte; a NaN block scale named as src->scales[i]. */
static void test_fp4_entry_points(rng *r, int act, mgen_scheme scheme, int n, int k) {
  const int group = scheme == MGEN_SCHEME_NVFP4 ? 16 : 32;
  const size_t pb = (size_t)n * k / 2, bb = (size_t)n * (k / group);
  mgen_weights w = {.wfmt = MGEN_WFMT_FE2M1, .act = (mgen_act)act, .scheme = scheme,
                    .group = group, .n = n, .k = k};
  size_t qbytes, sbytes;
  MGEN_CHECK(ctx, mgen_weights_bytes(&w, &qbytes, &sbytes));
  w.d_q = gpu_alloc(qbytes);
  w.d_scales = gpu_alloc(sbytes);
  uint8_t *packed = malloc(pb), *blocks = malloc(bb), *d_packed = gpu_alloc(pb);
  uint8_t *d_blocks = gpu_alloc(bb), *q_old = malloc(qbytes), *s_old = malloc(sbytes);
  for (size_t i = 0; i < pb; i++) packed[i] = (uint8_t)rng_below(r, 256);
  for (size_t i = 0; i < bb; i++) /* E4M3 0x00..0x7e (no NaN), E8M0 2^-27..2^12 */
    blocks[i] = (uint8_t)(scheme == MGEN_SCHEME_NVFP4 ? rng_below(r, 0x7f) : 100 + rng_below(r, 40));
  gpu_upload(d_packed, packed, pb);
  gpu_upload(d_blocks, blocks, bb);
  gpu_fill(w.d_q, 0xAB, qbytes);
  gpu_fill(w.d_scales, 0xAB, sbytes);
  MGEN_CHECK(ctx, mgen_pack_fp4(ctx, d_packed, pb, d_blocks, bb, 0.75f, &w, NULL));
  CUDA_CHECK(cudaMemcpy(q_old, w.d_q, qbytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(s_old, w.d_scales, sbytes, cudaMemcpyDeviceToHost));
  test_pack_weights_same(&w, d_packed, pb, d_blocks, bb, 0.75f, q_old, s_old, qbytes, sbytes,
                         act_name(act));
  const uint8_t nan = scheme == MGEN_SCHEME_NVFP4 ? 0x7f : 0xff;
  CUDA_CHECK(cudaMemcpy(d_blocks + bb / 2, &nan, 1, cudaMemcpyHostToDevice));
  const mgen_pack_src src = {d_packed, pb, d_blocks, bb, 0.75f, NULL, 0};
  char want[64];
  snprintf(want, sizeof want, "src->scales[%zu]", bb / 2);
  const mgen_status st = mgen_pack_weights(ctx, &src, &w, NULL);
  CHECK(st == MGEN_ERR_INVALID_ARG && strstr(mgen_ctx_last_error(ctx), want) != NULL,
        "fe2m1 NaN block scale: %s: %s", mgen_status_str(st), mgen_ctx_last_error(ctx));
  CUDA_CHECK(cudaFree(w.d_q));
  CUDA_CHECK(cudaFree(w.d_scales));
  CUDA_CHECK(cudaFree(d_packed));
  CUDA_CHECK(cudaFree(d_blocks));
  free(packed), free(blocks), free(q_old), free(s_old);
}

/* u4b8 or u4 codes (`kind`: layout.h's MGEN_E4M3_WORDS_*; n x k, one a byte) as the e4m3
 * layout's words, qbytes of them. */
static void ref_pack_e4m3(int kind, const uint8_t *codes, int n, int k, uint32_t *q, size_t qbytes) {
  for (size_t word = 0; word < qbytes / 4; word++) {
    uint8_t slot_codes[8];
    for (int slot = 0; slot < 8; slot++) {
      int kk, nn;
      mgen__e4m3_source(n, (int)word, slot, &kk, &nn);
      slot_codes[slot] = kk < k ? codes[(size_t)nn * k + kk] : MGEN_U4B8_PAD_CODE;
    }
    q[word] = mgen__e4m3_word(kind, slot_codes);
  }
}

/* mgen_pack (codes) or mgen_quantize (wts != NULL) of w's weights into the e4m3 layout: the
 * words of `codes` (the mma run's quantized codes for wts) and the scales s_want. */
static void expect_e4m3(mgen_weights w, const uint8_t *codes, const void *d_codes,
                        const void *d_scales, const void *d_wts, const uint16_t *s_want,
                        size_t qbytes, size_t sbytes, const char *what) {
  uint32_t *want = malloc(qbytes), *got = malloc(qbytes);
  uint16_t *s_got = malloc(sbytes);
  w.layout = MGEN_LAYOUT_E4M3;
  gpu_fill(w.d_q, 0xEF, qbytes);
  gpu_fill(w.d_scales, 0xEF, sbytes);
  if (d_wts) MGEN_CHECK(ctx, mgen_quantize(ctx, d_wts, &w, NULL));
  else MGEN_CHECK(ctx, mgen_pack(ctx, d_codes, d_scales, &w, NULL));
  CUDA_CHECK(cudaMemcpy(got, w.d_q, qbytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(s_got, w.d_scales, sbytes, cudaMemcpyDeviceToHost));
  ref_pack_e4m3(MGEN_E4M3_WORDS_U4B8, codes, w.n, w.k, want, qbytes);
  long d = first_diff(want, got, qbytes);
  CHECK(d < 0, "%s e4m3 n=%d k=%d g=%d: words differ at byte %ld (cpu 0x%08x gpu 0x%08x)", what,
        w.n, w.k, w.group, d, d < 0 ? 0 : want[d / 4], d < 0 ? 0 : got[d / 4]);
  d = first_diff(s_want, s_got, sbytes);
  CHECK(d < 0, "%s e4m3 n=%d k=%d g=%d: scales differ at byte %ld", what, w.n, w.k, w.group, d);
  free(want), free(got), free(s_got);
}

static void test_shape(rng *r, int act, int n, int k, int group) {
  const size_t rows = (size_t)ref_scale_rows(k, group), nk = (size_t)n * k;
  const size_t src_sbytes = rows * n * 2; /* the unpadded source scales */
  mgen_weights w = {.wfmt = MGEN_WFMT_U4B8, .act = (mgen_act)act, .scheme = MGEN_SCHEME_GROUP,
                    .group = group, .n = n, .k = k};
  const char *an = act_name(act);
  size_t qbytes, sbytes;
  MGEN_CHECK(ctx, mgen_weights_bytes(&w, &qbytes, &sbytes));
  CHECK(qbytes == (size_t)n * ref_k_packed(k) / 2 &&
            sbytes == (size_t)ref_packed_rows(k, group) * n * 2, "sizes %zu %zu", qbytes, sbytes);
  w.d_q = gpu_alloc(qbytes);
  w.d_scales = gpu_alloc(sbytes);
  uint8_t *codes = malloc(nk), *d_codes = gpu_alloc(nk);
  uint16_t *scales = malloc(src_sbytes), *d_scales = gpu_alloc(src_sbytes);
  uint16_t *wts = malloc(nk * 2), *d_wts = gpu_alloc(nk * 2);
  uint32_t *q_cpu = malloc(qbytes), *q_gpu = malloc(qbytes);
  uint16_t *s_cpu = malloc(sbytes), *s_gpu = malloc(sbytes);

  /* Pack: random codes and finite scales. */
  for (size_t i = 0; i < nk; i++) codes[i] = (uint8_t)rng_below(r, 16);
  for (size_t i = 0; i < rows * n; i++) scales[i] = (uint16_t)rng_below(r, act_inf_bits(act));
  gpu_upload(d_codes, codes, nk);
  gpu_upload(d_scales, scales, src_sbytes);
  test_rejects(&w, codes, d_codes, scales, d_scales, nk, rows * n, an);
  gpu_fill(w.d_q, 0xAB, qbytes);
  gpu_fill(w.d_scales, 0xAB, sbytes);
  MGEN_CHECK(ctx, mgen_pack(ctx, d_codes, d_scales, &w, NULL));
  CUDA_CHECK(cudaMemcpy(q_gpu, w.d_q, qbytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(s_gpu, w.d_scales, sbytes, cudaMemcpyDeviceToHost));
  ref_pack(act, codes, scales, n, k, group, q_cpu, s_cpu);
  long d = first_diff(q_cpu, q_gpu, qbytes);
  CHECK(d < 0, "pack %s n=%d k=%d g=%d: codes differ at byte %ld", an, n, k, group, d);
  d = first_diff(s_cpu, s_gpu, sbytes);
  CHECK(d < 0, "pack %s n=%d k=%d g=%d: scales differ at byte %ld", an, n, k, group, d);
  test_pack_weights_same(&w, d_codes, nk, d_scales, src_sbytes, 0.0f, q_gpu, s_gpu, qbytes,
                         sbytes, an);
  expect_e4m3(w, codes, d_codes, d_scales, NULL, s_cpu, qbytes, sbytes, "pack");

  /* Quantize: random weights over a few magnitudes per row, plus edge rows. BF16 spans
   * FP32's range: near FLT_MAX (2 max / 15 must not overflow) and BF16 subnormals. */
  static const double f16_mag[] = {1.0, 0.01, 1e-4, 100.0}, bf16_mag[] = {1.0, 3e38, 1e-39, 1e-4};
  const double *mag = act == MGEN_ACT_BF16 ? bf16_mag : f16_mag;
  for (size_t i = 0; i < nk; i++)
    wts[i] = act_from_double(act, rng_uniform(r, -1.0, 1.0) * mag[(i / k) % 4]);
  for (int i = 0; i < k; i++) {
    wts[(size_t)1 * k + i] = 0;                                   /* all zero: s = 1 */
    wts[(size_t)2 * k + i] = (uint16_t)(i % 2 ? 0x0001 : 0x8001); /* s underflows: s = 1 */
    wts[(size_t)3 * k + i] = act_from_double(act, 0.5 * ((i % 31) - 15)); /* max 7.5: s = 1, ties */
  }
  gpu_upload(d_wts, wts, nk * 2);
  gpu_fill(w.d_q, 0xCD, qbytes);
  gpu_fill(w.d_scales, 0xCD, sbytes);
  MGEN_CHECK(ctx, mgen_quantize(ctx, d_wts, &w, NULL));
  CUDA_CHECK(cudaMemcpy(q_gpu, w.d_q, qbytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(s_gpu, w.d_scales, sbytes, cudaMemcpyDeviceToHost));
  ref_quantize(act, wts, n, k, group, codes, scales);
  ref_pack(act, codes, scales, n, k, group, q_cpu, s_cpu);
  d = first_diff(q_cpu, q_gpu, qbytes);
  CHECK(d < 0, "quantize %s n=%d k=%d g=%d: codes differ at byte %ld (cpu 0x%08x gpu 0x%08x)",
        an, n, k, group, d, d < 0 ? 0 : q_cpu[d / 4], d < 0 ? 0 : q_gpu[d / 4]);
  d = first_diff(s_cpu, s_gpu, sbytes);
  CHECK(d < 0, "quantize %s n=%d k=%d g=%d: scales differ at byte %ld (cpu 0x%04x gpu 0x%04x)",
        an, n, k, group, d, d < 0 ? 0 : s_cpu[d / 2], d < 0 ? 0 : s_gpu[d / 2]);
  expect_e4m3(w, codes, NULL, NULL, d_wts, s_cpu, qbytes, sbytes, "quantize");
  long ties = 0;
  for (int i = 0; i < k; i++) ties += codes[(size_t)3 * k + i] != 8 + (i % 31 - 15) / 2;
  CHECK(ties > 0, "the .5 row exercised rounding (%ld values off the truncation)", ties);
  const uint16_t one = act_from_double(act, 1.0);
  CHECK(scales[1] == one && scales[2] == one && scales[3] == one, "%s edge scales", an);
  for (size_t i = 0; i < rows * n; i++)
    CHECK((scales[i] & 0x7fff) < act_inf_bits(act), "%s: scale %zu not finite: 0x%04x", an, i,
          scales[i]);

  CUDA_CHECK(cudaFree(w.d_q));
  CUDA_CHECK(cudaFree(w.d_scales));
  CUDA_CHECK(cudaFree(d_codes));
  CUDA_CHECK(cudaFree(d_scales));
  CUDA_CHECK(cudaFree(d_wts));
  free(codes), free(scales), free(wts), free(q_cpu), free(q_gpu), free(s_cpu), free(s_gpu);
}

/* ---------------------------------------------------------------- u4 */

/* mgen_pack_weights of u4 weights refuses src (one bad element) naming `want`, and writes
 * nothing of the packed scales. */
static void expect_u4_refused(mgen_weights *w, const mgen_pack_src *src, size_t sbytes,
                              const char *want, const char *an) {
  uint8_t *before = malloc(sbytes), *after = malloc(sbytes);
  gpu_fill(w->d_scales, 0x5A, sbytes);
  CUDA_CHECK(cudaMemcpy(before, w->d_scales, sbytes, cudaMemcpyDeviceToHost));
  const mgen_status st = mgen_pack_weights(ctx, src, w, NULL);
  CHECK(st == MGEN_ERR_INVALID_ARG && strstr(mgen_ctx_last_error(ctx), want) != NULL,
        "u4 pack %s g%d: %s: '%s' lacks '%s'", an, w->group, mgen_status_str(st),
        mgen_ctx_last_error(ctx), want);
  CUDA_CHECK(cudaMemcpy(after, w->d_scales, sbytes, cudaMemcpyDeviceToHost));
  CHECK(memcmp(before, after, sbytes) == 0, "u4 pack %s: a refused pack wrote the scales", an);
  free(before), free(after);
}

/* The round trip of u4 quantization: the weights against the packed buffers' values, in units
 * of their group's scale, where the group straddles 0 (z is not clamped) and s is normal. */
static double u4_round_trip(int act, const uint16_t *wts, const uint32_t *q, const uint8_t *sbuf,
                            const uint16_t *scales, int n, int k, int group, long *groups) {
  const int kp = ref_k_packed(k), gs = group ? group : k, rows = ref_scale_rows(k, group);
  const double normal = act == MGEN_ACT_BF16 ? 0x1p-126 : 0x1p-14;
  double *dq = malloc(sizeof *dq * (size_t)n * kp), worst = 0.0;
  ref_u4_dequantize_packed(act, q, sbuf, n, k, group, dq);
  *groups = 0;
  for (int j = 0; j < n; j++)
    for (int g = 0; g < rows; g++) {
      const double s = act_to_double(act, scales[(size_t)g * n + j]);
      double lo = INFINITY, hi = -INFINITY;
      for (int i = g * gs; i < (g + 1) * gs; i++) {
        const double v = act_to_double(act, wts[(size_t)j * k + i]);
        lo = fmin(lo, v), hi = fmax(hi, v);
      }
      if (lo > 0 || hi < 0 || s < normal) continue;
      ++*groups;
      for (int i = g * gs; i < (g + 1) * gs; i++)
        worst = fmax(worst, fabs(act_to_double(act, wts[(size_t)j * k + i]) -
                                 dq[(size_t)j * kp + i]) / s);
    }
  free(dq);
  return worst;
}

static void test_u4_shape(rng *r, int act, int n, int k, int group) {
  const size_t rows = (size_t)ref_scale_rows(k, group), nk = (size_t)n * k;
  const size_t src_sbytes = rows * n * 2;
  mgen_weights w = {.wfmt = MGEN_WFMT_U4, .act = (mgen_act)act, .scheme = MGEN_SCHEME_ASYM,
                    .group = group, .n = n, .k = k};
  const char *an = act_name(act);
  size_t qbytes, sbytes;
  MGEN_CHECK(ctx, mgen_weights_bytes(&w, &qbytes, &sbytes));
  CHECK(qbytes == (size_t)n * ref_k_packed(k) / 2 && sbytes == ref_u4_sbytes(n, k, group),
        "u4 sizes %zu %zu", qbytes, sbytes);
  w.d_q = gpu_alloc(qbytes);
  w.d_scales = gpu_alloc(sbytes);
  uint8_t *codes = malloc(nk), *d_codes = gpu_alloc(nk), *zeros = malloc(rows * n);
  uint8_t *d_zeros = gpu_alloc(rows * n), *s_cpu = malloc(sbytes), *s_gpu = malloc(sbytes);
  uint16_t *scales = malloc(src_sbytes), *d_scales = gpu_alloc(src_sbytes);
  uint16_t *wts = malloc(nk * 2), *d_wts = gpu_alloc(nk * 2);
  uint32_t *q_cpu = malloc(qbytes), *q_gpu = malloc(qbytes);

  /* Pack: random codes, finite scales and zero points over 0..15. */
  for (size_t i = 0; i < nk; i++) codes[i] = (uint8_t)rng_below(r, 16);
  for (size_t i = 0; i < rows * n; i++) scales[i] = (uint16_t)rng_below(r, act_inf_bits(act));
  for (size_t i = 0; i < rows * n; i++) zeros[i] = (uint8_t)rng_below(r, 16);
  gpu_upload(d_codes, codes, nk);
  gpu_upload(d_scales, scales, src_sbytes);
  gpu_upload(d_zeros, zeros, rows * n);
  const mgen_pack_src src = {d_codes, nk, d_scales, src_sbytes, 0.0f, d_zeros, rows * n};
  char want[64];
  const size_t bad_code = nk / 3 + 1, bad_zero = rows * n / 2 + 1, bad_scale = rows * n / 3;
  static const uint8_t too_big[2] = {16, 0xff};
  for (int i = 0; i < 2; i++) {
    CUDA_CHECK(cudaMemcpy(d_codes + bad_code, &too_big[i], 1, cudaMemcpyHostToDevice));
    snprintf(want, sizeof want, "src->codes[%zu]", bad_code);
    expect_u4_refused(&w, &src, sbytes, want, an);
    CUDA_CHECK(cudaMemcpy(d_codes + bad_code, codes + bad_code, 1, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_zeros + bad_zero, &too_big[i], 1, cudaMemcpyHostToDevice));
    snprintf(want, sizeof want, "src->zeros[%zu]", bad_zero);
    expect_u4_refused(&w, &src, sbytes, want, an);
    CUDA_CHECK(cudaMemcpy(d_zeros + bad_zero, zeros + bad_zero, 1, cudaMemcpyHostToDevice));
  }
  const uint16_t nan = (uint16_t)(act_inf_bits(act) | 1);
  CUDA_CHECK(cudaMemcpy(d_scales + bad_scale, &nan, 2, cudaMemcpyHostToDevice));
  snprintf(want, sizeof want, "src->scales[%zu]", bad_scale);
  expect_u4_refused(&w, &src, sbytes, want, an);
  CUDA_CHECK(cudaMemcpy(d_scales + bad_scale, scales + bad_scale, 2, cudaMemcpyHostToDevice));
  gpu_fill(w.d_q, 0xAB, qbytes);
  gpu_fill(w.d_scales, 0xAB, sbytes);
  MGEN_CHECK(ctx, mgen_pack_weights(ctx, &src, &w, NULL));
  CUDA_CHECK(cudaMemcpy(q_gpu, w.d_q, qbytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(s_gpu, w.d_scales, sbytes, cudaMemcpyDeviceToHost));
  ref_u4_pack(act, codes, scales, zeros, n, k, group, q_cpu, s_cpu);
  long d = first_diff(q_cpu, q_gpu, qbytes);
  CHECK(d < 0, "u4 pack %s n=%d k=%d g=%d: codes differ at byte %ld", an, n, k, group, d);
  d = first_diff(s_cpu, s_gpu, sbytes);
  CHECK(d < 0, "u4 pack %s n=%d k=%d g=%d: scale buffers differ at byte %ld (zeros from %lld)",
        an, n, k, group, d, (long long)(sbytes - rows * n / 2));

  /* Quantize: random weights over a few magnitudes per row, edge rows: all zero (s = 1, z = 0),
   * all positive (z = 0) and all negative (z = 15, clamped), and for BF16 near FLT_MAX. */
  static const double f16_mag[] = {1.0, 0.01, 1e-4, 100.0}, bf16_mag[] = {1.0, 3e38, 1e-39, 1e-4};
  const double *mag = act == MGEN_ACT_BF16 ? bf16_mag : f16_mag;
  for (size_t i = 0; i < nk; i++)
    wts[i] = act_from_double(act, rng_uniform(r, -1.0, 1.0) * mag[(i / k) % 4]);
  for (int i = 0; i < k; i++) {
    wts[(size_t)1 * k + i] = 0;
    wts[(size_t)2 * k + i] = act_from_double(act, rng_uniform(r, 0.5, 2.0));
    wts[(size_t)3 * k + i] = act_from_double(act, -rng_uniform(r, 0.5, 2.0));
  }
  gpu_upload(d_wts, wts, nk * 2);
  gpu_fill(w.d_q, 0xCD, qbytes);
  gpu_fill(w.d_scales, 0xCD, sbytes);
  MGEN_CHECK(ctx, mgen_quantize(ctx, d_wts, &w, NULL));
  CUDA_CHECK(cudaMemcpy(q_gpu, w.d_q, qbytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(s_gpu, w.d_scales, sbytes, cudaMemcpyDeviceToHost));
  ref_u4_quantize(act, wts, n, k, group, codes, scales, zeros);
  ref_u4_pack(act, codes, scales, zeros, n, k, group, q_cpu, s_cpu);
  d = first_diff(q_cpu, q_gpu, qbytes);
  CHECK(d < 0, "u4 quantize %s n=%d k=%d g=%d: codes differ at byte %ld", an, n, k, group, d);
  d = first_diff(s_cpu, s_gpu, sbytes);
  CHECK(d < 0, "u4 quantize %s n=%d k=%d g=%d: scale buffers differ at byte %ld (zeros from "
        "%lld)", an, n, k, group, d, (long long)(sbytes - rows * n / 2));
  CHECK(scales[1] == act_from_double(act, 1.0) && zeros[1] == 0 && zeros[2] == 0 &&
            zeros[3] == 15, "u4 %s edge groups: s 0x%04x, zeros %d %d %d", an, scales[1],
        zeros[1], zeros[2], zeros[3]);
  long groups = 0;
  const double worst = u4_round_trip(act, wts, q_gpu, s_gpu, scales, n, k, group, &groups);
  const double bound = 0.5 + 16 * act_unit_roundoff(act);
  CHECK(groups > 0 && worst <= bound && worst > 0.25,
        "u4 quantize %s n=%d k=%d g=%d: round trip %.4f s over %ld groups, bound %.4f s", an, n,
        k, group, worst, groups, bound);

  /* The e4m3 layout: mgen_quantize of the same weights, then mgen_pack_weights of the CPU
   * quantizer's codes, scales and zeros, each into buffers poisoned first. */
  mgen_weights e = w;
  e.layout = MGEN_LAYOUT_E4M3;
  ref_pack_e4m3(MGEN_E4M3_WORDS_U4, codes, n, k, q_cpu, qbytes);
  gpu_upload(d_codes, codes, nk);
  gpu_upload(d_scales, scales, src_sbytes);
  gpu_upload(d_zeros, zeros, rows * n);
  for (int pass = 0; pass < 2; pass++) {
    gpu_fill(e.d_q, 0x3C + pass, qbytes);
    gpu_fill(e.d_scales, 0x3C + pass, sbytes);
    if (pass == 0) MGEN_CHECK(ctx, mgen_quantize(ctx, d_wts, &e, NULL));
    else MGEN_CHECK(ctx, mgen_pack_weights(ctx, &src, &e, NULL));
    CUDA_CHECK(cudaMemcpy(q_gpu, e.d_q, qbytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(s_gpu, e.d_scales, sbytes, cudaMemcpyDeviceToHost));
    const char *how = pass == 0 ? "quantize" : "pack";
    d = first_diff(q_cpu, q_gpu, qbytes);
    CHECK(d < 0, "u4 %s e4m3 %s n=%d k=%d g=%d: words differ at byte %ld (cpu 0x%08x gpu 0x%08x)", how, an,
          n, k, group, d, d < 0 ? 0 : q_cpu[d / 4], d < 0 ? 0 : q_gpu[d / 4]);
    d = first_diff(s_cpu, s_gpu, sbytes);
    CHECK(d < 0, "u4 %s e4m3 %s n=%d k=%d g=%d: scale buffers differ at byte %ld", how, an, n, k, group, d);
  }

  CUDA_CHECK(cudaFree(w.d_q));
  CUDA_CHECK(cudaFree(w.d_scales));
  CUDA_CHECK(cudaFree(d_codes));
  CUDA_CHECK(cudaFree(d_scales));
  CUDA_CHECK(cudaFree(d_zeros));
  CUDA_CHECK(cudaFree(d_wts));
  free(codes), free(zeros), free(scales), free(wts), free(q_cpu), free(q_gpu), free(s_cpu);
  free(s_gpu);
}

int main(int argc, char **argv) {
  gpu_require_device("test_pack_gpu");
  const int quick = gpu_quick_mode(argc, argv);
  rng r;
  rng_seed(&r, rng_test_seed("test_pack_gpu"));
  /* Packing needs no kernel of the table: a context over an empty table would be refused
   * (ERR_NO_KERNEL), so use the built-in one when it has kernels, else a one-entry table. */
  static const mgen_kernel_desc stub = {.name = "stub", .sm_min = 0, .tile_m = 16, .tile_n = 64};
  static const mgen_table stub_table = {&stub, 1, 0, "stub"};
  const mgen_table *table = mgen_builtin_table()->count ? mgen_builtin_table() : &stub_table;
  MGEN_CHECK(ctx, mgen_ctx_create(&ctx, table, NULL));

  /* (n, k); k = 64, 1376, 2752, 4160 are padded (to 128, 1408, 2816, 4224) */
  static const int full[][2] = {{64, 64},    {256, 256},   {128, 11008}, {12288, 256},
                                {4096, 4096}, {192, 1376}, {256, 2752}, {128, 4160}};
  static const int small[][2] = {{64, 64}, {256, 128}, {192, 2752}};
  static const int groups[] = {0, 32, 64, 128};
  const int (*shapes)[2] = quick ? small : full;
  const size_t count = quick ? sizeof small / sizeof small[0] : sizeof full / sizeof full[0];
  static const int acts[] = {MGEN_ACT_F16, MGEN_ACT_BF16};
  for (size_t a = 0; a < 2; a++)
    for (size_t s = 0; s < count; s++)
      for (size_t g = 0; g < 4; g++)
        if (shapes[s][1] % (groups[g] ? groups[g] : 64) == 0)
          test_shape(&r, acts[a], shapes[s][0], shapes[s][1], groups[g]);
  for (size_t a = 0; a < 2; a++)
    for (size_t s = 0; s < count; s++)
      for (size_t g = 0; g < 4; g++)
        if (shapes[s][1] % (groups[g] ? groups[g] : 64) == 0)
          test_u4_shape(&r, acts[a], shapes[s][0], shapes[s][1], groups[g]);
  /* fe2m1's old and new entry points (k = 2752: padded to 2816) */
  static const int fp4_shapes[][2] = {{256, 512}, {256, 2752}};
  for (size_t a = 0; a < 2; a++)
    for (size_t s = 0; s < 2; s++)
      for (int nv = 0; nv < 2; nv++)
        test_fp4_entry_points(&r, acts[a], nv ? MGEN_SCHEME_NVFP4 : MGEN_SCHEME_MXFP4,
                              fp4_shapes[s][0], fp4_shapes[s][1]);
  mgen_ctx_destroy(ctx);
  return check_exit("test_pack_gpu");
}
