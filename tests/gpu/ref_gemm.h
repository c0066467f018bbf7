/* ref_gemm.h -- GPU reference and checking kernels for the GPU tests (ref_gemm.cu). All
 * pointers are device pointers; each function enqueues on `stream` and returns a cudaError_t
 * value (0 = success). FP16 values travel as uint16_t bit patterns. */
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

/* w[n][k] = (codes[n][k] - 8) * scale(n, k), exact in FP32; scales (k/group or 1) x n FP16. */
int gpu_dequant(const uint8_t *codes, const uint16_t *scales, int n, int k, int group, float *w,
                void *stream);

/* ref[i][j] = sum_k a[i][k] * w[j][k] and abs[i][j] = sum_k |a[i][k] * w[j][k]| in FP64;
 * a is m x k FP16, w is n x k, ref and abs m x n. */
int gpu_ref_gemm(int m, int n, int k, const uint16_t *a, const float *w, double *ref,
                 double *abs_sum, void *stream);

/* Compares c (m x n FP16 at the start of a buffer of `capacity` elements poisoned with
 * 0xFFFF before the GEMM) with ref / abs (leading dimension n) under the bound
 *   |c - ref| <= 2^-10 |ref| + (2^-10 + k 2^-22) abs
 * and checks that the elements past m x n still hold the poison. */
int gpu_check_gemm(int m, int n, int k, const uint16_t *c, size_t capacity, const double *ref,
                   const double *abs_sum, gemm_check *out, void *stream);

/* *count += number of positions where x and y differ bitwise. */
int gpu_count_diff(const uint16_t *x, const uint16_t *y, size_t count, unsigned long long *diff,
                   void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_TEST_REF_GEMM_H */
