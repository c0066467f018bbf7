/* mgen_dequant_consts.h -- the bit patterns of the mma fragment's dequantization partials
 * (formats/<wfmt>/mma_<act>.cuh) and of the W4A8 words' (E4M3, below), in plain C so that the
 * kernels and the host tests that emulate them (tests/runtime/test_dequant.c, test_fp4.c,
 * test_dequant_e4m3.c) read the same definitions. Both
 * 16-bit lanes of a 32-bit register hold the same pattern. Why each value works: the partials'
 * comments and marlin-bitwise-dequant.md (section 2: u4b8 FP16; section 1: the FP4 bit trick).
 */
#ifndef MGEN_DEQUANT_CONSTS_H
#define MGEN_DEQUANT_CONSTS_H

/* lop3.b32's lookup table for (a & b) | c. */
#define MGEN_LOP3_AND_OR ((0xf0 & 0xcc) | 0xaa)

/* u4b8 -> FP16, magic number 1024 (u4b8/mma_f16.cuh). */
#define MGEN_U4B8_F16_LO 0x000f000fu  /* low nibble of each lane */
#define MGEN_U4B8_F16_HI 0x00f000f0u  /* high nibble of each lane, in place */
#define MGEN_U4B8_F16_EXP 0x64006400u /* 1024.0: the code lands in the mantissa */
#define MGEN_U4B8_F16_SUB 0x64086408u /* 1032.0: removes 1024 and the +8 bias */
#define MGEN_U4B8_F16_MUL 0x2c002c00u /* 1/16: the high nibble sits 4 bits up */
#define MGEN_U4B8_F16_ADD 0xd480d480u /* -72.0 = -(1024/16 + 8) */

/* u4b8 -> BF16, magic number 128 (u4b8/mma_bf16.cuh; nibbles shifted down, since
 * BF16's 7 mantissa bits cannot hold a high nibble in place). */
#define MGEN_U4B8_BF16_LO 0x000f000fu
#define MGEN_U4B8_BF16_EXP 0x43004300u /* 128.0, a mantissa unit of 1 */
#define MGEN_U4B8_BF16_SUB 0x43084308u /* 136.0: removes 128 and the +8 bias */

/* u4 (codes 0..15, a zero point z per group and column, w = (q - z) * s) -> FP16 / BF16
 * (u4/mma_*.cuh). Code and zero are biased by the same magic number, so one subtraction of
 * halves gives q - z exactly; the zeros come from the thread's zero word, position p = 2j + h
 * of its 8 columns at nibble MGEN_U4_ZERO_NIBBLE(p) = j + 4h, so that the code trick on
 * (word >> 4j) yields the biased zeros of pair j, column h in lane h. */
#define MGEN_U4_ZERO_NIBBLE(p) (((p) >> 1) + 4 * ((p) & 1))
#define MGEN_U4_F16_LO 0x000f000fu   /* low nibble of each lane */
#define MGEN_U4_F16_HI 0x00f000f0u   /* high nibble of each lane, in place */
#define MGEN_U4_F16_EXP 0x64006400u  /* 1024.0: code or zero lands in the mantissa */
#define MGEN_U4_F16_MUL 0x2c002c00u  /* 1/16: the high nibble sits 4 bits up */
#define MGEN_U4_F16_ZHI 0x63806380u  /* 960.0 = 1024 - 1024/16: 960 - (1024 + z) = -(64 + z) */
#define MGEN_U4_BF16_LO 0x000f000fu
#define MGEN_U4_BF16_EXP 0x43004300u /* 128.0, a mantissa unit of 1 */

/* fe2m1 (FP4 E2M1) -> FP16 / BF16 by bit moves (fe2m1/mma_*.cuh). */
#define MGEN_FE2M1_F16_SHIFT (5 - 2)    /* FP16 exponent bits - E2M1 exponent bits */
/* BF16 from the permuted words (layout.h, mgen__fe2m1_bf16_bit): a rotation left brings
 * fragment register r's two codes onto their BF16 bits, the sign at 15 and [E1 E0 M0] at
 * [8:6] of each lane; register 3 in two parts. */
#define MGEN_FE2M1_BF16_LANES 0x81c081c0u   /* sign, E1, E0, M0 of both lanes */
#define MGEN_FE2M1_BF16_ROT1 4              /* register 1 (register 0: in place) */
#define MGEN_FE2M1_BF16_ROT2 10             /* register 2 */
#define MGEN_FE2M1_BF16_ROT3 6              /* register 3: its sign, E0 and M0 */
#define MGEN_FE2M1_BF16_ROT3_E1 14          /* register 3: its E1 */
#define MGEN_FE2M1_BF16_E1 0x01000100u      /* E1 of both lanes */
/* FP16 from the permuted words (layout.h, mgen__fe2m1_f16_bit): every code's FP16 high byte
 * [S 0 0 0 E1 E0 M0 0] on the bits of a byte ("A" codes in place, "B" codes moved). */
