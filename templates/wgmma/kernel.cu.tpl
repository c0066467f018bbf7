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
// Warp-specialized (version 4 of the family): warpgroup 0 is the producer, ${k.warpgroups} consumer
// warpgroups follow, ${k.tile_n} / ${k.warpgroups} output columns each (one m64 wgmma per 64), all over the
// same ${k.tile_m} rows of A.
// ${k.producers} producer threads (lane 0 of a producer warp each, taking the buffers in turn) stream
// the stages of A (a TMA box of ${k.tile_m} rows x 64 elements, fewer rows where m is shorter:
// a_box_rows(); 128-byte swizzled, rows past m zero-filled), of W (a TMA box of the stage's 4
// steps x ${k.tile_n} columns of the packed layout, 8 bytes per column and step) and of the group
// scales (a TMA box of the stage's scale rows x the tile's columns): three copies per stage
// (four with zero points, kZeros: a box of the stage's zero rows x the tile's ${k.tile_n} / 2 bytes),
// into a ring of ${k.stages} stages, each completing on its "full"
// mbarrier; the producer warpgroup then gives its registers to the consumers (setmaxnreg). The
// scales and zero points travel with their stage so that no consumer ever waits for a global
// load: loaded by the consumers one stage ahead, their latency was what a short (decode) stage
// waited for.
// A consumer warpgroup, per stage i:
//
//    wait full(i)  ->  read its words of W(i) and its scales from shared memory, dequantize and
//    scale them into the A fragments  ->  issue the ${k.steps} wgmma of stage i (one group)  ->  wait for
//    group i - 1 (or i: run() says when)  ->  arrive on empty: the producer may refill that buffer
//
// (with kAccScales, the 32-row tiles at g128: the weights stay unscaled, a group's stages sum
// into registers of their own and the group scales multiply those FP32 sums once per group:
// run_acc_scales()),
// so a consumer's dequantization overlaps its own and the other consumers' tensor work, and the
// copies run ${k.stages} stages ahead, across tiles: the blocks are persistent,
// one per SM, and take whole tiles where they fill the SMs, else equal K pieces of them
// (split-K) or equal shares of all stages (stream-K; the plan: mgen_wgmma_sched.h); a tile
// shared by blocks is summed from their FP32 partials in a fixed order (fixup():
// deterministic).
// With kA8 (the e4m3 layout: FP8 E4M3 activations, W4A8) A is one byte per element, so a stage
// of A (one 128-byte swizzle row) holds ${k.tile_k} of K, and each wgmma is an m64nNk32 .e4m3 on
// the weights dequantized to E4M3 bytes (formats/<wfmt>/mma_e4m3.cuh: exact, each byte the
// weight's code value (u4: q - z, kZeros) times 2^Dequant::kLog2, from two 16-deep tiles' words
// per 32-deep step).
// The group scales go on the FP32 sums (kAccScales), since a scaled weight is no longer an
// E4M3 value, and per channel too each stage's sums are added into FP32 totals: the FP8 MMA
// keeps its running sum to ~13 bits (test_w4a8_probe_gpu), so a chain stays 128 deep whatever
// K. MXFP4's power-of-two block scales are the exception (kFoldScales): the partial folds each
// 32-deep step's block scale into the E4M3 bytes exactly, and its stages are added into the
// totals as per channel. The epilogue multiplies by 2^-kLog2, the column's scale (per channel)
// or factor (MXFP4) and the row's FP32 activation scale (p.a_scales[m * p.a_scale_stride];
// none: 1).
// With kMoe (the moe op, mgen_moe_op_args: a grouped GEMM over experts) the rows of the call are
// the route's sorted list (its capacity p.m, whole slabs of ${k.tile_m} rows, each slab one
// expert's or none): the blocks are persistent as for the dense op, and each reads *num_padded to
// plan over the live slabs' tiles only (Schedule: the same plan on the device, stream-K included,
// since the host does not know the count); a segment's slab gives its expert, and its rows are read
// into the tables of the producer warps (A rows) and of each consumer warpgroup (C rows and router
// weights, two in turn) at the segment's start. W, the scales and the zero points are tensor maps
// of three dimensions, the experts the third (one allocation, q_stride / s_stride bytes apart), so
// the stage copies stay three TMA boxes at the expert's layer. A's rows are the pairs' tokens (or
// pairs), which no box can gather: every lane of the producer warp of a stage copies them
// (cp.async, 16 bytes each, into the same 128-byte swizzle the TMA writes; padding rows and columns
// past k as zeros), each lane's copies arriving on the stage's full barrier as they land (32
// arrivals beside the copy engine's one); a consumer fences them to the async proxy that its wgmma
// reads through once it has waited for the stage. Where A comes permuted into the list's order
// (a_sorted: mgen_moe_permute), slab s's rows are A's rows s * ${k.tile_m}...: one box, as for the
// dense op, and the producer warp's lane 0 alone copies the stage. The epilogue writes row r of the
// tile to C's row of its pair, times the pair's router weight.
// Requires n % 64 == 0 (in the last column tile the copy engine fills the
// columns past n with zeros, computed on and never stored), k % group == 0 (k % 16), weights
// packed for k_packed (a multiple of ${k.tile_k}: the layout's K padding); any m >= 1. A tile
// takes ceil(k / ${k.tile_k}) stages; A's tensor map ends at k, so the TMA zero-fills the last
// stage's columns past k, if any.
//% for _, p in ipairs(k.partials) do
#include "${p}"
//% end
#include <cuda_runtime.h>

