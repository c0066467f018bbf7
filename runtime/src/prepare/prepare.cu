// prepare.cu -- GPU kernels that quantize and pack weights into the layout of layout.h.
//
// Quantize (u4b8, GPTQ symmetric), for weights of type T = the activation type (FP16 or
// BF16), which is also the type of the scales:
//   1. quantize_scales: one warp per packed scale slot (row g, position p): the column
//      n = source(p), s = T(2 * max|W[n][group g]| / 15), 1 if that rounds to 0 (an
//      all-zero group, as every group of the K padding is: layout.h), written straight to
//      the packed position.
//   2. quantize_pack: one thread per packed int32 word: for each nibble, the source (k, n)
//      from mgen__w4_source, q = clamp(rint(w / s) + 8, 0, 15) in FP32 with the rounded s;
//      pack_words writes the padding's code 8.
// No scratch memory: step 2 reads the scales step 1 wrote (same stream). The CPU reference
// (tests/common/ref.c) implements the same rule independently; the GPU tests compare the
// two bit for bit. Weights must be finite (an inf or NaN poisons its group's scale); any
// finite BF16 weight works, as 2 max / 15 is computed as max / 7.5 (below).
//
// Pack: the same word loop over caller-supplied codes plus a permuting copy of the scales, whose
// padded rows get the all-zero group's scale 1.0.
// Before it, find_bad_inputs looks for codes above 15 and non-finite scales (a NaN or inf
// scale makes every output of its column NaN): the first index of each goes into two 64-bit
// words of scratch (atomicMin; all ones = none), which the caller reads back and rejects on.
// mgen_pack_fp4 runs the same check over its one-byte E4M3 / E8M0 block scales (no codes).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "formats/layout.h"
#include "prepare/kernel_util.cuh"
#include "prepare/pack_words.cuh"
#include "mgen/mgen_kernel.h"
#include "prepare/prepare.h"

namespace {

static_assert(MGEN_W4_NIBBLES == 8, "an int32 word holds eight 4-bit codes");

// Scale of a group whose largest magnitude is `max_abs`: 2 max / 15 in FP32, one rounding to
// T. Computed as max / 7.5: doubling is exact, so both are the correctly rounded FP32 quotient
// of the same number, but 2 max overflows for BF16 weights above 2^127.
template <class T>
__device__ T group_scale(float max_abs) {
  const T s = from_float<T>(max_abs / 7.5f);
  return to_float(s) == 0.0f ? from_float<T>(1.0f) : s;
}

template <class T>
__global__ void quantize_scales(const T *__restrict__ w, int n, int k, int group,
                                T *__restrict__ scales) {
  const int gsize = group ? group : k;
  const long long slots = (long long)mgen__scale_rows(k, group) * n;
  const int lane = threadIdx.x & 31;
  const long long warps = (long long)gridDim.x * blockDim.x / 32;
  for (long long slot = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; slot < slots;
       slot += warps) {
    const int g = (int)(slot / n), p = (int)(slot % n);
    const int col = group ? mgen__scale_source_col(p) : p;
    const T *row = w + (size_t)col * k + (size_t)g * gsize;
    const int real = g * gsize < k ? gsize : 0;  // a group of the padding: all zeros, unread
    float max_abs = 0.0f;
    for (int i = lane; i < real; i += 32) max_abs = fmaxf(max_abs, fabsf(to_float(row[i])));
    max_abs = warp_max(max_abs);
    if (lane == 0) scales[slot] = group_scale<T>(max_abs);
  }
}

template <class T, PackOrder kOrder>
__global__ void quantize_pack(const T *__restrict__ w, int n, int k, int group,
                              const T *__restrict__ scales, uint32_t *__restrict__ q) {
  pack_words<kOrder>(n, k, q, [&](int kk, int nn) {
    const size_t slot = group ? (size_t)(kk / group) * n + mgen__scale_packed_pos(nn) : nn;
    const float s = to_float(scales[slot]);
    const float v = to_float(w[(size_t)nn * k + kk]);
    return (uint32_t)fminf(fmaxf(rintf(v / s) + 8.0f, 0.0f), 15.0f);
  });
}

template <PackOrder kOrder>
__global__ void pack_codes(const uint8_t *__restrict__ codes, int n, int k,
                           uint32_t *__restrict__ q) {
  pack_words<kOrder>(n, k, q, [&](int kk, int nn) { return (uint32_t)codes[(size_t)nn * k + kk]; });
}

// 16-bit scales (FP16 or BF16: only moved), rows x n of the source into prows x n;
// grouped rows are permuted per chunk, rows past the source's (the K padding) get `pad`.
__global__ void pack_scales(const uint16_t *__restrict__ src, int n, int rows, int prows,
                            int permute, uint16_t pad, uint16_t *__restrict__ dst) {
  const long long total = (long long)prows * n;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const long long r = i / n;
    const int p = (int)(i % n);
    dst[i] = r < rows ? src[r * n + (permute ? mgen__scale_source_col(p) : p)] : pad;
  }
}

