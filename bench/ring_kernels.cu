// ring_kernels.cu -- the kernel of bench_ring: a wgmma-family copy ring with no work behind it,
// to measure how fast a ring of shared-memory stages can stream packed weights on this GPU and
// what the rate depends on (the copy instruction, the stage's size and count, blocks per SM, a
// second box per stage). One producer thread fills the stages; the consumer warpgroups wait
// for each stage, read one word of it per thread and release it, as the wgmma kernels' full and
// empty barriers do (templates/wgmma/include/mgen_wgmma_body.cuh), so what is timed is the ring alone. With
// several producers (lane 0 of as many warps), the block's stages are dealt out round robin.
//
// The weights are the packed layout's matrix of k_steps rows (16-deep steps) x n columns of
// 8 bytes, walked as the wgmma kernels walk it: a unit is one tile of tile_n columns x one
// stage of `steps` rows, the units of a column tile in K order, the blocks taking equal shares
// of all units (stream-K order). Ways to fetch a unit's W (ring_method):
//   RING_TMA_2D     one 2-D tensor box of steps x tile_n (the wgmma kernels today);
//   RING_BULK_ROWS  `steps` 1-D bulk copies of tile_n x 8 contiguous bytes, one per row;
//   RING_BULK_TILE  one 1-D bulk copy of the unit's bytes, as a layout whose stage of a column
//                   tile is one contiguous block would allow (same bytes, another order).
// Optionally each stage also brings an A box (a_rows x 64 FP16, 128-byte swizzled) from a
// small activation matrix, as the kernels do.
#include <cuda_runtime.h>
#include <stdint.h>

#include "mgen_tma.cuh"
#include "mgen_wgmma_sched.h"

#include "ring_kernels.h"

namespace {

struct Args {
  const uint8_t* w;
  int n, k_steps, tile_n, steps, stages, method, a_rows, producers;
  long long units;
  int k_stages;  // stages per column tile: k_steps / steps
  unsigned* sink;
};

__global__ void ring_kernel(const __grid_constant__ CUtensorMap map_w, const __grid_constant__ CUtensorMap map_a,
                            const Args p) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const int a_bytes = p.a_rows * 128;  // one swizzle row of 64 FP16 per row of A
  const int w_bytes = p.steps * p.tile_n * 8;
  const int stage_bytes = a_bytes + w_bytes;
  const uint32_t base = ((uint32_t)__cvta_generic_to_shared(smem) + 1023) & ~1023u;
  const uint32_t full = base + p.stages * stage_bytes, empty = full + 8 * p.stages;
  const int consumers = blockDim.x / 128 - 1;
  if (threadIdx.x == 0) {
    for (int s = 0; s < p.stages; ++s) {
      mgen::tma::mbar_init(full + 8 * s, 1);
      mgen::tma::mbar_init(empty + 8 * s, 4 * consumers);
    }
    mgen::tma::mbar_init_fence();
  }
  __syncthreads();
  // The block's units: its equal share, as the kernels' stream-K ranges (mgen_wgmma_sched.h).
  const long long u0 = mgen_wgmma_sk_start(p.units, blockIdx.x, gridDim.x);
  const long long u1 = mgen_wgmma_sk_start(p.units, blockIdx.x + 1, gridDim.x);
  if (threadIdx.x < 128) {  // producers: lane 0 of warps 0 .. producers - 1, unit i of the block to warp i % producers
    const int w = threadIdx.x / 32;
    if (threadIdx.x % 32 != 0 || w >= p.producers) return;
    for (long long i = w; u0 + i < u1; i += p.producers) {
      const long long u = u0 + i;
      const int tile = (int)(u / p.k_stages), kt = (int)(u % p.k_stages);
      const int s = (int)(i % p.stages);
      const uint32_t use = (uint32_t)(i / p.stages) & 1;
      if (i >= p.stages) mgen::tma::mbar_wait(empty + 8 * s, use ^ 1);
      const uint32_t dst = base + s * stage_bytes, bar = full + 8 * s;
      mgen::tma::mbar_expect(bar, stage_bytes);
      if (a_bytes > 0) mgen::tma::load_2d(dst, &map_a, kt * 64, 0, bar);
      const uint32_t wd = dst + a_bytes;
      if (p.method == RING_TMA_2D) {
        mgen::tma::load_2d(wd, &map_w, tile * p.tile_n, kt * p.steps, bar);
      } else if (p.method == RING_BULK_ROWS) {
        const uint8_t* src = p.w + ((size_t)kt * p.steps * p.n + (size_t)tile * p.tile_n) * 8;
        for (int r = 0; r < p.steps; ++r) mgen::tma::load_1d(wd + r * p.tile_n * 8, src + (size_t)r * p.n * 8, p.tile_n * 8, bar);
      } else {
        mgen::tma::load_1d(wd, p.w + (size_t)u * w_bytes, w_bytes, bar);
      }
    }
    return;
  }
  const int warp = threadIdx.x / 32 % 4, lane = threadIdx.x % 32;
  const int c = threadIdx.x / 128 - 1;
  unsigned acc = 0;
  int s = 0;
  uint32_t use = 0;
  for (long long u = u0; u < u1; ++u) {
    mgen::tma::mbar_wait(full + 8 * s, use);
    uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];\n"
                 : "=r"(v)
                 : "r"(base + s * stage_bytes + a_bytes + ((c * 128 + warp * 32 + lane) * 4) % w_bytes));
    acc ^= v;
    __syncwarp();
    if (lane == 0) mgen::tma::mbar_arrive(empty + 8 * s);
    if (++s == p.stages) s = 0, use ^= 1;
  }
  if (acc == 0x9e3779b9u) p.sink[blockIdx.x] = acc;
}

}  // namespace

