/* gemm_formats.c -- the rows of the GEMM test (gemm_formats.h) and their hooks: random weights
 * through each library path, the unpacked form the FP64 reference reads, the error bound of
 * each format's kernels (u4's rows: gemm_u4.c), and fe2m1's own checks (argument checks, mgen_quantize and
 * mgen_pack_fp4 against the CPU reference bit for bit).
 *
 * u4b8 bound, with u the act's unit roundoff (FP16: 11-bit significand, u = 2^-11; BF16:
 * 8-bit significand, 7 bits stored, u = 2^-8):
 *     |c - ref| <= 2u |ref| + (2u + K 2^-22) abs
 *     FP16: 2^-10 |ref| + (2^-10 + K 2^-22) abs      BF16: 2^-7 |ref| + (2^-7 + K 2^-22) abs
 * abs = sum_k |a_k w_k| (FP64), w = (q - 8) s exactly. The kernel differs from ref by
 *   - output rounding to the act (round to nearest even): u |c| (2u |ref| leaves room for
 *     the terms below);
 *   - grouped scales: the kernel multiplies each dequantized weight by its scale in the act
 *     (__hmul2, one rounding, relative u; tests/runtime/test_dequant.c checks every scale and
 *     finds u attained to within 2%, so for BF16 it is 2^-8, not 2^-9), which moves the sum
 *     by at most u abs; per channel the scale multiplies the FP32 sum instead (2^-24
 *     relative, inside the room of the first term);
 *   - FP32 accumulation: the products are exact in the MMA (FP16: 11 x 11 bits, BF16: 8 x 8
 *     bits, both within FP32's 24), the K additions cost at most K 2^-24 abs (2^-23 where the
 *     MMA unit truncates); K 2^-22 leaves a factor of 2 for that and for FP32 split-K
 *     reductions.
 * test_dequant.c checks this bound against a sequential emulation of both types.
 *
 * fe2m1 bound (fp4_bound, tests/common/fp4.h), w the exact weight (e2m1 * e4m3 * global or
 * e2m1 * 2^(e-127)):
 *     |c - ref| <= 2u |ref| + K 2^-22 abs + sum_k |a_k| cf slack_k + tiny
 * The kernel computes c = act(cf * sum_k a_k w16_k), w16 = w / cf its 16-bit weight:
 *   - NVFP4: w16 = e2m1 * s * 2^-7 is exact in both types, subnormal E4M3 scales included:
 *     the dequantized e2m1 * 2^-14 (FP16; 2^-126 BF16) and the multiplier s * 2^7 (s * 2^119)
 *     are exact (E4M3 has 4 significant bits, 57344 < 65504), and their product has at most
 *     6 significant bits, magnitude <= 21 and lowest bit >= 2^-1 * 2^-9 * 2^-7 = 2^-17, above
 *     both subnormal spacings (2^-24, 2^-133), so the FP16 result is exact even where it is
 *     subnormal (below 2^-14). test_fp4.c checks all 16 x 254 (code, scale) pairs. slack = 0.
 *   - MXFP4: w16 = e2m1 * 2^-u, exact while e2m1's lowest bit 2^-1-u stays on the subnormal
 *     grid: u <= 23 (FP16), u <= 132 (BF16). Below that __hmul2 rounds to the nearest
 *     subnormal (error <= 2^-25, 2^-134), and past the multiplier's clamp (u > 28 FP16, > 252
 *     BF16) the weight is 0, off by at most 6 * 2^-29 < 2^-25 (6 * 2^-253). These weights
 *     are at least 2^23 (FP16) times smaller than the column's largest block (u = 0, whose
 *     largest element is >= 4 in quantized weights), so they lose bits only below the FP16
 *     output's own precision; slack = 2^-25 (2^-134) for them, times the column factor. The
 *     8-row tiles that scale their FP32 sums per group (kAccScales) multiply by 2^-u in FP32
 *     instead (exact down to 2^-126), inside the same bound.
 *   - MMA: products of two 16-bit values are exact in FP32, the K-sums cost at most
 *     K 2^-24 (2^-23 if the unit truncates) of abs / cf; K 2^-22 leaves a factor 2 for that
 *     and the FP32 split-K reductions. cf multiplies the FP32 sum once (2^-24 relative).
 *   - Output rounding to the act: u |c|; 2u |ref| covers it and the 2^-24 terms. tiny = 2^-24
 *     (FP16; 2^-132 BF16) covers outputs that round into the act's subnormals.
 * Test data keep |C| well inside FP16's range (column factors <= 1 for FP16).
 *
 * The RMS ratio (ref_gemm.h): the bounds above are worst cases, every rounding erring the same
 * way, and so wide (K 2^-22 abs, u abs) that a kernel accumulating in 16 bits passes them too.
 * Its complement is statistical. Rounding to nearest with unit roundoff u has a relative error
 * of RMS u sqrt(0.54 / 3) = 0.43 u (uniform over the last place, the value log-uniform over its
 * binade); the roundings of different weights and of the output are independent and unbiased.
 * So for a correct kernel, q^2 = sum_k (a_k w_k)^2:
 *   E[(c - ref)^2] <= (0.43 u)^2 (q^2 + ref^2)   (weight scaling: u4b8 groups; output)
 * against rms_scale^2 = u^2 (q^2 + ref^2): ratio sqrt(sum err^2 / sum rms_scale^2) about 0.43
 * for grouped u4b8, less where the weights are exact (per channel, fe2m1), whose slack werr
 * and tiny enter rms_scale linearly as in the worst case. FP32 accumulation adds K 2^-24-sized
 * errors, negligible here. A kernel that rounds its running sums S_j to 16 bits after each of
 * L MMAs of 16 (E[S_j^2] = 16 j q^2 / K per chain, K / 16L chains) adds
 * (0.43 u)^2 q^2 L / 2, and with E[ref^2] = q^2 its ratio is about 0.43 sqrt(1 + L / 4):
 * over 1 for a whole K of 1024 in one chain (L = 64), 0.6 already at L = 4. The kernels cut
 * the chains short (warps and blocks split K; the kAccScales tiles start a sum per group:
 * L = 8 at g128, fewer in narrow tiles), so the test asserts the ratio <= 0.6 (GEMM_RMS_LIMIT,
 * 1.4 times the worst correct case) for every case of at least GEMM_RMS_MIN_ELEMS effective
 * outputs (fewer give a noisy estimate; effective: ref_gemm.h's gemm_rms_outputs, as outputs of
 * very different sizes weigh in unequally). tests/gpu/mutants/accumulate-16bit.patch rounds
 * the MMAs' sums to 16 bits: on an H200 per-channel and g128 tiles that accumulate in place
 * then reach 2.8-4.0, a kAccScales tile of 8-MMA chains 0.72-0.79 (all fail), and a 16x64
 * kAccScales tile of shorter chains 0.48 (passes: as close to FP32 as the test can tell).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "fp4.h"
#include "fp4_bad_inputs.h"
#include "gemm_formats.h"
#include "ref.h"

void gemm_weights_alloc(const gemm_env *env, mgen_weights *w) {
  (void)env;
  size_t qb, sb;
  const mgen_status st = mgen_weights_bytes(w, &qb, &sb); /* (no context: no message) */
  if (st != MGEN_OK) {
    fprintf(stderr, "FAIL mgen_weights_bytes wfmt %d scheme %d group %d n=%d k=%d: %s\n",
            w->wfmt, w->scheme, w->group, w->n, w->k, mgen_status_str(st));
    exit(1);
  }
  w->d_q = gpu_alloc(qb);
  w->d_scales = gpu_alloc(sb);
  gpu_fill(w->d_q, 0xAB, qb);
  gpu_fill(w->d_scales, 0xAB, sb);
}

