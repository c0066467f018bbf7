// formats/u4/mma_e4m3.cuh -- u4 W4A8 words (codes q 0..15, a zero point z per group and column,
// w = (q - z) * s; runtime/src/formats/layout.h, "W4A8 words") to the A fragment of
// wgmma.mma_async.m64nNk32 .e4m3 and of mma.sync.m16n8k32 .e4m3 (FP8 activations, issue #52):
// the same registers as formats/u4b8/mma_e4m3.cuh (the word of the step's first 16-deep tile
// gives registers 0 (slots A: row c) and 1 (slots B: row c + 8), the second tile's 2 and 3).
//
// Why integer bytes, not a table or FP16. d = q - z is -15..15, and E4M3 holds |d| * 2^-9
// exactly as the byte [S 0 0 0 |d|] (subnormals, 8 * 2^-9 the least normal, as u4b8's), so a
// register is the four bytes' sign and magnitude of d. Per byte, a = q + (128 - z) = 128 + d
// never carries across bytes; |d| = |a - 128| is one byte-wise absolute difference
// (vabsdiff4, VABSDIFF4.U8 in SASS), and the sign is bit 7 of a inverted (+0 for d = 0):
// 4 instructions a register (mask or shift-mask, add, vabsdiff4, lop3), 9 a word against
// u4b8's 7.
// A 16-entry lookup per row takes two byte permutes, a selector mask and a merge per register
// plus a table per row and group, and the FP16 route (u4/mma_f16.cuh) then needs a conversion
// and a pack of every two lanes.
// The zeros: u4/mma_f16.cuh's words (pair j of a thread's zero word: nibble j for column
// 16 j + c, j + 4 for 16 j + 8 + c); zero_pair() turns them into BIAS - z * ONES for rows c and
// c + 8 (one multiply-add each), once per scale row. The 2^9 and the group scale go on the
// FP32 sums, as u4b8's (kLog2, kAccScales).
// tests/runtime/test_dequant_e4m3.c emulates zero_pair() and dequant() bit for bit.
#pragma once
#include "formats/mgen_dequant_consts.h"

namespace mgen {

struct DequantU4E4m3 {
  static constexpr int kLog2 = MGEN_E4M3_U4B8_LOG2;  // a byte reads as (q - z) * 2^kLog2

  // Pair j's zeros from a thread's zero word zw: z[0] for row (column of W) 16 j + c, z[1] for
  // 16 j + 8 + c, each 128 - z in every byte. Once per scale row.
  __device__ __forceinline__ static void zero_pair(uint32_t zw, int j, uint32_t (&z)[2]) {
    z[0] = MGEN_E4M3_U4_BIAS - ((zw >> (4 * j)) & 0xfu) * MGEN_E4M3_ONES;
    z[1] = MGEN_E4M3_U4_BIAS - ((zw >> (4 * j + 16)) & 0xfu) * MGEN_E4M3_ONES;
  }
  __device__ __forceinline__ static void zeros(uint32_t zw, uint32_t (&z)[4][2]) {
#pragma unroll
    for (int j = 0; j < 4; ++j) zero_pair(zw, j, z[j]);
  }

  // Four codes' bytes q (0..15) of a row with zero word zc -> their E4M3 bytes.
  __device__ __forceinline__ static uint32_t bytes(uint32_t q, uint32_t zc) {
    const uint32_t a = q + zc;                           // 128 + d
    const uint32_t mag = __vabsdiffu4(a, MGEN_E4M3_U4_BIAS);  // |d| = |a - 128|
    return mag | (~a & MGEN_E4M3_SIGNS);                  // bit 7: d < 0
  }
  // frag: the A fragment of the 32-deep step whose two tiles' words are w0 and w1; z: the
  // zero words of rows c and c + 8.
  __device__ __forceinline__ static void dequant(uint32_t w0, uint32_t w1, const uint32_t (&z)[2],
                                                 uint32_t (&frag)[4]) {
    frag[0] = bytes(w0 & MGEN_E4M3_U4_CODES, z[0]);
    frag[1] = bytes((w0 & MGEN_E4M3_U4_B_CODES) >> MGEN_E4M3_U4_B_SHIFT, z[1]);
    frag[2] = bytes(w1 & MGEN_E4M3_U4_CODES, z[0]);
    frag[3] = bytes((w1 & MGEN_E4M3_U4_B_CODES) >> MGEN_E4M3_U4_B_SHIFT, z[1]);
  }
};

}  // namespace mgen
