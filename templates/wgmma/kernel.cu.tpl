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
// ${k.warpgroups} warpgroup(s) per block, 64 output columns each (4 warps x 16), x ${k.tile_m} rows of A
// over the whole K (the warpgroups share each stage of A), in stages of ${k.tile_k}. Each stage of A is stored as K-major core matrices (8 rows x 16
// bytes, no swizzle), the ${k.tile_m} rows of one 8-deep K block contiguous (so the core matrices a
// wgmma reads along its n are adjacent, not a bank-aligned stride apart), read by descriptor; ${k.stages} stages rotate through shared memory (cp.async).
// The pipeline, per stage i (version 2 of the family):
//
//    wait for A(i)  ->  dequantize W(i) (words loaded during i-1)  ->  load words of W(i+1)
//    -> issue the ${k.steps} wgmma of stage i (one group)  ->  wait until group i-1 is done
//    -> refill the buffer of stage i-1 with A(i + stages - 1)
//
// so the dequantization of stage i and the loads of i+1 overlap the tensor work of i-1.
// Two register sets hold the A fragments of consecutive stages (wgmma reads them
// asynchronously). No split-K yet: a block owns its output tile.
// Requires n % ${k.tile_n} == 0, k % ${k.tile_k} == 0, k % group == 0; any m >= 1.
//% for _, p in ipairs(k.partials) do
#include "${p}"
//% end
#include <cuda_runtime.h>

#include "mgen/mgen_kernel.h"

namespace ${k.name} {

using Act = ${k.act_type};
constexpr int kWarpgroups = ${k.warpgroups};     // consumer warpgroups, 64 output columns each
constexpr int kThreads = 128 * kWarpgroups;
constexpr int kTileM = ${k.tile_m};            // rows of A per block: wgmma's n
constexpr int kTileN = ${k.tile_n};            // output columns per block: 64 per warpgroup
constexpr int kTileK = ${k.tile_k};            // K depth of one shared-memory stage
constexpr int kGroup = ${k.group};             // K elements per scale; 0 = per channel
constexpr int kAcc = kTileM / 2;               // FP32 accumulators per thread
constexpr int kKBlocks = kTileK / 8;           // core matrices along K in one row block
constexpr int kSteps = kTileK / 16;            // 16-deep wgmma steps per stage
constexpr int kStages = ${k.stages};            // shared-memory stages of A
constexpr int kStageBytes = kTileM * kTileK * 2;
constexpr int kSmemBytes = ${k.smem_bytes};    // kStages stages of A
static_assert(kTileN == 64 * kWarpgroups, "a warpgroup covers 64 output columns");
static_assert(kTileM % 8 == 0 && kTileM >= 8 && kTileM <= 256, "wgmma n is 8..256 in steps of 8");
static_assert(kSmemBytes == kStages * kStageBytes, "kStages stages of kTileM x kTileK activations");
static_assert(kStages >= 2, "the pipeline refills the buffer of the stage before");

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

// Stage of A starting at K offset k0 into buffer `buf`: the 16-byte vector (row, 8-deep block
// kb) goes to byte 16 * (kb * kTileM + row): core matrix (kb, row / 8) is 128 contiguous bytes,
// the next one along the rows follows it (SBO 128), the next along K is kTileM * 16 bytes on
// (LBO). Rows past m are zero-filled (source size 0). Consecutive threads, consecutive rows.
__device__ __forceinline__ void load_a(const mgen_launch_args& p, uint32_t buf, int m0, int k0) {
  const Act* a = static_cast<const Act*>(p.a);
  for (int v = threadIdx.x; v < kTileM * kKBlocks; v += kThreads) {
    const int row = v % kTileM, kb = v / kTileM;
    const bool live = m0 + row < p.m;
    const Act* src = a + (size_t)(live ? m0 + row : 0) * p.k + k0 + 8 * kb;
    mgen::cp_async16(buf + (kb * kTileM + row) * 16, src, live ? 16 : 0);
  }
}

// This warp's packed words of stage k0: one per 16x16 tile (columns n0 + 16 warp, 16-deep step s).
__device__ __forceinline__ void load_w(const mgen_launch_args& p, uint32_t (&w)[kSteps], int n0,
                                       int k0, int warp, int lane) {
  const uint32_t* q = static_cast<const uint32_t*>(p.b);
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    const int tile = (k0 / 16 + s) * (p.n / 16) + n0 / 16 + warp;
    w[s] = q[(size_t)(tile >> 2) * 128 + 4 * lane + (tile & 3)];
  }
}

