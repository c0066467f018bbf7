// ref_gemm.cu -- FP64 reference GEMM, dequantization and result checks of the GEMM test (see
// ref_gemm.h). Independent of the kernels under test and of the runtime's packing: value
// tables, plain tiled loops, no tensor cores, no packing, no bit tricks. One dequantization
// kernel per weight format turns codes and scales into exact FP64 weights and their slack; the
// formats known here are the rows of kDequant (a new format adds its kernel and a row).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "mgen/mgen.h"
#include "ref_gemm.h"

namespace {

// Exact conversions of the activation types.
__device__ __forceinline__ double to_double(__half x) { return (double)__half2float(x); }
__device__ __forceinline__ double to_double(__nv_bfloat16 x) {
  return (double)__bfloat162float(x);
}
__device__ double act_value(int act, uint16_t bits) {
  return act == MGEN_ACT_BF16 ? to_double(__ushort_as_bfloat16(bits))
                              : to_double(__ushort_as_half(bits));
}

int grid_for(long long items) {
  long long b = (items + 255) / 256;
  return (int)(b < 1 ? 1 : b > 65536 ? 65536 : b);
}

// ---------------------------------------------------------------- u4b8
// (code - 8) * s, s of type Act per (group, column); (code - 8) has 4 significant bits and s
// at most 11 (FP16) or 8 (BF16): the product is exact (in FP32 already). The kernels'
// weights are exact too: slack 0 (their scale rounding is in the format's bound).
template <class Act>
__global__ void dequant_u4b8_kernel(const uint8_t *codes, const Act *s, int n, int k, int group,
                                    double *w, double *slack) {
  const long long total = (long long)n * k;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const int row = (int)(i / k), col = (int)(i % k);
    const int g = group ? col / group : 0;
    w[i] = (double)((int)codes[i] - 8) * to_double(s[(size_t)g * n + row]);
    slack[i] = 0.0;
  }
}

int launch_u4b8(const ref_weights *rw, double *w, double *slack, cudaStream_t stream) {
  const int grid = grid_for((long long)rw->n * rw->k);
  if (rw->act == MGEN_ACT_BF16)
    dequant_u4b8_kernel<<<grid, 256, 0, stream>>>(rw->codes,
                                                  (const __nv_bfloat16 *)rw->scales, rw->n,
                                                  rw->k, rw->group, w, slack);
  else if (rw->act == MGEN_ACT_F16)
    dequant_u4b8_kernel<<<grid, 256, 0, stream>>>(rw->codes, (const __half *)rw->scales, rw->n,
                                                  rw->k, rw->group, w, slack);
  else
    return (int)cudaErrorInvalidValue;
  return (int)cudaGetLastError();
}

// ---------------------------------------------------------------- u4
// (code - zero) * s, s of type Act and the zero per (group, column); code - zero has 5
// significant bits with its sign and s at most 11: exact. The kernels compute code - zero
// exactly in 16 bits and then scale as u4b8's do (templates/formats/u4/mma_*.cuh): slack 0,
// the scale rounding in the format's bound.
template <class Act>
__global__ void dequant_u4_kernel(const uint8_t *codes, const Act *s, const uint8_t *zeros, int n,
                                  int k, int group, double *w, double *slack) {
  const long long total = (long long)n * k;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const int row = (int)(i / k), col = (int)(i % k);
    const size_t at = (size_t)(group ? col / group : 0) * n + row;
    w[i] = (double)((int)codes[i] - (int)zeros[at]) * to_double(s[at]);
    slack[i] = 0.0;
  }
}

int launch_u4(const ref_weights *rw, double *w, double *slack, cudaStream_t stream) {
  const int grid = grid_for((long long)rw->n * rw->k);
  if (rw->zeros == NULL) return (int)cudaErrorInvalidValue;
  if (rw->act == MGEN_ACT_BF16)
    dequant_u4_kernel<<<grid, 256, 0, stream>>>(rw->codes, (const __nv_bfloat16 *)rw->scales,
                                                rw->zeros, rw->n, rw->k, rw->group, w, slack);
  else if (rw->act == MGEN_ACT_F16)
    dequant_u4_kernel<<<grid, 256, 0, stream>>>(rw->codes, (const __half *)rw->scales, rw->zeros,
                                                rw->n, rw->k, rw->group, w, slack);
  else
    return (int)cudaErrorInvalidValue;
  return (int)cudaGetLastError();
}

