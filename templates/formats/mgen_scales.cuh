// mgen_scales.cuh -- how a kernel turns the packed scales into multipliers.
//
// Every scheme has the same hooks, chosen per kernel by the spec (k.scales):
//   group(v, i)            the multiplier of the i-th of the 8 columns a lane group reads from
//                          shared memory (columns 16j + 8h + lane/4 at i = 2j + h; layout.h),
//                          in the activation type, applied to dequantized weights;
//   group_f32(v, i)        optional: the same multiplier in FP32 for tiles that scale their
//                          FP32 sums once per group (kAccScales; ScalesE8M0 builds it from the
//                          exponent directly), else group() widened (acc_multiplier);
//   kPaired, pair(v, j)    where it pays (ScalesE4M3 of both types), group(v, 2j) and
//                          group(v, 2j + 1) converted together into the low and high 16 bits of
//                          a register, and the main loop uses that instead of group (on an
//                          H200 the generic pairing of the other schemes cost 2-7%);
//   column(s, n, k_packed, g, c, f) the FP32 factors of output columns c..c+7, applied to the
//                          FP32 sums in the epilogue (kColumn), so that ranges too wide for a
//                          16-bit multiplier never meet FP16/BF16 arithmetic; factor(s, n,
//                          k_packed, g, c) the one of column c (column_factor below: the wgmma
//                          epilogue);
//   scale_pair_load, scale_pair (below): the multipliers of packed positions i, i + 1 of a
//                          row as one register (the wgmma family's per-step scales).
// Packed scale buffer (runtime/src/formats/layout.h): (k_packed / group) rows of n group scales
// (kBytes each, columns permuted per 64-column chunk), then, for fe2m1, n FP32 column factors at
// byte offset align16(rows * n) (layout.h's mgen__fe2m1_column_offset, from k_packed).
#pragma once
#include "mgen_ptx.cuh"

#include <type_traits>
#include <utility>