/* The padding is the tail of both buffers (layout.h; tests/runtime/test_layout.c checks it):
 * codes from byte n * k / 2 on, scale rows from k / group on, before fe2m1's column factors.
 * The scale byte per scheme makes the padded weights non-zero and finite: u4b8 0x3c3c (FP16
 * 1.06, BF16 0.0115), E4M3 0x38 (1.0), E8M0 u = 0 (the column's largest block's multiplier). */
void gemm_poison_padding(const mgen_weights *w) {
  const int kp = ref_k_packed(w->k);
  if (kp == w->k) return;
  size_t qb, sb;
  MGEN_CHECK(NULL, mgen_weights_bytes(w, &qb, &sb));
  const size_t codes = (size_t)w->n * w->k / 2;
  gpu_fill((uint8_t *)w->d_q + codes, 0xff, qb - codes); /* u4b8 7 s; E2M1 -6 */
  if (w->group == MGEN_GROUP_CHANNEL) return;            /* one scale row, no padded ones */
  const size_t bytes = w->wfmt == MGEN_WFMT_FE2M1 ? 1 : 2, row = (size_t)w->n * bytes;
  const int poison = w->scheme == MGEN_SCHEME_NVFP4 ? 0x38 : w->scheme == MGEN_SCHEME_MXFP4 ? 0x00 : 0x3c;
  gpu_fill((uint8_t *)w->d_scales + (size_t)(w->k / w->group) * row, poison,
           (size_t)((kp - w->k) / w->group) * row);
}

