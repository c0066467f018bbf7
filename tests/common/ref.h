/* ref.h -- the CPU reference for u4b8 weights: quantize (the rule of mgen_quantize, written
 * independently of the GPU code), pack/unpack through runtime/src/formats/layout.h, dequantize, and a
 * GEMM in double. Matrices are row-major; weights, scales and activations are uint16_t bit
 * patterns of type `act` (MGEN_ACT_F16 or MGEN_ACT_BF16, tests/common/act.h); `group` is the
 * group size or 0 (per channel: one scale row). */
#ifndef MGEN_TEST_REF_H
#define MGEN_TEST_REF_H

#include <stddef.h>
#include <stdint.h>

/* Rows of the scale matrix: k / group, or 1 per channel. */
int ref_scale_rows(int k, int group);
/* The packed layout's K for a weight of depth k (layout.h, "K padding"), and its scale rows:
 * k_packed / group, or 1 per channel. */
int ref_k_packed(int k);
int ref_packed_rows(int k, int group);

/* s = act(2 * max_abs / 15) computed in FP32 (as max_abs / 7.5f: the same correctly rounded
 * quotient, and no overflow for BF16 magnitudes near FLT_MAX); 1 if that rounds to zero. */
uint16_t ref_group_scale(int act, float max_abs);

/* w: n x k of type act -> codes n x k (0..15) and scales rows x n of type act (GPTQ layout):
 * q = clamp(rint(w / s) + 8, 0, 15) in FP32 with the rounded s. */
void ref_quantize(int act, const uint16_t *w, int n, int k, int group, uint8_t *codes,
                  uint16_t *scales);

/* codes n x k + scales rows x n of type act -> packed words (n * k_packed / 8) + packed scales
 * (ref_packed_rows x n). A k that is not a multiple of the layout's K padding is packed as the
 * weight with zero columns appended up to k_packed, quantized by this file's rule: code 8 and,
 * for whole padded groups, ref_group_scale(act, 0). */
void ref_pack(int act, const uint8_t *codes, const uint16_t *scales, int n, int k, int group,
              uint32_t *q, uint16_t *packed_scales);
/* Inverse of ref_pack on the weight's own codes and scales (the padding is not read back). */
void ref_unpack(const uint32_t *q, const uint16_t *packed_scales, int n, int k, int group,
                uint8_t *codes, uint16_t *scales);

/* Scale of element (row n, column k) of the weight. */
uint16_t ref_scale_of(const uint16_t *scales, int n_total, int group, int n, int k);
/* w_dq[n][k] = (codes[n][k] - 8) * scale, exact in double; scales of type act. */
void ref_dequantize(int act, const uint8_t *codes, const uint16_t *scales, int n, int k,
                    int group, double *w_dq);

/* c[i][j] = sum_k a[i][k] * w_dq[j][k] and c_abs[i][j] = sum_k |a[i][k] * w_dq[j][k]| in
 * double (c_abs may be NULL). a: m x k of type act, w_dq: n x k, c: m x n. */
void ref_gemm(int act, int m, int n, int k, const uint16_t *a, const double *w_dq, double *c,
              double *c_abs);

#endif /* MGEN_TEST_REF_H */
