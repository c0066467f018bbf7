/* layer_ckpt.h -- bench_layer's random checkpoint of one weight, on the host (layer_ckpt.c):
 * the tensors mgen_pack_weights takes for a format, beside what each code and scale is worth,
 * from which layer_weights.c makes the 16-bit weights cuBLAS multiplies. Plain C without CUDA,
 * so that a CPU test (tests/tools/test_layer_ckpt.c) decodes the stored tensors independently
 * and holds them to the values.
 *
 * Scales are (1 + j/8) * 2^e, j in 0..7 (E8M0: j = 0), and NVFP4's global scale a power of
 * two, so that every weight (value(code) - zero) * scale * global is exact in FP16 and BF16:
 * the reference cuBLAS multiplies is exactly what libmgen's kernels multiply. Exponents are
 * chosen so that a weight's RMS is about 1/sqrt(k), which keeps a layer's activations near
 * unit scale.
 */
#ifndef MGEN_BENCH_LAYER_CKPT_H
#define MGEN_BENCH_LAYER_CKPT_H

#include <stddef.h>
#include <stdint.h>

/* 1 if layer_ckpt_make can make weights of this scale scheme (mgen_scheme; every scheme of
 * today's format table), else 0: a scheme added to the table later needs its row here. */
int layer_ckpt_scheme_known(int scheme);

typedef struct layer_ckpt {
  int n, k, groups;          /* groups per row: k / group, or 1 per channel */
  uint8_t *codes;            /* n x k, one code 0..15 per byte */
  uint8_t *packed;           /* fe2m1: n x k/2, two codes a byte, low nibble first; else NULL */
  float *scale;              /* [n][groups]: each scale's value */
  uint8_t *zero;             /* [n][groups]: u4's zero points, else NULL */
  uint8_t *ck_scales;        /* as mgen_pack_src.scales: 16-bit of the act [groups][n], or
                                E4M3 / E8M0 bytes [n][groups] */
  size_t ck_scales_bytes;
  uint8_t *ck_zeros;         /* as mgen_pack_src.zeros: [groups][n], u4 only, else NULL */
  float global;              /* NVFP4's global decode scale; 1 for the others */
  float values[16];          /* a code's worth before its zero point and scale */
} layer_ckpt;

/* Random n x k weights of scheme (mgen_scheme) with `group` (MGEN_GROUP_CHANNEL: per row) for
 * activations act (mgen_act), drawn from seed (the same seed, the same bytes). 0, or -1 with
 * the reason in why (an unknown scheme, a scale the storage cannot hold, no memory); on
 * failure nothing is left allocated. */
int layer_ckpt_make(layer_ckpt *c, int act, int scheme, int group, int n, int k, uint64_t seed,
                    char *why, size_t why_size);
void layer_ckpt_free(layer_ckpt *c);

#endif /* MGEN_BENCH_LAYER_CKPT_H */
