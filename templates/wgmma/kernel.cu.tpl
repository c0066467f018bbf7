${banner}
// ${k.name} -- ${k.summary}
//
// C[m,n] = A[m,k] * W^T computed as C^T = W * A^T with wgmma.mma_async.m64n${k.tile_m}k16: the
// dequantized weights are wgmma's A operand, straight from registers, the activations its B
// operand in shared memory. The packed layout (runtime/src/formats/layout.h) gives each warp
// the m16n8k16 B fragments of one 16x16 tile per int32: with W as the MMA's A (rows = output
// columns n), those four registers are exactly the warp's rows of the m64nNk16 A fragment
// (frag[h][r], h = 8-column block, r = K half, in the order a0..a3 = [0][0], [1][0], [0][1],
// [1][1]), so the mma family's weights and dequantization serve unchanged.
//
// One warpgroup per block: 64 output columns (4 warps x 16) x ${k.tile_m} rows of A over the whole
// K; each ${k.tile_k}-deep stage of A is stored as K-major core matrices (8 rows x 16 bytes, no
// swizzle) and read by descriptor. Version 1 of the family: no pipelining yet (each stage is
// loaded, then multiplied), no split-K; correctness first, the schedule is the next step.
// Requires n % ${k.tile_n} == 0, k % ${k.tile_k} == 0, k % group == 0; any m >= 1.
//% for _, p in ipairs(k.partials) do
#include "${p}"
//% end
#include <cuda_runtime.h>

#include "mgen/mgen_kernel.h"

namespace ${k.name} {

using Act = ${k.act_type};
constexpr int kThreads = 128;                  // one warpgroup
constexpr int kTileM = ${k.tile_m};            // rows of A per block: wgmma's n
constexpr int kTileN = ${k.tile_n};            // output columns per block: 64 weight rows
constexpr int kTileK = ${k.tile_k};            // K depth of one shared-memory stage
constexpr int kGroup = ${k.group};             // K elements per scale; 0 = per channel
constexpr int kAcc = kTileM / 2;               // FP32 accumulators per thread
constexpr int kKBlocks = kTileK / 8;           // core matrices along K in one row block
constexpr int kSmemBytes = ${k.smem_bytes};    // one stage of A: kTileM x kTileK
static_assert(kTileN == 64, "one warpgroup covers 64 output columns");
static_assert(kTileM % 8 == 0 && kTileM >= 8 && kTileM <= 256, "wgmma n is 8..256 in steps of 8");
static_assert(kSmemBytes == kTileM * kTileK * 2, "the stage holds kTileM x kTileK activations");

__device__ __forceinline__ void mma(float (&d)[kAcc], const uint32_t (&a)[4], uint64_t b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n${k.tile_m}k16.f32.${k.ptx_act}.${k.ptx_act} "
      "{${k.acc_operands}}, {${k.a_operands}}, ${k.b_operand}, 1, 1, 1, 0;\n"
      :
//% for _, line in ipairs(k.acc_bindings) do
      ${line}
//% end
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b)
      : "memory");
}

__device__ __forceinline__ void store(Act* c, int ldc, int m, int n, int rows, float v) {
  if (m < rows) c[(size_t)m * ldc + n] = mgen::wg::from_float<Act>(v);
}

