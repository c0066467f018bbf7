/* ckpt.h -- the CPU reference for int4 checkpoints as they are published, written from the
 * formats' descriptions and independent of the library: the tensors a test hands to
 * mgen_import_gptq / mgen_import_ct, built from codes n x k (one u4b8 code 0..15 per byte,
 * q + 8 for GPTQ's zero 8) and per-(group, column) values, and the conversion of scales to the
 * activation type. The expected import result is then ref_pack (ref.h) of the codes and the
 * converted scales.
 *
 *   GPTQ      qweight  int32 [k/8, n]: word (k/8, n) holds codes k..k+7 of column n, code k at
 *                      bits 4 (k % 8) (AutoGPTQ's pack: row i of qweight ORs rows 8i + j << 4j)
 *             qzeros   int32 [rows, n/8]: word (g, n/8) holds the stored zeros of columns
 *                      n..n+7, column n at bits 4 (n % 8)
 *             scales   [rows, n]
 *   compressed-tensors pack-quantized
 *             weight_packed int32 [n, k/8]: word (n, k/8) holds codes k..k+7, code k at bits
 *                      4 (k % 8) (pack_to_int32 along the last dimension, values q + 8)
 *             weight_scale  [n, rows]
 * rows = k / group, or 1 per channel (group 0). */
#ifndef MGEN_TEST_CKPT_H
#define MGEN_TEST_CKPT_H

#include <stddef.h>
#include <stdint.h>

/* codes n x k -> GPTQ qweight (k/8 * n words). */
void ckpt_gptq_qweight(const uint8_t *codes, int n, int k, uint32_t *qweight);
/* stored zeros rows x n (0..15) -> GPTQ qzeros (rows * n/8 words). */
void ckpt_gptq_qzeros(const uint8_t *zeros, int rows, int n, uint32_t *qzeros);
/* codes n x k -> compressed-tensors weight_packed (n * k/8 words). */
void ckpt_ct_packed(const uint8_t *codes, int n, int k, uint32_t *packed);

/* The code of (k, n) read back from each form (the published unpacking). */
unsigned ckpt_gptq_code(const uint32_t *qweight, int n, int kk, int nn);
unsigned ckpt_ct_code(const uint32_t *packed, int k, int kk, int nn);

/* Bytes of one element of an mgen_dtype scale (F16, BF16: 2; F32: 4). */
size_t ckpt_scale_bytes(int dtype);
/* Element i of a scale tensor of `dtype` as a float (exact). */
float ckpt_scale_value(const void *scales, int dtype, size_t i);
/* Stores x (a value of the dtype, exact) as element i. */
void ckpt_scale_store(void *scales, int dtype, size_t i, float x);

/* A scale tensor as stored (rows x n for GPTQ, n x rows for compressed-tensors when nk != 0)
 * -> rows x n scales of type act (round to nearest even), the form ref_pack takes. */
void ckpt_scales_to_act(const void *scales, int dtype, int nk, int rows, int n, int act,
                        uint16_t *out);

#endif /* MGEN_TEST_CKPT_H */
