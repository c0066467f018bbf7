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
template <int kPending>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Makes this thread's ordinary shared-memory stores visible to the async proxy (wgmma's
// operand reads); a barrier after it makes everyone's visible.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Shared-memory matrix descriptor, no swizzle: start address, LBO = bytes between core
// matrices (8 rows x 16 bytes) adjacent along K, SBO = bytes between core matrices adjacent
// along M/N; each field in 16-byte units.
__device__ __forceinline__ uint64_t desc(uint32_t addr, uint32_t lbo, uint32_t sbo) {
  return (uint64_t)((addr & 0x3ffff) >> 4) | ((uint64_t)((lbo & 0x3ffff) >> 4) << 16) |
         ((uint64_t)((sbo & 0x3ffff) >> 4) << 32);
}

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
