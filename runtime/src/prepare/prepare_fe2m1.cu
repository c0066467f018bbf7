// prepare_fe2m1.cu -- GPU kernels that quantize FP16/BF16 weights to fe2m1 (NVFP4, MXFP4) and
// repack FP4 checkpoints into the layout the fe2m1 kernels read (layout.h, mgen_scales.cuh).
//
// Output. d_q: n*k_packed/8 int32 words; nibble b of word w holds the E2M1 code [S E1 E0 M0] of
// the element mgen__w4_source_fe2m1(w, b) names, each word's bits then permuted for the
// activation type (layout.h, mgen__fe2m1_word). d_scales: mgen__scale_rows rows x n bytes,
// each row permuted per 64-column chunk (position p holds column mgen__scale_source_col(p)),
// then at byte offset mgen__fe2m1_column_offset(n, k, group) n FP32 column factors in column
// order. The K padding (layout.h) is what these rules make of zero weights, written without
// reading any: code 0 (pack_words), block scale byte 0 (MGEN_FE2M1_PAD_SCALE: E4M3 0; E8M0
// 2^-127, which never raises e_max, stored as u = e_max).
//
// NVFP4 (NVIDIA's recipe, as ModelOpt's NVFP4 weights), FP32 with one IEEE rounding per step:
//   amax   = max |w| over the tensor
//   global = amax / 2688 (6 * 448), or 1 for an all-zero tensor      column factor: global * 2^7
//   s      = e4m3(bmax / (6 * global))     bmax = max |w| of the 16-block; nearest, ties to
//                                          even, subnormals kept, saturating at 448
//   code   = e2m1(|w| / (s * global))      nearest, ties to even, saturating at 6; w's sign
//                                          bit; magnitude 0 where s * global is 0
// MXFP4 (OCP Microscaling v1.0, section 6.3; E2M1's largest exponent is 2):
//   e      = clamp(floor(log2 bmax) - 2, -127, 127) + 127     bmax of the 32-block; e = 0 for
//                                          bmax = 0 (and below 2^-126, where the clamp binds)
//   code   = e2m1(|w| * 2^(127 - e))       as above: |w| / 2^(e-127) < 8, 6 and up saturate
//   stored: u = e_max(column) - e, column factor 2^(e_max - 127) (the FP32 subnormal
//   0x00400000 for e_max = 0): the exponent arithmetic of mgen_scales.cuh's ScalesE8M0.
// The e4m3 layout (W4A8, MXFP4 only; layout.h, "W4A8 words"): the words of mgen__e4m3_word,
// each code of a block at u > MGEN_MXFP4_E4M3_U_MAX replaced by mgen__mxfp4_e4m3_code(code, u)
// (the code kernels read u from the scale rows, written unclamped), then every stored u
// clamped to MGEN_MXFP4_E4M3_U_MAX (clamp_offsets); scale rows and column factors otherwise as
// above. From FP16/BF16 weights that rounds twice (E2M1 at e, then at the floor), so that
// quantizing and importing the checkpoint quantizing makes give the same bits.
// The CPU reference (tests/common/fp4.c) implements these rules independently, with
// nearest-value searches where this file uses rint; tests/gpu/test_gemm_gpu.c compares the two
// bit for bit. Weights must be finite (an inf or NaN poisons its block, or for NVFP4 the tensor).
//
// Checkpoint import (mgen_pack_fp4): codes are gathered from the two-per-byte checkpoint
// bytes; NVFP4 block scales are copied into the permuted rows without their sign, which moves
// into the block's codes (layout.h, mgen__nvfp4_stored_scale / _code: the kernels read
// non-negative E4M3 scales), and every column factor is global_scale * 2^7; MXFP4 scales
// become u = e_max - e as above. NaN block scales
// (E4M3 0x7f/0xff, E8M0 0xff) are rejected before (prepare.cu's input check); were an E8M0
// 0xff to get here, its column's factor would be NaN, so its outputs NaN, not garbage.
//
// Scratch, no allocation: NVFP4 needs the tensor amax before any block scale. It lives, as the
// bits of a non-negative float (these order like unsigned ints, so atomicMax on them is a float
// max), in the first 4 bytes of the column-factor area of d_scales: zeroed by cudaMemsetAsync,
// raised by amax_kernel, read by the scale and code kernels, and overwritten last by a one-block
// kernel whose threads all read it before a __syncthreads and write the factors after it.
//
// The code kernels are one-thread-per-word gathers like prepare.cu's pack_codes: eight
// scattered element reads bound each word, so the eight shift-and-or steps of the pack cost
// nothing that cvt.pack.sat.u4 (int4-packing-ptx.zh.md) would save.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "formats/layout.h"
#include "prepare/kernel_util.cuh"
#include "prepare/pack_words.cuh"
#include "mgen/mgen.h"
#include "prepare/prepare_fe2m1.h"