void gemm_weights_free(mgen_weights *w) {
  CUDA_CHECK(cudaFree(w->d_q));
  CUDA_CHECK(cudaFree(w->d_scales));
}

void gemm_sync(const gemm_env *env, const char *what) { gpu_sync(env->stream, what); }

void gemm_make_bias(rng *r, int act, const double *d_ref_row, int n, int rows, uint16_t *host,
                    void *d_bias) {
  double *row = malloc(sizeof *row * (size_t)n), sq = 0.0;
  CUDA_CHECK(cudaMemcpy(row, d_ref_row, sizeof *row * (size_t)n, cudaMemcpyDeviceToHost));
  for (int j = 0; j < n; j++) sq += row[j] * row[j];
  const double rms = sq > 0.0 ? sqrt(sq / n) : 1.0;
  const size_t count = (size_t)rows * n;
  uint16_t *b = host != NULL ? host : malloc(sizeof *b * count);
  for (size_t i = 0; i < count; i++) b[i] = act_from_double(act, rng_uniform(r, -2.0, 2.0) * rms);
  gpu_upload(d_bias, b, sizeof *b * count);
  if (b != host) free(b);
  free(row);
}

static void *upload(const void *host, size_t bytes) {
  void *d = gpu_alloc(bytes);
  gpu_upload(d, host, bytes);
  return d;
}

/* count (a multiple of 16) random 4-bit codes, one per byte. */
static void random_codes(rng *r, uint8_t *codes, size_t count) {
  for (size_t i = 0; i < count; i += 16) {
    const uint64_t bits = rng_next(r);
    for (int b = 0; b < 16; b++) codes[i + b] = (uint8_t)((bits >> (4 * b)) & 0xf);
  }
}

/* ---------------------------------------------------------------- u4b8 */

/* Random codes and scales of the act, magnitudes uniform in [0.002, 0.02] (|C| around 1 for
 * |A| <= 1) and either sign (GPTQ checkpoints may hold negative scales; mgen_pack moves the
 * bits), through mgen_pack. */
static void prepare_u4b8(const gemm_env *env, rng *r, mgen_weights *w, double *d_w,
                         double *d_slack) {
  const int act = w->act, n = w->n, k = w->k, rows = ref_scale_rows(k, w->group);
  const size_t sbytes = sizeof(uint16_t) * (size_t)rows * n;
  uint8_t *codes = malloc((size_t)n * k);
  uint16_t *scales = malloc(sbytes);
  random_codes(r, codes, (size_t)n * k);
  for (size_t i = 0; i < (size_t)rows * n; i++)
    scales[i] = act_from_double(act, (rng_below(r, 2) ? -1.0 : 1.0) * rng_uniform(r, 0.002, 0.02));
  uint8_t *d_codes = upload(codes, (size_t)n * k);
  uint16_t *d_scales = upload(scales, sbytes);
  MGEN_CHECK(env->ctx, mgen_pack(env->ctx, d_codes, d_scales, w, env->stream));
  const ref_weights rw = {.wfmt = MGEN_WFMT_U4B8, .act = act, .scheme = w->scheme,
                          .group = w->group, .n = n, .k = k, .codes = d_codes,
                          .scales = d_scales};
  CUDA_CHECK((cudaError_t)gpu_dequant(&rw, d_w, d_slack, env->stream));
  gemm_sync(env, "mgen_pack and the u4b8 reference");
  CUDA_CHECK(cudaFree(d_codes));
  CUDA_CHECK(cudaFree(d_scales));
  free(codes);
  free(scales);
}

void gemm_bound_u4b8(int act, int k, gemm_bound *b) {
  const double u = act_unit_roundoff(act);
  b->rel = 2 * u;
  b->abs = 2 * u + k * 0x1p-22;
  b->tiny = 0.0;
  b->unit = u;
}