#include "mgen/mgen_kernel.h"

namespace ${k.name} {

using Act = ${k.act_type};
using Scales = mgen::${k.scales}<Act>;  // mgen_scales.cuh: packed scales -> multipliers
using Dequant = mgen::${k.dequant};      // formats/: packed codes (and zero points) -> fragments
constexpr int kConsumers = ${k.warpgroups};     // math warpgroups
constexpr int kCols = ${k.tile_n} / kConsumers;  // output columns per consumer: 64 or 128
constexpr int kHalves = kCols / 64;             // its 64-column groups: m64 wgmma each
constexpr int kThreads = 128 * (1 + kConsumers);  // + the producer warpgroup
constexpr int kTileM = ${k.tile_m};            // rows of A per block: wgmma's n
constexpr int kTileN = ${k.tile_n};            // output columns per block
constexpr int kTileK = ${k.tile_k};            // K depth of one stage: one 128-byte swizzle row of A
constexpr bool kA8 = ${k.a8};                  // FP8 E4M3 activations (W4A8): one byte each, k32 wgmma
constexpr bool kFoldScales = ${k.folds_scales};  // W4A8: the block scales folded into the E4M3 weights (MXFP4)
constexpr bool kRotateW = ${k.rotate_w};        // lanes take their W tiles rotated by lane / 8 (spec.lua rotate_w)
constexpr int kAElem = kA8 ? 1 : 2;            // bytes per element of A
constexpr int kMmaK = kA8 ? 32 : 16;           // K depth of one wgmma
constexpr int kGroup = ${k.group};             // K elements per scale; 0 = per channel
constexpr int kAcc = kTileM / 2;               // FP32 accumulators per thread
constexpr int kSteps = kTileK / 16;            // 16-deep tiles of W per stage (the packed layout's)
constexpr int kMmaSteps = kTileK / kMmaK;      // wgmma steps per stage
constexpr int kStages = ${k.stages};            // shared-memory stages (the copy ring)
constexpr int kABytes = kTileM * kTileK * kAElem;  // a stage of A (its buffer)
constexpr int kChunk = kTileN * 8;             // W of one 16-deep step: kTileN / 16 tiles x 128 B
constexpr int kWBytes = kSteps * kChunk;       // a stage of W
constexpr int kScaleBytes = ${k.scale_bytes};   // bytes per stored group scale (0: per channel)
constexpr int kScaleRows = ${k.scale_rows};     // scale rows a stage spans: kTileK / kGroup, at least 1
constexpr int kSRowBytes = kTileN * kScaleBytes;  // one scale row of the tile's columns
constexpr int kSBytes = kScaleRows * kSRowBytes;  // a stage of scales
constexpr bool kZeros = ${k.zeros};             // the dequantization subtracts zero points (u4)
constexpr int kZRows = ${k.zero_rows};          // zero rows a stage spans: its scale rows, 1 per channel; 0 without
constexpr int kZRowBytes = ${k.zero_row_bytes};  // one zero row of the tile's columns: 4 bits each
constexpr int kZBytes = ${k.zero_stage_bytes};  // a stage of zero points, padded to 128 bytes
constexpr int kStoredScaleBytes = ${k.stored_scale_bytes};  // bytes per stored scale, per channel too
constexpr int kSmemBytes = ${k.smem_bytes};    // 1 KiB alignment slack, the stages, barriers, flag
constexpr int kProducers = ${k.producers};         // producer threads: buffer s is filled by producer s % kProducers
constexpr int kProducerRegs = ${k.producer_regs};  // setmaxnreg: what the producer keeps
constexpr int kConsumerRegs = ${k.consumer_regs};  // and what each consumer thread gets
constexpr bool kOverlap = ${k.overlap};         // a consumer dequantizes stage i + 1 while its group i runs (run())
constexpr bool kAccScales = ${k.acc_scales};     // group scales on FP32 sums once per group (run_acc_scales())
constexpr bool kAccOverlap = ${k.acc_overlap};   // and the next stage dequantized while a stage runs (run_acc_overlap())
constexpr bool kA8Steps = ${k.a8_steps};         // W4A8: each step converted right before its wgmma (issue())
constexpr bool kRingPasses = ${k.ring_passes};   // the consumers run the ring in unrolled passes (run())
constexpr int kGroupTiles = kAccScales && kGroup > 0 && !kFoldScales ? kGroup / kTileK : 1;  // stages per group there
// What the FP32 sums are multiplied by in the epilogue: with kA8, 2^-kLog2 (each E4M3 weight
// byte reads as its code value times 2^kLog2: the format partial's); else 1.
template <class D>
constexpr float sum_factor() {
  if constexpr (kA8) return mgen::pow2_neg(D::kLog2);
  else return 1.0f;
}
static_assert(mgen::folds_scales<Dequant>::value == kFoldScales, "partials.lua's folds and the partial agree");
constexpr float kSumFactor = sum_factor<Dequant>();
constexpr int kMaxSplits = ${k.max_splits};      // stream-K: most pieces per tile where the tiles are few
constexpr int kMinSplitTiles = ${k.min_split_tiles};  // and fewest stages per block
constexpr bool kMoe = ${k.moe};  // grouped over experts: rows of A gathered through the route
constexpr int kBand = ${k.raster_band};  // the tile order's bands of m slabs (Schedule::place); 0: the L2 rule (launch)
constexpr long long kBandL2Bytes = ${k.band_l2_bytes};  // the L2 rule's budget for A (mgen_wgmma_band)
// moe: the segment's rows, in tables of their readers: each producer warp's A rows (kTileM ints),
// then each consumer warpgroup's two tables (the segment's and the one before's: C rows, router weights)
constexpr int kRouteBytes = kMoe ? 4 * kTileM * kProducers + 2 * 8 * kTileM * kConsumers : 0;
// The dense epilogue goes through shared memory (store()): kCRows rows of 128 bytes per
// consumer warpgroup, after the route's place (moe stores rows of its own: store_moe())
constexpr int kCRows = ${k.stage_c_rows};
constexpr int kCBytes = kMoe ? 0 : kCRows * 128 * kConsumers;
static_assert(kTileN == kCols * kConsumers && (kCols == 64 || kCols == 128), "64 or 128 columns per consumer");
static_assert(kTileM % 8 == 0 && kTileM >= 8 && kTileM <= 256, "wgmma n is 8..256 in steps of 8");
static_assert(kTileK * kAElem == 128, "a stage of A is one 128-byte swizzle row");
static_assert(!kA8 || kGroup == 0 || kAccScales,
              "W4A8: group scales only on the FP32 sums (E4M3 weights stay unscaled)");
static_assert(kStages % kProducers == 0 && kProducers <= 4, "whole buffers per producer warp");
static_assert(kABytes % 1024 == 0, "stages of A keep the 1 KiB alignment of the swizzle atoms");
static_assert(kSmemBytes == 1024 + kStages * (kABytes + kWBytes + kSBytes + kZBytes) + 2 * 8 * kStages + 16 + kRouteBytes + kCBytes,
              "shared memory");
static_assert(kCRows % 8 == 0 && kTileM % kCRows == 0, "the epilogue: whole chunks of staged rows");
static_assert(!kMoe || (!kA8 && kProducers == 4), "moe: 16-bit A, gathered by the four producer warps");
static_assert(kGroup == 0 ? kScaleRows == 0 && kScaleBytes == 0
                          : kScaleRows == (kGroup >= kTileK ? 1 : kTileK / kGroup) &&
                                kScaleBytes * 8 == (int)sizeof(typename Scales::Vec),
              "a stage's scale rows and their bytes");
static_assert(!kAccScales || (!kOverlap && (kGroup > 0 || kA8) &&
                               (kFoldScales ? kA8 && kScaleRows == kMmaSteps
                                            : kGroup % kTileK == 0 && kScaleRows == (kGroup > 0 ? 1 : 0))),
              "scales on the sums: groups of whole stages, one group in flight (folded: a block per step)");
static_assert(!kA8Steps || (kA8 && kAccOverlap), "the steps converted at their wgmma: W4A8 with the overlap");
static_assert(kWBytes % 128 == 0 && kSBytes % 128 == 0 && kZBytes % 128 == 0,
              "stages of W, scales and zero points: 128-byte aligned TMA boxes");
static_assert(kZeros ? kZRows == (kGroup == 0 ? 1 : kScaleRows) && kZRowBytes * 2 == kTileN &&
                           kZRows * kZRowBytes <= kZBytes && kZBytes < kZRows * kZRowBytes + 128
                     : kZRows == 0 && kZBytes == 0,
              "a stage's zero rows: one per scale row (one per channel), 4 bits per column");
// setmaxnreg.inc blocks until the pool holds what it claims: never more than the block starts with.
static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * kConsumers <=
                  (65536 / kThreads / 8 * 8 > 256 ? 256 : 65536 / kThreads / 8 * 8) * kThreads,
              "register pool");

