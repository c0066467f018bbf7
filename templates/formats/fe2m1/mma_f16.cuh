// formats/fe2m1/mma_f16.cuh -- FP4 E2M1 to FP16 by moving bits (marlin-bitwise-dequant.md
// section 1): no lookup table.
//
// A code [S E1 E0 M0] becomes the FP16 with the sign at bit 15 and [E1 E0 M0] at exponent
// bits [11:10] and mantissa bit [9] of its lane, the rest zero: the FP16
// reads as value * 2^-14 (exponent bias 15 instead of 1; the subnormal 0.5 lands on the FP16
// subnormal 2^-15 = 0.5 * 2^-14 as well). The 2^14 is not multiplied here: it is folded into
// the group multiplier (mgen_scales.cuh).
//
// The packer (runtime/src/formats/layout.h, mgen__fe2m1_f16_bit) puts every code on the bits of
// one byte: the codes of fragment registers 0 and 1 ("A") already as their FP16 high byte
// [S 0 0 0 E1 E0 M0 0], those of registers 2 and 3 ("B") on the byte's other bits, sign at 0
// and E1 E0 M0 at 6..4; a register's lane l in byte 2 l + 1 (registers 0, 2) or 2 l (1, 3).
// So register 0 is one AND, register 1 an AND and a byte permute (bytes 0, 2 up to 1, 3), and
// the B codes are moved in place for all four bytes at once (two shifts, two masks) before an
// AND and a byte permute: 9 instructions for the 8 weights (bench/notes.md v35 item 1),
// where the nibble order took 11.
#pragma once
#include "formats/mgen_dequant_consts.h"
#include "mgen_ptx.cuh"

namespace mgen {

struct DequantFe2m1F16 {
  __device__ __forceinline__ static void dequant(uint32_t q, uint32_t (&frag)[2][2]) {
    constexpr uint32_t kSign = MGEN_FE2M1_F16_SIGN_BYTES, kExpMant = MGEN_FE2M1_F16_EXP_MANT_BYTES;
    constexpr uint32_t kHigh = MGEN_FE2M1_F16_HIGH_BYTES, kLowToHigh = MGEN_FE2M1_F16_LOW_TO_HIGH;
    constexpr int kShift = MGEN_FE2M1_F16_SHIFT;  // FP16 exponent bits - E2M1 exponent bits
    const uint32_t b = ((q >> kShift) & kExpMant) | ((q << MGEN_FE2M1_F16_B_SIGN_SHIFT) & kSign);
    frag[0][0] = q & MGEN_FE2M1_F16_A_HIGH;
    frag[0][1] = __byte_perm(q & MGEN_FE2M1_F16_A_LOW, 0u, kLowToHigh);
    frag[1][0] = b & kHigh;
    frag[1][1] = __byte_perm(b, 0u, kLowToHigh);
  }
};
}  // namespace mgen
