// kernel_util.cuh -- what the packing kernels' files share (prepare.cu, prepare_u4.cu,
// prepare_fe2m1.cu, import.cu): their block size, the grid of their grid-stride loops, and the
// 16-bit float conversions (round to nearest even). Internal to each file that includes it.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

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

}  // namespace
