// mgen_swizzle.cuh -- Swizzle<bits, base, shift>: offset ^ ((offset & yyy_mask) >> shift),
// yyy_mask = ((1 << bits) - 1) << (base + shift), as in the swizzle design document (CuTe's
// Swizzle<B,M,S>). Kernels apply it to byte offsets, with base 4 so 16-byte vectors stay whole.
#pragma once

namespace mgen {

template <int kBits, int kBase, int kShift>
struct Swizzle {
  static_assert(kBits >= 0 && kBase >= 0 && kShift >= 0, "negative swizzle parameter");
  static constexpr int kYyyMask = ((1 << kBits) - 1) << (kBase + kShift);
  __device__ __forceinline__ static int apply(int offset) {
    return offset ^ ((offset & kYyyMask) >> kShift);
  }
};

}  // namespace mgen
