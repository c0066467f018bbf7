/* ref_gemm.h -- GPU reference and checking kernels for the GPU tests (ref_gemm.cu). All
 * pointers are device pointers; each function enqueues on `stream` and returns a cudaError_t
 * value (0 = success). Activation values (A, C, u4b8 scales) travel as uint16_t bit patterns
 * of type `act` (MGEN_ACT_F16 or MGEN_ACT_BF16). */
#ifndef MGEN_TEST_REF_GEMM_H
#define MGEN_TEST_REF_GEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result of gpu_check_gemm (zero it before the call). */
typedef struct gemm_check {
  unsigned long long max_ratio_bits; /* max |c - ref| / bound, as the bits of a double */
  unsigned long long bad;            /* elements over the bound (NaN and inf included) */
  unsigned long long unwritten;      /* elements still holding the 0xFFFF poison */
  unsigned long long first_bad;      /* smallest index of a bad element, ~0 if none */
  unsigned long long guard_bad;      /* elements past m x n that changed (poison overwritten) */
} gemm_check;

/* 1 if gpu_dequant has a reference for weight format `wfmt` (mgen_wfmt) with activation type
 * `act`, else 0 (the tests skip such kernels and say so). */
int gpu_ref_knows(int wfmt, int act);

/* w[n][k] = the exact FP32 value of weight (n, k) from codes (n x k bytes, one code each) and
 * unpacked scales in GPTQ layout. u4b8: (code - 8) * scale, scales (k/group or 1) x n of type
 * act. Returns cudaErrorInvalidValue for a (wfmt, act) gpu_ref_knows does not know. */
int gpu_dequant(int wfmt, int act, const uint8_t *codes, const void *scales, int n, int k,
                int group, float *w, void *stream);

/* ref[i][j] = sum_k a[i][k] * w[j][k] and abs[i][j] = sum_k |a[i][k] * w[j][k]| in FP64;
 * a is m x k of type act, w is n x k, ref and abs m x n. */
int gpu_ref_gemm(int act, int m, int n, int k, const uint16_t *a, const float *w, double *ref,
                 double *abs_sum, void *stream);

/* The error bound of the kernels (tests/gpu/test_gemm_gpu.c explains it), with u the unit
 * roundoff of act (2^-11 FP16, 2^-8 BF16):
 *   |c - ref| <= 2u |ref| + (2u + k 2^-22) abs.  Writes the two coefficients. */
void gpu_gemm_bound(int act, int k, double *rel, double *abs_coef);

/* Compares c (m x n of type act at the start of a buffer of `capacity` elements poisoned with
 * 0xFFFF, a NaN in both types, before the GEMM) with ref / abs (leading dimension n) under
 * gpu_gemm_bound, and checks that the elements past m x n still hold the poison. */
int gpu_check_gemm(int act, int m, int n, int k, const uint16_t *c, size_t capacity,
                   const double *ref, const double *abs_sum, gemm_check *out, void *stream);

/* *count += number of positions where x and y differ bitwise. */
int gpu_count_diff(const uint16_t *x, const uint16_t *y, size_t count, unsigned long long *diff,
                   void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_TEST_REF_GEMM_H */