namespace {

constexpr int kAmaxBlocks = 1024;           // one atomic per warp: 8192 atomics at most
constexpr int kNvfp4Group = 16, kMxfp4Group = 32;

static_assert(MGEN_W4_NIBBLES == 8, "an int32 word holds eight 4-bit codes");
static_assert(kMxfp4Group == 32, "mxfp4_columns maps a block's 32 elements onto a warp's lanes");

__device__ __forceinline__ float load(const __half *p) { return __half2float(*p); }
__device__ __forceinline__ float load(const __nv_bfloat16 *p) { return __bfloat162float(*p); }

__device__ __forceinline__ uint32_t sign_bit(float v) { return __float_as_uint(v) >> 31; }

// E2M1 magnitude code (0..7) of a >= 0: nearest, ties to even, saturating at 6. The grid is
// uniform on [0,2) (step 0.5, codes 0..4), [2,4) (step 1, codes 4..6) and [4,6] (step 2, codes
// 6..7), so rint of the value in steps is the rounding, and an even step count is an even code.
__device__ __forceinline__ uint32_t e2m1_magnitude(float a) {
  if (!(a < 6.0f)) return 7u;
  if (a < 2.0f) return (uint32_t)rintf(__fmul_rn(a, 2.0f));
  if (a < 4.0f) return (uint32_t)rintf(a) + 2u;
  return (uint32_t)rintf(__fmul_rn(a, 0.5f)) + 4u;
}

// Value of a non-negative E4M3 code (the sign bit is ignored).
__device__ __forceinline__ float e4m3_value(uint32_t b) {
  const uint32_t exp = (b >> 3) & 15u, man = b & 7u;
  return exp ? __uint_as_float(((exp + 120u) << 23) | (man << 20)) : __fmul_rn((float)man, 0x1p-9f);
}

// OCP shared exponent byte of a block whose largest magnitude is bmax >= 0: the FP32 exponent
// field is floor(log2 bmax) + 127 for normal bmax, so e = field - 2, clamped at 0 (2^-127).
__device__ __forceinline__ uint32_t e8m0_shared(float bmax) {
  const uint32_t field = (__float_as_uint(bmax) >> 23) & 0xffu;
  return field > 2u ? field - 2u : 0u;
}

// FP32 bits of the column factor 2^(e_max - 127): exponent field e_max, the subnormal
// 0x00400000 for e_max = 0, NaN for the E8M0 NaN byte 0xff. bits >> 23 gives e_max back.
__device__ __forceinline__ uint32_t e8m0_factor_bits(uint32_t e_max) {
  return e_max == 0u ? 0x00400000u : e_max == 255u ? 0x7fc00000u : e_max << 23;
}

// NVFP4's global scale from the amax scratch.
__device__ __forceinline__ float nvfp4_global(const uint32_t *amax_bits) {
  const float amax = __uint_as_float(*amax_bits);
  return amax > 0.0f ? __fdiv_rn(amax, MGEN_NVFP4_GLOBAL_DIVISOR) : 1.0f;
}

// ---------------------------------------------------------------- quantize

template <class T>
__global__ void amax_kernel(const T *__restrict__ w, long long count, uint32_t *amax_bits) {
  float m = 0.0f;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x)
    m = fmaxf(m, fabsf(load(w + i)));
  m = warp_max(m);
  if ((threadIdx.x & 31) == 0 && m > 0.0f) atomicMax(amax_bits, __float_as_uint(m));
}