/* ---------------------------------------------------------------- fe2m1: GEMM weights */

static int group_of(int scheme) {
  return scheme == MGEN_SCHEME_NVFP4 ? FP4_NVFP4_GROUP : FP4_MXFP4_GROUP;
}
static const char *scheme_str(int s) { return s == MGEN_SCHEME_NVFP4 ? "nvfp4" : "mxfp4"; }

/* fp4_bound's coefficients (fe2m1_checks checks them against it). */
static void bound_fe2m1(int act, int k, gemm_bound *b) {
  b->rel = 2 * act_unit_roundoff(act);
  b->abs = k * 0x1p-22;
  b->tiny = act == MGEN_ACT_F16 ? 0x1p-24 : 0x1p-132;
  b->unit = act_unit_roundoff(act);
}

/* The exact weights and slack of checkpoint-form codes and scales (fp4.h). */
static void fe2m1_reference(const gemm_env *env, const mgen_weights *w, const uint8_t *codes,
                            const uint8_t *scales, float global, double *d_w, double *d_slack) {
  const int n = w->n, k = w->k, groups = k / group_of(w->scheme);
  uint8_t *d_codes = upload(codes, (size_t)n * k), *d_scales = upload(scales, (size_t)n * groups);
  const ref_weights rw = {.wfmt = MGEN_WFMT_FE2M1, .act = w->act, .scheme = w->scheme,
                          .group = w->group, .n = n, .k = k, .codes = d_codes,
                          .scales = d_scales, .global = global};
  CUDA_CHECK((cudaError_t)gpu_dequant(&rw, d_w, d_slack, env->stream));
  gemm_sync(env, "fe2m1 reference");
  CUDA_CHECK(cudaFree(d_codes));
  CUDA_CHECK(cudaFree(d_scales));
}

/* Random checkpoint data for the GEMMs: all 16 codes; NVFP4 finite E4M3 bytes of either sign
 * (the packer moves a negative scale's sign into its block's codes: layout.h; zero and
 * subnormals included; every 61st column only the E4M3 subnormals, bytes below
 * 0x08, s <= 7 * 2^-9: the smallest 16-bit weights the kernels make, FP16 subnormals among
 * them, e2m1 * s * 2^-7 below 2^-14) and a global scale in [2^-14, 2^-8]; MXFP4 per column an
 * e_max with u = e_max - e mostly 0..3, an eighth of the blocks 0..39 (past FP16's exactness
 * at 23 and its clamp at 28), and every 61st column u over 0..e_max (BF16: e_max 140, so
 * past BF16's exactness at 132 too). Column factors stay <= 1 for FP16 outputs. */
static void random_checkpoint(rng *r, int act, int scheme, int n, int k, uint8_t *codes,
                              uint8_t *scales, float *global) {
  const int groups = k / group_of(scheme);
  random_codes(r, codes, (size_t)n * k);
  *global = (float)ldexp(rng_uniform(r, 1.0, 2.0), -8 - (int)rng_below(r, 7));
  for (int j = 0; j < n; j++) {
    const int wide = j % 61 == 1;
    const unsigned e_max = wide ? (act == MGEN_ACT_BF16 ? 140 : 127) : 112 + rng_below(r, 16);
    for (int g = 0; g < groups; g++) {
      unsigned v;
      if (scheme == MGEN_SCHEME_NVFP4) {
        v = rng_below(r, wide ? 0x08 : 0x7f) | rng_below(r, 2) << 7;
      } else {
        unsigned u = wide ? rng_below(r, e_max + 1)
                   : rng_below(r, 8) == 0 ? rng_below(r, 40) : rng_below(r, 4);
        if (g == 0) u = 0;
        v = e_max - (u < e_max ? u : e_max);
      }
      scales[(size_t)j * groups + g] = (uint8_t)v;
    }
  }
}