// ---------------------------------------------------------------- fe2m1
// tests/common/fp4.c's values and fp4_weight_slack, restated.

__constant__ double kE2m1[16] = {0.0,  0.5,  1.0,  1.5,  2.0,  3.0,  4.0,  6.0,
                                 -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0};

__device__ double e4m3_value(unsigned b) {
  const unsigned exp = (b >> 3) & 15u, man = b & 7u;
  const double v = exp ? ldexp(8.0 + man, (int)exp - 10) : ldexp((double)man, -9);
  return b & 0x80u ? -v : v;  // (NaN codes are never fed to the reference)
}

__device__ double fp4_weight_slack(int act, int scheme, unsigned u) {
  if (scheme == MGEN_SCHEME_NVFP4) return 0.0;
  if (act == MGEN_ACT_F16) return u <= 23 ? 0.0 : 0x1p-25;
  return u <= 132 ? 0.0 : 0x1p-134;
}

// One block per column: e_max over its block scales, then every weight of the column.
__global__ void dequant_fe2m1_kernel(int act, int scheme, const uint8_t *codes,
                                     const uint8_t *scales, float global, int n, int k,
                                     double *w, double *slack) {
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
      slack[(size_t)col * k + i] = fp4_weight_slack(act, scheme, e_max - e) * cf;
    }
    __syncthreads();  // e_max is reset for the next column
  }
}

int launch_fe2m1(const ref_weights *rw, double *w, double *slack, cudaStream_t stream) {
  if (rw->scheme != MGEN_SCHEME_NVFP4 && rw->scheme != MGEN_SCHEME_MXFP4)
    return (int)cudaErrorInvalidValue;
  dequant_fe2m1_kernel<<<rw->n < 65536 ? rw->n : 65536, 256, 0, stream>>>(
      rw->act, rw->scheme, rw->codes, (const uint8_t *)rw->scales, rw->global, rw->n, rw->k, w,
      slack);
  return (int)cudaGetLastError();
}

// ---------------------------------------------------------------- every format

// The formats with a reference: a new format adds its kernel above and a row here.
struct DequantEntry {
  int wfmt;
  int (*launch)(const ref_weights *, double *, double *, cudaStream_t);
};
const DequantEntry kDequant[] = {
    {MGEN_WFMT_U4B8, launch_u4b8},
    {MGEN_WFMT_FE2M1, launch_fe2m1},
    {MGEN_WFMT_U4, launch_u4},
};

// FP64 GEMM: 64 x 64 outputs per block of 16 x 16 threads, 4 x 4 per thread, K in steps of 16.
constexpr int kBt = 64, kKs = 16;

__global__ void ref_gemm_kernel(int act, int m, int n, int k, const uint16_t *a, const double *w,
                                const double *slack, gemm_ref out) {
  __shared__ double as[kKs][kBt + 1], ws[kKs][kBt + 1], ss[kKs][kBt + 1];
  const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
  const int row0 = blockIdx.y * kBt, col0 = blockIdx.x * kBt;
  double sum[4][4] = {}, sabs[4][4] = {}, serr[4][4] = {}, ssq[4][4] = {};
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
          ssq[i][j] += p * p;
          serr[i][j] += fabs(av) * ss[kk][tx + 16 * j];
        }
      }
    __syncthreads();
  }
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      const int r = row0 + ty + 16 * i, c = col0 + tx + 16 * j;
      if (r < m && c < n) {
        out.ref[(size_t)r * n + c] = sum[i][j];
        out.abs_sum[(size_t)r * n + c] = sabs[i][j];
        out.werr[(size_t)r * n + c] = serr[i][j];
        out.sq_sum[(size_t)r * n + c] = ssq[i][j];
      }
    }
}