namespace mgen {

__device__ __forceinline__ const float* column_factors(const void* scales, int n, int k_packed, int group) {
  const size_t offset = ((size_t)(k_packed / group) * n + 15) / 16 * 16;
  return reinterpret_cast<const float*>(static_cast<const unsigned char*>(scales) + offset);
}

// The zero points of u4 (scheme asym) in its scale buffer: after the (k_packed / group, or 1
// per channel) rows of n scales of `scale_bytes`, at the next 16 bytes (layout.h's
// mgen__zero_offset), rows of n / 2 bytes. Host too: the wgmma launcher maps them for TMA.
__host__ __device__ __forceinline__ const void* zero_rows(const void* scales, int n, int k_packed, int group, int scale_bytes) {
  const size_t rows = group > 0 ? (size_t)(k_packed / group) : 1;
  return static_cast<const unsigned char*>(scales) + (rows * n * scale_bytes + 15) / 16 * 16;
}

// Byte i of v, by one byte permute (selector bytes 4: the zero word's).
__device__ __forceinline__ uint32_t byte_of(const int2& v, int i) {
  return __byte_perm(static_cast<uint32_t>(i < 4 ? v.x : v.y), 0u, 0x4440u | (i & 3));
}
// 2^-e, exactly, for |e| < 32: what the W4A8 kernels multiply their sums by for a partial's
// kLog2 (a byte reads as the weight times 2^kLog2).
__host__ __device__ constexpr float pow2_neg(int e) { return e < 0 ? (float)(1u << -e) : 1.0f / (float)(1u << e); }
// Bytes 2j (low) and 2j + 1 of v: the scale pair of a lane's columns 16j + lane/4 and + 8 (the
// mma family's W4A8 steps that fold a byte scheme's scales into the weights).
__device__ __forceinline__ uint32_t byte_pair_of(const int2& v, int j) {
  return __byte_perm(static_cast<uint32_t>(j < 2 ? v.x : v.y), 0u, (j & 1) ? 0x4432u : 0x4410u);
}
// The FP32 power of two 2^(field0 - 127 - u) for an E8M0 offset u: exponent field
// field0 - min(u, field0), so that u >= field0 gives +0 (a min, a subtract, a shift).
template <uint32_t field0>
__device__ __forceinline__ float exponent_f32(uint32_t u) {
  return __uint_as_float((field0 - min(u, field0)) << 23);
}

// u4b8 with group scales: 16-bit scales of the activation type, used as they are.
template <class Act>
struct ScalesNative {
  using Vec = int4;
  static constexpr bool kColumn = false, kPaired = false;
  __device__ __forceinline__ static Act group(const Vec& v, int i) { return reinterpret_cast<const Act*>(&v)[i]; }
  __device__ __forceinline__ static void column(const void*, int, int, int, int, float (&)[8]) {}
};

// u4b8 per channel: one 16-bit scale per column, multiplied into the FP32 sums.
template <class Act>
struct ScalesChannel {
  using Vec = int4;
  static constexpr bool kColumn = true, kPaired = false;
  __device__ __forceinline__ static Act group(const Vec& v, int i) { return reinterpret_cast<const Act*>(&v)[i]; }
  __device__ __forceinline__ static float factor(const void* scales, int, int, int, int col) {
    return to_float(static_cast<const Act*>(scales)[col]);
  }
  __device__ __forceinline__ static void column(const void* scales, int, int, int, int col, float (&f)[8]) {
    alignas(16) Act s[8];
    *reinterpret_cast<int4*>(s) = *reinterpret_cast<const int4*>(static_cast<const Act*>(scales) + col);
#pragma unroll
    for (int e = 0; e < 8; ++e) f[e] = to_float(s[e]);
  }
};

// FP32 column factors of the fe2m1 schemes (NVFP4: global scale x 2^7; MXFP4: 2^(e_max - 127)).
struct ColumnFactors {
  __device__ __forceinline__ static float factor(const void* scales, int n, int k_packed, int group, int col) {
    return column_factors(scales, n, k_packed, group)[col];
  }
  __device__ __forceinline__ static void column(const void* scales, int n, int k_packed, int group, int col, float (&f)[8]) {
    const float4* c = reinterpret_cast<const float4*>(column_factors(scales, n, k_packed, group) + col);
    const float4 lo = c[0], hi = c[1];
    f[0] = lo.x; f[1] = lo.y; f[2] = lo.z; f[3] = lo.w;
    f[4] = hi.x; f[5] = hi.y; f[6] = hi.z; f[7] = hi.w;
  }
};

// NVFP4: one E4M3 block scale s per 16 weights. Weight = e2m1 * s * global. The multiplier
// m = s * 2^(bias correction) * 2^-7 makes the 16-bit weight e2m1 * s * 2^-7 (at most
// 6 * 448 / 128 = 21); the column factor global * 2^7 restores it in FP32.
template <class Act>
struct ScalesE4M3;

template <>
struct ScalesE4M3<__half> : ColumnFactors {
  using Vec = int2;
  static constexpr bool kColumn = true, kPaired = true;
  // E4M3 [S E3..E0 M2..M0] moved to FP16 bits [15], [13:10], [9:7] reads as s * 2^-8 (bias 15
  // vs 7), subnormals included; times 2^15 gives s * 2^14 * 2^-7. Exact: s has 4 significant
  // bits and m <= 448 * 2^7 = 57344 < 65504.
  __device__ __forceinline__ static __half group(const Vec& v, int i) {
    const uint32_t b = byte_of(v, i);
    const __half s = __ushort_as_half(static_cast<uint16_t>(((b & 0x80u) << 8) | ((b & 0x7fu) << 7)));
    return __hmul(s, __ushort_as_half(0x7800));  // 2^15
  }
  // The same for bytes 2j and 2j + 1 at once: one byte permute puts them in the high bytes of
  // the two 16-bit lanes ([15:8] and [31:24]), a shift by one and a masked merge move both as
  // above, one __hmul2 scales both: 5 instructions for two multipliers instead of ~14.
  // From sm_89 the hardware converts the two bytes (cvt.rn.f16x2.e4m3x2: exact, byte 2j to the
  // low lane) and one __hmul2 by 2^7 makes the same multipliers in 2 instructions.
  __device__ __forceinline__ static uint32_t pair(const Vec& v, int j) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
    const uint32_t w = j < 2 ? v.x : v.y;
    const uint16_t bytes = static_cast<uint16_t>((j & 1) ? w >> 16 : w);
    uint32_t s;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(s) : "h"(bytes));
    return as_u32(__hmul2(as_half2(s), __half2half2(__ushort_as_half(0x5800))));  // 2^7
#else
    const uint32_t x = __byte_perm(j < 2 ? v.x : v.y, 0u, (j & 1) ? 0x3424u : 0x1404u);
    const uint32_t s = (x & 0x80008000u) | ((x >> 1) & 0x3f803f80u);
    return as_u32(__hmul2(as_half2(s), __half2half2(__ushort_as_half(0x7800))));
#endif
  }
};