/* A random checkpoint through mgen_pack_fp4. */
static void prepare_fe2m1_checkpoint(const gemm_env *env, rng *r, mgen_weights *w, double *d_w,
                                     double *d_slack) {
  const int n = w->n, k = w->k, groups = k / group_of(w->scheme);
  uint8_t *codes = malloc((size_t)n * k), *scales = malloc((size_t)n * groups);
  uint8_t *packed = malloc((size_t)n * k / 2);
  float global;
  random_checkpoint(r, w->act, w->scheme, n, k, codes, scales, &global);
  fp4_pack_bytes(codes, n, k, packed);
  uint8_t *d_packed = upload(packed, (size_t)n * k / 2);
  uint8_t *d_bs = upload(scales, (size_t)n * groups);
  MGEN_CHECK(env->ctx, mgen_pack_fp4(env->ctx, d_packed, (size_t)n * k / 2, d_bs,
                                     (size_t)n * groups, global, w, env->stream));
  gemm_sync(env, "mgen_pack_fp4");
  CUDA_CHECK(cudaFree(d_packed));
  CUDA_CHECK(cudaFree(d_bs));
  fe2m1_reference(env, w, codes, scales, global, d_w, d_slack);
  free(codes), free(scales), free(packed);
}

/* Random weights of the act (a sum of two uniforms, row scales 2^-4..2^1) through
 * mgen_quantize; the reference dequantizes fp4_quantize's codes and scales. */
static void prepare_fe2m1_quantize(const gemm_env *env, rng *r, mgen_weights *w, double *d_w,
                                   double *d_slack) {
  const int act = w->act, n = w->n, k = w->k, groups = k / group_of(w->scheme);
  uint8_t *codes = malloc((size_t)n * k), *scales = malloc((size_t)n * groups);
  uint16_t *wt = malloc(sizeof *wt * (size_t)n * k);
  float global;
  for (int j = 0; j < n; j++) {
    const double row_scale = ldexp(1.0, (int)rng_below(r, 6) - 4);
    for (int i = 0; i < k; i++)
      wt[(size_t)j * k + i] =
          act_from_double(act, (rng_uniform(r, -1, 1) + rng_uniform(r, -1, 1)) * row_scale);
  }
  fp4_quantize(act, w->scheme, wt, n, k, codes, scales, &global);
  void *d_wt = upload(wt, sizeof *wt * (size_t)n * k);
  MGEN_CHECK(env->ctx, mgen_quantize(env->ctx, d_wt, w, env->stream));
  gemm_sync(env, "mgen_quantize");
  CUDA_CHECK(cudaFree(d_wt));
  fe2m1_reference(env, w, codes, scales, global, d_w, d_slack);
  free(codes), free(scales), free(wt);
}

/* ---------------------------------------------------------------- fe2m1: its own checks */

static mgen_weights fe2m1_weights(const gemm_env *env, int act, int scheme, int n, int k) {
  mgen_weights w = {.wfmt = MGEN_WFMT_FE2M1, .act = (mgen_act)act, .scheme = (mgen_scheme)scheme,
                    .group = group_of(scheme), .n = n, .k = k};
  gemm_weights_alloc(env, &w);
  return w;
}