// |c - ref| <= rel |ref| + abs abs_sum + werr + tiny (the format's gemm_bound), per element,
// ref with its bias where there is one; and the two sums of the RMS ratio over the m x n
// elements, and the fourth powers that say how many of them the ratio weighs (ref_gemm.h).
__global__ void check_kernel(int act, int m, int n, gemm_bound b, const uint16_t *c,
                             long long capacity, gemm_ref r, const uint16_t *bias,
                             long long bias_ld, gemm_check *out) {
  const long long mn = (long long)m * n;
  double err_sq = 0.0, scale_sq = 0.0, scale_q = 0.0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < capacity;
       i += (long long)gridDim.x * blockDim.x) {
    const uint16_t bits = c[i];
    if (i >= mn) {
      if (bits != 0xFFFFu) atomicAdd(&out->guard_bad, 1ull);
      continue;
    }
    if (bits == 0xFFFFu) atomicAdd(&out->unwritten, 1ull);
    const double v = act_value(act, bits);
    const double ref =
        r.ref[i] + (bias != nullptr ? act_value(act, bias[i / n * bias_ld + i % n]) : 0.0);
    if (!isfinite(v)) atomicAdd(&out->nonfinite, 1ull);
    const double bound = b.rel * fabs(ref) + b.abs * r.abs_sum[i] + r.werr[i] + b.tiny;
    const double err = fabs(v - ref);
    double ratio = err == 0.0 ? 0.0 : err / bound;  // inf if bound is 0, NaN if v is NaN
    if (!(ratio <= 1.0)) {
      if (isnan(ratio)) ratio = INFINITY;
      atomicAdd(&out->bad, 1ull);
      atomicMin(&out->first_bad, (unsigned long long)i);
    }
    // Non-negative doubles order like their bit patterns.
    atomicMax(&out->max_ratio_bits, (unsigned long long)__double_as_longlong(ratio));
    if (isfinite(v)) {  // (a non-finite output already fails the check above)
      const double scale = b.unit * sqrt(ref * ref + r.sq_sum[i]) + r.werr[i] + b.tiny;
      const double scale2 = scale * scale;
      err_sq += err * err;
      scale_sq += scale2;
      scale_q += scale2 * scale2;
    }
  }
  for (int off = 16; off > 0; off /= 2) {
    err_sq += __shfl_down_sync(0xffffffffu, err_sq, off);
    scale_sq += __shfl_down_sync(0xffffffffu, scale_sq, off);
    scale_q += __shfl_down_sync(0xffffffffu, scale_q, off);
  }
  if (threadIdx.x % 32 == 0 && scale_sq + err_sq > 0.0) {
    atomicAdd(&out->err_sq, err_sq);
    atomicAdd(&out->scale_sq, scale_sq);
    atomicAdd(&out->scale_q, scale_q);
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

}  // namespace

extern "C" int gpu_dequant(const ref_weights *rw, double *w, double *slack, void *stream) {
  for (const DequantEntry &e : kDequant)
    if (e.wfmt == rw->wfmt) return e.launch(rw, w, slack, (cudaStream_t)stream);
  return (int)cudaErrorInvalidValue;
}

extern "C" int gpu_ref_gemm(int act, int m, int n, int k, const uint16_t *a, const double *w,
                            const double *slack, const gemm_ref *out, void *stream) {
  if (act != MGEN_ACT_F16 && act != MGEN_ACT_BF16) return (int)cudaErrorInvalidValue;
  dim3 block(16, 16), grid((n + kBt - 1) / kBt, (m + kBt - 1) / kBt);
  ref_gemm_kernel<<<grid, block, 0, (cudaStream_t)stream>>>(act, m, n, k, a, w, slack, *out);
  return (int)cudaGetLastError();
}

extern "C" int gpu_check_gemm(int act, int m, int n, const gemm_bound *bound, const uint16_t *c,
                              size_t capacity, const gemm_ref *ref, const uint16_t *bias,
                              size_t bias_ld, gemm_check *out, void *stream) {
  if (act != MGEN_ACT_F16 && act != MGEN_ACT_BF16) return (int)cudaErrorInvalidValue;
  check_kernel<<<grid_for((long long)capacity), 256, 0, (cudaStream_t)stream>>>(
      act, m, n, *bound, c, (long long)capacity, *ref, bias, (long long)bias_ld, out);
  return (int)cudaGetLastError();
}

extern "C" int gpu_count_diff(const uint16_t *x, const uint16_t *y, size_t count,
                              unsigned long long *diff, void *stream) {
  diff_kernel<<<grid_for((long long)count), 256, 0, (cudaStream_t)stream>>>(x, y, (long long)count,
                                                                            diff);
  return (int)cudaGetLastError();
}
