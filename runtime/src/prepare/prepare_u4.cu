// prepare_u4.cu -- GPU kernels that quantize and pack u4 weights (asymmetric int4: codes 0..15,
// a zero point per group and column, value (q - z) * s) into the layouts of layout.h (the mma
// layout's words as u4b8's, the e4m3 layout's with the codes as they are; one scale and zero
// layout for both).
//
// Quantize, for weights of type T = the activation type (FP16 or BF16, also the scales'):
//   1. quantize_rows: one warp per zero word (row g, word c of n/8: its 8 columns,
//      mgen__zero_source_col): per column the group's min and max in FP32,
//      s = T((max - min) / 15) (1 if that rounds to 0: a constant group), computed as
//      (max/2 - min/2) / 7.5 (halving is exact for every FP16 and BF16 value, so this is the
//      same correctly rounded quotient, and no FP32 overflow for BF16 weights near FLT_MAX),
//      z = clamp(rint(-min / s), 0, 15) with the rounded s; the scale written to its packed
//      position, the zero to its nibble. Padded rows (K padding) get scale 1.0 and zero 8.
//   2. quantize_pack: pack_words, q = clamp(rint(w / s) + z, 0, 15) in FP32 with step 1's s
//      and z; pack_words writes the padding's code 8 (MGEN_U4_PAD_CODE).
// No scratch memory: step 2 reads what step 1 wrote (same stream). The CPU reference
// (tests/common/ref_u4.c) implements the same rule independently; the GPU tests compare the
// two bit for bit. Weights must be finite.
//
// Pack: codes and scales as u4b8's (mgen__pack_u4_words: the codes' words, the scales'
// permuting copy, padded rows 1.0, padded codes 8), then pack_zeros writes the zero rows
// (padded rows 8). The caller has checked codes and zeros (mgen__check_pack_inputs).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "formats/layout.h"
#include "mgen/mgen_kernel.h"
#include "prepare/kernel_util.cuh"
#include "prepare/pack_words.cuh"
#include "prepare/prepare.h"
#include "prepare/prepare_u4.h"

namespace {

constexpr int kScaleBytes = 2;             // FP16 / BF16 scales (the format table's asym)

// u4's padding is u4b8's code and scale (the packers and pack_words share them: pack_words
// checks the code) plus zero 8.
static_assert(MGEN_U4_PAD_ZERO == MGEN_U4_PAD_CODE, "a padded weight is (8 - 8) * 1 = 0");

// The zero rows of a scale buffer: n/8 words a row, after the scales (layout.h).
uint32_t *zero_rows(void *scales, int n, int k, int group) {
  return (uint32_t *)((char *)scales + mgen__zero_offset(n, k, group, kScaleBytes));
}

template <class T>
__global__ void quantize_rows(const T *__restrict__ w, int n, int k, int group,
                              T *__restrict__ scales, uint32_t *__restrict__ zeros) {
  const int gsize = group ? group : k, words_row = n / 8;
  const long long slots = (long long)mgen__scale_rows(k, group) * words_row;
  const int lane = threadIdx.x & 31;
  const long long warps = (long long)gridDim.x * blockDim.x / 32;
  for (long long slot = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; slot < slots;
       slot += warps) {
    const int g = (int)(slot / words_row), word = (int)(slot % words_row);
    const int real = g * gsize < k ? gsize : 0;  // a row of the padding: nothing to read
    uint32_t zword = 0;
    for (int b = 0; b < MGEN_W4_NIBBLES; b++) {
      const int col = mgen__zero_source_col(word, b);
      const T *row = w + (size_t)col * k + (size_t)g * gsize;
      float lo = 0.0f, hi = 0.0f;
      if (real > 0) lo = hi = to_float(row[0]);
      for (int i = lane; i < real; i += 32) {
        const float v = to_float(row[i]);
        lo = fminf(lo, v), hi = fmaxf(hi, v);
      }
      for (int off = 16; off > 0; off >>= 1) {
        lo = fminf(lo, __shfl_xor_sync(0xffffffffu, lo, off));
        hi = fmaxf(hi, __shfl_xor_sync(0xffffffffu, hi, off));
      }
      T s = from_float<T>(1.0f);
      uint32_t z = MGEN_U4_PAD_ZERO;
      if (real > 0) {
        const T t = from_float<T>((hi * 0.5f - lo * 0.5f) / 7.5f);
        if (to_float(t) != 0.0f) s = t;
        z = (uint32_t)fminf(fmaxf(rintf(-lo / to_float(s)), 0.0f), 15.0f);
      }
      zword |= z << (4 * b);
      if (lane == 0) scales[(size_t)g * n + (group ? mgen__scale_packed_pos(col) : col)] = s;
    }
    if (lane == 0) zeros[slot] = zword;
  }
}

template <class T, PackOrder kOrder>
__global__ void quantize_pack(const T *__restrict__ w, int n, int k, int group,
                              const T *__restrict__ scales, const uint32_t *__restrict__ zeros,
                              uint32_t *__restrict__ q) {
  pack_words<kOrder>(n, k, q, [&](int kk, int nn) {
    const int row = group ? kk / group : 0;
    int word, nibble;
    mgen__zero_place(nn, &word, &nibble);
    const float s = to_float(scales[(size_t)row * n + (group ? mgen__scale_packed_pos(nn) : nn)]);
    const float z = (float)((zeros[(size_t)row * (n / 8) + word] >> (4 * nibble)) & 0xfu);
    const float v = to_float(w[(size_t)nn * k + kk]);
    return (uint32_t)fminf(fmaxf(rintf(v / s) + z, 0.0f), 15.0f);
  });
}

// Zero rows from rows x n bytes (one zero per byte, checked 0..15) into prows rows of words;
// rows past the source's (the K padding) get MGEN_U4_PAD_ZERO.
__global__ void pack_zeros(const uint8_t *__restrict__ src, int n, int rows, int prows,
                           uint32_t *__restrict__ dst) {
  const int words_row = n / 8;
  const long long total = (long long)prows * words_row;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const int r = (int)(i / words_row), word = (int)(i % words_row);
    uint32_t out = 0;
    for (int b = 0; b < MGEN_W4_NIBBLES; b++) {
      const uint32_t z =
          r < rows ? src[(size_t)r * n + mgen__zero_source_col(word, b)] : MGEN_U4_PAD_ZERO;
      out |= (z & 0xfu) << (4 * b);
    }
    dst[i] = out;
  }
}