extern "C" int ring_smem_bytes(const ring_config* cfg) {
  return 1024 + cfg->stages * (cfg->a_rows * 128 + cfg->steps * cfg->tile_n * 8) + 16 * cfg->stages;
}

extern "C" int ring_blocks_per_sm(const ring_config* cfg, int* blocks) {
  const int smem = ring_smem_bytes(cfg);
  cudaError_t e = cudaFuncSetAttribute(ring_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  if (e == cudaSuccess)
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, ring_kernel, 128 * (1 + cfg->consumers), smem);
  return (int)e;
}

extern "C" int ring_launch(const ring_config* cfg, const void* w, const void* a, unsigned* sink, int grid,
                           cudaStream_t stream) {
  if (cfg->k_steps % cfg->steps != 0 || cfg->n % cfg->tile_n != 0 || cfg->tile_n > 256 || cfg->steps > 256 ||
      cfg->a_rows % 8 != 0 || cfg->a_rows > 256 || cfg->consumers < 1 || cfg->consumers > 4 ||
      cfg->producers < 1 || cfg->producers > 4 || cfg->stages % cfg->producers != 0)
    return (int)cudaErrorInvalidValue;
  CUtensorMap map_w = {}, map_a = {};
  int rc = mgen::tma::encode_rows_plain(&map_w, w, 8, cfg->k_steps, cfg->n, cfg->steps, cfg->tile_n);
  if (rc == (int)cudaSuccess && cfg->a_rows > 0)
    rc = mgen::tma::encode_rows_sw128(&map_a, a, cfg->a_rows, cfg->k_steps * 16, cfg->a_rows, mgen::tma::AType::kF16);
  if (rc != (int)cudaSuccess) return rc;
  Args p;
  p.w = static_cast<const uint8_t*>(w);
  p.n = cfg->n, p.k_steps = cfg->k_steps, p.tile_n = cfg->tile_n, p.steps = cfg->steps, p.stages = cfg->stages;
  p.method = cfg->method, p.a_rows = cfg->a_rows, p.producers = cfg->producers;
  p.k_stages = cfg->k_steps / cfg->steps;
  p.units = (long long)(cfg->n / cfg->tile_n) * p.k_stages;
  p.sink = sink;
  ring_kernel<<<grid, 128 * (1 + cfg->consumers), ring_smem_bytes(cfg), stream>>>(map_w, map_a, p);
  return (int)cudaGetLastError();
}
