// mgen_wgmma.cuh -- the Hopper PTX the wgmma family is built from: warpgroup MMA fences and
// groups, shared-memory matrix descriptors, the async-proxy fence. Each wrapper is one
// instruction. The MMA itself is emitted per kernel (its accumulator count is the kernel's n).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace mgen {
namespace wg {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Orders this thread's register writes (the A fragment, the accumulators) before the next
// wgmma.mma_async reads them.
__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Pins registers that an issued wgmma still reads or writes (the accumulators, the A fragments
// of a stage in flight) to this point of the program: without it the compiler may reuse their
// physical registers for other values before the wgmma is waited for, and ptxas then
// serializes every wgmma (warning C7513). Emits no instruction.
template <int kN>
__device__ __forceinline__ void pin(float (&x)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) asm volatile("" : "+f"(x[i])::"memory");
}
template <int kRows, int kN>
__device__ __forceinline__ void pin(float (&x)[kRows][kN]) {
#pragma unroll
  for (int i = 0; i < kRows; ++i) pin(x[i]);
}
template <int kRows, int kN>
__device__ __forceinline__ void pin(uint32_t (&x)[kRows][kN]) {
#pragma unroll
  for (int i = 0; i < kRows; ++i)
#pragma unroll
    for (int j = 0; j < kN; ++j) asm volatile("" : "+r"(x[i][j])::"memory");
}
template <int kPlanes, int kRows, int kN>
__device__ __forceinline__ void pin(uint32_t (&x)[kPlanes][kRows][kN]) {
#pragma unroll
  for (int i = 0; i < kPlanes; ++i) pin(x[i]);
}

template <int kPending>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Makes this thread's ordinary shared-memory stores visible to the async proxy (wgmma's
// operand reads); a barrier after it makes everyone's visible.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Shared-memory matrix descriptor of a K-major operand stored 128-byte swizzled (what a TMA box
// with CU_TENSOR_MAP_SWIZZLE_128B writes, Swizzle<3,4,3>): rows of 128 bytes (64 elements of
// K), 8-row atoms of 1 KiB one after another (SBO = 1024 bytes), the leading offset unused by
// this mode (1). `addr` is the atom's start plus the byte offset along K (32 per 16-deep
// step): the hardware applies the XOR on the address bits, so the atoms must be 1 KiB aligned.
// The low word holds the start address (addr >> 4, 14 bits) and the leading offset; the high
// word is the same for every address. Shared addresses stay below 2^18 (228 KiB), so moving
// the start by a multiple of 16 bytes is adding (bytes >> 4) to the low word, with no carry out
// of its field: a kernel takes one low word per stage and steps it with adds (desc_sw128_at).
constexpr uint32_t kSw128DescHi = (1024 >> 4) | (1u << 30);  // SBO 1024 B, layout type 1 (SW128)
__device__ __forceinline__ uint32_t desc_sw128_lo(uint32_t addr) { return ((addr & 0x3ffff) >> 4) | (1u << 16); }
__device__ __forceinline__ uint64_t desc_sw128_at(uint32_t lo) { return (uint64_t)kSw128DescHi << 32 | lo; }

// FP32 to the activation type, round to nearest even.
template <class Act>
__device__ __forceinline__ Act from_float(float x);
template <>
__device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

}  // namespace wg
}  // namespace mgen
