/* fp4.h -- the CPU reference for fe2m1 (FP4 E2M1) weights: exact E2M1 / E4M3 / E8M0 values,
 * encoders (nearest, ties to even, saturating) written as searches over the value tables, the
 * quantization rules of mgen_quantize (NVFP4, MXFP4) with the same FP32 steps as
 * runtime/src/prepare_fe2m1.cu but independent code, the checkpoint forms, the repack into the
 * kernel layout through runtime/src/formats/layout.h, and exact dequantization.
 *
 * Checkpoint form (what mgen_pack_fp4 takes, as ModelOpt NVFP4 and OCP MXFP4 store it): codes
 * n x k, one per byte here (fp4_pack_bytes makes the two-per-byte form); block scales n x
 * (k / group), row = output column, in K order; NVFP4's FP32 global decode scale.
 * Weights and activations are uint16_t bit patterns of type act (tests/common/act.h). */
#ifndef MGEN_TEST_FP4_H
#define MGEN_TEST_FP4_H

#include <stddef.h>
#include <stdint.h>

#define FP4_NVFP4_GROUP 16
#define FP4_MXFP4_GROUP 32

/* Exact values. E2M1 code [S E1 E0 M0] (bias 1): 0, 0.5, 1, 1.5, 2, 3, 4, 6 and negatives.
 * E4M3 [S E3..E0 M2..M0] (bias 7, subnormals, 448 max; 0x7f and 0xff are NaN). E8M0: 2^(e-127),
 * 0xff is NaN. */
double fp4_e2m1_value(unsigned code);
double fp4_e4m3_value(unsigned byte);
double fp4_e8m0_value(unsigned byte);

/* Nearest E2M1 code of x: w's sign bit (signbit(x), so -0.1 gives 0x8, "-0"), the magnitude
 * nearest |x| among the eight, ties to the even code, |x| >= 6 saturating to 6. x not NaN. */
unsigned fp4_e2m1_encode(double x);
/* Nearest non-negative E4M3 code of v >= 0, ties to the even code, v >= 448 saturating to
 * 0x7e (448). */
unsigned fp4_e4m3_encode(double v);
/* The OCP shared exponent byte of a block with largest magnitude bmax >= 0:
 * clamp(floor(log2 bmax) - 2, -127, 127) + 127, and 0 for bmax = 0. */
unsigned fp4_e8m0_shared(float bmax);

/* NVFP4's global decode scale for a tensor amax: amax / 2688 in FP32, 1 for amax = 0. */
float fp4_nvfp4_global(float amax);

/* mgen_quantize's rules (prepare_fe2m1.cu's header states them) for n x k weights of type act:
 * codes n x k (one per byte), scales n x (k / group) in checkpoint order, *global (NVFP4; 1 for
 * MXFP4). scheme: MGEN_SCHEME_NVFP4 or MGEN_SCHEME_MXFP4. */
void fp4_quantize(int act, int scheme, const uint16_t *w, int n, int k, uint8_t *codes,
                  uint8_t *scales, float *global);

/* codes n x k (one per byte, low nibble) -> n x k/2 bytes, low nibble = even k. */
void fp4_pack_bytes(const uint8_t *codes, int n, int k, uint8_t *packed);

/* Bytes of the kernel-layout buffers (what mgen_weights_bytes returns for fe2m1; K padding
 * included). */
size_t fp4_qbytes(int n, int k);
size_t fp4_sbytes(int scheme, int n, int k);

/* Checkpoint form -> kernel layout for activations `act` (mgen_act: the words' bits permuted
 * for it, layout.h mgen__fe2m1_word): q (fp4_qbytes) and the scale buffer sbuf (fp4_sbytes):
 * permuted block-scale rows (NVFP4: the E4M3 bytes without their sign, which moves into the
 * block's codes: layout.h, mgen__nvfp4_stored_code; MXFP4: u = e_max(column) - e), then n FP32
 * column factors (NVFP4: global * 2^7; MXFP4: 2^(e_max - 127), NaN for e_max = 0xff). A k that
 * is not a multiple of the layout's K padding (runtime/src/formats/layout.h) is packed as the
 * checkpoint of the weight with zero columns appended up to k_packed, as fp4_quantize makes
 * them: code e2m1(0), block scale e4m3(0) or the shared exponent of a zero block. */
void fp4_pack(int act, int scheme, const uint8_t *codes, const uint8_t *scales, float global, int n,
              int k, uint32_t *q, uint8_t *sbuf);

/* Exact dequantized weights, n x k: e2m1 * e4m3 * global (NVFP4), e2m1 * 2^(e - 127) (MXFP4). */
void fp4_dequantize(int scheme, const uint8_t *codes, const uint8_t *scales, float global, int n,
                    int k, double *w);

/* ---------------------------------------------------------------- the GEMM tests' error bound
 * (tests/gpu/gemm_formats.c justifies each term; ref_gemm.cu's check kernel computes it).
 *
 * The kernels' 16-bit weight is w / cf with cf the column factor (NVFP4: e2m1 * s * 2^-7;
 * MXFP4: e2m1 * 2^-u). fp4_weight_slack bounds |w16 - w / cf|: 0 where w16 is exact (NVFP4
 * always; MXFP4 FP16 down to u = 23, BF16 down to u = 132), else half the subnormal spacing
 * (2^-25, 2^-134), which also covers the multiplier's clamp to 0 (FP16 past u = 28: |w / cf| <=
 * 6 * 2^-29; BF16 past 252). */
double fp4_weight_slack(int act, int scheme, unsigned u);
/* |c - ref| <= 2 u_act |ref| + K 2^-22 abs + werr + tiny, u_act = 2^-11 (FP16) or 2^-8
 * (BF16), abs = sum |a w|, werr = sum |a| cf slack, tiny = 2^-24 (FP16) or 2^-132 (BF16). */
double fp4_bound(int act, int k, double ref, double abs, double werr);

#endif /* MGEN_TEST_FP4_H */