// One thread per scale slot (row g, packed position p): the E4M3 scale of the 16-block of
// column mgen__scale_source_col(p), written straight to its packed position.
template <class T>
__global__ void nvfp4_scales(const T *__restrict__ w, int n, int k, const uint32_t *amax_bits,
                             uint8_t *scales) {
  const float unit = __fmul_rn(6.0f, nvfp4_global(amax_bits));
  const long long slots = (long long)mgen__scale_rows(k, kNvfp4Group) * n;
  for (long long slot = (long long)blockIdx.x * blockDim.x + threadIdx.x; slot < slots;
       slot += (long long)gridDim.x * blockDim.x) {
    const int g = (int)(slot / n), p = (int)(slot % n);
    if (g * kNvfp4Group >= k) {  // a block of the K padding
      scales[slot] = MGEN_FE2M1_PAD_SCALE;
      continue;
    }
    const T *block = w + (size_t)mgen__scale_source_col(p) * k + (size_t)g * kNvfp4Group;
    float bmax = 0.0f;
#pragma unroll
    for (int i = 0; i < kNvfp4Group; i++) bmax = fmaxf(bmax, fabsf(load(block + i)));
    scales[slot] = (uint8_t)e4m3_encode(__fdiv_rn(bmax, unit));
  }
}

// Last NVFP4 step: every column factor is global * 2^7. One block, so that the __syncthreads
// orders every read of the amax scratch (factor 0's bytes) before any write.
__global__ void nvfp4_columns(int n, uint32_t *factors) {
  const float global = nvfp4_global(factors);
  __syncthreads();
  const uint32_t f = __float_as_uint(__fmul_rn(global, 128.0f));
  for (int i = threadIdx.x; i < n; i += blockDim.x) factors[i] = f;
}

// One warp per column: the shared exponent of each 32-block (lane i reads element 32g + i),
// first stored as e while e_max accumulates, then rewritten as u = e_max - e (the padded blocks
// as e = MGEN_FE2M1_PAD_SCALE); lane 0 writes the column factor.
template <class T>
__global__ void mxfp4_columns(const T *__restrict__ w, int n, int k, uint8_t *scales,
                              uint32_t *factors) {
  const int lane = threadIdx.x & 31, groups = k / kMxfp4Group;
  const int rows = mgen__scale_rows(k, kMxfp4Group);
  const long long warps = (long long)gridDim.x * blockDim.x / 32;
  for (long long col = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; col < n;
       col += warps) {
    const T *row = w + (size_t)col * k;
    uint8_t *dst = scales + mgen__scale_packed_pos((int)col);
    uint32_t e_max = 0;
    for (int g = 0; g < groups; g++) {
      const uint32_t e = e8m0_shared(warp_max(fabsf(load(row + (size_t)g * kMxfp4Group + lane))));
      e_max = e > e_max ? e : e_max;
      if (lane == 0) dst[(size_t)g * n] = (uint8_t)e;
    }
    __syncwarp();  // lane 0's bytes visible to the lanes that rewrite them
    for (int g = lane; g < rows; g += 32)
      dst[(size_t)g * n] = (uint8_t)(e_max - (g < groups ? dst[(size_t)g * n] : MGEN_FE2M1_PAD_SCALE));
    if (lane == 0) factors[col] = e8m0_factor_bits(e_max);
    __syncwarp();
  }
}

