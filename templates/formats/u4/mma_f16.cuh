// formats/u4/mma_f16.cuh -- u4 (codes q 0..15, a zero point z per group and column,
// w = (q - z) * s: AWQ, GPTQ sym=false, compressed-tensors asymmetric) to FP16 by u4b8's
// magic-number method (u4b8/mma_f16.cuh, marlin-bitwise-dequant.md section 2), the zero
// subtracted inside the same sequence.
//
// Why the zero goes in the bias, not an FMA. The code becomes 1024 + q (low nibble) or
// 1024 + 16q (high nibble, in place) by one lop3, and u4b8 removes the magic number and its
// bias 8 with a constant: one HADD2 (low) or HFMA2 x 1/16 (high). Here the constant is a
// register holding the zero with the same magic number: (1024 + q) - (1024 + z) and
// (1024 + 16q) / 16 - (64 + z) are q - z exactly (small integers, one rounding of an exact
// value), so the 8 weights of a word cost u4b8's 9 instructions (4 lop3, 1 shift, 2 HADD2,
// 2 HFMA2) and q - z is exact before the scale: grouped scales then round once
// (__hmul2, as u4b8), per channel the FP32 path is exact to the epilogue. Folding -z*s into an
// FMA (q * s - z*s) would also cost nothing per element, but it rounds z*s and then the sum,
// twice where (q - z) * s rounds once, and needs the product z*s per group in 16 bits.
//
// The zeros. Per scale row (group, or the one row per channel), the zero points are 4 bits
// each, n/2 bytes, in the scales' packed column order (layout.h, mgen__scale_source_col):
// thread c (lane/4) of a warp reads the scales of packed positions 8c..8c+7 of a 64-column
// chunk and the 32-bit zero word c of that chunk, in which position 8c + 2j + h (column
// 16j + 8h + c) sits at nibble j + 4h (MGEN_U4_ZERO_NIBBLE): the u4b8 code trick on
// (word >> 4j) then yields pair j's biased zeros, column h in lane h. One load and 11
// instructions (3 shifts, 4 lop3, 4 HADD2) per scale row prepare a thread's 8 columns
// (zeros()); the wgmma family, reading the pair j = its lane's tile, takes 3 (zero_pair()).
// dequant() broadcasts lane h of the pair inside its HADD2 / HFMA2 (low_broadcast: the .H0_H0
// / .H1_H1 operand, no instruction), as scale_frag_pair does for the scales.
//
// Fragment order, as u4b8's (runtime/src/formats/layout.h):
//   b0,b4 = rows (2q, 2q+1) of column c       -> frag[0][0]   zero of column c   (lane 0)
//   b1,b5 = rows (2q+8, 2q+9) of column c     -> frag[0][1]
//   b2,b6 = rows (2q, 2q+1) of column c+8     -> frag[1][0]   zero of column c+8 (lane 1)
//   b3,b7 = rows (2q+8, 2q+9) of column c+8   -> frag[1][1]
// tests/runtime/test_dequant_u4.c emulates zeros() and dequant() bit for bit.
#pragma once
#include "formats/mgen_dequant_consts.h"
#include "mgen_ptx.cuh"

namespace mgen {

struct DequantU4F16 {
  using Scale2 = __half2;

  // Pair j's zeros from a thread's zero word zw: z[0] = 1024 + z, z[1] = -(64 + z), lane h
  // for column 16j + 8h + c. Once per scale row.
  __device__ __forceinline__ static void zero_pair(uint32_t zw, int j, uint32_t (&z)[2]) {
    constexpr int kOr = MGEN_LOP3_AND_OR;  // (a & b) | c
    z[0] = lop3<kOr>(zw >> (4 * j), MGEN_U4_F16_LO, MGEN_U4_F16_EXP);
    z[1] = as_u32(__hsub2(as_half2(MGEN_U4_F16_ZHI), as_half2(z[0])));  // 960 - (1024 + z)
  }
  __device__ __forceinline__ static void zeros(uint32_t zw, uint32_t (&z)[4][2]) {
#pragma unroll
    for (int j = 0; j < 4; ++j) zero_pair(zw, j, z[j]);
  }

  // frag[h][r]: B-fragment register r of the 8-column block h (0: columns c, 1: c+8), q - z.
  __device__ __forceinline__ static void dequant(uint32_t q, const uint32_t (&z)[2], uint32_t (&frag)[2][2]) {
    constexpr uint32_t kLo = MGEN_U4_F16_LO, kHi = MGEN_U4_F16_HI, kExp = MGEN_U4_F16_EXP;
    constexpr uint32_t kMul = MGEN_U4_F16_MUL;  // 1/16: the high nibble sits 4 bits up
    constexpr int kOr = MGEN_LOP3_AND_OR;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t lo = lop3<kOr>(q, kLo, kExp);  // 1024 + q
      const uint32_t hi = lop3<kOr>(q, kHi, kExp);  // 1024 + 16 q
      const __half2 zlo = h == 0 ? low_broadcast<__half>(z[0]) : high_broadcast<__half>(z[0]);
      const __half2 zhi = h == 0 ? low_broadcast<__half>(z[1]) : high_broadcast<__half>(z[1]);
      frag[h][0] = as_u32(__hsub2(as_half2(lo), zlo));
      frag[h][1] = as_u32(__hfma2(as_half2(hi), as_half2(kMul), zhi));
      q >>= 8;
    }
  }
};

}  // namespace mgen
