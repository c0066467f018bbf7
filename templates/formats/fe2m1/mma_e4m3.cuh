// formats/fe2m1/mma_e4m3.cuh -- fe2m1 W4A8 words (runtime/src/formats/layout.h, "W4A8 words")
// to the A fragment of wgmma.mma_async.m64nNk32 .e4m3 and of mma.sync.m16n8k32 .e4m3 (FP8
// activations, issue #52).
//
// The word of the step's first 16-deep tile gives registers 0 (slots A) and 1 (slots B), the
// second tile's registers 2 and 3 (as formats/u4b8/mma_e4m3.cuh). Slots A sit where E4M3
// wants them: x & 0x9c9c9c9c is [S 0 0 E1 E0 M0 0 0], the E2M1 value * 2^-6 (E2M1's
// subnormal 0.5 is E4M3's 2^-6 * 0.5 too). Slots B fill the bits left: S and E0 at bits 5 and
// 1 of a byte (rotated left by 2 onto 7 and 3), E1 at bit 0 of the next byte and M0 at bit 6
// (rotated right by 4 onto 4 and 2). Exact; the 2^6 and the block scale go on the FP32 sums
// (MGEN_E4M3_FE2M1_LOG2).
#pragma once
#include "formats/mgen_dequant_consts.h"

namespace mgen {

struct DequantFe2m1E4m3 {
  static constexpr int kLog2 = MGEN_E4M3_FE2M1_LOG2;  // a byte reads as the value * 2^kLog2

  __device__ __forceinline__ static uint32_t slots_b(uint32_t x) {
    return (__funnelshift_l(x, x, MGEN_E4M3_FE2M1_ROTL_B) & MGEN_E4M3_FE2M1_B_HIGH) |
           (__funnelshift_r(x, x, MGEN_E4M3_FE2M1_ROTR_B) & MGEN_E4M3_FE2M1_B_LOW);
  }
  __device__ __forceinline__ static void dequant(uint32_t w0, uint32_t w1, uint32_t (&frag)[4]) {
    frag[0] = w0 & MGEN_E4M3_FE2M1_CODES;
    frag[1] = slots_b(w0);
    frag[2] = w1 & MGEN_E4M3_FE2M1_CODES;
    frag[3] = slots_b(w1);
  }
};

}  // namespace mgen