// The W4A8 (e4m3 layout) code of a block at stored offset u (unclamped): the floor rounding.
template <PackOrder kOrder>
__device__ __forceinline__ uint32_t layout_code(uint32_t code, uint32_t u) {
  if constexpr (kOrder == PackOrder::kE4m3Fe2m1) return mgen__mxfp4_e4m3_code(code, (int)u);
  else return code;
}

// One thread per packed word: the eight codes from the weights and the scales already packed.
template <class T, int kScheme, PackOrder kOrder>
__global__ void quantize_codes(const T *__restrict__ w, int n, int k, const uint8_t *scales,
                               const uint32_t *factors, uint32_t *__restrict__ q) {
  constexpr int kGroup = kScheme == MGEN_SCHEME_NVFP4 ? kNvfp4Group : kMxfp4Group;
  const float global = kScheme == MGEN_SCHEME_NVFP4 ? nvfp4_global(factors) : 0.0f;
  pack_words<kOrder>(n, k, q, [&](int kk, int nn) {
    const float v = load(w + (size_t)nn * k + kk);
    const uint32_t s = scales[(size_t)(kk / kGroup) * n + mgen__scale_packed_pos(nn)];
    float x;
    if constexpr (kScheme == MGEN_SCHEME_NVFP4) {
      const float d = __fmul_rn(e4m3_value(s), global);
      x = d > 0.0f ? __fdiv_rn(fabsf(v), d) : 0.0f;
    } else {
      const uint32_t e = (factors[nn] >> 23) - s;  // e_max - u; 1 / 2^(e-127) is exact
      x = __fmul_rn(fabsf(v), __uint_as_float((254u - e) << 23));
    }
    return layout_code<kOrder>(sign_bit(v) << 3 | e2m1_magnitude(x), s);
  });
}

// The e4m3 layout's last MXFP4 step: every stored u (the K padding's too) clamped to the
// tables' floor, after the code kernels read them unclamped.
__global__ void clamp_offsets(uint8_t *scales, long long count) {
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x)
    if (scales[i] > MGEN_MXFP4_E4M3_U_MAX) scales[i] = MGEN_MXFP4_E4M3_U_MAX;
}

// ---------------------------------------------------------------- checkpoint import

// One thread per packed word (kOrder: the activation type's, or the e4m3 layout's, layout.h):
// codes from the checkpoint's bytes (low nibble = even k); for NVFP4 (nvfp4_scales: the
// checkpoint's block scales, n x k / 16) with the sign of a negative block scale moved in; for
// the e4m3 layout (MXFP4) rounded past the floor by the stored u (scales: import_mxfp4_columns
// ran first).
template <PackOrder kOrder>
__global__ void import_codes(const uint8_t *__restrict__ packed, const uint8_t *__restrict__ nvfp4_scales,
                             const uint8_t *__restrict__ scales, int n, int k, uint32_t *__restrict__ q) {
  pack_words<kOrder>(n, k, q, [&](int kk, int nn) {
    const uint32_t byte = packed[(size_t)nn * (k / 2) + kk / 2];
    const uint32_t code = (byte >> (4 * (kk & 1))) & 0xfu;
    if constexpr (kOrder == PackOrder::kE4m3Fe2m1)
      return mgen__mxfp4_e4m3_code(code, scales[(size_t)(kk / kMxfp4Group) * n + mgen__scale_packed_pos(nn)]);
    if (nvfp4_scales == nullptr) return code;
    return mgen__nvfp4_stored_code(code, nvfp4_scales[(size_t)nn * (k / kNvfp4Group) + kk / kNvfp4Group]);
  });
}

