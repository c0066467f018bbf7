// pack_words.cuh -- the loop every packer shares (prepare.cu, prepare_fe2m1.cu): one thread
// per packed int32 word, each of its eight nibbles filled with code_of(k, n) of the source
// element the layout (layout.h) names for it. Grid-stride, so any grid covers all words.
#pragma once
#include <stdint.h>

#include "formats/layout.h"

enum class PackOrder { kU4b8, kFe2m1 };  // nibble order: mgen__w4_source or ..._fe2m1

template <PackOrder kOrder, class CodeOf>
__device__ __forceinline__ void pack_words(int n, int k, uint32_t *__restrict__ q, CodeOf code_of) {
  const int words = (int)((long long)n * k / MGEN_W4_NIBBLES);
  for (int word = blockIdx.x * blockDim.x + threadIdx.x; word < words;
       word += gridDim.x * blockDim.x) {
    uint32_t out = 0;
#pragma unroll
    for (int b = 0; b < MGEN_W4_NIBBLES; b++) {
      int kk, nn;
      if constexpr (kOrder == PackOrder::kFe2m1) mgen__w4_source_fe2m1(n, word, b, &kk, &nn);
      else mgen__w4_source(n, word, b, &kk, &nn);
      out |= (code_of(kk, nn) & 0xfu) << (4 * b);
    }
    q[word] = out;
  }
}
