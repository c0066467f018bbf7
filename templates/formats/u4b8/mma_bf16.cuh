// formats/u4b8/mma_bf16.cuh -- u4b8 (GPTQ int4 stored q+8) to BF16 by the magic-number method:
// no lookup table, no int-to-float instruction.
//
// BF16 has 8 exponent and 7 mantissa bits, so a 4-bit code c ORed into the mantissa of 128.0
// (0x4300: exponent 7 + 127, mantissa 0, one unit in the last place = 1) reads as exactly
// 128 + c; one subtraction of 136.0 (0x4308 = 128 + 8) gives c - 8. Unlike FP16, the high
// nibble of a byte cannot be used in place (code << 4 reaches bit 7, the exponent's lowest
// bit), so each nibble pair is shifted down first: 3 shifts, 4 lop3 and 4 subtractions per
// 8 codes. The nibble-to-fragment order is the FP16 partial's (runtime/src/formats/layout.h):
//   b0,b4 -> frag[0][0]   b1,b5 -> frag[0][1]   b2,b6 -> frag[1][0]   b3,b7 -> frag[1][1]
#pragma once
#include "formats/mgen_dequant_consts.h"
#include "mgen_ptx.cuh"

namespace mgen {

struct DequantU4b8Bf16 {
  __device__ __forceinline__ static void dequant(uint32_t q, uint32_t (&frag)[2][2]) {
    constexpr uint32_t kLo = MGEN_U4B8_BF16_LO;
    constexpr uint32_t kExp = MGEN_U4B8_BF16_EXP;  // 128.0 in both lanes
    constexpr uint32_t kSub = MGEN_U4B8_BF16_SUB;  // 136.0: removes 128 and the +8 bias
    constexpr int kOr = MGEN_LOP3_AND_OR;          // (a & b) | c
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const uint32_t x = lop3<kOr>(q >> (4 * r), kLo, kExp);
      frag[r / 2][r % 2] = as_u32(__hsub2(as_bf162(x), as_bf162(kSub)));
    }
  }
};

}  // namespace mgen
