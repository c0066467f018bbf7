// mgen_dequant_fe2m1_f16.cuh -- FP4 E2M1 to FP16 by moving bits (marlin-bitwise-dequant.md
// section 1): no lookup table.
//
// A code [S E1 E0 M0] at bits [15:12] of a 16-bit lane becomes an FP16 with the sign in place
// and [E1 E0 M0] shifted right by 3 into exponent bits [11:10] and mantissa bit [9]: the FP16
// reads as value * 2^-14 (exponent bias 15 instead of 1; the subnormal 0.5 lands on the FP16
// subnormal 2^-15 = 0.5 * 2^-14 as well). The 2^14 is not multiplied here: it is folded into
// the group multiplier (mgen_scales.cuh), so dequantization costs 4 bit operations per pair.
//
// The packer (runtime/src/formats/layout.h, mgen__w4_source_fe2m1) stores the pair of fragment
// register r at nibbles (3 - r, 7 - r), so that after q << 4r it sits at bits [15:12] and
// [31:28]: r = 0, 1, 2, 3 -> frag[0][0], frag[0][1], frag[1][0], frag[1][1].
#pragma once
#include "mgen_dequant_consts.h"
#include "mgen_ptx.cuh"

namespace mgen {

struct DequantFe2m1F16 {
  __device__ __forceinline__ static void dequant(uint32_t q, uint32_t (&frag)[2][2]) {
    constexpr uint32_t kSign = MGEN_FE2M1_SIGN, kExpMant = MGEN_FE2M1_EXP_MANT;
    constexpr int kShift = MGEN_FE2M1_F16_SHIFT;  // FP16 exponent bits - E2M1 exponent bits
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const uint32_t x = q << (4 * r);
      frag[r / 2][r % 2] = (x & kSign) | ((x & kExpMant) >> kShift);
    }
  }
};

}  // namespace mgen
