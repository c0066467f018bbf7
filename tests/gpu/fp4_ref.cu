// fp4_ref.cu -- FP64 reference for the fe2m1 GEMM test: see fp4_ref.h. Independent of the
// kernels under test and of prepare_fe2m1.cu: value tables, plain loops, no packing, no bit
// tricks. The bound is tests/common/fp4.c's fp4_bound and fp4_weight_slack, restated here.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "fp4_ref.h"
#include "mgen/mgen.h"

namespace {

__constant__ double kE2m1[16] = {0.0,  0.5,  1.0,  1.5,  2.0,  3.0,  4.0,  6.0,
                                 -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0};

__device__ double e4m3_value(unsigned b) {
  const unsigned exp = (b >> 3) & 15u, man = b & 7u;
  const double v = exp ? ldexp(8.0 + man, (int)exp - 10) : ldexp((double)man, -9);
  return b & 0x80u ? -v : v;  // (NaN codes are never fed to the reference)
}

__device__ double act_value(int act, uint16_t bits) {
  return act == MGEN_ACT_BF16 ? (double)__bfloat162float(__ushort_as_bfloat16(bits))
                              : (double)__half2float(__ushort_as_half(bits));
}

// fp4_weight_slack (tests/common/fp4.c).
__device__ double weight_slack(int act, int scheme, unsigned u) {
  if (scheme == MGEN_SCHEME_NVFP4) return 0.0;
  if (act == MGEN_ACT_F16) return u <= 23 ? 0.0 : 0x1p-25;
  return u <= 132 ? 0.0 : 0x1p-134;
}

// One block per column: e_max over its block scales, then every weight of the column.
__global__ void dequant_kernel(int act, int scheme, const uint8_t *codes, const uint8_t *scales,
                               float global, int n, int k, double *w, double *slack) {
  __shared__ unsigned e_max;
  const int group = scheme == MGEN_SCHEME_NVFP4 ? 16 : 32, groups = k / group;
  for (int col = blockIdx.x; col < n; col += gridDim.x) {
    const uint8_t *s = scales + (size_t)col * groups;
    if (threadIdx.x == 0) e_max = 0;
    __syncthreads();
    for (int g = threadIdx.x; g < groups; g += blockDim.x) atomicMax(&e_max, (unsigned)s[g]);
    __syncthreads();
    const double cf =
        scheme == MGEN_SCHEME_NVFP4 ? (double)global * 128.0 : ldexp(1.0, (int)e_max - 127);
    for (int i = threadIdx.x; i < k; i += blockDim.x) {
      const unsigned e = s[i / group];
      const double scale = scheme == MGEN_SCHEME_NVFP4 ? e4m3_value(e) * (double)global
                                                       : ldexp(1.0, (int)e - 127);
      w[(size_t)col * k + i] = kE2m1[codes[(size_t)col * k + i] & 15u] * scale;
      slack[(size_t)col * k + i] = weight_slack(act, scheme, e_max - e) * cf;
    }
    __syncthreads();  // e_max is reset for the next column
  }
}

// FP64 GEMM: 64 x 64 outputs per block of 16 x 16 threads, 4 x 4 per thread, K in steps of 16.
constexpr int kBt = 64, kKs = 16;

__global__ void ref_gemm_kernel(int act, int m, int n, int k, const uint16_t *a, const double *w,
                                const double *slack, double *ref, double *abs_sum, double *werr) {
  __shared__ double as[kKs][kBt + 1], ws[kKs][kBt + 1], ss[kKs][kBt + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int row0 = blockIdx.y * kBt, col0 = blockIdx.x * kBt;
  double sum[4][4] = {}, sabs[4][4] = {}, serr[4][4] = {};
  for (int k0 = 0; k0 < k; k0 += kKs) {
    for (int e = tid; e < kBt * kKs; e += 256) {  // 64 rows x 16 k of A, W, slack
      const int r = e / kKs, kk = e % kKs, gk = k0 + kk;
      const int ar = row0 + r, wc = col0 + r;
      as[kk][r] = ar < m && gk < k ? act_value(act, a[(size_t)ar * k + gk]) : 0.0;
      ws[kk][r] = wc < n && gk < k ? w[(size_t)wc * k + gk] : 0.0;
      ss[kk][r] = wc < n && gk < k ? slack[(size_t)wc * k + gk] : 0.0;
    }
    __syncthreads();
#pragma unroll 4
    for (int kk = 0; kk < kKs; kk++)
#pragma unroll
      for (int i = 0; i < 4; i++) {
        const double av = as[kk][ty + 16 * i];
#pragma unroll
        for (int j = 0; j < 4; j++) {
          const double p = av * ws[kk][tx + 16 * j];
          sum[i][j] += p;
          sabs[i][j] += fabs(p);
          serr[i][j] += fabs(av) * ss[kk][tx + 16 * j];
        }
      }
    __syncthreads();
  }
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      const int r = row0 + ty + 16 * i, c = col0 + tx + 16 * j;
      if (r < m && c < n) {
        ref[(size_t)r * n + c] = sum[i][j];
        abs_sum[(size_t)r * n + c] = sabs[i][j];
        werr[(size_t)r * n + c] = serr[i][j];
      }
    }
}

// fp4_bound (tests/common/fp4.c): 2 u_act |ref| + K 2^-22 abs + werr + tiny.
__global__ void check_kernel(int act, int m, int n, int k, const uint16_t *c, long long capacity,
                             const double *ref, const double *abs_sum, const double *werr,
                             fp4_check *out) {
  const long long mn = (long long)m * n;
  const double rel = act == MGEN_ACT_F16 ? 0x1p-10 : 0x1p-7;
  const double tiny = act == MGEN_ACT_F16 ? 0x1p-24 : 0x1p-132;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < capacity;
       i += (long long)gridDim.x * blockDim.x) {
    const uint16_t bits = c[i];
    if (i >= mn) {
      if (bits != 0xFFFFu) atomicAdd(&out->guard_bad, 1ull);
      continue;
    }
    if (bits == 0xFFFFu) atomicAdd(&out->unwritten, 1ull);
    const double v = act_value(act, bits);
    if (!isfinite(v)) atomicAdd(&out->nonfinite, 1ull);
    const double bound = rel * fabs(ref[i]) + k * 0x1p-22 * abs_sum[i] + werr[i] + tiny;
    const double err = fabs(v - ref[i]);
    double ratio = err / bound;  // NaN if v is NaN
    if (!(ratio <= 1.0)) {
      if (isnan(ratio)) ratio = INFINITY;
      atomicAdd(&out->bad, 1ull);
      atomicMin(&out->first_bad, (unsigned long long)i);
    }
    // Non-negative doubles order like their bit patterns.
    atomicMax(&out->max_ratio_bits, (unsigned long long)__double_as_longlong(ratio));
  }
}

