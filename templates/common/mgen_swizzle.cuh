// mgen_swizzle.cuh -- Swizzle<bits, base, shift> as a compile-time type for the kernels; the
// formula is mgen_swizzle.h's (one statement for C, CUDA and the host tests). Kernels apply it
// to byte offsets, with base 4 so 16-byte vectors stay whole.
#pragma once
#include "mgen_swizzle.h"

namespace mgen {

template <int kBits, int kBase, int kShift>
struct Swizzle {
  static_assert(kBits >= 0 && kBase >= 0 && kShift >= 0, "negative swizzle parameter");
  __device__ __forceinline__ static int apply(int offset) {
    return mgen_swizzle(kBits, kBase, kShift, offset);
  }
};

}  // namespace mgen