// NVFP4: the E4M3 bytes without their sign (import_codes moved it), into the permuted rows;
// the padded rows' byte after them.
__global__ void import_nvfp4_scales(const uint8_t *__restrict__ src, int n, int groups, int rows,
                                    uint8_t *__restrict__ dst) {
  const long long total = (long long)rows * n;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
       i += (long long)gridDim.x * blockDim.x) {
    const int g = (int)(i / n), p = (int)(i % n);
    dst[i] = g < groups
                 ? (uint8_t)mgen__nvfp4_stored_scale(src[(size_t)mgen__scale_source_col(p) * groups + g])
                 : MGEN_FE2M1_PAD_SCALE;
  }
}

__global__ void fill_factors(int n, float value, float *factors) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    factors[i] = value;
}

// MXFP4: one warp per column (its E8M0 bytes are contiguous in the checkpoint): e_max, then
// u = e_max - e into the permuted rows (e = MGEN_FE2M1_PAD_SCALE for the padded ones) and the
// column factor.
__global__ void import_mxfp4_columns(const uint8_t *__restrict__ src, int n, int groups, int rows,
                                     uint8_t *__restrict__ scales, uint32_t *__restrict__ factors) {
  const int lane = threadIdx.x & 31;
  const long long warps = (long long)gridDim.x * blockDim.x / 32;
  for (long long col = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; col < n;
       col += warps) {
    const uint8_t *e = src + (size_t)col * groups;
    uint32_t e_max = 0;
    for (int g = lane; g < groups; g += 32) e_max = e[g] > e_max ? e[g] : e_max;
    e_max = __reduce_max_sync(0xffffffffu, e_max);
    uint8_t *dst = scales + mgen__scale_packed_pos((int)col);
    for (int g = lane; g < rows; g += 32)
      dst[(size_t)g * n] = (uint8_t)(e_max - (g < groups ? e[g] : MGEN_FE2M1_PAD_SCALE));
    if (lane == 0) factors[col] = e8m0_factor_bits(e_max);
  }
}

// ---------------------------------------------------------------- host side

#define LAUNCHED()                                   \
  do {                                               \
    cudaError_t err_ = cudaGetLastError();           \
    if (err_ != cudaSuccess) return (int)err_;       \
  } while (0)

// launch(order) with the word order of fe2m1 weights in `layout` for activations kAct (the
// e4m3 layout's words are the same for both).
template <int kAct, class Launch>
void with_order(int layout, Launch launch) {
  constexpr PackOrder kMma = kAct == MGEN_ACT_BF16 ? PackOrder::kFe2m1Bf16 : PackOrder::kFe2m1F16;
  if (layout == MGEN_LAYOUT_E4M3) launch(std::integral_constant<PackOrder, PackOrder::kE4m3Fe2m1>());
  else launch(std::integral_constant<PackOrder, kMma>());
}
template <class T>
constexpr int act_of() { return std::is_same<T, __nv_bfloat16>::value ? MGEN_ACT_BF16 : MGEN_ACT_F16; }

// The e4m3 layout's clamp (MXFP4; weights.c refuses NVFP4 in that layout).
int clamp_if_e4m3(int layout, uint8_t *scales, int n, int k, cudaStream_t s) {
  if (layout != MGEN_LAYOUT_E4M3) return 0;
  const long long count = (long long)mgen__scale_rows(k, kMxfp4Group) * n;
  clamp_offsets<<<blocks_for(count), kThreads, 0, s>>>(scales, count);
  return (int)cudaGetLastError();
}