/* The packed buffers of w against fp4_pack's, bit for bit. */
static void compare_packed(const char *what, const mgen_weights *w, const uint32_t *q,
                           const uint8_t *sbuf) {
  const int n = w->n, k = w->k, scheme = w->scheme;
  const size_t qb = fp4_qbytes(n, k), sb = fp4_sbytes(scheme, n, k);
  uint32_t *gq = malloc(qb);
  uint8_t *gs = malloc(sb);
  CUDA_CHECK(cudaMemcpy(gq, w->d_q, qb, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(gs, w->d_scales, sb, cudaMemcpyDeviceToHost));
  long bad_q = 0, bad_s = 0, first_q = -1, first_s = -1;
  for (size_t i = 0; i < qb / 4; i++)
    if (gq[i] != q[i]) bad_q++, first_q = first_q < 0 ? (long)i : first_q;
  for (size_t i = 0; i < sb; i++)
    if (gs[i] != sbuf[i]) bad_s++, first_s = first_s < 0 ? (long)i : first_s;
  CHECK(bad_q == 0, "%s %s %s n=%d k=%d: %ld of %zu words differ, first %ld: 0x%08x vs 0x%08x",
        what, act_name(w->act), scheme_str(scheme), n, k, bad_q, qb / 4, first_q,
        bad_q ? gq[first_q] : 0, bad_q ? q[first_q] : 0);
  CHECK(bad_s == 0, "%s %s %s n=%d k=%d: %ld of %zu scale bytes differ, first %ld (factors from "
        "%zu): 0x%02x vs 0x%02x", what, act_name(w->act), scheme_str(scheme), n, k, bad_s, sb,
        first_s, sb - (size_t)n * 4, bad_s ? gs[first_s] : 0, bad_s ? sbuf[first_s] : 0);
  free(gq);
  free(gs);
}

/* Bad inputs (tests/runtime/fp4_bad_inputs.c) on a real context, and MXFP4's import ignoring
 * the global scale (NaN accepted). */
static void check_bad_inputs(const gemm_env *env) {
  void *buf = gpu_alloc(1 << 16);
  fp4_check_bad_inputs(env->ctx, buf);
  mgen_weights w = fe2m1_weights(env, MGEN_ACT_F16, MGEN_SCHEME_MXFP4, 128, 128);
  gpu_fill(buf, 0, 1 << 16);
  mgen_status st = mgen_pack_fp4(env->ctx, buf, 128 * 64, buf, 128 * 4, NAN, &w, env->stream);
  CHECK(st == MGEN_OK, "mxfp4 with a NaN global scale: %s", mgen_ctx_last_error(env->ctx));
  gemm_sync(env, "mgen_pack_fp4");
  gemm_weights_free(&w);
  CUDA_CHECK(cudaFree(buf));
}

/* A random value of the act with exponent field in [lo, hi] (biased) and a random sign. */
static uint16_t random_bits(rng *r, int act, int lo, int hi) {
  const int man = act == MGEN_ACT_F16 ? 10 : 7;
  const uint32_t e = (uint32_t)lo + rng_below(r, (uint32_t)(hi - lo + 1));
  return (uint16_t)(rng_below(r, 2) << 15 | e << man | rng_below(r, 1u << man));
}

/* Rows of eight kinds: zero; per-block magnitudes 2^-30..2^8; uniform in a row scale; every
 * other block zero; tie multiples of 2^j (with 6 * 2^j fixing the block's exponent, and 7 *
 * 2^j saturating); and with `extreme`, the type's largest and subnormal values, and random
 * finite bit patterns over all exponents. */
static void random_weights(rng *r, int act, int n, int k, int extreme, uint16_t *w) {
  static const double ties[] = {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0, 7.0};
  const int emax = act == MGEN_ACT_F16 ? 30 : 254, man = act == MGEN_ACT_F16 ? 10 : 7;
  for (int j = 0; j < n; j++) {
    int kind = j % 8;
    if (!extreme && (kind == 5 || kind == 7)) kind = 2;
    const double row_scale = ldexp(1.0, (int)rng_below(r, 14) - 10);
    double block_scale = 1.0;
    for (int i = 0; i < k; i++) {
      uint16_t *x = &w[(size_t)j * k + i];
      if (i % 32 == 0) block_scale = ldexp(1.0, (int)rng_below(r, 39) - 30);
      switch (kind) {
      case 0: *x = 0; break;
      case 1: *x = act_from_double(act, rng_uniform(r, -1, 1) * block_scale); break;
      case 2: *x = act_from_double(act, rng_uniform(r, -1, 1) * row_scale); break;
      case 3: *x = (i / 32) % 2 ? 0 : act_from_double(act, rng_uniform(r, -1, 1) * row_scale); break;
      case 4: {
        const double t = i % 32 == 0 ? 6.0 : ties[rng_below(r, 9)];
        *x = act_from_double(act, (rng_below(r, 2) ? -t : t) * ldexp(1.0, (int)(i / 32) % 5 - 2));
        break;
      }
      case 5:
        *x = (i / 16) % 2 ? (uint16_t)(rng_below(r, 2) << 15 | (1 + rng_below(r, (1u << man) - 1)))
                          : random_bits(r, act, emax, emax);
        break;
      default: *x = random_bits(r, act, 0, emax); break;
      }
    }
  }
}

/* mgen_quantize against fp4_quantize + fp4_pack, bit for bit. */
static void check_quantize(const gemm_env *env, rng *r, int act, int scheme, int n, int k,
                           int extreme) {
  uint16_t *w = malloc(sizeof *w * (size_t)n * k);
  uint8_t *codes = malloc((size_t)n * k), *scales = malloc((size_t)n * k / 16);
  uint32_t *q = malloc(fp4_qbytes(n, k));
  uint8_t *sbuf = malloc(fp4_sbytes(scheme, n, k));
  float global;
  random_weights(r, act, n, k, extreme, w);
  if (n == 128 && k == 128) { /* crafted: NVFP4's global scale is 1 and row 0's s is 1 */
    static const double ties[] = {0.25, 0.75, 2.5, 5.0, 6.0, 1.25, 3.5, -5.0, -0.25};
    w[5 * k] = act_from_double(act, 2688.0);
    for (int i = 0; i < 9; i++) w[i] = act_from_double(act, ties[i]);
  }
  fp4_quantize(act, scheme, w, n, k, codes, scales, &global);
  fp4_pack(act, scheme, codes, scales, global, n, k, q, sbuf);
  void *d_w = upload(w, sizeof *w * (size_t)n * k);
  mgen_weights gw = fe2m1_weights(env, act, scheme, n, k);
  MGEN_CHECK(env->ctx, mgen_quantize(env->ctx, d_w, &gw, env->stream));
  gemm_sync(env, "mgen_quantize");
  compare_packed(extreme ? "quantize (extremes)" : "quantize", &gw, q, sbuf);
  gemm_weights_free(&gw);
  CUDA_CHECK(cudaFree(d_w));
  free(w), free(codes), free(scales), free(q), free(sbuf);
}

/* A random block scale byte of `scheme` that is not NaN (mgen_pack_fp4 refuses those:
 * tests/gpu/test_import_gpu.c). */
static uint8_t random_scale_byte(rng *r, int scheme) {
  for (;;) {
    const unsigned b = rng_below(r, 256);
    if (!isnan(scheme == MGEN_SCHEME_NVFP4 ? fp4_e4m3_value(b) : fp4_e8m0_value(b)))
      return (uint8_t)b;
  }
}

/* mgen_pack_fp4 against fp4_pack, bit for bit, on random checkpoint bytes: every code and
 * every scale byte but the NaNs, E8M0 0 and 254 (the largest) in a column and throughout. */
static void check_import(const gemm_env *env, rng *r, int act, int scheme, int n, int k) {
  const int groups = k / group_of(scheme);
  uint8_t *codes = malloc((size_t)n * k), *packed = malloc((size_t)n * k / 2);
  uint8_t *scales = malloc((size_t)n * groups);
  uint32_t *q = malloc(fp4_qbytes(n, k));
  uint8_t *sbuf = malloc(fp4_sbytes(scheme, n, k));
  for (size_t i = 0; i < (size_t)n * k; i++) codes[i] = (uint8_t)rng_below(r, 16);
  for (size_t i = 0; i < (size_t)n * groups; i++) scales[i] = random_scale_byte(r, scheme);
  for (int g = 0; g < groups; g++) { /* columns 0..2: all 0, one 254, all 254 */
    scales[g] = 0;
    scales[groups + g] = g == 1 ? 254 : random_scale_byte(r, scheme);
    scales[2 * groups + g] = 254;
  }
  const float global = (float)ldexp(rng_uniform(r, 1.0, 2.0), (int)rng_below(r, 40) - 30);
  fp4_pack_bytes(codes, n, k, packed);
  fp4_pack(act, scheme, codes, scales, global, n, k, q, sbuf);
  uint8_t *d_packed = upload(packed, (size_t)n * k / 2);
  uint8_t *d_scales = upload(scales, (size_t)n * groups);
  mgen_weights w = fe2m1_weights(env, act, scheme, n, k);
  MGEN_CHECK(env->ctx, mgen_pack_fp4(env->ctx, d_packed, (size_t)n * k / 2, d_scales,
                                     (size_t)n * groups, global, &w, env->stream));
  gemm_sync(env, "mgen_pack_fp4");
  compare_packed("import", &w, q, sbuf);
  gemm_weights_free(&w);
  CUDA_CHECK(cudaFree(d_packed));
  CUDA_CHECK(cudaFree(d_scales));
  free(codes), free(packed), free(scales), free(q), free(sbuf);
}

/* Bad inputs; mgen_quantize for FP16 and BF16 weights, both schemes, five shapes (three with
 * --quick), one of them padded, ordinary and extreme values; mgen_pack_fp4 for both types and
 * schemes on three shapes (two with --quick), one padded; and bound_fe2m1 against fp4_bound. */
static void fe2m1_checks(const gemm_env *env, rng *r, int quick) {
  static const int acts[] = {MGEN_ACT_F16, MGEN_ACT_BF16};
  static const int schemes[] = {MGEN_SCHEME_NVFP4, MGEN_SCHEME_MXFP4};
  /* n x k; k = 1376 is padded to 1408 (layout.h's K padding) */
  static const int shapes[][2] = {{128, 128}, {128, 512}, {192, 1376}, {256, 1024}, {384, 2048}};
  check_bad_inputs(env);
  for (int ai = 0; ai < 2; ai++)
    for (int si = 0; si < 2; si++)
      for (int s = 0; s < (quick ? 3 : 5); s++)
        for (int extreme = 0; extreme < 2; extreme++)
          check_quantize(env, r, acts[ai], schemes[si], shapes[s][0], shapes[s][1], extreme);
  for (int ai = 0; ai < 2; ai++) /* (BF16's words: the permuted bits of layout.h) */
    for (int si = 0; si < 2; si++) {
      check_import(env, r, acts[ai], schemes[si], 128, 512);
      check_import(env, r, acts[ai], schemes[si], 192, 1376);
      if (!quick) check_import(env, r, acts[ai], schemes[si], 512, 2048);
    }
  for (int ai = 0; ai < 2; ai++) {
    gemm_bound b;
    bound_fe2m1(acts[ai], 11008, &b);
    const double ref = -3.25, abs = 17.5, werr = 0x1p-20;
    CHECK(b.rel * fabs(ref) + b.abs * abs + werr + b.tiny ==
              fp4_bound(acts[ai], 11008, ref, abs, werr),
          "bound_fe2m1 %s is not fp4_bound", act_name(acts[ai]));
  }
}

/* ---------------------------------------------------------------- the rows */

#define NV MGEN_SCHEME_NVFP4
#define MX MGEN_SCHEME_MXFP4
#define U4B8 MGEN_WFMT_U4B8
#define FE2M1 MGEN_WFMT_FE2M1
#define U4 MGEN_WFMT_U4
#define ASYM MGEN_SCHEME_ASYM

/* The rows of one act: u4b8 through mgen_pack on every group of the table; u4 on every group
 * through mgen_pack_weights and (small shapes: ref_u4_quantize on the CPU) mgen_quantize
 * (gemm_u4.c); fe2m1 per scheme
 * from a random checkpoint through mgen_pack_fp4 (every shape) and from random weights through
 * mgen_quantize (small shapes: fp4_quantize on the CPU is the slow part).
 *   act, wfmt, scheme, group, small_only, name, source, prepare, bound, checks */
#define ROWS_OF(act)                                                                          \
  {act, U4B8, MGEN_SCHEME_GROUP, GEMM_TABLE_GROUPS, 0, "u4b8", "mgen_pack", prepare_u4b8,      \
   gemm_bound_u4b8, NULL},                                                                    \
  {act, U4, ASYM, GEMM_TABLE_GROUPS, 0, "u4", "mgen_pack_weights", gemm_prepare_u4_pack,       \
   gemm_bound_u4b8, NULL},                                                                    \
  {act, U4, ASYM, GEMM_TABLE_GROUPS, 1, "u4", "mgen_quantize", gemm_prepare_u4_quantize,       \
   gemm_bound_u4b8, NULL},                                                                    \
  {act, FE2M1, NV, FP4_NVFP4_GROUP, 0, "fe2m1/nvfp4", "mgen_pack_fp4",                         \
   prepare_fe2m1_checkpoint, bound_fe2m1, fe2m1_checks},                                      \
  {act, FE2M1, NV, FP4_NVFP4_GROUP, 1, "fe2m1/nvfp4", "mgen_quantize", prepare_fe2m1_quantize, \
   bound_fe2m1, fe2m1_checks},                                                                \
  {act, FE2M1, MX, FP4_MXFP4_GROUP, 0, "fe2m1/mxfp4", "mgen_pack_fp4",                         \
   prepare_fe2m1_checkpoint, bound_fe2m1, fe2m1_checks},                                      \
  {act, FE2M1, MX, FP4_MXFP4_GROUP, 1, "fe2m1/mxfp4", "mgen_quantize", prepare_fe2m1_quantize, \
   bound_fe2m1, fe2m1_checks}

const gemm_format gemm_formats[] = {ROWS_OF(MGEN_ACT_F16), ROWS_OF(MGEN_ACT_BF16)};
const size_t gemm_format_count = sizeof gemm_formats / sizeof gemm_formats[0];
