/* ref_gemm.h -- GPU reference and checking kernels of the GEMM test (ref_gemm.cu), for every
 * weight format: exact FP64 weights from codes and unpacked scales, an FP64 GEMM, and the
 * comparison under a bound whose coefficients the format gives (tests/gpu/gemm_formats.c).
 * All pointers are device pointers; each function enqueues on `stream` and returns a
 * cudaError_t value (0 = success). Activations, outputs and u4b8 scales travel as uint16_t
 * bit patterns of type act (MGEN_ACT_F16 or MGEN_ACT_BF16). */
#ifndef MGEN_TEST_REF_GEMM_H
#define MGEN_TEST_REF_GEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result of gpu_check_gemm (zero it, first_bad = ~0, before the call). */
typedef struct gemm_check {
  unsigned long long max_ratio_bits; /* max |c - ref| / bound, as the bits of a double */
  unsigned long long bad;            /* elements over the bound (NaN and inf included) */
  unsigned long long nonfinite;      /* written elements that are NaN or inf */
  unsigned long long unwritten;      /* elements still holding the 0xFFFF poison */
  unsigned long long first_bad;      /* smallest index of a bad element, ~0 if none */
  unsigned long long guard_bad;      /* elements past m x n that changed (poison overwritten) */
  double err_sq;   /* sum over the m x n elements of (c - ref)^2 (finite c only) */
  double scale_sq; /* sum of rms_scale^2 (gemm_bound): err_sq / scale_sq is the RMS ratio */
  double scale_q;  /* sum of rms_scale^4: scale_sq^2 / scale_q is how many outputs the ratio
                    * weighs (gemm_rms_outputs) */
} gemm_check;

/* The RMS ratio's effective number of outputs: each output weighs in by its rms_scale^2, so
 * where a few outputs are orders of magnitude larger than the rest (MXFP4's block scales over
 * several binades, one row), they alone set the ratio and it is as noisy as a few samples:
 * (sum w)^2 / sum w^2 with w = rms_scale^2 (Kish's effective sample size); m x n when all
 * scales are equal. 0 where every scale is 0. */
static inline double gemm_rms_outputs(const gemm_check *r) {
  return r->scale_q > 0.0 ? r->scale_sq * r->scale_sq / r->scale_q : 0.0;
}

/* The error bound of one output: |c - ref| <= rel |ref| + abs abs_sum + werr + tiny, with
 * abs_sum = sum_k |a_k w_k| and werr = sum_k |a_k| slack_k (gpu_ref_gemm); a worst case, so
 * it must allow every rounding to err the same way.
 * The RMS scale of one output's error: rms_scale = unit sqrt(ref^2 + sq_sum) + werr + tiny,
 * with sq_sum = sum_k (a_k w_k)^2: a kernel that rounds each weight's scaling (relative
 * error <= unit) and its output (<= unit) to the act's type, and accumulates in FP32, has
 * E[(c - ref)^2] <= (0.43 rms_scale)^2 (the roundings are independent and unbiased), so over
 * many outputs sqrt(err_sq / scale_sq) is about 0.43 at most (gemm_check). One that rounds its
 * running sums to 16 bits after each k16 MMA adds to it with the length of its chains
 * (tests/gpu/gemm_formats.c has the derivation and the limit). */
typedef struct gemm_bound {
  double rel, abs, tiny;
  double unit; /* the act's unit roundoff, for rms_scale */
} gemm_bound;

/* Weights in the unpacked form the reference reads (device pointers):
 *   u4b8:  codes n x k (one per byte, 0..15), scales (k/group or 1) x n of type act (GPTQ
 *          layout), weight = (code - 8) * scale; slack 0.
 *   fe2m1: codes n x k (one per byte, E2M1), scales n x (k/group) bytes in checkpoint order
 *          (E4M3 for NVFP4, E8M0 for MXFP4), global the NVFP4 decode scale; weight =
 *          e2m1 * e4m3 * global or e2m1 * 2^(e - 127); slack = fp4_weight_slack(act, scheme,
 *          e_max(column) - e) times the column factor (tests/common/fp4.h).
 *   u4:    codes n x k (one per byte, 0..15), scales as u4b8's, zeros (k/group or 1) x n (one
 *          per byte, 0..15), weight = (code - zero) * scale; slack 0. */
typedef struct ref_weights {
  int wfmt, act, scheme, group, n, k; /* mgen_wfmt, mgen_act, mgen_scheme */
  const uint8_t *codes;
  const void *scales;
  float global;
  const uint8_t *zeros; /* u4's; NULL for the others */
} ref_weights;

/* w[n][k] = the exact weights of rw and slack[n][k] = how far the kernels' own 16-bit weight
 * may be from them (0 where exact). cudaErrorInvalidValue for a format without a reference. */
int gpu_dequant(const ref_weights *rw, double *w, double *slack, void *stream);

/* The reference outputs of one problem: m x n each, leading dimension n (device pointers). */
typedef struct gemm_ref {
  double *ref;     /* A W^T */
  double *abs_sum; /* |A| |W|^T */
  double *werr;    /* |A| slack^T */
  double *sq_sum;  /* (A o A) (W o W)^T: sum_k (a_k w_k)^2 */
} gemm_ref;

/* out = the reference of a (m x k of type act) and w, slack (n x k), in FP64. */
int gpu_ref_gemm(int act, int m, int n, int k, const uint16_t *a, const double *w,
                 const double *slack, const gemm_ref *out, void *stream);

/* Compares c (m x n of type act at the start of a buffer of `capacity` elements poisoned with
 * 0xFFFF, a NaN in both types, before the GEMM) with the reference under *bound (the worst
 * case per element, and the sums of the RMS ratio), and checks that the elements past m x n
 * still hold the poison. bias: NULL, or the bias of type act the GEMM added
 * (mgen_weights.d_bias): output (i, j) is then compared with ref + bias[i * bias_ld + j] in
 * bound and RMS scale alike (bias_ld 0: one row for every output row, the dense GEMM's; n: a
 * row each, a moe check's rows gathered with their experts' biases). The kernels add it in
 * FP32 before their one rounding, so the bound's 2u |ref| room covers that add's 2^-24. */
int gpu_check_gemm(int act, int m, int n, const gemm_bound *bound, const uint16_t *c,
                   size_t capacity, const gemm_ref *ref, const uint16_t *bias, size_t bias_ld,
                   gemm_check *out, void *stream);

/* *count += number of positions where x and y differ bitwise. */
int gpu_count_diff(const uint16_t *x, const uint16_t *y, size_t count, unsigned long long *diff,
                   void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_TEST_REF_GEMM_H */