template <>
struct ScalesE4M3<__nv_bfloat16> : ColumnFactors {
  using Vec = int2;
  static constexpr bool kColumn = true, kPaired = true;
  // E4M3 moved to FP32 bits [31], [26:23], [22:20] reads as s * 2^-120; the FP32 steps
  // 2^120 * 2^119 give m = s * 2^126 * 2^-7 (at most 1.75 * 2^127, inside BF16), exact in
  // BF16 (4 significant bits).
  __device__ __forceinline__ static __nv_bfloat16 group(const Vec& v, int i) {
    const uint32_t b = byte_of(v, i);
    const float s = __uint_as_float(((b & 0x80u) << 24) | ((b & 0x7fu) << 20)) * 0x1p120f;
    return __float2bfloat16_rn(s * 0x1p119f);
  }
  // Bytes 2j and 2j + 1 at once, as the FP16 pair: moved to the high bytes of the two lanes
  // (zeros below them), [0 E3..E0 M2..M0] shifted by 4 to BF16 bits [10:7], [6:4] reads as
  // s * 2^-120 (bias 127 vs 7; E4M3 subnormals land on BF16 subnormals, which BF16 arithmetic
  // keeps), then two exact __hmul2 by 2^120 and 2^119 (m = s * 2^126 * 2^-7 needs 2^239, past
  // BF16): 4 instructions for two multipliers where group() takes ~8 for one. The stored
  // scales have no sign (layout.h, mgen__nvfp4_stored_scale: the packers move it into the
  // codes), so the shift alone places both bytes: the sign's masks cost 5-7% of BF16 NVFP4
  // decode (bench/notes.md v34 item 5).
  __device__ __forceinline__ static uint32_t pair(const Vec& v, int j) {
    const uint32_t x = __byte_perm(j < 2 ? v.x : v.y, 0u, (j & 1) ? 0x3424u : 0x1404u);
    const uint32_t s = x >> 4;
    const __nv_bfloat162 m = __hmul2(as_bf162(s), __bfloat162bfloat162(__ushort_as_bfloat16(0x7b80)));  // 2^120
    return as_u32(__hmul2(m, __bfloat162bfloat162(__ushort_as_bfloat16(0x7b00))));  // 2^119
  }
};

// MXFP4: one E8M0 power of two 2^(e - 127) per 32 weights; e spans 2^-127..2^127, far beyond
// FP16. The packer stores u = e_max(column) - e (0..254) instead of e, and the column factor
// 2^(e_max - 127) in FP32 (exponent arithmetic, no rounding). In the kernel the multiplier is
// 2^-u times the bias correction, built by writing the exponent field: the 16-bit weight is
// e2m1 * 2^-u, at most 6. Far below the column's largest block the 16-bit weights lose bits
// and finally vanish (FP16: absolute error at most 2^-25, the subnormal spacing; multiplier 0
// past u = 28), which is below 2^-27 of the column's largest weight (at least 4 by the OCP
// rule); BF16 keeps 8 bits down to u = 126 and vanishes past u = 252.
template <class Act>
struct ScalesE8M0;

template <>
struct ScalesE8M0<__half> : ColumnFactors {
  using Vec = int2;
  static constexpr bool kColumn = true, kPaired = false;
  __device__ __forceinline__ static __half group(const Vec& v, int i) {
    const uint32_t u = byte_of(v, i);  // m = 2^(14 - u): exponent field 29 - u
    return __ushort_as_half(static_cast<uint16_t>(u <= 28 ? (29u - u) << 10 : 0u));
  }
  // The same multiplier in FP32 for tiles that scale their FP32 sums (kAccScales): exponent
  // field 141 - u, 0 (the value 0) from u = 141; no FP16 range to clamp to, so blocks down to
  // 2^-126 keep their weights.
  __device__ __forceinline__ static float group_f32(const Vec& v, int i) { return exponent_f32<141>(byte_of(v, i)); }
};