// The A fragments of stage k0, dequantized (and, grouped, scaled) from its words.
__device__ __forceinline__ void dequant(const mgen_launch_args& p, uint32_t (&r)[kSteps][4],
                                        const uint32_t (&w)[kSteps], int n0, int k0, int warp,
                                        int g) {
  const Act* scales = static_cast<const Act*>(p.scales);
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    uint32_t frag[2][2];
    mgen::${k.dequant}::dequant(w[s], frag);
    if constexpr (kGroup > 0) {
      // Scales of columns 16 warp + g (h = 0) and + 8 (h = 1): adjacent in the permuted row.
      const int row = (k0 + 16 * s) / (kGroup > 0 ? kGroup : 1);  // (no division by 0 below)
      mgen::scale_frag_pair<Act>(
          frag, *reinterpret_cast<const uint32_t*>(scales + (size_t)row * p.n + n0 + 8 * g + 2 * warp));
    }
    r[s][0] = frag[0][0], r[s][1] = frag[1][0], r[s][2] = frag[0][1], r[s][3] = frag[1][1];
  }
}

// Stage i: wait for A(i), dequantize W(i) into r, load the words of W(i+1), issue the stage's
// wgmma group, wait for group i-1, refill its buffer with A(i + kStages - 1). r must not be
// the register set of stage i-1 (still read by its wgmma): the caller alternates two sets.
__device__ __forceinline__ void stage(const mgen_launch_args& p, float (&d)[kAcc],
                                      uint32_t (&r)[kSteps][4], uint32_t (&words)[kSteps],
                                      uint32_t base, int i, int k_tiles, int m0, int n0, int warp,
                                      int lane, int g) {
  const int k0 = i * kTileK;
  mgen::cp_async_wait<kStages - 2>();  // A(i) has landed (this thread's part)
  mgen::wg::fence_proxy_async();
  __syncthreads();                     // everyone's part, visible to wgmma
  dequant(p, r, words, n0, k0, warp, g);
  if (i + 1 < k_tiles) load_w(p, words, n0, k0 + kTileK, warp, lane);
  const uint32_t buf = base + (i % kStages) * kStageBytes;
  mgen::wg::fence();
#pragma unroll
  for (int s = 0; s < kSteps; ++s)
    mma(d, r[s], mgen::wg::desc(buf + s * 2 * kTileM * 16, kTileM * 16, 128));
  mgen::wg::commit();
  mgen::wg::wait<1>();  // group i-1 is done: its registers and its buffer are free
  const int next = i + kStages - 1;
  if (next < k_tiles) load_a(p, base + (next % kStages) * kStageBytes, m0, next * kTileK);
  mgen::cp_async_commit();
}

__global__ void __launch_bounds__(kThreads) ${k.name}_kernel(const mgen_launch_args p) {
  extern __shared__ __align__(128) uint8_t smem[];
  // Warpgroup wg owns output columns n0 .. n0 + 63; its warps 16 each. The stage of A is shared.
  const int tid = threadIdx.x, warp = tid % 128 / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const int m0 = blockIdx.x * kTileM, n0 = blockIdx.y * kTileN + 64 * (tid / 128);
  const int k_tiles = p.k / kTileK;
  const Act* scales = static_cast<const Act*>(p.scales);
  const uint32_t base = mgen::wg::smem_addr(smem);

  float d[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) d[i] = 0.0f;

#pragma unroll
  for (int st = 0; st < kStages - 1; ++st) {
    if (st < k_tiles) load_a(p, base + st * kStageBytes, m0, st * kTileK);
    mgen::cp_async_commit();
  }
  uint32_t words[kSteps], r0[kSteps][4], r1[kSteps][4];
  load_w(p, words, n0, 0, warp, lane);
  for (int i = 0; i < k_tiles; i += 2) {  // two stages per trip: the register sets alternate
    stage(p, d, r0, words, base, i, k_tiles, m0, n0, warp, lane, g);
    if (i + 1 < k_tiles) stage(p, d, r1, words, base, i + 1, k_tiles, m0, n0, warp, lane, g);
  }
  mgen::wg::wait<0>();

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
