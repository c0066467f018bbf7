// formats/fe2m1/mma_e4m3.cuh -- MXFP4 W4A8 words (runtime/src/formats/layout.h, "W4A8 words")
// to the A fragment of wgmma.mma_async.m64nNk32 .e4m3 and of mma.sync.m16n8k32 .e4m3 (FP8
// activations, issue #52), the block scale folded into the weights.
//
// The word of the step's first 16-deep tile gives registers 0 (slots A: row c) and 1 (slots B:
// row c + 8), the second tile's registers 2 and 3 (as formats/u4b8/mma_e4m3.cuh). A 32-deep
// step is one MXFP4 block of each row, so a row's eight E4M3 magnitudes at its block's offset u
// form one table of two registers (MGEN_E4M3_MXFP4_*: two multiply-adds), shared by the
// step's two words. A slot's magnitude bits are its byte-permute selector into the table
// (slots A the word's low half, B its high half, bit 3 of each nibble masked off: PRMT would
// read it as sign replication), and its sign goes onto bit 7: 7 instructions per word, as
// u4b8's. Exact (layout.h); the 2^-6 and the column factor 2^(e_max - 127) go on the FP32
// sums (kLog2, ScalesE8M0's column factors).
#pragma once
#include "formats/mgen_dequant_consts.h"

namespace mgen {

struct DequantFe2m1E4m3 {
  static constexpr int kLog2 = MGEN_E4M3_MXFP4_LOG2;  // a byte reads as e2m1 * 2^-u * 2^kLog2
  static constexpr bool kFoldsScales = true;         // dequant() takes the step's scale pair

  struct Table {
    uint32_t lo, hi;  // E4M3 bytes of magnitudes 0..3 and 4..7
  };
  __device__ __forceinline__ static Table table(uint32_t u) {
    return {MGEN_E4M3_MXFP4_LO - u * MGEN_E4M3_MXFP4_LO_STEP, MGEN_E4M3_MXFP4_HI - u * MGEN_E4M3_MXFP4_HI_STEP};
  }
  __device__ __forceinline__ static uint32_t lookup(const Table& t, uint32_t selectors) {
    uint32_t r;
    asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(r) : "r"(t.lo), "r"(t.hi), "r"(selectors));
    return r;
  }
  // pair: the stored offsets u of the step's rows c (bits 0..7) and c + 8 (8..15), as
  // scale_pair_load reads a byte scheme's pair.
  __device__ __forceinline__ static void dequant(uint32_t w0, uint32_t w1, uint32_t pair, uint32_t (&frag)[4]) {
    const Table ta = table(pair & 0xffu), tb = table((pair >> 8) & 0xffu);
    const uint32_t s0 = w0 & MGEN_E4M3_FE2M1_SELECTORS, s1 = w1 & MGEN_E4M3_FE2M1_SELECTORS;
    frag[0] = lookup(ta, s0) | (w0 & MGEN_E4M3_SIGNS);
    frag[1] = lookup(tb, s0 >> MGEN_E4M3_FE2M1_B_SELECTORS) | ((w0 << MGEN_E4M3_FE2M1_B_SIGNS) & MGEN_E4M3_SIGNS);
    frag[2] = lookup(ta, s1) | (w1 & MGEN_E4M3_SIGNS);
    frag[3] = lookup(tb, s1 >> MGEN_E4M3_FE2M1_B_SELECTORS) | ((w1 << MGEN_E4M3_FE2M1_B_SIGNS) & MGEN_E4M3_SIGNS);
  }
};

}  // namespace mgen
