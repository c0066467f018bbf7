// import.cu -- int4 checkpoint import on the GPU (import.h): a check kernel over the data the
// host cannot see (g_idx, zeros, scales), then the packers of each layout, reading the
// checkpoint in place through mgen__int4_src's strides and nibble orders (one code reader for
// every checkpoint format: GPTQ's and compressed-tensors' words along K, AWQ's along N).
//
// Check: one grid-stride pass over three index ranges, appended: the zeros words, the g_idx
// entries, the scales. Findings go to a 24-byte struct in device scratch (the caller's output
// scale buffer): a bitmask of the stored zero values (atomicOr) and first offending indices
// (atomicMin from MGEN__NONE). The host reads it back (one synchronization) and decides.
//
// Pack (MGEN_LAYOUT_MMA): pack_words' one-thread-per-word gather, each nibble's code read from
// the checkpoint word that holds it; scales converted to the activation type through FP32
// (exact for FP16 and BF16 sources, so the result is the one correctly rounded conversion)
// into the permuted rows of layout.h. The K padding (layout.h) gets code 8 (pack_words) and
// the all-zero group's scale 1.0 in its rows past the checkpoint's. u4 adds its zero rows
// after the scales (mgen__zero_offset), one thread per 32-bit word (mgen__u4_zero_word), the
// padded rows MGEN_U4_PAD_ZERO: (8 - 8) * 1.0 = 0 as u4b8's padding.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "formats/layout.h"
#include "mgen/mgen.h"
#include "prepare/import.h"
#include "prepare/kernel_util.cuh"
#include "prepare/pack_words.cuh"

namespace {

static_assert(MGEN_U4_PAD_CODE == MGEN_U4B8_PAD_CODE,
              "u4 codes are packed by pack_words' u4b8 order, padding included");
static_assert(sizeof(mgen__int4_findings) <= 128,
              "the findings live in the smallest scale buffer (one row of 64 16-bit scales)");

__device__ __forceinline__ float scale_as_float(const mgen__int4_src &s, long long i) {
  if (s.scale_dtype == MGEN_DTYPE_F32) return ((const float *)s.scales)[i];
  if (s.scale_dtype == MGEN_DTYPE_BF16) return __bfloat162float(((const __nv_bfloat16 *)s.scales)[i]);
  return __half2float(((const __half *)s.scales)[i]);
}

// The scale as the kernels' 16-bit type: its bits, and whether it is finite.
__device__ __forceinline__ uint16_t scale_bits(const mgen__int4_src &s, long long i, int act,
                                               bool *finite) {
  const float v = scale_as_float(s, i);
  if (act == MGEN_ACT_BF16) {
    const __nv_bfloat16 b = __float2bfloat16_rn(v);
    *finite = isfinite(__bfloat162float(b));
    return __bfloat16_as_ushort(b);
  }
  const __half h = __float2half_rn(v);
  *finite = isfinite(__half2float(h));
  return __half_as_ushort(h);
}

__global__ void check_kernel(mgen__int4_src s, int act, int n, int k, int group,
                             mgen__int4_findings *f) {
  const int gsize = group ? group : k;
  const long long scales = (long long)(k / gsize) * n;
  const long long zeros = s.zeros.words ? s.zero_words : 0, gidx = s.g_idx ? k : 0;
  const long long total = zeros + gidx + scales;
  uint32_t seen = 0;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    if (i < zeros) {
      const uint32_t word = s.zeros.words[i];
      uint32_t not7 = 0, not8 = 0, is15 = 0;
#pragma unroll
      for (int b = 0; b < 8; b++) {
        const uint32_t v = (word >> (4 * b)) & 15u;
        seen |= 1u << v;
        not7 |= v != 7u, not8 |= v != 8u, is15 |= v == 15u;
      }
      if (not7) atomicMin(&f->first_not7, (uint32_t)i);
      if (not8) atomicMin(&f->first_not8, (uint32_t)i);
      if (is15) atomicMin(&f->first_15, (uint32_t)i);
    } else if (i < zeros + gidx) {
      const int kk = (int)(i - zeros);
      if (s.g_idx[kk] != kk / gsize) atomicMin(&f->first_bad_gidx, (uint32_t)kk);
    } else {
      const long long j = i - zeros - gidx;  // g * n + col
      const long long g = j / n, col = j % n;
      bool finite;
      scale_bits(s, g * s.scale_g + col * s.scale_n, act, &finite);
      if (!finite) atomicMin(&f->first_bad_scale, (uint32_t)j);
    }
  }
  if (seen) atomicOr(&f->zero_values, seen);
}

// ---------------------------------------------------------------- MGEN_LAYOUT_MMA

// The codes in the mma layout (kU4b8, u4's too) or as W4A8 words (kE4m3U4b8, kE4m3U4: the e4m3
// layout, whose scales and zero rows are the mma layout's).
template <PackOrder kOrder>
__global__ void mma_codes(mgen__int4_src s, int n, int k, uint32_t *__restrict__ q) {
  pack_words<kOrder>(n, k, q, [&](int kk, int nn) { return mgen__nibble(&s.codes, kk, nn); });
}

