// formats/u4b8/mma_f16.cuh -- u4b8 (GPTQ int4 stored q+8) to FP16 by the magic-number method
// of marlin-bitwise-dequant.md section 2: no lookup table, no int-to-float instruction.
//
// The packer (runtime/src/formats/layout.h) puts a thread's 8 codes of one 16x16 tile in one int32 so
// that nibbles (b0,b4) / (b1,b5) / (b2,b6) / (b3,b7) are exactly the four half2 B-fragment
// registers of mma.m16n8k16 for column blocks n and n+8:
//   b0,b4 = rows (2q, 2q+1) of column c       -> frag[0][0]
//   b1,b5 = rows (2q+8, 2q+9) of column c     -> frag[0][1]
//   b2,b6 = rows (2q, 2q+1) of column c+8     -> frag[1][0]
//   b3,b7 = rows (2q+8, 2q+9) of column c+8   -> frag[1][1]
#pragma once
#include "formats/mgen_dequant_consts.h"
#include "mgen_ptx.cuh"

namespace mgen {

struct DequantU4b8F16 {
  using Scale2 = __half2;

  // frag[h][r]: B-fragment register r of the 8-column block h (0: columns c, 1: c+8).
  __device__ __forceinline__ static void dequant(uint32_t q, uint32_t (&frag)[2][2]) {
    constexpr uint32_t kLo = MGEN_U4B8_F16_LO, kHi = MGEN_U4B8_F16_HI;
    constexpr uint32_t kExp = MGEN_U4B8_F16_EXP;  // 1024.0 in both lanes
    constexpr uint32_t kSub = MGEN_U4B8_F16_SUB;  // 1032.0: removes 1024 and the +8 bias
    constexpr uint32_t kMul = MGEN_U4B8_F16_MUL;  // 1/16: the high nibble sits 4 bits up
    constexpr uint32_t kAdd = MGEN_U4B8_F16_ADD;  // -72.0 = -(1024/16 + 8)
    constexpr int kOr = MGEN_LOP3_AND_OR;         // (a & b) | c
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t lo = lop3<kOr>(q, kLo, kExp);
      const uint32_t hi = lop3<kOr>(q, kHi, kExp);
      frag[h][0] = as_u32(__hsub2(as_half2(lo), as_half2(kSub)));
      frag[h][1] = as_u32(__hfma2(as_half2(hi), as_half2(kMul), as_half2(kAdd)));
      q >>= 8;
    }
  }
};

}  // namespace mgen
