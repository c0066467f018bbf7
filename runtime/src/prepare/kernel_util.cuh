// kernel_util.cuh -- what the packing kernels' files share (prepare.cu, prepare_u4.cu,
// prepare_fe2m1.cu, import.cu, quantize_act.cu): their block size, the grid of their
// grid-stride loops, the 16-bit float conversions (round to nearest even), a warp's largest
// value and E4M3's encoding. Internal to each file that includes it.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace {

constexpr int kThreads = 256;
constexpr long long kMaxBlocks = 1 << 20;  // grid-stride loops cover the rest

// Blocks of kThreads for `items` one a thread, at least 1, at most kMaxBlocks.
inline int blocks_for(long long items) {
  long long b = (items + kThreads - 1) / kThreads;
  return (int)(b < 1 ? 1 : b > kMaxBlocks ? kMaxBlocks : b);
}

__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// The largest v of the warp's 32 lanes, in every lane.
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

constexpr float kE4m3Max = 448.0f;  // E4M3's largest value, code 0x7e

// E4M3 (bias 7, no infinities, kE4m3Max the largest) code of v >= 0: nearest, ties to even,
// saturating. Below 2^-6 the step is 2^-9 (subnormals; 8 steps is 0x08 = 2^-6); in binade e
// it is 2^(e-3), and q = 16 steps carries into the exponent field.
__device__ __forceinline__ uint32_t e4m3_encode(float v) {
  if (!(v < kE4m3Max)) return 0x7eu;
  if (v < 0x1p-6f) return (uint32_t)rintf(__fmul_rn(v, 0x1p9f));
  const int e = (int)((__float_as_uint(v) >> 23) & 0xffu) - 127;                        // -6..8
  const float q = rintf(__fmul_rn(v, __uint_as_float((uint32_t)(127 + 3 - e) << 23)));  // 8..16
  return ((uint32_t)(e + 7) << 3) + (uint32_t)q - 8u;
}

}  // namespace
