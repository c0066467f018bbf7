// mgen_dequant_fe2m1_bf16.cuh -- FP4 E2M1 to BF16 by moving bits: no lookup table.
//
// As for FP16 (mgen_dequant_fe2m1_f16.cuh), but BF16 has 8 exponent bits: [E1 E0 M0] shifts
// right by 8 - 2 = 6 into exponent bits [8:7] and mantissa bit [6], and the BF16 reads as
// value * 2^-126 (bias 127 instead of 1; the subnormal 0.5 lands on the BF16 subnormal 2^-127).
// The 2^126 correction is folded into the group multiplier (mgen_scales.cuh). Same nibble
// order as the FP16 partial.
#pragma once
#include "mgen_dequant_consts.h"
#include "mgen_ptx.cuh"

namespace mgen {

struct DequantFe2m1Bf16 {
  __device__ __forceinline__ static void dequant(uint32_t q, uint32_t (&frag)[2][2]) {
    constexpr uint32_t kSign = MGEN_FE2M1_SIGN, kExpMant = MGEN_FE2M1_EXP_MANT;
    constexpr int kShift = MGEN_FE2M1_BF16_SHIFT;  // BF16 exponent bits - E2M1 exponent bits
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const uint32_t x = q << (4 * r);
      frag[r / 2][r % 2] = (x & kSign) | ((x & kExpMant) >> kShift);
    }
  }
};

}  // namespace mgen
