/* fp4_ref.h -- GPU reference and checks of the fe2m1 GEMM test (fp4_ref.cu): exact FP64
 * weights from checkpoint-form data, an FP64 GEMM, and the comparison under fp4_bound
 * (tests/common/fp4.h). All pointers are device pointers; each function enqueues on `stream`
 * and returns a cudaError_t value (0 = success). Activations and outputs are uint16_t bit
 * patterns of type act (MGEN_ACT_F16 or MGEN_ACT_BF16). */
#ifndef MGEN_TEST_FP4_REF_H
#define MGEN_TEST_FP4_REF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Result of fp4_gpu_check (zero it, first_bad = ~0, before the call). */
typedef struct fp4_check {
  unsigned long long max_ratio_bits; /* max |c - ref| / bound, as the bits of a double */
  unsigned long long bad;            /* elements over the bound (NaN and inf included) */
  unsigned long long nonfinite;      /* written elements that are NaN or inf */
  unsigned long long unwritten;      /* elements still holding the 0xFFFF poison */
  unsigned long long first_bad;      /* smallest index of a bad element, ~0 if none */
  unsigned long long guard_bad;      /* elements past m x n that changed (poison overwritten) */
} fp4_check;

/* w[n][k] = the exact weight (fp4_dequantize) from codes (n x k, one per byte) and block
 * scales (n x k/group, checkpoint order); slack[n][k] = fp4_weight_slack(act, scheme, u) times
 * the column factor (u = e_max(column) - e for MXFP4). One block per column. */
int fp4_gpu_dequant(int act, int scheme, const uint8_t *codes, const uint8_t *scales,
                    float global, int n, int k, double *w, double *slack, void *stream);

/* ref = A W^T, abs = |A| |W|^T, werr = |A| slack^T, all in FP64 (m x n, leading dimension n);
 * a is m x k of type act. */
int fp4_gpu_ref_gemm(int act, int m, int n, int k, const uint16_t *a, const double *w,
                     const double *slack, double *ref, double *abs_sum, double *werr,
                     void *stream);

/* Compares c (m x n at the start of a buffer of `capacity` elements poisoned with 0xFFFF, a
 * NaN in both types) with the reference under fp4_bound, and checks that the elements past
 * m x n still hold the poison. */
int fp4_gpu_check(int act, int m, int n, int k, const uint16_t *c, size_t capacity,
                  const double *ref, const double *abs_sum, const double *werr, fp4_check *out,
                  void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_TEST_FP4_REF_H */
