// pack_words.cuh -- the loop every packer shares (prepare.cu, prepare_fe2m1.cu, import.cu): one
// thread per packed int32 word, each of its eight nibbles filled with code_of(k, n) of the
// source element the layout (layout.h) names for it, or, past the weight's k, with the format's
// zero code (layout.h, "K padding"): the padding is written here, once for every packer.
// Grid-stride, so any grid covers all words.
#pragma once
#include <stdint.h>

#include "formats/layout.h"
#include "mgen/mgen_kernel.h"

// Nibble order: mgen__w4_source or ..._fe2m1, then the fe2m1 word's bits permuted for the FP16
// or BF16 kernels (layout.h, mgen__fe2m1_word); or the W4A8 words of u4b8, fe2m1 (MXFP4) or u4
// (the e4m3 layout: mgen__e4m3_source, mgen__e4m3_word), whatever the activation type. (u4's
// mma-layout words are u4b8's: kU4b8 packs both.)
enum class PackOrder { kU4b8, kFe2m1F16, kFe2m1Bf16, kE4m3U4b8, kE4m3Fe2m1, kE4m3U4 };

// Packed int32 words of an n x k weight (K padding included).
MGEN_HD inline long long packed_words(int n, int k) { return (long long)n * mgen__k_packed(k) / MGEN_W4_NIBBLES; }

// The 16-bit scale of the padded u4b8 scale rows for activations `act` (mgen_act): 1.0.
MGEN_HD inline uint16_t u4b8_pad_scale(int act) {
  return act == MGEN_ACT_BF16 ? MGEN_U4B8_PAD_SCALE_BF16 : MGEN_U4B8_PAD_SCALE_F16;
}

template <PackOrder kOrder, class CodeOf>
__device__ __forceinline__ void pack_words(int n, int k, uint32_t *__restrict__ q, CodeOf code_of) {
  constexpr bool kFe2m1Codes = kOrder == PackOrder::kFe2m1F16 || kOrder == PackOrder::kFe2m1Bf16 ||
                               kOrder == PackOrder::kE4m3Fe2m1;
  constexpr bool kE4m3 =
      kOrder == PackOrder::kE4m3U4b8 || kOrder == PackOrder::kE4m3Fe2m1 || kOrder == PackOrder::kE4m3U4;
  constexpr int kE4m3Kind = kOrder == PackOrder::kE4m3Fe2m1 ? MGEN_E4M3_WORDS_FE2M1
                            : kOrder == PackOrder::kE4m3U4  ? MGEN_E4M3_WORDS_U4
                                                            : MGEN_E4M3_WORDS_U4B8;
  static_assert(MGEN_U4_PAD_CODE == MGEN_U4B8_PAD_CODE, "u4 pads as u4b8 (its zero rows pad with 8)");
  constexpr uint32_t kPad = kFe2m1Codes ? MGEN_FE2M1_PAD_CODE : MGEN_U4B8_PAD_CODE;
  // The index steps in 64 bits: words reach MGEN_MAX_PACKED_WORDS (INT_MAX), and an int
  // index past the last word plus the grid's stride would wrap negative.
  const long long words = packed_words(n, k);
  for (long long w = blockIdx.x * (long long)blockDim.x + threadIdx.x; w < words;
       w += (long long)gridDim.x * blockDim.x) {
    const int word = (int)w; // < words <= MGEN_MAX_PACKED_WORDS

    uint32_t out = 0;
    if constexpr (kE4m3) {
      uint8_t codes[MGEN_W4_NIBBLES];
#pragma unroll
      for (int b = 0; b < MGEN_W4_NIBBLES; b++) {
        int kk, nn;
        mgen__e4m3_source(n, word, b, &kk, &nn);
        codes[b] = (uint8_t)((kk < k ? code_of(kk, nn) : kPad) & 0xfu);
      }
      out = mgen__e4m3_word(kE4m3Kind, codes);
    } else {
#pragma unroll
      for (int b = 0; b < MGEN_W4_NIBBLES; b++) {
        int kk, nn;
        if constexpr (kOrder == PackOrder::kU4b8) mgen__w4_source(n, word, b, &kk, &nn);
        else mgen__w4_source_fe2m1(n, word, b, &kk, &nn);
        out |= ((kk < k ? code_of(kk, nn) : kPad) & 0xfu) << (4 * b);
      }
      if constexpr (kOrder != PackOrder::kU4b8) out = mgen__fe2m1_word(kOrder == PackOrder::kFe2m1Bf16, out);
    }
    q[word] = out;
  }
}
