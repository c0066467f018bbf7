// quantize_act.cu -- FP16/BF16 activations to E4M3 with one FP32 scale per row
// (quantize_act.h; the rule is mgen.h's, mgen_quantize_act): a block per row reads the row
// twice, 8 elements (16 bytes) a thread at a time: its largest magnitude, reduced over the
// block, gives the scale; then each element divided by it, encoded (kernel_util.cuh's
// e4m3_encode, the NVFP4 block scales' encoding) and stored 8 bytes at a time. The second
// pass reads what the first left in the caches: the row is at most a few tens of KB.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mgen/mgen.h"
#include "prepare/kernel_util.cuh"
#include "prepare/quantize_act.h"

namespace {

// The largest of every thread's v over the block (kThreads threads); all threads get it.
__device__ float block_max(float v) {
  __shared__ float warps[kThreads / 32];
  v = warp_max(v);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = v;
  __syncthreads();
  v = warps[0];
  for (int w = 1; w < kThreads / 32; ++w) v = fmaxf(v, warps[w]);
  return v;
}

template <class T>
__global__ void __launch_bounds__(kThreads) quantize_act_kernel(int k, const T* x, uint8_t* q, float* scales) {
  const size_t row = blockIdx.x;
  const int4* xr = reinterpret_cast<const int4*>(x + row * (size_t)k);
  uint2* qr = reinterpret_cast<uint2*>(q + row * (size_t)k);
  const int vecs = k / 8;
  float amax = 0.0f;
  for (int v = threadIdx.x; v < vecs; v += kThreads) {
    alignas(16) T e[8];
    *reinterpret_cast<int4*>(e) = xr[v];
#pragma unroll
    for (int j = 0; j < 8; ++j) amax = fmaxf(amax, fabsf(to_float(e[j])));
  }
  amax = block_max(amax);
  const float s = amax > 0.0f ? __fdiv_rn(amax, kE4m3Max) : 1.0f;
  if (threadIdx.x == 0) scales[row] = s;
  for (int v = threadIdx.x; v < vecs; v += kThreads) {
    alignas(16) T e[8];
    *reinterpret_cast<int4*>(e) = xr[v];
    uint32_t word[2] = {0u, 0u};
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const float y = __fdiv_rn(to_float(e[j]), s);
      const uint32_t code = e4m3_encode(fabsf(y)) | (signbit(y) ? 0x80u : 0u);
      word[j / 4] |= code << (8 * (j % 4));
    }
    qr[v] = make_uint2(word[0], word[1]);
  }
}

}  // namespace

extern "C" int mgen__quantize_act_launch(int act, int m, int k, const void* x, uint8_t* q, float* scales,
                                         void* stream) {
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (act == MGEN_ACT_BF16)
    quantize_act_kernel<<<(unsigned)m, kThreads, 0, s>>>(k, static_cast<const __nv_bfloat16*>(x), q, scales);
  else
    quantize_act_kernel<<<(unsigned)m, kThreads, 0, s>>>(k, static_cast<const __half*>(x), q, scales);
  return (int)cudaGetLastError();
}