// Rows of A in a stage's TMA box: all kTileM where several row slabs cover m, else m rounded up
// to the swizzle atom's 8 rows. The copy engine writes the rows of a box that fall past m as
// zeros at the cost of loaded ones (with no other work per stage, the 128x128 tile streams
// 2.7x faster at M = 1 without its 127 zero rows: bench/notes.md v17), so a short M brings
// only its rows. The rest of the buffer keeps whatever it held: wgmma reads it into output
// columns of GEMM rows >= m, which no epilogue stores (store(): m < p.m).
__host__ __device__ __forceinline__ int a_box_rows(int m) { return m >= kTileM ? kTileM : (m + 7) / 8 * 8; }

__device__ __forceinline__ void mma(float (&d)[kAcc], const uint32_t (&a)[4], uint64_t b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n${k.tile_m}k${k.mma_k}.f32.${k.ptx_a}.${k.ptx_a} "
      "{${k.acc_operands}}, {${k.a_operands}}, ${k.b_operand}, 1, 1, 1${k.trans_b};\n"
      :
//% for _, line in ipairs(k.acc_bindings) do
      ${line}
//% end
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b)
      : "memory");
}
// The same with the accumulate flag a register (wgmma's scale-d): keep = 0 overwrites d with
// the product, which starts a group's sums without zeroing them first (kAccScales).
__device__ __forceinline__ void mma_into(float (&d)[kAcc], const uint32_t (&a)[4], uint64_t b, uint32_t keep) {
  asm volatile(
      "{\n.reg .pred keep;\nsetp.ne.b32 keep, ${k.keep_operand}, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n${k.tile_m}k${k.mma_k}.f32.${k.ptx_a}.${k.ptx_a} "
      "{${k.acc_operands}}, {${k.a_operands}}, ${k.b_operand}, keep, 1, 1${k.trans_b};\n}\n"
      :
//% for _, line in ipairs(k.acc_bindings) do
      ${line}
//% end
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(keep)
      : "memory");
}

