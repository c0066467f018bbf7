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
// Warp-specialized (version 3 of the family): warpgroup 0 is the producer, ${k.warpgroups} consumer
// warpgroups follow, 64 output columns each, all over the same ${k.tile_m} rows of A and the whole K.
// One producer thread streams the stages of A (a TMA box of ${k.tile_m} rows x 64 elements, 128-byte
// swizzled, rows past m zero-filled) and of W (one bulk copy of ${k.tile_n} columns per 16-deep step,
// contiguous in the packed layout) into a ring of ${k.stages} stages, each completing on its "full"
// mbarrier; the producer warpgroup then gives its registers to the consumers (setmaxnreg).
// A consumer warpgroup, per stage i:
//
//    wait full(i)  ->  read its words of W(i) from shared memory, dequantize and scale them
//    into the A fragments  ->  issue the ${k.steps} wgmma of stage i (one group)  ->  wait for
//    it  ->  arrive on empty(i): the producer may refill that buffer
//
// so one consumer's dequantization overlaps the other's tensor work (consume() says why not
// its own), and the copies run ${k.stages} stages ahead. Where the tiles are too few to fill the
// SMs the launcher splits K (reduce(): a deterministic sum of FP32 partials in the workspace).
// Requires n % 64 == 0 (the last tile's consumers past n idle: they wait and release each stage
// but neither compute nor store, and the producer copies only W's columns below n),
// k % group == 0 (k % 16), weights packed for k_packed (a multiple
// of ${k.tile_k}: the layout's K padding); any m >= 1. The block runs ceil(k / ${k.tile_k}) stages; A's
// tensor map ends at k, so the TMA zero-fills the last stage's columns past k, if any.
//% for _, p in ipairs(k.partials) do
#include "${p}"
//% end
#include <cuda_runtime.h>

#include "mgen/mgen_kernel.h"

namespace ${k.name} {

using Act = ${k.act_type};
using Scales = mgen::${k.scales}<Act>;  // mgen_scales.cuh: packed scales -> multipliers
constexpr int kConsumers = ${k.warpgroups};     // math warpgroups, 64 output columns each
constexpr int kThreads = 128 * (1 + kConsumers);  // + the producer warpgroup
constexpr int kTileM = ${k.tile_m};            // rows of A per block: wgmma's n
constexpr int kTileN = ${k.tile_n};            // output columns per block
constexpr int kTileK = ${k.tile_k};            // K depth of one stage: one 128-byte swizzle row of A
constexpr int kGroup = ${k.group};             // K elements per scale; 0 = per channel
constexpr int kAcc = kTileM / 2;               // FP32 accumulators per thread
constexpr int kSteps = kTileK / 16;            // 16-deep wgmma steps per stage
constexpr int kStages = ${k.stages};            // shared-memory stages (the copy ring)
constexpr bool kScalesAfterIssue = ${k.scales_after_issue};  // when the next stage's scales load (consume)
constexpr int kABytes = kTileM * kTileK * 2;   // a stage of A
constexpr int kChunk = kTileN * 8;             // W of one 16-deep step: kTileN / 16 tiles x 128 B
constexpr int kWBytes = kSteps * kChunk;       // a stage of W
constexpr int kSmemBytes = ${k.smem_bytes};    // 1 KiB alignment slack, the stages, barriers, flag
constexpr int kProducerRegs = ${k.producer_regs};  // setmaxnreg: what the producer keeps
constexpr int kConsumerRegs = ${k.consumer_regs};  // and what each consumer thread gets
constexpr int kMaxSplits = ${k.max_splits};      // split-K: most K pieces per tile
constexpr int kMinSplitTiles = ${k.min_split_tiles};  // and fewest stages per piece
static_assert(kTileN == 64 * kConsumers, "a consumer warpgroup covers 64 output columns");
static_assert(kTileM % 8 == 0 && kTileM >= 8 && kTileM <= 256, "wgmma n is 8..256 in steps of 8");
static_assert(kTileK == 64, "a stage of A is one 128-byte swizzle row of 2-byte elements");
static_assert(kABytes % 1024 == 0, "stages of A keep the 1 KiB alignment of the swizzle atoms");
static_assert(kSmemBytes == 1024 + kStages * (kABytes + kWBytes) + 2 * 8 * kStages + 16, "shared memory");
// setmaxnreg.inc blocks until the pool holds what it claims: never more than the block starts with.
static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * kConsumers <=
                  (65536 / kThreads / 8 * 8 > 256 ? 256 : 65536 / kThreads / 8 * 8) * kThreads,
              "register pool");

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