#define MGEN_FE2M1_F16_SIGN_BYTES 0x80808080u     /* a code's sign at bit 7 of its byte */
#define MGEN_FE2M1_F16_EXP_MANT_BYTES 0x0e0e0e0eu /* its E1 E0 M0 at bits 3..1 */
#define MGEN_FE2M1_F16_A_HIGH 0x8e008e00u         /* the A codes of bytes 1 and 3: register 0 */
#define MGEN_FE2M1_F16_A_LOW 0x008e008eu          /* the A codes of bytes 0 and 2: register 1 */
#define MGEN_FE2M1_F16_B_SIGN_SHIFT 7             /* a B code's sign: bit 0 -> 7 */
#define MGEN_FE2M1_F16_HIGH_BYTES 0xff00ff00u     /* bytes 1 and 3: the lanes' high bytes */
#define MGEN_FE2M1_F16_LOW_TO_HIGH 0x2404u        /* __byte_perm: bytes 0, 2 -> 1, 3, zeros below */

/* u4b8 and fe2m1 -> FP8 E4M3 for W4A8 (runtime/src/formats/layout.h, "W4A8 words": the bits
 * of a word's eight codes and why these give them). A register of four E4M3 bytes from a word
 * x (code slots A) or x rotated (slots B). */
#define MGEN_E4M3_U4B8_CODES 0x87878787u   /* sign at 7, magnitude at 2..0 of each byte */
#define MGEN_E4M3_U4B8_SIGN_SHIFT 7        /* (x & SIGNS) >> 7: 1 in a byte of a negative code */
#define MGEN_E4M3_ONES 0x01010101u
#define MGEN_E4M3_SIGNS 0x80808080u        /* an E4M3 byte's sign, bit 7 of each byte */
#define MGEN_E4M3_U4B8_ROTR_B 4            /* slots B onto slots A's bits */
#define MGEN_E4M3_U4B8_LOG2 (-9)           /* a byte reads as (q - 8) * 2^-9 */
/* fe2m1 (MXFP4) -> E4M3 with the block scale folded in: a slot's magnitude [E1 E0 M0] is a
 * byte-permute selector into the eight E4M3 magnitudes of its block (the table of its u),
 * its sign goes onto bit 7 of the byte. */
#define MGEN_E4M3_FE2M1_SELECTORS 0x77777777u /* the magnitudes: slots A's nibbles low, B's high */
#define MGEN_E4M3_FE2M1_B_SELECTORS 16        /* slots B's selectors: the masked word >> 16 */
#define MGEN_E4M3_FE2M1_B_SIGNS 4             /* slots B's signs: the word << 4 (slots A's in place) */
/* The table of a block at E8M0 offset u (0..MGEN_MXFP4_E4M3_U_MAX, layout.h): E4M3 bytes of the magnitudes 0, 0.5, 1,
 * 1.5 (low word) and 2, 3, 4, 6 (high word) times 2^(6 - u), as LO - u * LO_STEP and HI - u *
 * HI_STEP (one multiply-add each: a byte's exponent field drops by u, no byte borrows). */
#define MGEN_E4M3_MXFP4_LO 0x6c686000u
#define MGEN_E4M3_MXFP4_HI 0x7c787470u
#define MGEN_E4M3_MXFP4_LO_STEP 0x08080800u
#define MGEN_E4M3_MXFP4_HI_STEP 0x08080808u
#define MGEN_E4M3_MXFP4_LOG2 6 /* a byte reads as the E2M1 value * 2^-u * 2^6 */
/* u4 (codes q, zero points z) -> E4M3: per byte a = q + (128 - z) = 128 + d (d = q - z in
 * -15..15: no byte carries), |d| = |a - 128| (a byte-wise absolute difference with BIAS), and
 * bit 7 the sign of d, set where a's is clear. |d| <= 15 in bits 3..0 is E4M3 |d| * 2^-9
 * (MGEN_E4M3_U4B8_LOG2's scale). */
#define MGEN_E4M3_U4_CODES 0x0f0f0f0fu    /* slots A: q in bits 3..0 of each byte */
#define MGEN_E4M3_U4_B_CODES 0xf0f0f0f0u  /* slots B: q in bits 7..4, moved down 4 */
#define MGEN_E4M3_U4_B_SHIFT 4
#define MGEN_E4M3_U4_BIAS 0x80808080u     /* 128 in each byte: a row's zero word is BIAS - z * ONES */

#endif /* MGEN_DEQUANT_CONSTS_H */
