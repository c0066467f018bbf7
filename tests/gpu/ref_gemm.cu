// ref_gemm.cu -- FP64 reference GEMM, dequantization and result checks for the GPU tests.
// Independent of the kernels under test: plain tiled loops, no tensor cores, no packing.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "ref_gemm.h"

namespace {

constexpr int kTile = 16;  // ref GEMM: 16 x 16 outputs per block, k in steps of 16

__global__ void dequant_kernel(const uint8_t *codes, const __half *scales, int n, int k,
                               int group, float *w) {
  const long long total = (long long)n * k;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const int row = (int)(i / k), col = (int)(i % k);
    const int g = group ? col / group : 0;
    // (code - 8) has 4 significant bits and s 11: the product is exact in FP32.
    w[i] = (float)((int)codes[i] - 8) * __half2float(scales[(size_t)g * n + row]);
  }
}

__global__ void ref_gemm_kernel(int m, int n, int k, const __half *a, const float *w,
                                double *ref, double *abs_sum) {
  __shared__ double as[kTile][kTile + 1], ws[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = blockIdx.y * kTile + ty, j = blockIdx.x * kTile + tx;
  const int wrow = blockIdx.x * kTile + ty;
  double sum = 0.0, sum_abs = 0.0;
  for (int k0 = 0; k0 < k; k0 += kTile) {
    const int kk = k0 + tx;
    as[ty][tx] = i < m && kk < k ? (double)__half2float(a[(size_t)i * k + kk]) : 0.0;
    ws[ty][tx] = wrow < n && kk < k ? (double)w[(size_t)wrow * k + kk] : 0.0;
    __syncthreads();
#pragma unroll
    for (int t = 0; t < kTile; t++) {
      const double p = as[ty][t] * ws[tx][t];
      sum += p;
      sum_abs += fabs(p);
    }
    __syncthreads();
  }
  if (i < m && j < n) {
    ref[(size_t)i * n + j] = sum;
    abs_sum[(size_t)i * n + j] = sum_abs;
  }
}

__global__ void check_kernel(int m, int n, int k, const uint16_t *c, long long capacity,
                             const double *ref, const double *abs_sum, gemm_check *out) {
  const long long mn = (long long)m * n;
  const double rel = 0x1p-10, absc = 0x1p-10 + k * 0x1p-22;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < capacity;
       i += (long long)gridDim.x * blockDim.x) {
    const uint16_t bits = c[i];
    if (i >= mn) {
      if (bits != 0xFFFFu) atomicAdd(&out->guard_bad, 1ull);
      continue;
    }
    if (bits == 0xFFFFu) atomicAdd(&out->unwritten, 1ull);
    const double v = (double)__half2float(__ushort_as_half(bits));
    const double err = fabs(v - ref[i]);
    const double bound = rel * fabs(ref[i]) + absc * abs_sum[i];
    double ratio = err == 0.0 ? 0.0 : err / bound;  // inf if bound is 0, NaN if v is NaN
    if (!(ratio <= 1.0)) {
      if (isnan(ratio)) ratio = INFINITY;
      atomicAdd(&out->bad, 1ull);
      atomicMin(&out->first_bad, (unsigned long long)i);
    }
    // Non-negative doubles order like their bit patterns.
    atomicMax(&out->max_ratio_bits, (unsigned long long)__double_as_longlong(ratio));
  }
}

__global__ void diff_kernel(const uint16_t *x, const uint16_t *y, long long count,
                            unsigned long long *diff) {
  unsigned long long local = 0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x)
    local += x[i] != y[i];
  if (local) atomicAdd(diff, local);
}

int grid_for(long long items) {
  long long b = (items + 255) / 256;
  return (int)(b < 1 ? 1 : b > 65536 ? 65536 : b);
}

}  // namespace

extern "C" int gpu_dequant(const uint8_t *codes, const uint16_t *scales, int n, int k, int group,
                           float *w, void *stream) {
  dequant_kernel<<<grid_for((long long)n * k), 256, 0, (cudaStream_t)stream>>>(
      codes, (const __half *)scales, n, k, group, w);
  return (int)cudaGetLastError();
}

extern "C" int gpu_ref_gemm(int m, int n, int k, const uint16_t *a, const float *w, double *ref,
                            double *abs_sum, void *stream) {
  dim3 block(kTile, kTile), grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile);
  ref_gemm_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(m, n, k, (const __half *)a, w, ref,
                                                            abs_sum);
  return (int)cudaGetLastError();
}

extern "C" int gpu_check_gemm(int m, int n, int k, const uint16_t *c, size_t capacity,
                              const double *ref, const double *abs_sum, gemm_check *out,
                              void *stream) {
  check_kernel<<<grid_for((long long)capacity), 256, 0, (cudaStream_t)stream>>>(
      m, n, k, c, (long long)capacity, ref, abs_sum, out);
  return (int)cudaGetLastError();
}

extern "C" int gpu_count_diff(const uint16_t *x, const uint16_t *y, size_t count,
                              unsigned long long *diff, void *stream) {
  diff_kernel<<<grid_for((long long)count), 256, 0, (cudaStream_t)stream>>>(x, y, (long long)count,
                                                                            diff);
  return (int)cudaGetLastError();
}
