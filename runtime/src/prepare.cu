// prepare.cu -- GPU kernels that quantize and pack weights into the layout of layout.h.
//
// Quantize (u4b8, GPTQ symmetric):
//   1. quantize_scales: one warp per packed scale slot (row g, position p): the column
//      n = source(p), s = fp16(2 * max|W[n][group g]| / 15), 1 if that rounds to 0 (an
//      all-zero group), written straight to the packed position.
//   2. quantize_pack: one thread per packed int32 word: for each nibble, the source (k, n)
//      from mgen__w4_source, q = clamp(rint(w / s) + 8, 0, 15) in FP32 with the FP16 s.
// No scratch memory: step 2 reads the scales step 1 wrote (same stream). The CPU reference
// (tests/common/ref.c) implements the same rule independently; the GPU tests compare the
// two bit for bit. Weights must be finite (an inf or NaN poisons its group's scale).
//
// Pack: the same word loop over caller-supplied codes (low nibble used: codes > 15 are
// masked, not rejected) plus a permuting copy of the scales.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "layout.h"
#include "prepare.h"

namespace {

constexpr int kThreads = 256;
constexpr long long kMaxBlocks = 1 << 20;  // grid-stride loops cover the rest

static_assert(MGEN_W4_NIBBLES == 8, "an int32 word holds eight 4-bit codes");

int blocks_for(long long items) {
  long long b = (items + kThreads - 1) / kThreads;
  return (int)(b < 1 ? 1 : b > kMaxBlocks ? kMaxBlocks : b);
}

// Scale of a group whose largest magnitude is `max_abs` (FP32 arithmetic, one FP16 rounding).
__device__ __half group_scale(float max_abs) {
  float t = 2.0f * max_abs;
  t = t / 15.0f;
  __half s = __float2half_rn(t);
  return __half2float(s) == 0.0f ? __float2half_rn(1.0f) : s;
}

__global__ void quantize_scales(const __half *__restrict__ w, int n, int k, int group,
                                __half *__restrict__ scales) {
  const int gsize = group ? group : k;
  const long long slots = (long long)(k / gsize) * n;
  const int lane = threadIdx.x & 31;
  const long long warps = (long long)gridDim.x * blockDim.x / 32;
  for (long long slot = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; slot < slots;
       slot += warps) {
    const int g = (int)(slot / n), p = (int)(slot % n);
    const int col = group ? mgen__scale_source_col(p) : p;
    const __half *row = w + (size_t)col * k + (size_t)g * gsize;
    float max_abs = 0.0f;
    for (int i = lane; i < gsize; i += 32) max_abs = fmaxf(max_abs, fabsf(__half2float(row[i])));
    for (int off = 16; off > 0; off >>= 1)
      max_abs = fmaxf(max_abs, __shfl_xor_sync(0xffffffffu, max_abs, off));
    if (lane == 0) scales[slot] = group_scale(max_abs);
  }
}

__global__ void quantize_pack(const __half *__restrict__ w, int n, int k, int group,
                              const __half *__restrict__ scales, uint32_t *__restrict__ q) {
  const int words = (int)((long long)n * k / MGEN_W4_NIBBLES);
  for (int word = blockIdx.x * blockDim.x + threadIdx.x; word < words;
       word += gridDim.x * blockDim.x) {
    uint32_t out = 0;
    for (int b = 0; b < MGEN_W4_NIBBLES; b++) {
      int kk, nn;
      mgen__w4_source(n, word, b, &kk, &nn);
      const size_t slot = group ? (size_t)(kk / group) * n + mgen__scale_packed_pos(nn) : nn;
      const float s = __half2float(scales[slot]);
      const float v = __half2float(w[(size_t)nn * k + kk]);
      const float code = fminf(fmaxf(rintf(v / s) + 8.0f, 0.0f), 15.0f);
      out |= (uint32_t)code << (4 * b);
    }
    q[word] = out;
  }
}

__global__ void pack_codes(const uint8_t *__restrict__ codes, int n, int k,
                           uint32_t *__restrict__ q) {
  const int words = (int)((long long)n * k / MGEN_W4_NIBBLES);
  for (int word = blockIdx.x * blockDim.x + threadIdx.x; word < words;
       word += gridDim.x * blockDim.x) {
    uint32_t out = 0;
    for (int b = 0; b < MGEN_W4_NIBBLES; b++) {
      int kk, nn;
      mgen__w4_source(n, word, b, &kk, &nn);
      out |= (uint32_t)(codes[(size_t)nn * k + kk] & 0xfu) << (4 * b);
    }
    q[word] = out;
  }
}

// 16-bit scales (FP16 or BF16: only moved), rows x n; grouped rows are permuted per chunk.
__global__ void pack_scales(const uint16_t *__restrict__ src, int n, int rows, int permute,
                            uint16_t *__restrict__ dst) {
  const long long total = (long long)rows * n;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const long long r = i / n;
    const int p = (int)(i % n);
    dst[i] = src[r * n + (permute ? mgen__scale_source_col(p) : p)];
  }
}

}  // namespace

extern "C" int mgen__quantize_u4b8(const void *d_w, int n, int k, int group, void *d_q,
                                   void *d_scales, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  const long long slots = (long long)(k / (group ? group : k)) * n;
  const long long words = (long long)n * k / MGEN_W4_NIBBLES;
  quantize_scales<<<blocks_for(slots * 32), kThreads, 0, s>>>((const __half *)d_w, n, k, group,
                                                               (__half *)d_scales);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return (int)err;
  quantize_pack<<<blocks_for(words), kThreads, 0, s>>>((const __half *)d_w, n, k, group,
                                                       (const __half *)d_scales, (uint32_t *)d_q);
  return (int)cudaGetLastError();
}

extern "C" int mgen__pack_u4b8(const uint8_t *d_codes, const void *d_scales_src, int n, int k,
                               int group, void *d_q, void *d_scales, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  const int rows = group ? k / group : 1;
  const long long words = (long long)n * k / MGEN_W4_NIBBLES;
  pack_codes<<<blocks_for(words), kThreads, 0, s>>>(d_codes, n, k, (uint32_t *)d_q);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return (int)err;
  pack_scales<<<blocks_for((long long)rows * n), kThreads, 0, s>>>(
      (const uint16_t *)d_scales_src, n, rows, group != 0, (uint16_t *)d_scales);
  return (int)cudaGetLastError();
}