// Shared memory, from a 1 KiB aligned base: the stages of A, the stages of W, then the
// barriers full[kStages] and empty[kStages] (8 bytes each), then split-K's "last block" flag.
struct Ring {
  uint32_t a, w, full, empty, flag;
  __device__ uint32_t a_of(int s) const { return a + s * kABytes; }
  __device__ uint32_t w_of(int s) const { return w + s * kWBytes; }
  __device__ uint32_t full_of(int s) const { return full + 8 * s; }
  __device__ uint32_t empty_of(int s) const { return empty + 8 * s; }
};

// The producer (one thread): the block's i-th stage (K tile k_first + i) of A and W into buffer
// i % kStages once the consumers have released its previous use.
__device__ __forceinline__ void produce(const CUtensorMap* map_a, const mgen_launch_args& p,
                                        const Ring& ring, int m0, int n0, int k_first, int k_tiles) {
  const uint32_t* q = static_cast<const uint32_t*>(p.b);
  const size_t tiles_per_row = (size_t)(p.n / 16);  // 16x16 tiles along n, 32 words each
  // W's columns of this tile below n: all of them, or the consumers' 64-column shares up to n.
  const uint32_t chunk = (uint32_t)(p.n - n0 < kTileN ? p.n - n0 : kTileN) * 8;
  for (int i = 0; i < k_tiles; ++i) {
    const int s = i % kStages, kt = k_first + i;
    if (i >= kStages) {
      mgen::tma::mbar_wait(ring.empty_of(s), (i / kStages - 1) & 1);
      // The consumers read the words of this buffer through the generic proxy (their release
      // on the empty barrier orders that before this point); the copies below write through
      // the async proxy: one fence here orders the two, instead of one per consumer thread.
      mgen::wg::fence_proxy_async();
    }
    mgen::tma::mbar_expect(ring.full_of(s), kABytes + kSteps * chunk);
    mgen::tma::load_2d(ring.a_of(s), map_a, kt * kTileK, m0, ring.full_of(s));
#pragma unroll
    for (int st = 0; st < kSteps; ++st) {
      const size_t tile = (size_t)(kt * kSteps + st) * tiles_per_row + n0 / 16;
      mgen::tma::load_1d(ring.w_of(s) + st * kChunk, q + tile * 32, chunk, ring.full_of(s));
    }
  }
}

// Scales of stage i (k0 = its K offset) as stored: columns 16 warp + g (h = 0) and + 8 (h = 1)
// of this warpgroup, adjacent in the permuted scale row, one load per 16-deep step; converted
// to multipliers where consume() uses them, so nothing waits for the loads before then.
__device__ __forceinline__ void load_scales(const mgen_launch_args& p, uint32_t (&sc)[kSteps], int k0,
                                            int nc, int warp, int g) {
  if constexpr (kGroup > 0) {
#pragma unroll
    for (int st = 0; st < kSteps; ++st) {
      const int row = (k0 + 16 * st) / (kGroup > 0 ? kGroup : 1);  // (no division by 0 in gc)
      sc[st] = mgen::scale_pair_load<Act, Scales>(p.scales, (size_t)row * p.n + nc + 8 * g + 2 * warp);
    }
  }
}

// A consumer warpgroup's i-th stage (K tile k_first + i): wait for the data, dequantize W(i)
// into the A fragments (scaled by sc), refill sc with the scales of stage i + 1 (before or after
// issuing, kScalesAfterIssue), issue the stage's wgmma group, wait for it and release the
// buffer (a consumer past n, live false, only waits and releases). The wait is for the group
// just issued, not the one before: ptxas serializes every wgmma of a kernel that writes register operands of a
// wgmma while an earlier one is in flight (C7513), so the overlap of dequantization and tensor
// work comes from the other consumer warpgroup, whose group runs while this one dequantizes.
__device__ __forceinline__ void consume(const mgen_launch_args& p, const Ring& ring, float (&d)[kAcc],
                                        uint32_t (&sc)[kSteps], int i, int k_first, int k_tiles, int nc,
                                        int c, int warp, int lane, int g, bool live) {
  const int s = i % kStages;
  mgen::tma::mbar_wait(ring.full_of(s), (i / kStages) & 1);
  if (live) {
    // This warp's tile of each step: tile 4 c + warp of the chunk, word 4 lane + warp of its
    // 128-word group (runtime/src/formats/layout.h).
    const uint32_t words = ring.w_of(s) + (128 * c + 4 * lane + warp) * 4;
    uint32_t r[kSteps][4];
#pragma unroll
    for (int st = 0; st < kSteps; ++st) {
      uint32_t w;
      asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(w) : "r"(words + st * kChunk));
      uint32_t frag[2][2];
      mgen::${k.dequant}::dequant(w, frag);
      if constexpr (kGroup > 0) mgen::scale_frag_pair<Act>(frag, mgen::scale_pair<Act, Scales>(sc[st]));
      r[st][0] = frag[0][0], r[st][1] = frag[1][0], r[st][2] = frag[0][1], r[st][3] = frag[1][1];
    }
    if constexpr (!kScalesAfterIssue)
      if (i + 1 < k_tiles) load_scales(p, sc, (k_first + i + 1) * kTileK, nc, warp, g);
    mgen::wg::pin(d);
    mgen::wg::fence();
#pragma unroll
    for (int st = 0; st < kSteps; ++st) mma(d, r[st], mgen::wg::desc_sw128(ring.a_of(s) + 32 * st));
    mgen::wg::commit();
    if constexpr (kScalesAfterIssue)
      if (i + 1 < k_tiles) load_scales(p, sc, (k_first + i + 1) * kTileK, nc, warp, g);
    mgen::wg::wait<0>();
    mgen::wg::pin(d);
  }
  __syncwarp();
  if (lane == 0) mgen::tma::mbar_arrive(ring.empty_of(s));
}