#include "wgmma/mgen_wgmma_body.cuh"  // the ring, producers, consumers, fixup, epilogue

__global__ void __launch_bounds__(kThreads, 1)
    ${k.name}_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_w,
                     const __grid_constant__ CUtensorMap map_s, const __grid_constant__ CUtensorMap map_z,
                     const Params p, const int dp_tiles, const int band) {
  // 1 KiB for the swizzle atoms: declared (so the compiler folds the rounding below; without
  // it every kernel ran ~10% slower at M = 4096) and rounded up by hand all the same.
  extern __shared__ __align__(1024) uint8_t smem[];
  mgen::grid_dependency_wait();  // before any global memory access (mgen_launch.cuh)
  Ring ring;
  ring.a = (mgen::wg::smem_addr(smem) + 1023) & ~1023u;
  ring.w = ring.a + kStages * kABytes;
  ring.s = ring.w + kStages * kWBytes;
  ring.z = ring.s + kStages * kSBytes;
  ring.full = ring.z + kStages * kZBytes;
  ring.empty = ring.full + 8 * kStages;
  ring.flag = ring.empty + 8 * kStages;
  ring.route = ring.flag + 16;
  ring.stage_c = ring.route + kRouteBytes;  // 16-byte aligned (the ld.shared.v4 of store())
  ring.gathered = kMoe && !a_boxed(p);
  const int wg = threadIdx.x / 128;
  // Every thread builds the schedule and walks to its first segment before any branch on its
  // index: ptxas then keeps the schedule and the stage loops' bookkeeping in uniform registers
  // (64x256 wg2: 669 -> 613 instructions between the loops' first and last wgmma, vector integer
  // ones 190 -> 85), 1.5-2.7% faster on every shape; built after the producer's branch, they
  // were per-thread values. Then thread 0 (producer 0) sets up the ring's barriers and copies
  // stage 0 before the block's barrier: 1% (bench/notes.md v27).
  const Schedule sc(p, dp_tiles, band);
  Cursor cur;
  Segment seg;
  bool more = cur.next(sc, seg);
  // moe: a block past the plan's grid, or with no work (no live slab), leaves whole (a uniform
  // branch, before any barrier).
  if (kMoe && (!more || (int)blockIdx.x >= sc.grid)) return;
  if (threadIdx.x == 0) {  // producer 0, which copies stage 0: sets up the barriers, copies it now
    for (int s = 0; s < kStages; ++s) {
      mgen::tma::mbar_init(ring.full_of(s), full_arrivals(p));  // the producer's expect_tx (+ a gather's lanes)
      mgen::tma::mbar_init(ring.empty_of(s), 4 * kConsumers);  // one arrival per consumer warp
    }
    mgen::tma::mbar_init_fence();
    if (more && !kMoe)
      stage_copies(&map_a, &map_w, &map_s, &map_z, p, ring, 0, sc.row0(seg.tile), sc.col0(seg.tile), seg.kb);
  }
  __syncthreads();

  if (wg == 0) {  // the producer warpgroup: lane 0 of kProducers warps copies, all give registers away
    mgen::tma::regs_release<kProducerRegs>();
    if (kMoe) {  // every lane of the four producer warps
      produce_moe(&map_a, &map_w, &map_s, &map_z, p, sc, cur, seg, more, ring, threadIdx.x / 32, threadIdx.x % 32);
    } else if (threadIdx.x % 32 == 0 && threadIdx.x / 32 < kProducers) {
      produce(&map_a, &map_w, &map_s, &map_z, p, sc, cur, seg, more, threadIdx.x == 0, ring, threadIdx.x / 32);
    }
    return;
  }
  mgen::tma::regs_claim<kConsumerRegs>();
  const int c = wg - 1, warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  // The tile of each 64-column group (four 16-column tiles of the packed layout) whose columns
  // this lane's fragment rows hold: the warp's own, or with kRotateW (mma layout, word 4 lane +
  // tile: the warp's own puts its 32 loads on 8 banks, 4 ways each) lanes 8 q .. 8 q + 7 take
  // tile warp + q: 32 banks. The wgmma's 64 rows are then a permutation of the group's 64
  // columns, which dequant() (words, scales, zero points) and store() both follow.
  const int tile = kRotateW ? (warp + lane / 8) % 4 : warp;
  Pos pos;  // the ring runs on across segments
  int parity = 0;  // moe: the warpgroup's table of the segment's rows (consumer_rows())
  for (; more; more = cur.next(sc, seg), parity ^= 1) {
    const uint32_t rows = kMoe ? consumer_table(ring, c, parity) : 0u;
    const int expert = consumer_rows(p, rows, sc.slab(seg.tile), c, threadIdx.x % 128);
    const int m0 = sc.row0(seg.tile);
    const int nc = sc.col0(seg.tile) + kCols * c;  // this warpgroup's first column
    Accs d;
#pragma unroll
    for (int h = 0; h < kHalves; ++h)
#pragma unroll
      for (int a = 0; a < kAcc; ++a) d[h][a] = 0.0f;
    if constexpr (kAccOverlap) run_acc_overlap(ring, d, pos, seg.ke - seg.kb, c, tile, lane, g);
    else if constexpr (kAccScales) run_acc_scales(ring, d, pos, seg.kb, seg.ke - seg.kb, c, tile, lane, g);
    else run(ring, d, pos, seg.kb, seg.ke - seg.kb, c, tile, lane, g);
    if (seg.kb > 0 || seg.ke < sc.k_total)  // part of the tile: the blocks that share it meet
      if (!fixup(p, ring, sc, seg, cur.first_sk, d, c, threadIdx.x % 128)) continue;
#pragma unroll
    for (int h = 0; h < kHalves; ++h) {
      store_tile(p, rows, expert, ring.stage_c + c * kCRows * 128, d[h], m0, nc + 64 * h, tile, g, t, c);
    }
  }
}

}  // namespace ${k.name}

