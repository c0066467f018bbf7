/* ref_u4.h -- the CPU reference for u4 weights (asymmetric int4: codes q 0..15, a zero point z
 * and a scale s per (group, column), value (q - z) * s): quantize (the rule of mgen_quantize,
 * written independently of the GPU code), pack / unpack through runtime/src/formats/layout.h
 * (the codes as u4b8's, ref.h; the zero rows after the scales, "Zero points"), and dequantize,
 * from the unpacked form and from the packed buffers as the kernels read them. Conventions as
 * ref.h's: row-major, weights and scales uint16_t patterns of type act, group 0 per channel;
 * zeros (k/group or 1) x n, one per byte, as the scales. */
#ifndef MGEN_TEST_REF_U4_H
#define MGEN_TEST_REF_U4_H

#include <stddef.h>
#include <stdint.h>

/* A group's scale and zero point from its least and largest weights lo <= hi (FP32):
 * s = act((hi - lo) / 15), 1 if that is 0, and z = clamp(rint(-lo / s), 0, 15). */
void ref_u4_scale_zero(int act, float lo, float hi, uint16_t *scale, uint8_t *zero);

/* w: n x k of type act -> codes n x k, scales and zeros (k/group or 1) x n:
 * q = clamp(rint(w / s) + z, 0, 15) in FP32 with the rounded s. */
void ref_u4_quantize(int act, const uint16_t *w, int n, int k, int group, uint8_t *codes,
                     uint16_t *scales, uint8_t *zeros);

/* The packed scale buffer's bytes (mgen_weights_bytes's sbytes for u4): the scales, padded to
 * 16 bytes, then the zero rows. */
size_t ref_u4_sbytes(int n, int k, int group);

/* codes, scales, zeros -> packed words (n * k_packed / 8) and the packed scale buffer
 * (ref_u4_sbytes). The K padding: code 8 and, in padded rows, scale 1.0 and zero 8. */
void ref_u4_pack(int act, const uint8_t *codes, const uint16_t *scales, const uint8_t *zeros,
                 int n, int k, int group, uint32_t *q, uint8_t *sbuf);
/* Inverse of ref_u4_pack on the weight's own codes, scales and zeros. */
void ref_u4_unpack(const uint32_t *q, const uint8_t *sbuf, int n, int k, int group,
                   uint8_t *codes, uint16_t *scales, uint8_t *zeros);

/* w_dq[n][k] = (codes[n][k] - zero) * scale, exact in double. */
void ref_u4_dequantize(int act, const uint8_t *codes, const uint16_t *scales,
                       const uint8_t *zeros, int n, int k, int group, double *w_dq);
/* The same from the packed buffers, k_packed columns (the padding included): each element's
 * code, scale and zero found where layout.h puts them (mgen__w4_position, the scales' packed
 * position, mgen__zero_place), the inverse direction of the packers' loops. */
void ref_u4_dequantize_packed(int act, const uint32_t *q, const uint8_t *sbuf, int n, int k,
                              int group, double *w_dq);

#endif /* MGEN_TEST_REF_U4_H */