__global__ void mma_scales(mgen__int4_src s, int act, int n, int rows, int prows, int permute,
                           uint16_t *__restrict__ dst) {
  const uint16_t pad = u4b8_pad_scale(act);
  const long long total = (long long)prows * n;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const long long g = i / n;
    const int p = (int)(i % n), col = permute ? mgen__scale_source_col(p) : p;
    bool finite;
    dst[i] = g < rows ? scale_bits(s, g * s.scale_g + (long long)col * s.scale_n, act, &finite) : pad;
  }
}

// u4's zero rows: prows x n/8 words (layout.h, "Zero points").
__global__ void mma_zeros(mgen__int4_src s, int n, int rows, int prows, uint32_t *__restrict__ dst) {
  const int per_row = n / 8;
  const long long total = (long long)prows * per_row;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x)
    dst[i] = mgen__u4_zero_word(&s, rows, (int)(i / per_row), (int)(i % per_row));
}

// Codes (in kOrder) and scales; with_zeros: the zero rows too (u4).
template <PackOrder kOrder>
int import_mma(const mgen__int4_src &s, int act, int n, int k, int group, uint32_t *q,
               uint16_t *scales, bool with_zeros, cudaStream_t st) {
  const int rows = group ? k / group : 1, prows = mgen__scale_rows(k, group);
  mma_codes<kOrder><<<blocks_for(packed_words(n, k)), kThreads, 0, st>>>(s, n, k, q);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return (int)err;
  mma_scales<<<blocks_for((long long)prows * n), kThreads, 0, st>>>(s, act, n, rows, prows,
                                                                    group != 0, scales);
  if ((err = cudaGetLastError()) != cudaSuccess || !with_zeros) return (int)err;
  uint32_t *zeros = (uint32_t *)((char *)scales + mgen__zero_offset(n, k, group, 2));
  mma_zeros<<<blocks_for((long long)prows * n / 8), kThreads, 0, st>>>(s, n, rows, prows, zeros);
  return (int)cudaGetLastError();
}

}  // namespace

extern "C" int mgen__int4_check(const mgen__int4_src *src, int act, int n, int k, int group,
                                void *d_scratch, mgen__int4_findings *out, void *stream) {
  cudaStream_t st = (cudaStream_t)stream;
  mgen__int4_findings *f = (mgen__int4_findings *)d_scratch;
  // zero_values 0, every index MGEN__NONE
  cudaError_t err = cudaMemsetAsync(f, 0xff, sizeof *f, st);
  if (err == cudaSuccess) err = cudaMemsetAsync(&f->zero_values, 0, sizeof f->zero_values, st);
  if (err != cudaSuccess) return (int)err;
  const int gsize = group ? group : k;
  const long long total = (src->zeros.words ? src->zero_words : 0) + (src->g_idx ? k : 0) +
                          (long long)(k / gsize) * n;
  check_kernel<<<blocks_for(total), kThreads, 0, st>>>(*src, act, n, k, group, f);
  if ((err = cudaGetLastError()) != cudaSuccess) return (int)err;
  mgen__int4_findings host;
  if ((err = cudaMemcpyAsync(&host, f, sizeof host, cudaMemcpyDeviceToHost, st)) != cudaSuccess)
    return (int)err;
  if ((err = cudaStreamSynchronize(st)) != cudaSuccess) return (int)err;
  *out = host;
  return 0;
}

namespace {
int import_layout(const mgen__int4_src *src, int act, int layout, int n, int k, int group,
                  void *d_q, void *d_scales, bool with_zeros, void *stream) {
  switch (layout) {  // one case per packed layout (mgen_layout)
    case MGEN_LAYOUT_MMA:
      return import_mma<PackOrder::kU4b8>(*src, act, n, k, group, (uint32_t *)d_q, (uint16_t *)d_scales,
                                          with_zeros, (cudaStream_t)stream);
    case MGEN_LAYOUT_E4M3:  // u4's codes as they are (with_zeros), u4b8's as their field
      return with_zeros ? import_mma<PackOrder::kE4m3U4>(*src, act, n, k, group, (uint32_t *)d_q,
                                                          (uint16_t *)d_scales, true, (cudaStream_t)stream)
                        : import_mma<PackOrder::kE4m3U4b8>(*src, act, n, k, group, (uint32_t *)d_q,
                                                           (uint16_t *)d_scales, false, (cudaStream_t)stream);
    default:
      return (int)cudaErrorInvalidValue;  // import.c resolves and checks the layout first
  }
}
}  // namespace

extern "C" int mgen__int4_import(const mgen__int4_src *src, int act, int layout, int n, int k,
                                 int group, void *d_q, void *d_scales, void *stream) {
  return import_layout(src, act, layout, n, k, group, d_q, d_scales, false, stream);
}

extern "C" int mgen__int4_import_u4(const mgen__int4_src *src, int act, int layout, int n, int k,
                                    int group, void *d_q, void *d_scales, void *stream) {
  if (src->zeros.words == NULL) return (int)cudaErrorInvalidValue;  // import.c requires them
  return import_layout(src, act, layout, n, k, group, d_q, d_scales, true, stream);
}