// Split-K meeting point, run by the consumer threads of every block of a split tile: each block
// stores its FP32 partials in its slot of the workspace (slot z of the tile, laid out
// [warpgroup][accumulator][thread] so that the stores coalesce) and counts itself in; the last
// to arrive sums the slots in the order z = 0, 1, ... (its own read back too: no second set of
// registers), so the result is the same bit for bit whichever block is last, resets the counter for the next launch and
// returns true: it writes the tile. The workspace holds gridDim.x * gridDim.y * gridDim.z
// slots of kTileM x kTileN floats and a counter per tile (the launcher keeps the grid within
// what runtime/src/families/wgmma.c asks the runtime for).
__device__ __forceinline__ bool reduce(const mgen_launch_args& p, const Ring& ring, float (&d)[kAcc],
                                       int c, int tid) {
  const int tile = blockIdx.y * gridDim.x + blockIdx.x, splits = gridDim.z;
  const size_t slot = (size_t)kConsumers * kAcc * 128;
  float* mine = p.partials + ((size_t)tile * splits + blockIdx.z) * slot + (size_t)c * kAcc * 128 + tid;
#pragma unroll
  for (int j = 0; j < kAcc; ++j) __stcg(mine + j * 128, d[j]);
  __threadfence();
  asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumers * 128) : "memory");  // consumers only
  if (c == 0 && tid == 0) {
    const int last = atomicAdd(p.counters + tile, 1) == splits - 1;
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(ring.flag), "r"(last) : "memory");
  }
  asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumers * 128) : "memory");
  int last;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(last) : "r"(ring.flag) : "memory");
  if (!last) return false;
  __threadfence();
  const float* first = mine - (size_t)blockIdx.z * slot;
#pragma unroll
  for (int j = 0; j < kAcc; ++j) d[j] = __ldcg(first + j * 128);
  for (int z = 1; z < splits; ++z) {
#pragma unroll
    for (int j = 0; j < kAcc; ++j) d[j] += __ldcg(first + (size_t)z * slot + j * 128);
  }
  if (c == 0 && tid == 0) p.counters[tile] = 0;
  return true;
}

__global__ void __launch_bounds__(kThreads, 1)
    ${k.name}_kernel(const __grid_constant__ CUtensorMap map_a, const mgen_launch_args p) {
  // 1 KiB for the swizzle atoms: declared (so the compiler folds the rounding below; without
  // it every kernel ran ~10% slower at M = 4096) and rounded up by hand all the same.
  extern __shared__ __align__(1024) uint8_t smem[];
  Ring ring;
  ring.a = (mgen::wg::smem_addr(smem) + 1023) & ~1023u;
  ring.w = ring.a + kStages * kABytes;
  ring.full = ring.w + kStages * kWBytes;
  ring.empty = ring.full + 8 * kStages;
  ring.flag = ring.empty + 8 * kStages;
  const int wg = threadIdx.x / 128, m0 = blockIdx.x * kTileM, n0 = blockIdx.y * kTileN;
  // Split-K: block z of gridDim.z owns K tiles [k_first, k_first + k_tiles) of the tile.
  const int k_total = (p.k + kTileK - 1) / kTileK, splits = gridDim.z;  // the last may end in the padding
  const int k_first = (int)((long long)k_total * blockIdx.z / splits);
  const int k_tiles = (int)((long long)k_total * (blockIdx.z + 1) / splits) - k_first;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mgen::tma::mbar_init(ring.full_of(s), 1);                // the producer's expect_tx
      mgen::tma::mbar_init(ring.empty_of(s), 4 * kConsumers);  // one arrival per consumer warp
    }
    mgen::tma::mbar_init_fence();
  }
  __syncthreads();

  if (wg == 0) {  // the producer warpgroup: one thread copies, all give registers away
    mgen::tma::regs_release<kProducerRegs>();
    if (threadIdx.x == 0) produce(&map_a, p, ring, m0, n0, k_first, k_tiles);
    return;
  }
  mgen::tma::regs_claim<kConsumerRegs>();
  const int c = wg - 1, warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int nc = n0 + 64 * c;  // this warpgroup's first output column
  const bool live = nc < p.n;  // false: past n in the last tile (n % kTileN != 0)

  float d[kAcc];
