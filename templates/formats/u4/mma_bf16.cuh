// formats/u4/mma_bf16.cuh -- u4 (codes q 0..15, a zero point z per group and column,
// w = (q - z) * s) to BF16 by u4b8's magic-number method (u4b8/mma_bf16.cuh), the zero
// subtracted inside the same sequence.
//
// A 4-bit code ORed into the mantissa of 128.0 (0x4300, one unit in the last place = 1) reads
// as 128 + q; the zero, biased the same way, is 128 + z, and one subtraction of halves gives
// q - z exactly (in [-15, 15]: exact in BF16's 8 significant bits). So the 8 weights of a word
// cost u4b8's 11 instructions (3 shifts, 4 lop3, 4 subtractions): the only change is that
// the subtrahend is a register, lane h of the zero pair broadcast inside the subtraction
// (low_broadcast, no instruction), instead of the constant 136.0. Why not an FMA with -z*s:
// formats/u4/mma_f16.cuh (two roundings instead of one).
//
// The zeros: the layout of u4/mma_f16.cuh (a 32-bit word per thread and scale row, position
// 8c + 2j + h at nibble j + 4h); zero_pair() is one shift and one lop3 (z[0] = z[1] =
// 128 + z, lane h for column 16j + 8h + c), zeros() 7 instructions for a thread's 8 columns,
// once per scale row. The nibble-to-fragment order is u4b8's (runtime/src/formats/layout.h):
//   b0,b4 -> frag[0][0]   b1,b5 -> frag[0][1]   (column c,   zero lane 0)
//   b2,b6 -> frag[1][0]   b3,b7 -> frag[1][1]   (column c+8, zero lane 1)
// tests/runtime/test_dequant_u4.c emulates zeros() and dequant() bit for bit.
#pragma once
#include "formats/mgen_dequant_consts.h"
#include "mgen_ptx.cuh"

namespace mgen {

struct DequantU4Bf16 {
  // Pair j's zeros from a thread's zero word zw: 128 + z in lane h for column 16j + 8h + c
  // (z[1] repeats z[0]: the FP16 partial's shape, so the families call both alike).
  __device__ __forceinline__ static void zero_pair(uint32_t zw, int j, uint32_t (&z)[2]) {
    z[0] = z[1] = lop3<MGEN_LOP3_AND_OR>(zw >> (4 * j), MGEN_U4_BF16_LO, MGEN_U4_BF16_EXP);
  }
  __device__ __forceinline__ static void zeros(uint32_t zw, uint32_t (&z)[4][2]) {
#pragma unroll
    for (int j = 0; j < 4; ++j) zero_pair(zw, j, z[j]);
  }

  __device__ __forceinline__ static void dequant(uint32_t q, const uint32_t (&z)[2], uint32_t (&frag)[2][2]) {
    constexpr uint32_t kLo = MGEN_U4_BF16_LO, kExp = MGEN_U4_BF16_EXP;  // 128.0 in both lanes
    constexpr int kOr = MGEN_LOP3_AND_OR;                                // (a & b) | c
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const uint32_t x = lop3<kOr>(q >> (4 * r), kLo, kExp);  // 128 + q
      const __nv_bfloat162 zr = r < 2 ? low_broadcast<__nv_bfloat16>(z[0]) : high_broadcast<__nv_bfloat16>(z[0]);
      frag[r / 2][r % 2] = as_u32(__hsub2(as_bf162(x), zr));
    }
  }
};

}  // namespace mgen