__global__ void __launch_bounds__(kThreads) ${k.name}_kernel(const mgen_launch_args p) {
  extern __shared__ __align__(128) uint8_t smem[];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int m0 = blockIdx.x * kTileM, n0 = blockIdx.y * kTileN;
  const int tiles_n = p.n / 16;
  const Act* a = static_cast<const Act*>(p.a);
  const uint32_t* q = static_cast<const uint32_t*>(p.b);
  const Act* scales = static_cast<const Act*>(p.scales);
  const uint32_t stage = mgen::wg::smem_addr(smem);

  float d[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) d[i] = 0.0f;

  for (int k0 = 0; k0 < p.k; k0 += kTileK) {
    // A stage: 16-byte vectors (row, 8-deep block) into core matrix (row / 8, block), row % 8;
    // rows past m are zero.
    for (int v = tid; v < kTileM * kKBlocks; v += kThreads) {
      const int row = v / kKBlocks, kb = v % kKBlocks;
      uint4 x = make_uint4(0u, 0u, 0u, 0u);
      if (m0 + row < p.m) x = *reinterpret_cast<const uint4*>(a + (size_t)(m0 + row) * p.k + k0 + 8 * kb);
      *reinterpret_cast<uint4*>(smem + ((row / 8) * kKBlocks + kb) * 128 + (row % 8) * 16) = x;
    }
    mgen::wg::fence_proxy_async();
    __syncthreads();
#pragma unroll
    for (int s = 0; s < kTileK / 16; ++s) {
      // This warp's 16x16 weight tile at K block (k0 / 16 + s), columns n0 + 16 warp.
      const int tile = (k0 / 16 + s) * tiles_n + n0 / 16 + warp;
      const uint32_t word = q[(size_t)(tile >> 2) * 128 + 4 * lane + (tile & 3)];
      uint32_t frag[2][2];
      mgen::${k.dequant}::dequant(word, frag);
      if constexpr (kGroup > 0) {
        // Scales of columns 16 warp + g (h = 0) and + 8 (h = 1): adjacent in the permuted row.
        const int row = (k0 + 16 * s) / kGroup;
        mgen::scale_frag_pair<Act>(
            frag, *reinterpret_cast<const uint32_t*>(scales + (size_t)row * p.n + n0 + 8 * g + 2 * warp));
      }
      const uint32_t regs[4] = {frag[0][0], frag[1][0], frag[0][1], frag[1][1]};
      mgen::wg::fence();
      mma(d, regs, mgen::wg::desc(stage + s * 256, 128, kKBlocks * 128));
      mgen::wg::commit();
      mgen::wg::wait<0>();
    }
    __syncthreads();  // the stage is read before it is overwritten
  }

  // Epilogue: d[4i + 0..3] = rows (16 warp + g, + 8) x columns (8i + 2t, + 1) of C^T.
  const int n_lo = n0 + 16 * warp + g, n_hi = n_lo + 8;
  float s_lo = 1.0f, s_hi = 1.0f;
  if constexpr (kGroup == 0) {
    s_lo = mgen::to_float(scales[n_lo]);
    s_hi = mgen::to_float(scales[n_hi]);
  }
  Act* c = static_cast<Act*>(p.c);
#pragma unroll
  for (int i = 0; i < kTileM / 8; ++i) {
    const int m = m0 + 8 * i + 2 * t;
    store(c, p.n, m, n_lo, p.m, d[4 * i + 0] * s_lo);
    store(c, p.n, m + 1, n_lo, p.m, d[4 * i + 1] * s_lo);
    store(c, p.n, m, n_hi, p.m, d[4 * i + 2] * s_hi);
    store(c, p.n, m + 1, n_hi, p.m, d[4 * i + 3] * s_hi);
  }
}

}  // namespace ${k.name}

// Grid: x = slabs of kTileM rows of A (up to 2^31 - 1), y = kTileN-column tiles of C.
extern "C" int ${k.name}_launch(const mgen_launch_args* args, void* stream) {
  using namespace ${k.name};
  const long long m_slabs = (args->m + kTileM - 1) / kTileM, n_tiles = args->n / kTileN;
  if (m_slabs <= 0 || m_slabs > 0x7fffffffLL || n_tiles <= 0 || n_tiles > 65535)
    return (int)cudaErrorInvalidValue;
  const dim3 grid((unsigned)m_slabs, (unsigned)n_tiles);
  ${k.name}_kernel<<<grid, kThreads, kSmemBytes, static_cast<cudaStream_t>(stream)>>>(*args);
  return (int)cudaGetLastError();
}

extern "C" int ${k.name}_prepare(void) {
  using namespace ${k.name};
  return (int)cudaFuncSetAttribute(${k.name}_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
}
