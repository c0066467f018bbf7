// ref_gemm.cu -- FP64 reference GEMM, dequantization and result checks for the GPU tests.
// Independent of the kernels under test: plain tiled loops, no tensor cores, no packing, no
// bit tricks. One small struct per weight format turns a code and its scales into the exact
// FP32 weight; the formats known here are the rows of kDequant.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "mgen/mgen_kernel.h"
#include "ref_gemm.h"

namespace {

constexpr int kTile = 16;  // ref GEMM: 16 x 16 outputs per block, k in steps of 16

// Exact conversions of the activation types.
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// ---------------------------------------------------------------- one struct per format
// weight(): the exact FP32 value of weight (row, col) of an n x k matrix, from the code
// codes[row * k + col] and the unpacked scales (GPTQ layout); Act is the activation type.

// u4b8: (code - 8) * s, s of type Act per (group, column); (code - 8) has 4 significant bits
// and s at most 11 (FP16) or 8 (BF16): the product is exact in FP32.
struct RefU4b8 {
  template <class Act>
  __device__ static float weight(const uint8_t *codes, const void *scales, int n, int k,
                                 int group, int row, int col) {
    const Act *s = static_cast<const Act *>(scales);
    const int g = group ? col / group : 0;
    return (float)((int)codes[(size_t)row * k + col] - 8) * to_float(s[(size_t)g * n + row]);
  }
};

template <class Fmt, class Act>
__global__ void dequant_kernel(const uint8_t *codes, const void *scales, int n, int k, int group,
                               float *w) {
  const long long total = (long long)n * k;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x)
    w[i] = Fmt::template weight<Act>(codes, scales, n, k, group, (int)(i / k), (int)(i % k));
}

template <class Act>
__global__ void ref_gemm_kernel(int m, int n, int k, const Act *a, const float *w, double *ref,
                                double *abs_sum) {
  __shared__ double as[kTile][kTile + 1], ws[kTile][kTile + 1];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int i = blockIdx.y * kTile + ty, j = blockIdx.x * kTile + tx;
  const int wrow = blockIdx.x * kTile + ty;
  double sum = 0.0, sum_abs = 0.0;
  for (int k0 = 0; k0 < k; k0 += kTile) {
    const int kk = k0 + tx;
    as[ty][tx] = i < m && kk < k ? (double)to_float(a[(size_t)i * k + kk]) : 0.0;
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

template <class Act>
__global__ void check_kernel(int m, int n, const Act *c, long long capacity, double rel,
                             double absc, const double *ref, const double *abs_sum,
                             gemm_check *out) {
  const long long mn = (long long)m * n;
  const uint16_t *bits_of = reinterpret_cast<const uint16_t *>(c);
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < capacity;
       i += (long long)gridDim.x * blockDim.x) {
    const uint16_t bits = bits_of[i];
    if (i >= mn) {
      if (bits != 0xFFFFu) atomicAdd(&out->guard_bad, 1ull);
      continue;
    }
    if (bits == 0xFFFFu) atomicAdd(&out->unwritten, 1ull);
    const double v = (double)to_float(c[i]);
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

template <class Fmt, class Act>
int launch_dequant(const uint8_t *codes, const void *scales, int n, int k, int group, float *w,
                   cudaStream_t stream) {
  dequant_kernel<Fmt, Act><<<grid_for((long long)n * k), 256, 0, stream>>>(codes, scales, n, k,
                                                                           group, w);
  return (int)cudaGetLastError();
}

// The (format, act) pairs with a reference: a new format adds its struct above and rows here.
struct DequantEntry {
  int wfmt, act;
  int (*launch)(const uint8_t *, const void *, int, int, int, float *, cudaStream_t);
};
const DequantEntry kDequant[] = {
    {MGEN_WFMT_U4B8, MGEN_ACT_F16, launch_dequant<RefU4b8, __half>},
    {MGEN_WFMT_U4B8, MGEN_ACT_BF16, launch_dequant<RefU4b8, __nv_bfloat16>},
};

const DequantEntry *dequant_entry(int wfmt, int act) {
  for (const DequantEntry &e : kDequant)
    if (e.wfmt == wfmt && e.act == act) return &e;
  return nullptr;
}

}  // namespace

extern "C" int gpu_ref_knows(int wfmt, int act) { return dequant_entry(wfmt, act) != nullptr; }

extern "C" int gpu_dequant(int wfmt, int act, const uint8_t *codes, const void *scales, int n,
                           int k, int group, float *w, void *stream) {
  const DequantEntry *e = dequant_entry(wfmt, act);
  if (e == nullptr) return (int)cudaErrorInvalidValue;
  return e->launch(codes, scales, n, k, group, w, (cudaStream_t)stream);
}

extern "C" int gpu_ref_gemm(int act, int m, int n, int k, const uint16_t *a, const float *w,
                            double *ref, double *abs_sum, void *stream) {
  dim3 block(kTile, kTile), grid((n + kTile - 1) / kTile, (m + kTile - 1) / kTile);
  cudaStream_t s = (cudaStream_t)stream;
  if (act == MGEN_ACT_BF16)
    ref_gemm_kernel<<<grid, block, 0, s>>>(m, n, k, (const __nv_bfloat16 *)a, w, ref, abs_sum);
  else if (act == MGEN_ACT_F16)
    ref_gemm_kernel<<<grid, block, 0, s>>>(m, n, k, (const __half *)a, w, ref, abs_sum);
  else
    return (int)cudaErrorInvalidValue;
  return (int)cudaGetLastError();
}

extern "C" void gpu_gemm_bound(int act, int k, double *rel, double *abs_coef) {
  const double u = act == MGEN_ACT_BF16 ? 0x1p-8 : 0x1p-11;
  *rel = 2 * u;
  *abs_coef = 2 * u + k * 0x1p-22;
}

extern "C" int gpu_check_gemm(int act, int m, int n, int k, const uint16_t *c, size_t capacity,
                              const double *ref, const double *abs_sum, gemm_check *out,
                              void *stream) {
  double rel, absc;
  gpu_gemm_bound(act, k, &rel, &absc);
  const int grid = grid_for((long long)capacity);
  cudaStream_t s = (cudaStream_t)stream;
  if (act == MGEN_ACT_BF16)
    check_kernel<<<grid, 256, 0, s>>>(m, n, (const __nv_bfloat16 *)c, (long long)capacity, rel,
                                      absc, ref, abs_sum, out);
  else if (act == MGEN_ACT_F16)
    check_kernel<<<grid, 256, 0, s>>>(m, n, (const __half *)c, (long long)capacity, rel, absc,
                                      ref, abs_sum, out);
  else
    return (int)cudaErrorInvalidValue;
  return (int)cudaGetLastError();
}

extern "C" int gpu_count_diff(const uint16_t *x, const uint16_t *y, size_t count,
                              unsigned long long *diff, void *stream) {
  diff_kernel<<<grid_for((long long)count), 256, 0, (cudaStream_t)stream>>>(x, y, (long long)count,
                                                                            diff);
  return (int)cudaGetLastError();
}