#pragma unroll
  for (int i = 0; i < kAcc; ++i) d[i] = 0.0f;
  uint32_t sc[kSteps];
  if (live) load_scales(p, sc, k_first * kTileK, nc, warp, g);
  for (int i = 0; i < k_tiles; ++i) consume(p, ring, d, sc, i, k_first, k_tiles, nc, c, warp, lane, g, live);
  if (splits > 1 && !reduce(p, ring, d, c, threadIdx.x % 128)) return;  // (all consumers meet)
  if (!live) return;

  // Epilogue: d[4i + 0..3] = rows (16 warp + g, + 8) x columns (8i + 2t, + 1) of C^T.
  const int n_lo = nc + 16 * warp + g, n_hi = n_lo + 8;
  // Per-channel scales, or fe2m1's FP32 column factors (1 for group scales: in the fragments).
  const float s_lo = mgen::column_factor<Scales>(p.scales, p.n, p.k_packed, kGroup, n_lo);
  const float s_hi = mgen::column_factor<Scales>(p.scales, p.n, p.k_packed, kGroup, n_hi);
  Act* out = static_cast<Act*>(p.c);
#pragma unroll
  for (int i = 0; i < kTileM / 8; ++i) {
    const int m = m0 + 8 * i + 2 * t;
    if (m < p.m) {
      out[(size_t)m * p.n + n_lo] = mgen::wg::from_float<Act>(d[4 * i + 0] * s_lo);
      out[(size_t)m * p.n + n_hi] = mgen::wg::from_float<Act>(d[4 * i + 2] * s_hi);
    }
    if (m + 1 < p.m) {
      out[(size_t)(m + 1) * p.n + n_lo] = mgen::wg::from_float<Act>(d[4 * i + 1] * s_lo);
      out[(size_t)(m + 1) * p.n + n_hi] = mgen::wg::from_float<Act>(d[4 * i + 3] * s_hi);
    }
  }
}

}  // namespace ${k.name}

// Grid: x = slabs of kTileM rows of A (up to 2^31 - 1), y = kTileN-column tiles of C (the last
// may end at n before its last consumer's columns), z = K
// splits: when the tiles leave SMs idle, each is split along K into as many pieces as fill the
// SMs once (at most kMaxSplits, each at least kMinSplitTiles stages deep), within the workspace
// (one slot per block, one counter per tile: sm_count of each). The tensor map of A is encoded
// here, per call (host work only), and passed by value.
extern "C" int ${k.name}_launch(const mgen_launch_args* args, void* stream) {
  using namespace ${k.name};
  const long long m_slabs = (args->m + kTileM - 1) / kTileM, n_tiles = (args->n + kTileN - 1) / kTileN;
  const long long k_tiles = (args->k + kTileK - 1) / kTileK;
  if (m_slabs <= 0 || m_slabs > 0x7fffffffLL || n_tiles <= 0 || n_tiles > 65535 || k_tiles <= 0 ||
      args->n % (kTileN / kConsumers) != 0 ||  // whole consumer shares (runtime: families/wgmma.c)
      args->k_packed < k_tiles * kTileK)  // (the stages must stay inside the packed weights)
    return (int)cudaErrorInvalidValue;
  const long long splits = args->partials != nullptr && args->counters != nullptr
                               ? mgen_wgmma_splits(m_slabs * n_tiles, args->sm_count, k_tiles,
                                                   kMaxSplits, kMinSplitTiles)
                               : 1;
  CUtensorMap map_a;
  const int rc = mgen::tma::encode_rows_sw128(&map_a, args->a, args->m, args->k, kTileM, ${k.act_is_bf16});
  if (rc != (int)cudaSuccess) return rc;
  const dim3 grid((unsigned)m_slabs, (unsigned)n_tiles, (unsigned)splits);
  ${k.name}_kernel<<<grid, kThreads, kSmemBytes, static_cast<cudaStream_t>(stream)>>>(map_a, *args);
  return (int)cudaGetLastError();
}

extern "C" int ${k.name}_prepare(void) {
  using namespace ${k.name};
  return (int)cudaFuncSetAttribute(${k.name}_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
}
