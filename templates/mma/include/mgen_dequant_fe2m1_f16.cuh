// mgen_dequant_fe2m1_f16.cuh -- FP4 E2M1 to FP16 by moving bits (marlin-bitwise-dequant.md
// section 1): no lookup table.
//
// A code [S E1 E0 M0] at bits [15:12] of a 16-bit lane becomes an FP16 with the sign in place
// and [E1 E0 M0] shifted right by 3 into exponent bits [11:10] and mantissa bit [9]: the FP16
// reads as value * 2^-14 (exponent bias 15 instead of 1; the subnormal 0.5 lands on the FP16
// subnormal 2^-15 = 0.5 * 2^-14 as well). The 2^14 is not multiplied here: it is folded into
// the group multiplier (mgen_scales.cuh).
//
// The packer (runtime/src/formats/layout.h, mgen__w4_source_fe2m1) stores the pair of fragment
// register r at nibbles (3 - r, 7 - r): r = 0, 1, 2, 3 -> frag[0][0], frag[0][1], frag[1][0],
// frag[1][1].
//
// A code's FP16 is its high byte [S 0 0 0 E1 E0 M0 0] over a zero low byte, so the eight codes
// are converted a byte at a time, in two words: `odd` holds the codes of the odd nibbles (r = 0:
// nibbles 3, 7 in bytes 1, 3; r = 2: nibbles 1, 5 in bytes 0, 2), each already at the top of its
// byte, with E1 E0 M0 moved down by 3; `even` the even nibbles' codes (r = 1, 3), first moved
// up by 4. Then r = 0 and 1 are their word's bytes 1 and 3 as they stand (one AND), r = 2 and 3
// their bytes 0 and 2 moved up a byte (one byte permute): 11 instructions for the 8 weights,
// where the same bit moves one register at a time take 15.
#pragma once
#include "mgen_dequant_consts.h"
#include "mgen_ptx.cuh"

namespace mgen {

struct DequantFe2m1F16 {
  __device__ __forceinline__ static void dequant(uint32_t q, uint32_t (&frag)[2][2]) {
    constexpr uint32_t kSign = MGEN_FE2M1_F16_SIGN_BYTES, kExpMant = MGEN_FE2M1_F16_EXP_MANT_BYTES;
    constexpr uint32_t kHigh = MGEN_FE2M1_F16_HIGH_BYTES, kLowToHigh = MGEN_FE2M1_F16_LOW_TO_HIGH;
    constexpr int kShift = MGEN_FE2M1_F16_SHIFT;  // FP16 exponent bits - E2M1 exponent bits
    const uint32_t odd = (q & kSign) | ((q >> kShift) & kExpMant);
    const uint32_t even = ((q << 4) & kSign) | ((q << (4 - kShift)) & kExpMant);
    frag[0][0] = odd & kHigh;
    frag[0][1] = even & kHigh;
    frag[1][0] = __byte_perm(odd, 0u, kLowToHigh);
    frag[1][1] = __byte_perm(even, 0u, kLowToHigh);
  }
};

}  // namespace mgen
