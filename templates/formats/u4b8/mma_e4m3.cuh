// formats/u4b8/mma_e4m3.cuh -- u4b8 W4A8 words (runtime/src/formats/layout.h, "W4A8 words")
// to the A fragment of wgmma.mma_async.m64nNk32 .e4m3 (FP8 activations, issue #52), a warp's
// 16 rows of it, which is also mma.sync.m16n8k32's .e4m3 A fragment (the mma family's W4A8
// decode tiles, weights as A).
//
// A 32-deep step's fragment takes four registers of four E4M3 bytes: the word of the step's
// first 16-deep tile gives registers 0 (its slots A) and 1 (slots B), the second tile's word
// registers 2 and 3. A slot is [S M2 M1 M0] with q - 8 = S ? -(M + 1) : M at bits 7 and 2..0
// of its byte (slots B 4 bits up, S wrapping into the next byte), so a register is
//   (x & 0x87878787) + ((x & 0x80808080) >> 7)
// of the word (A) or the word rotated right by 4 (B): byte [S 0 0 0 M+S] is exactly the E4M3
// value (q - 8) * 2^-9 (M + S = 8, bit 3, is the least normal 2^-6). Exact, no lookup, no
// zero-point term: the 2^9 and the group scale go on the FP32 sums (MGEN_E4M3_U4B8_LOG2). The
// signs masked before the shift, so that ptxas makes the shift and the add one LEA.HI: 3
// instructions a register (with (x >> 7) & 0x01010101 it emitted 4).
#pragma once
#include "formats/mgen_dequant_consts.h"

namespace mgen {

struct DequantU4b8E4m3 {
  static constexpr int kLog2 = MGEN_E4M3_U4B8_LOG2;  // a byte reads as (q - 8) * 2^kLog2

  __device__ __forceinline__ static uint32_t bytes(uint32_t x) {
    return (x & MGEN_E4M3_U4B8_CODES) + ((x & MGEN_E4M3_SIGNS) >> MGEN_E4M3_U4B8_SIGN_SHIFT);
  }
  // frag: the A fragment of the 32-deep step whose two tiles' words are w0 and w1.
  __device__ __forceinline__ static void dequant(uint32_t w0, uint32_t w1, uint32_t (&frag)[4]) {
    frag[0] = bytes(w0);
    frag[1] = bytes(__funnelshift_r(w0, w0, MGEN_E4M3_U4B8_ROTR_B));
    frag[2] = bytes(w1);
    frag[3] = bytes(__funnelshift_r(w1, w1, MGEN_E4M3_U4B8_ROTR_B));
  }
};

}  // namespace mgen
