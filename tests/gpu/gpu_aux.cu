/* gpu_aux.cu -- see gpu_aux.h. */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "gpu_aux.h"
#include "mgen/mgen.h"

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(size_t count) {
  const size_t b = (count + kThreads - 1) / kThreads;
  return (unsigned)(b < 65536 ? (b ? b : 1) : 65536); /* grid-stride loops cover the rest */
}

/* The value is exact in both types (gpu_aux.h), so float conversion rounds nothing. */
__device__ uint16_t act_bits(double v, int act) {
  if (act == MGEN_ACT_BF16) return __bfloat16_as_ushort(__float2bfloat16_rn((float)v));
  return __half_as_ushort(__float2half_rn((float)v));
}

__global__ void fill_act(uint16_t *dst, size_t count, uint32_t seed, int act, int scales) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x)
    dst[i] = act_bits(scales ? aux_scale_value(i, seed) : aux_act_value(i, seed), act);
}

__global__ void fill_codes(uint8_t *dst, size_t count, uint32_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x)
    dst[i] = (uint8_t)aux_code(i, seed);
}

__global__ void count_value(const uint16_t *p, size_t count, uint16_t value, int equal,
                            unsigned long long *out) {
  unsigned long long mine = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x)
    mine += (p[i] == value) == (equal != 0);
  if (mine) atomicAdd(out, mine);
}

__global__ void spin(unsigned long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

__global__ void copy16(uint4 *dst, const uint4 *src, size_t count, unsigned long long ns) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x)
    dst[i] = src[i];
}

int last() { return (int)cudaGetLastError(); }

} // namespace

extern "C" int aux_fill_act(uint16_t *dst, size_t count, uint32_t seed, int act, void *stream) {
  fill_act<<<blocks_for(count), kThreads, 0, (cudaStream_t)stream>>>(dst, count, seed, act, 0);
  return last();
}

extern "C" int aux_fill_scales(uint16_t *dst, size_t count, uint32_t seed, int act,
                               void *stream) {
  fill_act<<<blocks_for(count), kThreads, 0, (cudaStream_t)stream>>>(dst, count, seed, act, 1);
  return last();
}

extern "C" int aux_fill_codes(uint8_t *dst, size_t count, uint32_t seed, void *stream) {
  fill_codes<<<blocks_for(count), kThreads, 0, (cudaStream_t)stream>>>(dst, count, seed);
  return last();
}

extern "C" int aux_count(const uint16_t *p, size_t count, uint16_t value, int equal,
                         unsigned long long *out, void *stream) {
  cudaError_t e = cudaMemsetAsync(out, 0, sizeof *out, (cudaStream_t)stream);
  if (e != cudaSuccess) return (int)e;
  count_value<<<blocks_for(count), kThreads, 0, (cudaStream_t)stream>>>(p, count, value, equal,
                                                                        out);
  return last();
}

extern "C" int aux_spin(double us, void *stream) {
  spin<<<1, 1, 0, (cudaStream_t)stream>>>((unsigned long long)(us * 1000.0));
  return last();
}

extern "C" int aux_copy(void *dst, const void *src, size_t bytes, double delay_us,
                        void *stream) {
  const size_t count = bytes / 16;
  copy16<<<blocks_for(count), kThreads, 0, (cudaStream_t)stream>>>(
      (uint4 *)dst, (const uint4 *)src, count, (unsigned long long)(delay_us * 1000.0));
  return last();
}

extern "C" int aux_copy_blocks(void *dst, const void *src, size_t bytes, double delay_us,
                               unsigned blocks, void *stream) {
  copy16<<<blocks, kThreads, 0, (cudaStream_t)stream>>>(
      (uint4 *)dst, (const uint4 *)src, bytes / 16, (unsigned long long)(delay_us * 1000.0));
  return last();
}