// Scales of type S (uint16_t: FP16, BF16; uint8_t: E4M3, E8M0) are not finite when the
// `nonfinite` bits (the format table's, mgen__scheme_nonfinite_bits) are all ones.
template <class S>
__global__ void find_bad_inputs(const uint8_t *__restrict__ codes, long long ncodes,
                                const S *__restrict__ scales, long long nscales, S nonfinite,
                                unsigned long long *first) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  const long long start = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (long long i = start; i < ncodes; i += stride)
    if (codes[i] > 15) atomicMin(&first[0], (unsigned long long)i);
  for (long long i = start; i < nscales; i += stride)
    if ((scales[i] & nonfinite) == nonfinite) atomicMin(&first[1], (unsigned long long)i);
}

template <class T>
int quantize_u4b8(const void *d_w, int layout, int n, int k, int group, void *d_q, void *d_scales,
                  cudaStream_t s) {
  const long long slots = (long long)mgen__scale_rows(k, group) * n;
  const long long words = packed_words(n, k);
  quantize_scales<T><<<blocks_for(slots * 32), kThreads, 0, s>>>((const T *)d_w, n, k, group,
                                                                  (T *)d_scales);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return (int)err;
  if (layout == MGEN_LAYOUT_E4M3)
    quantize_pack<T, PackOrder::kE4m3U4b8><<<blocks_for(words), kThreads, 0, s>>>(
        (const T *)d_w, n, k, group, (const T *)d_scales, (uint32_t *)d_q);
  else
    quantize_pack<T, PackOrder::kU4b8><<<blocks_for(words), kThreads, 0, s>>>(
        (const T *)d_w, n, k, group, (const T *)d_scales, (uint32_t *)d_q);
  return (int)cudaGetLastError();
}

}  // namespace

extern "C" int mgen__quantize_u4b8(const void *d_w, int act, int layout, int n, int k, int group,
                                   void *d_q, void *d_scales, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  return act == MGEN_ACT_BF16 ? quantize_u4b8<__nv_bfloat16>(d_w, layout, n, k, group, d_q, d_scales, s)
              : quantize_u4b8<__half>(d_w, layout, n, k, group, d_q, d_scales, s);
}

namespace {
// Codes in kOrder (the words of the weights' layout) and 16-bit scales.
template <PackOrder kOrder>
int pack_int4(const uint8_t *d_codes, const void *d_scales_src, int act, int n, int k, int group,
              void *d_q, void *d_scales, cudaStream_t s) {
  const int rows = group ? k / group : 1, prows = mgen__scale_rows(k, group);
  const uint16_t pad = u4b8_pad_scale(act);
  pack_codes<kOrder><<<blocks_for(packed_words(n, k)), kThreads, 0, s>>>(d_codes, n, k, (uint32_t *)d_q);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return (int)err;
  pack_scales<<<blocks_for((long long)prows * n), kThreads, 0, s>>>(
      (const uint16_t *)d_scales_src, n, rows, prows, group != 0, pad, (uint16_t *)d_scales);
  return (int)cudaGetLastError();
}
// The mma layout's words (u4b8's and u4's alike) or the e4m3 layout's of codes kE4m3.
template <PackOrder kE4m3>
int pack_in(int layout, const uint8_t *d_codes, const void *d_scales_src, int act, int n, int k, int group,
            void *d_q, void *d_scales, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  return layout == MGEN_LAYOUT_E4M3 ? pack_int4<kE4m3>(d_codes, d_scales_src, act, n, k, group, d_q, d_scales, s)
                                    : pack_int4<PackOrder::kU4b8>(d_codes, d_scales_src, act, n, k, group, d_q,
                                                                  d_scales, s);
}
}  // namespace

extern "C" int mgen__pack_u4b8(const uint8_t *d_codes, const void *d_scales_src, int act, int layout,
                               int n, int k, int group, void *d_q, void *d_scales, void *stream) {
  return pack_in<PackOrder::kE4m3U4b8>(layout, d_codes, d_scales_src, act, n, k, group, d_q, d_scales, stream);
}

extern "C" int mgen__pack_u4_words(const uint8_t *d_codes, const void *d_scales_src, int act, int layout,
                                   int n, int k, int group, void *d_q, void *d_scales, void *stream) {
  return pack_in<PackOrder::kE4m3U4>(layout, d_codes, d_scales_src, act, n, k, group, d_q, d_scales, stream);
}

extern "C" int mgen__check_pack_inputs(const mgen__pack_inputs *in, void *d_scratch, void *stream,
                                       unsigned long long first[2]) {
  cudaStream_t s = (cudaStream_t)stream;
  const int blocks = blocks_for(in->ncodes > in->nscales ? in->ncodes : in->nscales);
  unsigned long long *d_first = (unsigned long long *)d_scratch;
  cudaError_t err = cudaMemsetAsync(d_first, 0xff, 2 * sizeof *d_first, s);
  if (err != cudaSuccess) return (int)err;
  if (in->scale_bytes == 1)
    find_bad_inputs<<<blocks, kThreads, 0, s>>>(in->codes, in->ncodes, (const uint8_t *)in->scales,
                                                in->nscales, (uint8_t)in->nonfinite, d_first);
  else
    find_bad_inputs<<<blocks, kThreads, 0, s>>>(in->codes, in->ncodes, (const uint16_t *)in->scales,
                                                in->nscales, (uint16_t)in->nonfinite, d_first);
  if ((err = cudaGetLastError()) != cudaSuccess) return (int)err;
  if ((err = cudaMemcpyAsync(first, d_first, 2 * sizeof *d_first, cudaMemcpyDeviceToHost, s)) !=
      cudaSuccess)
    return (int)err;
  return (int)cudaStreamSynchronize(s);
}