int grid_for(long long items) {
  long long b = (items + 255) / 256;
  return (int)(b < 1 ? 1 : b > 65536 ? 65536 : b);
}

}  // namespace

extern "C" int fp4_gpu_dequant(int act, int scheme, const uint8_t *codes, const uint8_t *scales,
                               float global, int n, int k, double *w, double *slack,
                               void *stream) {
  dequant_kernel<<<n < 65536 ? n : 65536, 256, 0, (cudaStream_t)stream>>>(act, scheme, codes,
                                                                         scales, global, n, k, w,
                                                                         slack);
  return (int)cudaGetLastError();
}

extern "C" int fp4_gpu_ref_gemm(int act, int m, int n, int k, const uint16_t *a, const double *w,
                                const double *slack, double *ref, double *abs_sum, double *werr,
                                void *stream) {
  dim3 block(16, 16), grid((n + kBt - 1) / kBt, (m + kBt - 1) / kBt);
  ref_gemm_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(act, m, n, k, a, w, slack, ref,
                                                            abs_sum, werr);
  return (int)cudaGetLastError();
}

extern "C" int fp4_gpu_check(int act, int m, int n, int k, const uint16_t *c, size_t capacity,
                             const double *ref, const double *abs_sum, const double *werr,
                             fp4_check *out, void *stream) {
  check_kernel<<<grid_for((long long)capacity), 256, 0, (cudaStream_t)stream>>>(
      act, m, n, k, c, (long long)capacity, ref, abs_sum, werr, out);
  return (int)cudaGetLastError();
}