template <class T>
int quantize_u4(const void *d_w, int layout, int n, int k, int group, void *d_q, void *d_scales,
                cudaStream_t s) {
  const long long slots = (long long)mgen__scale_rows(k, group) * (n / 8);
  uint32_t *zeros = zero_rows(d_scales, n, k, group);
  quantize_rows<T><<<blocks_for(slots * 32), kThreads, 0, s>>>((const T *)d_w, n, k, group,
                                                                (T *)d_scales, zeros);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return (int)err;
  if (layout == MGEN_LAYOUT_E4M3)
    quantize_pack<T, PackOrder::kE4m3U4><<<blocks_for(packed_words(n, k)), kThreads, 0, s>>>(
        (const T *)d_w, n, k, group, (const T *)d_scales, zeros, (uint32_t *)d_q);
  else
    quantize_pack<T, PackOrder::kU4b8><<<blocks_for(packed_words(n, k)), kThreads, 0, s>>>(
        (const T *)d_w, n, k, group, (const T *)d_scales, zeros, (uint32_t *)d_q);
  return (int)cudaGetLastError();
}

}  // namespace

extern "C" int mgen__quantize_u4(const void *d_w, int act, int layout, int n, int k, int group,
                                 void *d_q, void *d_scales, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  return act == MGEN_ACT_BF16 ? quantize_u4<__nv_bfloat16>(d_w, layout, n, k, group, d_q, d_scales, s)
                              : quantize_u4<__half>(d_w, layout, n, k, group, d_q, d_scales, s);
}

extern "C" int mgen__pack_u4(const uint8_t *d_codes, const void *d_scales_src,
                             const uint8_t *d_zeros, int act, int layout, int n, int k, int group,
                             void *d_q, void *d_scales, void *stream) {
  const int err = mgen__pack_u4_words(d_codes, d_scales_src, act, layout, n, k, group, d_q, d_scales, stream);
  if (err != 0) return err;
  const int rows = group ? k / group : 1, prows = mgen__scale_rows(k, group);
  pack_zeros<<<blocks_for((long long)prows * (n / 8)), kThreads, 0, (cudaStream_t)stream>>>(
      d_zeros, n, rows, prows, zero_rows(d_scales, n, k, group));
  return (int)cudaGetLastError();
}