// Grid: persistent blocks, one per SM (mgen_wgmma_sched.h: fewer where the tiles are few and
// shallow), each walking its whole tiles and stream-K units (Schedule), within the workspace
// (2 slots of kTileM x kTileN floats and one counter per block). Without a workspace, one block
// per tile (moe: whole tiles in waves of one block per SM): no tile is ever shared. The tensor
// map of A is encoded here, per call (host work only), and passed by value.
extern "C" int ${k.name}_launch(const mgen_launch_args* args, void* stream) {
  using namespace ${k.name};
  Params p;
  if (!params_of(args, p)) return (int)cudaErrorInvalidValue;
  const long long m_slabs = (args->m + kTileM - 1) / kTileM, n_tiles = (args->n + kTileN - 1) / kTileN;
  const long long k_tiles = (args->k + kTileK - 1) / kTileK, tiles = m_slabs * n_tiles;
  if (m_slabs <= 0 || n_tiles <= 0 || tiles > 0x7fffffffLL || k_tiles <= 0 || args->sm_count <= 0 ||
      args->n % 64 != 0 ||  // whole 64-column groups (runtime: families/wgmma.c)
      args->k_packed < k_tiles * kTileK)  // (the stages must stay inside the packed weights)
    return (int)cudaErrorInvalidValue;
  // (moe: the plan is the kernel's, over the live tiles it reads from the route; one block per
  // SM, those the plan does not use leave at once)
  const mgen_wgmma_plan plan =
      kMoe ? mgen_wgmma_plan{args->sm_count, 0}
           : mgen_wgmma_schedule(tiles, args->sm_count, k_tiles, kMaxSplits, kMinSplitTiles,
                                 args->partials != nullptr && args->counters != nullptr);
  // A: m x k activations; W: the packed weights as (k_packed / 16) steps x n columns of 8 bytes;
  // the scales: (k_packed / group) rows x n (the fe2m1 column factors after them are read by
  // the epilogue). Per channel there is no scale box: map_s stays unused. The zero points
  // (kZeros): as many rows (1 per channel) of n / 2 bytes after the scales (mgen::zero_rows,
  // layout.h's mgen__zero_offset); else map_z stays unused.
  // moe: W, the scales and the zero points of every expert, one layer each (q_stride and
  // s_stride bytes apart); A is gathered (gather_a), map_a stays unused, unless it comes in the
  // list's order (a_sorted): then it is the capacity's rows, boxes of whole slabs.
  CUtensorMap map_a = {}, map_w, map_s = {}, map_z = {};
  long long layers = 0, q_stride = 0, s_stride = 0;
  layers_of(p, layers, q_stride, s_stride);
  int rc = !a_boxed(p) ? (int)cudaSuccess
                       : mgen::tma::encode_rows_sw128(&map_a, args->a, args->m, args->k, a_box_rows(args->m),
                                                      mgen::tma::AType::${k.a_tma_type});
  if (rc == (int)cudaSuccess)
    rc = mgen::tma::encode_layers_plain(&map_w, args->b, 8, args->k_packed / 16, args->n, layers, q_stride, kSteps,
                                        kTileN);
  if (rc == (int)cudaSuccess && kScaleRows > 0)
    rc = mgen::tma::encode_layers_plain(&map_s, args->scales, kScaleBytes > 0 ? kScaleBytes : 1,
                                        args->k_packed / (kGroup > 0 ? kGroup : 1), args->n, layers, s_stride,
                                        kScaleRows, kTileN);
  if (rc == (int)cudaSuccess && kZeros) {
    const long long rows = kGroup > 0 ? args->k_packed / kGroup : 1;
    rc = mgen::tma::encode_layers_plain(&map_z, mgen::zero_rows(args->scales, args->n, args->k_packed, kGroup, kStoredScaleBytes),
                                        1, rows, args->n / 2, layers, s_stride, kZRows, kZRowBytes);
  }
  if (rc != (int)cudaSuccess) return rc;
  // The tile order's bands of m slabs (Schedule::place): moe's fixed kBand; dense, by A's bytes
  // against the L2 (mgen_wgmma_band), here: in the kernel the rule's loop and 64-bit products
  // take uniform registers the stage loops' bookkeeping needs (bench/notes/v68.md item 1). A
  // wave is the blocks on the SMs at once: the grid, or the SM count where (no workspace)
  // every tile is a block.
  const long long wave = plan.grid < args->sm_count ? plan.grid : args->sm_count;
  const int band = kBand > 0 ? kBand
                             : mgen_wgmma_band((int)m_slabs, wave, (long long)kTileM * args->k * kAElem,
                                               k_tiles * (kWBytes + kSBytes + kZBytes), kBandL2Bytes);
  return (int)mgen::launch(${k.name}_kernel, (unsigned)plan.grid, kThreads, kSmemBytes,
                           static_cast<cudaStream_t>(stream), args->pdl != 0, map_a, map_w, map_s, map_z, p,
                           (int)plan.dp_tiles, band);
}

extern "C" int ${k.name}_prepare(void) {
  using namespace ${k.name};
  return (int)cudaFuncSetAttribute(${k.name}_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
}
