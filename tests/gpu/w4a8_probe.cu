// w4a8_probe.cu -- the core of a W4A8 wgmma kernel (issue #52) on the hardware before the
// kernel exists: one warpgroup dequantizes W4A8 words (runtime/src/formats/layout.h) with the
// format partials (MXFP4's with its rows' block offsets, as a scale pair) into FP8 A fragments and runs four wgmma.mma_async.m64n8k32 .e4m3 over 128
// of K against 8 rows of E4M3 activations in shared memory, K-major and 128-byte swizzled as a
// TMA box writes them (one 1 KiB atom: 8 rows of 128 bytes), the descriptor stepped 32 bytes
// a step as the wgmma family steps it. Compiled for the wgmma family's architectures (sm_90a).
#include <cuda_runtime.h>
#include <stdint.h>

#include "formats/fe2m1/mma_e4m3.cuh"
#include "formats/mgen_scales.cuh"
#include "formats/u4b8/mma_e4m3.cuh"
#include "w4a8_probe.h"
#include "wgmma/mgen_wgmma.cuh"

namespace {

constexpr int kSteps = W4A8_PROBE_K / 32;

__device__ __forceinline__ void mma_m64n8k32(float (&d)[4], const uint32_t (&a)[4], uint64_t b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, 1, 1, 1;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b)
      : "memory");
}

template <class Dequant>
__global__ void __launch_bounds__(128) probe_kernel(const uint32_t* __restrict__ words, const uint8_t* __restrict__ u,
                                                    const uint8_t* __restrict__ a, float* __restrict__ c_t) {
  __shared__ __align__(1024) uint8_t a_sh[W4A8_PROBE_M * W4A8_PROBE_K];
  const int t = threadIdx.x;
  // Swizzle<3,4,3> (CU_TENSOR_MAP_SWIZZLE_128B): 16-byte chunk j of row r at chunk j ^ (r % 8)
  for (int v = t; v < W4A8_PROBE_M * 8; v += 128) {
    const int r = v / 8, j = v % 8;
    *reinterpret_cast<int4*>(a_sh + r * 128 + (j ^ (r % 8)) * 16) =
        *reinterpret_cast<const int4*>(a + r * W4A8_PROBE_K + j * 16);
  }
  mgen::wg::fence_proxy_async();
  __syncthreads();

  uint32_t frag[kSteps][4];
  const int row = 16 * (t / 32) + (t % 32) / 4;  // the fragment's rows: row, row + 8
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const uint32_t w0 = words[t * W4A8_PROBE_TILES + 2 * s], w1 = words[t * W4A8_PROBE_TILES + 2 * s + 1];
    if constexpr (mgen::folds_scales<Dequant>::value)  // the step's block offsets of the two rows, as a scale pair
      Dequant::dequant(w0, w1, u[row * kSteps + s] | (uint32_t)u[(row + 8) * kSteps + s] << 8, frag[s]);
    else
      Dequant::dequant(w0, w1, frag[s]);
  }
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  const uint32_t lo = mgen::wg::desc_sw128_lo(mgen::wg::smem_addr(a_sh));
  mgen::wg::fence();
#pragma unroll
  for (int s = 0; s < kSteps; ++s) mma_m64n8k32(d, frag[s], mgen::wg::desc_sw128_at(lo + 2 * s));  // 32 bytes
  mgen::wg::commit();
  mgen::wg::wait<0>();
  // The accumulators of m64n8: warp w, lane 4 g + q holds rows 16 w + g (d0, d1) and + 8 (d2,
  // d3), columns 2 q and 2 q + 1.
  const int col = 2 * (t % 4);
  c_t[row * W4A8_PROBE_M + col] = d[0];
  c_t[row * W4A8_PROBE_M + col + 1] = d[1];
  c_t[(row + 8) * W4A8_PROBE_M + col] = d[2];
  c_t[(row + 8) * W4A8_PROBE_M + col + 1] = d[3];
}

}  // namespace

extern "C" int w4a8_probe_run(int fe2m1, const uint32_t words[128][W4A8_PROBE_TILES],
                              const uint8_t u[W4A8_PROBE_N][W4A8_PROBE_BLOCKS],
                              const uint8_t a[W4A8_PROBE_M][W4A8_PROBE_K],
                              float c_t[W4A8_PROBE_N][W4A8_PROBE_M]) {
  const size_t wb = sizeof(uint32_t) * 128 * W4A8_PROBE_TILES, ab = W4A8_PROBE_M * W4A8_PROBE_K,
               cb = sizeof(float) * W4A8_PROBE_N * W4A8_PROBE_M;
  uint32_t* d_w = nullptr;
  uint8_t *d_a = nullptr, *d_u = nullptr;
  float* d_c = nullptr;
  const size_t ub = W4A8_PROBE_N * W4A8_PROBE_BLOCKS;
  cudaError_t e = cudaMalloc(&d_w, wb);
  if (e == cudaSuccess) e = cudaMalloc(&d_u, ub);
  if (e == cudaSuccess) e = cudaMemcpy(d_u, u, ub, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMalloc(&d_a, ab);
  if (e == cudaSuccess) e = cudaMalloc(&d_c, cb);
  if (e == cudaSuccess) e = cudaMemcpy(d_w, words, wb, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMemcpy(d_a, a, ab, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) e = cudaMemset(d_c, 0xff, cb);  // NaN: a sum never written shows
  if (e == cudaSuccess) {
    if (fe2m1) probe_kernel<mgen::DequantFe2m1E4m3><<<1, 128>>>(d_w, d_u, d_a, d_c);
    else probe_kernel<mgen::DequantU4b8E4m3><<<1, 128>>>(d_w, d_u, d_a, d_c);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaMemcpy(c_t, d_c, cb, cudaMemcpyDeviceToHost);
  cudaFree(d_w);
  cudaFree(d_a);
  cudaFree(d_u);
  cudaFree(d_c);
  return (int)e;
}
