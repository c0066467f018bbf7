/* ckpt_u4.h -- the CPU reference for asymmetric int4 checkpoints (the u4 format: codes q 0..15,
 * a zero point z 0..15 per (group, column), w = (q - z) * s), written from the formats'
 * published descriptions and independent of the library: a packer from unpacked tensors into
 * what a checkpoint stores, and an unpacker from those tensors to FP64 weights, for the three
 * layouts below. Unpacked, a weight n x k (nn.Linear: out x in) is
 *   codes  n x k   (one q per byte), zeros  rows x n (one z per byte),
 *   scales rows x n values of the scale dtype (floats, exact in it),
 * rows = k / group, or 1 per channel (group 0); group divides k, k % 8 == 0.
 *
 *   AutoAWQ, GEMM layout (version "gemm"):
 *     qweight int32 [k, n/8]    word (k, n/8) holds columns n/8*8 .. +7 of row k, nibble i
 *                               (bits 4i..4i+3) the column n/8*8 + CKPT_AWQ_ORDER[i]
 *                               ({0, 2, 4, 6, 1, 3, 5, 7}: AutoAWQ's order_map)
 *     qzeros  int32 [rows, n/8] the zeros z, packed the same way (stored as they are)
 *     scales  [rows, n]
 *   GPTQ, sym=false (AutoGPTQ / GPTQModel):
 *     qweight int32 [k/8, n]    code k at bits 4 (k % 8) of word (k/8, n) (ckpt.h)
 *     qzeros  int32 [rows, n/8] column n at bits 4 (n % 8) of word (g, n/8), stored
 *                               z - 1 (format "gptq", v1: AutoGPTQ subtracts one before
 *                               packing and its kernels add it back, (stored + 1) & 15) or z
 *                               (format "gptq_v2"). v1 cannot store z = 0 unambiguously: its
 *                               -1 is written as nibble 15 here (masked; read back as 0 by
 *                               the & 15), where AutoGPTQ's unmasked pack ORs 0xffffffff
 *                               shifted, setting every higher nibble of the word to 15 too,
 *                               and GPTQModel's v1 -> v2 conversion adds 0x11111111 to the
 *                               word, carrying out of a 15.
 *     scales  [rows, n]
 *   compressed-tensors pack-quantized, symmetric false (strategy group or channel):
 *     weight_packed     int32 [n, k/8]       code k at bits 4 (k % 8), stored q_signed + 8
 *     weight_scale      [n, rows]
 *     weight_zero_point int32 [ceil(n/8), rows]  packed along N (pack_to_int32 packed_dim=0):
 *                               column n at bits 4 (n % 8) of word (n/8, g), stored
 *                               zp_signed + 8, zero nibbles past n
 *   where the signed int8 q_signed, zp_signed are in -8..7 and w = (q_signed - zp_signed) * s:
 *   so q = q_signed + 8 and z = zp_signed + 8 are the stored values as they are. */
#ifndef MGEN_TEST_CKPT_U4_H
#define MGEN_TEST_CKPT_U4_H

#include <stdint.h>

/* AutoAWQ's order_map: nibble i of a word holds column offset CKPT_AWQ_ORDER[i]. */
extern const int ckpt_awq_order[8];

typedef enum ckpt_u4_layout {
  CKPT_U4_AWQ = 0,
  CKPT_U4_GPTQ_V1 = 1, /* qzeros stored z - 1 */
  CKPT_U4_GPTQ_V2 = 2, /* qzeros stored z */
  CKPT_U4_CT = 3
} ckpt_u4_layout;

/* The tensors of one layer, caller-allocated with ckpt_u4_words (int32 counts) and rows * n
 * scale elements of `dtype` (an mgen_dtype: F16, BF16, F32). */
typedef struct ckpt_u4 {
  int layout, n, k, group, dtype;
  uint32_t *weight; /* qweight / weight_packed */
  uint32_t *zeros;  /* qzeros / weight_zero_point */
  void *scales;     /* scales / weight_scale */
} ckpt_u4;

/* Words of the weight and zero tensors of a layout; 0 for a shape the layout cannot store
 * (n % 8 for AWQ and GPTQ, k % 8, group not dividing k). */
long ckpt_u4_weight_words(int layout, int n, int k);
long ckpt_u4_zero_words(int layout, int n, int k, int group);
int ckpt_u4_rows(int k, int group);

/* Unpacked -> checkpoint tensors (codes, zeros 0..15; scales exact in c->dtype). */
void ckpt_u4_pack(ckpt_u4 *c, const uint8_t *codes, const uint8_t *zeros, const float *scales);
/* Checkpoint tensors -> code and zero of (k, n) and the scale of (group of k, n), as the
 * format's own dequantization reads them. */
unsigned ckpt_u4_code(const ckpt_u4 *c, int kk, int nn);
unsigned ckpt_u4_zero(const ckpt_u4 *c, int g, int nn);
double ckpt_u4_scale(const ckpt_u4 *c, int g, int nn);
/* Checkpoint tensors -> W n x k in FP64, w = (q - z) * s (exact). */
void ckpt_u4_unpack(const ckpt_u4 *c, double *w);

#endif /* MGEN_TEST_CKPT_U4_H */