template <class T>
int quantize(int scheme, int layout, const T *w, int n, int k, uint32_t *q, uint8_t *scales, cudaStream_t s) {
  const int group = scheme == MGEN_SCHEME_NVFP4 ? kNvfp4Group : kMxfp4Group;
  uint32_t *factors = reinterpret_cast<uint32_t *>(scales + mgen__fe2m1_column_offset(n, k, group));
  const long long elems = (long long)n * k, words = packed_words(n, k);
  if (scheme == MGEN_SCHEME_NVFP4) {
    cudaError_t err = cudaMemsetAsync(factors, 0, sizeof *factors, s);
    if (err != cudaSuccess) return (int)err;
    const int amax_blocks = blocks_for(elems) < kAmaxBlocks ? blocks_for(elems) : kAmaxBlocks;
    amax_kernel<<<amax_blocks, kThreads, 0, s>>>(w, elems, factors);
    LAUNCHED();
    nvfp4_scales<<<blocks_for((long long)mgen__scale_rows(k, kNvfp4Group) * n), kThreads, 0, s>>>(
        w, n, k, factors, scales);
    LAUNCHED();
    with_order<act_of<T>()>(layout, [&](auto order) {
      quantize_codes<T, MGEN_SCHEME_NVFP4, decltype(order)::value><<<blocks_for(words), kThreads, 0, s>>>(
          w, n, k, scales, factors, q);
    });
    LAUNCHED();
    nvfp4_columns<<<1, kThreads, 0, s>>>(n, factors);
  } else {
    mxfp4_columns<<<blocks_for((long long)n * 32), kThreads, 0, s>>>(w, n, k, scales, factors);
    LAUNCHED();
    with_order<act_of<T>()>(layout, [&](auto order) {
      quantize_codes<T, MGEN_SCHEME_MXFP4, decltype(order)::value><<<blocks_for(words), kThreads, 0, s>>>(
          w, n, k, scales, factors, q);
    });
    LAUNCHED();
    return clamp_if_e4m3(layout, scales, n, k, s);
  }
  return (int)cudaGetLastError();
}

}  // namespace

extern "C" int mgen__quantize_fe2m1(int act, int scheme, int layout, const void *d_w, int n, int k,
                                    void *d_q, void *d_scales, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  uint32_t *q = (uint32_t *)d_q;
  uint8_t *scales = (uint8_t *)d_scales;
  if (act == MGEN_ACT_BF16) return quantize(scheme, layout, (const __nv_bfloat16 *)d_w, n, k, q, scales, s);
  return quantize(scheme, layout, (const __half *)d_w, n, k, q, scales, s);
}

extern "C" int mgen__pack_fe2m1(int act, int scheme, int layout, const uint8_t *d_packed,
                                const uint8_t *d_block_scales, float column_factor, int n, int k,
                                void *d_q, void *d_scales, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  const int group = scheme == MGEN_SCHEME_NVFP4 ? kNvfp4Group : kMxfp4Group, groups = k / group;
  const int rows = mgen__scale_rows(k, group);
  uint8_t *scales = (uint8_t *)d_scales;
  uint32_t *factors = reinterpret_cast<uint32_t *>(scales + mgen__fe2m1_column_offset(n, k, group));
  const uint8_t *nvfp4 = scheme == MGEN_SCHEME_NVFP4 ? d_block_scales : nullptr;
  const long long blocks = blocks_for(packed_words(n, k));
  if (scheme == MGEN_SCHEME_MXFP4) {  // first: the e4m3 layout's codes read the offsets
    import_mxfp4_columns<<<blocks_for((long long)n * 32), kThreads, 0, s>>>(
        d_block_scales, n, groups, rows, scales, factors);
    LAUNCHED();
  }
  const auto import = [&](auto order) {
    import_codes<decltype(order)::value><<<blocks, kThreads, 0, s>>>(d_packed, nvfp4, scales, n, k, (uint32_t *)d_q);
  };
  if (act == MGEN_ACT_BF16) with_order<MGEN_ACT_BF16>(layout, import);
  else with_order<MGEN_ACT_F16>(layout, import);
  LAUNCHED();
  if (scheme == MGEN_SCHEME_NVFP4) {
    import_nvfp4_scales<<<blocks_for((long long)rows * n), kThreads, 0, s>>>(d_block_scales, n,
                                                                            groups, rows, scales);
    LAUNCHED();
    fill_factors<<<blocks_for(n), kThreads, 0, s>>>(n, column_factor, (float *)factors);
    return (int)cudaGetLastError();
  }
  return clamp_if_e4m3(layout, scales, n, k, s);
}
