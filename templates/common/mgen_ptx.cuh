// mgen_ptx.cuh -- the PTX the kernels are built from: cp.async, ldmatrix, mma, lop3, and the
// split tiles' arrival counter (every family's, and the formats' partials).
// Each wrapper is one instruction, so the SASS of a kernel reads like its template.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace mgen {

// 16-byte global -> shared copy that bypasses L1 (.cg): weights and activations are read once
// per block. `src_bytes` 0 zero-fills the destination (rows past M) without reading `src`.
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int src_bytes = 16) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int n>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(n)); }

// A block's arrival on a split tile's counter, by one thread after a barrier of the block's
// threads that wrote partial sums: the add releases (at GPU scope) every write the barrier
// ordered before it, and acquires those of the blocks counted earlier, for the block that finds
// itself last (its reads after the next barrier see them). One fence in one thread where every
// thread ran __threadfence() twice (MEMBAR.SC.GPU): bench/notes.md v26. Returns the count before.
__device__ __forceinline__ int arrive_acq_rel(int* counter) {
  int before;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;\n" : "=r"(before) : "l"(counter) : "memory");
  return before;
}

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8x8 b16 matrices; lane l supplies the row address of matrix l/8, row l%8.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

// Two 8x8 b16 matrices; lane l < 16 supplies the row address of matrix l/8, row l%8 (the
// addresses of lanes 16-31 are not read).
__device__ __forceinline__ void ldmatrix_x2(uint32_t (&r)[2], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(addr));
}

// D = A * B + D, 16x8x16, FP16 inputs, FP32 accumulators.
__device__ __forceinline__ void mma_f16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// D = A * B + D, 16x8x16, BF16 inputs, FP32 accumulators.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Four FP8 E4M3 values (bytes 0..3 of x) to FP16 pairs, exactly (every E4M3 value is an FP16
// one): lo = (byte 0, byte 1), hi = (byte 2, byte 3), the first of each pair in the low half.
// sm_89 and later convert in one instruction a pair; before (an sm_80 build run by an sm_89
// device), the bits move: a byte [S E3..E0 M2..M0] at bits 7..14 of a half, S carried up to
// bit 15, reads as its value times 2^-8 (E4M3's exponent bias 7, FP16's 15; subnormals too),
// and one multiply by 2^8 (exact) restores it.
__device__ __forceinline__ void e4m3x4_to_f16x2(uint32_t x, uint32_t& lo, uint32_t& hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  asm("{\n.reg .b16 l, h;\nmov.b32 {l, h}, %2;\ncvt.rn.f16x2.e4m3x2 %0, l;\ncvt.rn.f16x2.e4m3x2 %1, h;\n}\n"
      : "=r"(lo), "=r"(hi)
      : "r"(x));
#else
  const uint32_t two8 = 0x5c005c00u;  // (256, 256) in FP16
  uint32_t t[2] = {__byte_perm(x, 0u, 0x1404) >> 1, __byte_perm(x, 0u, 0x3424) >> 1};
  for (uint32_t& u : t) {
    u += u & 0x40004000u;
    asm("mul.rn.f16x2 %0, %0, %1;\n" : "+r"(u) : "r"(two8));
  }
  lo = t[0], hi = t[1];
#endif
}

// Any 3-input bitwise function in one instruction; lut is the truth table over (a, b, c)
// with a = 0xf0, b = 0xcc, c = 0xaa.
template <int lut>
__device__ __forceinline__ uint32_t lop3(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm volatile("lop3.b32 %0, %1, %2, %3, %4;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(lut));
  return d;
}

__device__ __forceinline__ __half2 as_half2(uint32_t x) { return *reinterpret_cast<__half2*>(&x); }
__device__ __forceinline__ uint32_t as_u32(__half2 x) { return *reinterpret_cast<uint32_t*>(&x); }
__device__ __forceinline__ __nv_bfloat162 as_bf162(uint32_t x) { return *reinterpret_cast<__nv_bfloat162*>(&x); }
__device__ __forceinline__ uint32_t as_u32(__nv_bfloat162 x) { return *reinterpret_cast<uint32_t*>(&x); }

// The packed pair type of an activation type.
template <class Act>
struct pair_of;
template <>
struct pair_of<__half> { using type = __half2; };
template <>
struct pair_of<__nv_bfloat16> { using type = __nv_bfloat162; };
template <class Act>
__device__ __forceinline__ typename pair_of<Act>::type as_pair(uint32_t x) {
  return *reinterpret_cast<typename pair_of<Act>::type*>(&x);
}

// One 16-bit half of a packed pair in both halves. Written as a scalar broadcast so that ptxas
// folds it into the multiply's operand (HMUL2 R, R, R.H0_H0 / .H1_H1) where an explicit byte
// permute costs an instruction.
template <class Act>
__device__ __forceinline__ typename pair_of<Act>::type low_broadcast(uint32_t x);
template <class Act>
__device__ __forceinline__ typename pair_of<Act>::type high_broadcast(uint32_t x);
template <>
__device__ __forceinline__ __half2 low_broadcast<__half>(uint32_t x) { return __half2half2(__low2half(as_half2(x))); }
template <>
__device__ __forceinline__ __half2 high_broadcast<__half>(uint32_t x) { return __half2half2(__high2half(as_half2(x))); }
template <>
__device__ __forceinline__ __nv_bfloat162 low_broadcast<__nv_bfloat16>(uint32_t x) {
  return __bfloat162bfloat162(__low2bfloat16(as_bf162(x)));
}
template <>
__device__ __forceinline__ __nv_bfloat162 high_broadcast<__nv_bfloat16>(uint32_t x) {
  return __bfloat162bfloat162(__high2bfloat16(as_bf162(x)));
}

// Multiplies both registers of a B fragment (4 weights of one column) by a group multiplier,
// one rounding per weight in the activation type.
__device__ __forceinline__ void scale_frag(uint32_t (&frag)[2], __half s) {
  const __half2 s2 = __half2half2(s);
  frag[0] = as_u32(__hmul2(as_half2(frag[0]), s2));
  frag[1] = as_u32(__hmul2(as_half2(frag[1]), s2));
}
__device__ __forceinline__ void scale_frag(uint32_t (&frag)[2], __nv_bfloat16 s) {
  const __nv_bfloat162 s2 = __bfloat162bfloat162(s);
  frag[0] = as_u32(__hmul2(as_bf162(frag[0]), s2));
  frag[1] = as_u32(__hmul2(as_bf162(frag[1]), s2));
}

// Scales a dequantized 16-deep step of two columns: frag[0] (4 weights of one column) by the
// low multiplier of `pair`, frag[1] by the high one (Scales::pair), each broadcast inside the
// multiply (low_broadcast); one rounding per weight in the activation type.
template <class Act>
__device__ __forceinline__ void scale_frag_pair(uint32_t (&frag)[2][2], uint32_t pair) {
  const auto lo = low_broadcast<Act>(pair), hi = high_broadcast<Act>(pair);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    frag[0][r] = as_u32(__hmul2(as_pair<Act>(frag[0][r]), lo));
    frag[1][r] = as_u32(__hmul2(as_pair<Act>(frag[1][r]), hi));
  }
}

__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ __half bits_to(__half, uint16_t b) { return __ushort_as_half(b); }
__device__ __forceinline__ __nv_bfloat16 bits_to(__nv_bfloat16, uint16_t b) { return __ushort_as_bfloat16(b); }

}  // namespace mgen