template <>
struct ScalesE8M0<__nv_bfloat16> : ColumnFactors {
  using Vec = int2;
  static constexpr bool kColumn = true, kPaired = false;
  __device__ __forceinline__ static __nv_bfloat16 group(const Vec& v, int i) {
    const uint32_t u = byte_of(v, i);  // m = 2^(126 - u): exponent field 253 - u
    return __ushort_as_bfloat16(static_cast<uint16_t>(u <= 252 ? (253u - u) << 7 : 0u));
  }
  // In FP32 (kAccScales): exponent field 253 - u, as group's BF16 one.
  __device__ __forceinline__ static float group_f32(const Vec& v, int i) { return exponent_f32<253>(byte_of(v, i)); }
};

// Whether dequantization partial D folds the step's block scales into the weights (its
// kFoldsScales: the W4A8 partials that take a scale pair; a partial without the member does
// not). The kernels check it against their spec's folds_scales (partials.lua).
template <class D, class = void>
struct folds_scales : std::false_type {};
template <class D>
struct folds_scales<D, std::void_t<decltype(D::kFoldsScales)>> : std::bool_constant<D::kFoldsScales> {};

// The FP32 multiplier of column i for tiles that scale their FP32 sums once per group
// (kAccScales): the scheme's own group_f32 where it has one, else its 16-bit one widened.
template <class S, class = void>
struct has_group_f32 : std::false_type {};
template <class S>
struct has_group_f32<S, std::void_t<decltype(S::group_f32(std::declval<const typename S::Vec&>(), 0))>>
    : std::true_type {};
template <class S>
__device__ __forceinline__ float acc_multiplier(const typename S::Vec& v, int i) {
  if constexpr (has_group_f32<S>::value) return S::group_f32(v, i);
  else return to_float(S::group(v, i));
}

// Scales column h (0, 1) of the j-th pair of a dequantized 16-deep step, just before its
// mma: one multiplier per column, or, for schemes with kPaired, both columns at h = 0 from one
// paired conversion. A template, so that the branch a scheme does not take is never compiled.
template <class Act, class S>
__device__ __forceinline__ void scale_step(uint32_t (&f)[2][2], const typename S::Vec& v, int j, int h) {
  if constexpr (S::kPaired) {
    if (h == 0) scale_frag_pair<Act>(f, S::pair(v, j));
  } else {
    scale_frag(f[h], S::group(v, 2 * j + h));
  }
}

// Column col's FP32 factor where the scheme has them (S::kColumn), else 1.
template <class S>
__device__ __forceinline__ float column_factor(const void* scales, int n, int k_packed, int group, int col) {
  if constexpr (S::kColumn) return S::factor(scales, n, k_packed, group, col);
  else return 1.0f;
}

// The scales of packed positions i and i + 1 of a row (two adjacent positions: the columns
// h = 0 and h = 1 of one lane group's pair, layout.h) as stored, one shared-memory load at
// `addr` (i even): 16-bit schemes, two scales of the activation type; byte schemes, two bytes.
// scale_pair turns them into the multipliers for scale_frag_pair, low half first. Two steps, so
// that a kernel can load all of a stage's pairs first and convert each where it is used (the
// wgmma family's per-step scales; the mma family converts from shared memory by vectors).
template <class Act, class S>
__device__ __forceinline__ uint32_t scale_pair_load(uint32_t addr) {
  uint32_t stored;
  if constexpr (sizeof(typename S::Vec) == 8 * sizeof(Act))  // 8 scales of the activation type
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(stored) : "r"(addr));
  else  // 8 one-byte scales
    asm volatile("ld.shared.u16 %0, [%1];\n" : "=r"(stored) : "r"(addr));
  return stored;
}
template <class Act, class S>
__device__ __forceinline__ uint32_t scale_pair(uint32_t stored) {
  if constexpr (sizeof(typename S::Vec) == 8 * sizeof(Act)) {
    return stored;
  } else {
    const typename S::Vec v = {static_cast<int>(stored), 0};
    if constexpr (S::kPaired) {
      return S::pair(v, 0);
    } else {
      const Act lo = S::group(v, 0), hi = S::group(v, 1);
      return static_cast<uint32_t>(*reinterpret_cast<const uint16_t*>(&lo)) |
             static_cast<uint32_t>(*reinterpret_cast<const uint16_t*>(&hi)) << 16;
    }
  }
}

}  // namespace mgen
