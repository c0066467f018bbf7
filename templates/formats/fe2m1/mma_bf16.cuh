// formats/fe2m1/mma_bf16.cuh -- FP4 E2M1 to BF16 by moving bits: no lookup table.
//
// BF16 has 8 exponent bits: a code [S E1 E0 M0] becomes the BF16 with the sign at bit 15 and
// [E1 E0 M0] at exponent bits [8:7] and mantissa bit [6], which reads as value * 2^-126 (bias
// 127 instead of 1; the subnormal 0.5 lands on the BF16 subnormal 2^-127). The 2^126
// correction is folded into the group multiplier (mgen_scales.cuh).
//
// The sign sits 7 bits above E1 there and 1 above it in a nibble, so from the nibble order
// (the FP16 partial's) each fragment register would take two shifts and two masks (15
// instructions for 8 weights). The BF16 words are packed with their bits permuted instead
// (runtime/src/formats/layout.h, mgen__fe2m1_bf16_bit): register 0's two codes sit on their
// BF16 bits, registers 1 and 2 get there by one rotation each, register 3 by two (its E1 apart):
// 9 instructions (bench/notes.md v34 item 6).
#pragma once
#include "formats/mgen_dequant_consts.h"
#include "mgen_ptx.cuh"

namespace mgen {

struct DequantFe2m1Bf16 {
  __device__ __forceinline__ static void dequant(uint32_t q, uint32_t (&frag)[2][2]) {
    constexpr uint32_t kLanes = MGEN_FE2M1_BF16_LANES, kE1 = MGEN_FE2M1_BF16_E1;
    frag[0][0] = q & kLanes;
    frag[0][1] = __funnelshift_l(q, q, MGEN_FE2M1_BF16_ROT1) & kLanes;
    frag[1][0] = __funnelshift_l(q, q, MGEN_FE2M1_BF16_ROT2) & kLanes;
    frag[1][1] = (__funnelshift_l(q, q, MGEN_FE2M1_BF16_ROT3) & (kLanes & ~kE1)) |
                 (__funnelshift_l(q, q, MGEN_FE2M1_BF16_ROT3_E1) & kE1);
  }
};
}  // namespace mgen
