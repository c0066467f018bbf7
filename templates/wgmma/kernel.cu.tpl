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
constexpr int kBand = ${k.raster_band};  // the tile order's bands of m slabs (Schedule::slab); 0: one band
// moe: the segment's rows, in tables of their readers: each producer warp's A rows (kTileM ints),
// then each consumer warpgroup's two tables (the segment's and the one before's: C rows, router weights)
constexpr int kRouteBytes = kMoe ? 4 * kTileM * kProducers + 2 * 8 * kTileM * kConsumers : 0;
static_assert(kTileN == kCols * kConsumers && (kCols == 64 || kCols == 128), "64 or 128 columns per consumer");
static_assert(kTileM % 8 == 0 && kTileM >= 8 && kTileM <= 256, "wgmma n is 8..256 in steps of 8");
static_assert(kTileK * kAElem == 128, "a stage of A is one 128-byte swizzle row");
static_assert(!kA8 || kGroup == 0 || kAccScales,
              "W4A8: group scales only on the FP32 sums (E4M3 weights stay unscaled)");
static_assert(kStages % kProducers == 0 && kProducers <= 4, "whole buffers per producer warp");
static_assert(kABytes % 1024 == 0, "stages of A keep the 1 KiB alignment of the swizzle atoms");
static_assert(kSmemBytes == 1024 + kStages * (kABytes + kWBytes + kSBytes + kZBytes) + 2 * 8 * kStages + 16 + kRouteBytes,
              "shared memory");
static_assert(!kMoe || (!kA8 && kProducers == 4), "moe: 16-bit A, gathered by the four producer warps");
static_assert(kGroup == 0 ? kScaleRows == 0 && kScaleBytes == 0
                          : kScaleRows == (kGroup >= kTileK ? 1 : kTileK / kGroup) &&
                                kScaleBytes * 8 == (int)sizeof(typename Scales::Vec),
              "a stage's scale rows and their bytes");
static_assert(!kAccScales || (!kOverlap && (kGroup > 0 || kA8) &&
                               (kFoldScales ? kA8 && kScaleRows == kMmaSteps
                                            : kGroup % kTileK == 0 && kScaleRows == (kGroup > 0 ? 1 : 0))),
              "scales on the sums: groups of whole stages, one group in flight (folded: a block per step)");
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

// Shared memory, from a 1 KiB aligned base: the stages of A, the stages of W, the stages of the
// scales, the stages of the zero points, then the barriers full[kStages] and empty[kStages]
// (8 bytes each), then split-K's "last block" flag, then (kMoe) the tile's route: A rows,
// C rows, router weights.
struct Ring {
  uint32_t a, w, s, z, full, empty, flag, route;
  bool gathered;  // moe: A came by cp.async (a consumer fences it to the async proxy)
  __device__ uint32_t a_of(int s) const { return a + s * kABytes; }
  __device__ uint32_t w_of(int s) const { return w + s * kWBytes; }
  __device__ uint32_t s_of(int i) const { return s + i * kSBytes; }
  __device__ uint32_t z_of(int i) const { return z + i * kZBytes; }
  __device__ uint32_t full_of(int s) const { return full + 8 * s; }
  __device__ uint32_t empty_of(int s) const { return empty + 8 * s; }
};

// A stage's place in the ring: its buffer and the parity of that buffer's current use (its
// barriers' phase). Stage i is buffer i % kStages, use i / kStages; counted forward by a compare
// instead, since a division by a stage count that is no power of two (6, 12) costs a
// multiply-high sequence per stage on the consumers' critical path.
struct Pos {
  int s = 0;          // buffer
  uint32_t use = 0;   // parity of i / kStages
  __device__ __forceinline__ void advance() {
    if (++s == kStages) s = 0, use ^= 1;
  }
};

// The kernel's parameters: the launch's, and for the moe op the route (mgen_moe_op_args).
struct MoeParams : mgen_launch_args {
  mgen_moe_op_args moe;
};
using Params = std::conditional_t<kMoe, MoeParams, mgen_launch_args>;
// The m slabs of the launch: dense, m's; moe, the live ones (*num_padded of the capacity p.m).
__device__ __forceinline__ int m_slabs_of(const mgen_launch_args& p) { return (p.m + kTileM - 1) / kTileM; }
__device__ __forceinline__ int m_slabs_of(const MoeParams& p) {
  return mgen::moe_live_rows(p.moe.num_padded, p.m) / kTileM;
}

// The block's work (mgen_wgmma_sched.h): whole tiles b, b + grid, ... (dp_waves of them), then
// the stream-K units [sk_begin, sk_end) of the tiles after the data-parallel ones, in order.
// A segment is one tile's run of consecutive K tiles [kb, ke) within it; producer and consumers
// walk the same segments (Cursor), so the ring's stage count runs on across them. Tiles are
// ints (the launcher checks), unit counts 64-bit; 64-bit divisions only once per block.
struct Schedule {
  int m_slabs, n_tiles, k_total, grid, dp_waves, dp_tiles;
  long long sk_units, sk_begin, sk_end;
  template <class P>
  __device__ Schedule(const P& p, int dp) {
    m_slabs = m_slabs_of(p);
    n_tiles = (p.n + kTileN - 1) / kTileN;
    const long long tiles = (long long)m_slabs * n_tiles;
    k_total = (p.k + kTileK - 1) / kTileK;  // the last may end in the K padding
    grid = (int)gridDim.x;
    dp_tiles = dp;
    if constexpr (kMoe) {
      // The launcher's plan, made here over the live tiles: gridDim.x is the SM count (blocks
      // past the plan's grid leave); without a workspace, whole tiles in waves of the grid.
      const mgen_wgmma_plan plan = mgen_wgmma_schedule(tiles, grid, k_total, kMaxSplits, kMinSplitTiles,
                                                       p.partials != nullptr && p.counters != nullptr);
      if (plan.grid < grid) grid = plan.grid > 0 ? (int)plan.grid : 1;
      dp_tiles = plan.grid > (long long)gridDim.x ? (int)tiles : (int)plan.dp_tiles;
    }
    dp_waves = (dp_tiles + grid - 1) / grid;
    sk_units = (tiles - dp_tiles) * k_total;
    sk_begin = mgen_wgmma_sk_start(sk_units, blockIdx.x, grid);
    sk_end = mgen_wgmma_sk_start(sk_units, blockIdx.x + 1, grid);
  }
  // Tile t's m slab and column tile: slab fastest (neighbours share W's column tile), within
  // bands of kBand slabs (the last band may be shorter) that run through all the column tiles
  // in turn (kBand 0: one band, slab t % m_slabs, column tile t / m_slabs).
  struct Place {
    int slab, col_tile;
  };
  __device__ __forceinline__ Place place(int t) const {
    if constexpr (kBand == 0) return {t % m_slabs, t / m_slabs};
    const int b = t / (kBand * n_tiles), rows = min(kBand, m_slabs - b * kBand), i = t - b * kBand * n_tiles;
    return {b * kBand + i % rows, i / rows};  // tile i of its band
  }
  __device__ __forceinline__ int slab(int t) const { return place(t).slab; }
  __device__ __forceinline__ int col_tile(int t) const { return place(t).col_tile; }
  // Where tile t's output starts.
  __device__ __forceinline__ int row0(int t) const { return slab(t) * kTileM; }
  __device__ __forceinline__ int col0(int t) const { return col_tile(t) * kTileN; }
};
struct Segment {
  int tile;    // its output starts at Schedule::row0(tile), col0(tile)
  int kb, ke;  // its K tiles
};
struct Cursor {
  int j = 0, tile = 0, kb = 0;  // segments so far; the next stream-K tile and K tile
  long long left = 0;           // stream-K units left
  bool first_sk = false;        // the segment just returned is the block's first stream-K one
  // The block's next segment; false past the last.
  __device__ __forceinline__ bool next(const Schedule& sc, Segment& seg) {
    if (j < sc.dp_waves) {
      seg.tile = j++ * sc.grid + (int)blockIdx.x, seg.kb = 0, seg.ke = sc.k_total;
      if (seg.tile < sc.dp_tiles) return true;
      j = sc.dp_waves;  // past the data-parallel tiles (the last wave may be partial)
    }
    if (j++ == sc.dp_waves) {
      tile = sc.dp_tiles + (int)(sc.sk_begin / sc.k_total);
      kb = (int)(sc.sk_begin % sc.k_total);
      left = sc.sk_end - sc.sk_begin;
      first_sk = true;
    } else {
      first_sk = false;
    }
    if (left <= 0) return false;
    const int run = left < sc.k_total - kb ? (int)left : sc.k_total - kb;
    seg.tile = tile++, seg.kb = kb, seg.ke = kb + run;
    kb = 0, left -= run;
    return true;
  }
};

inline bool params_of(const mgen_launch_args* args, mgen_launch_args& p) {
  p = *args;
  return args->op_args == nullptr;
}
inline bool params_of(const mgen_launch_args* args, MoeParams& p) {
  static_cast<mgen_launch_args&>(p) = *args;
  if (args->op_args == nullptr || args->m % kTileM != 0) return false;  // capacity: whole slabs
  p.moe = *static_cast<const mgen_moe_op_args*>(args->op_args);
  // (no unsorted route: the blocks plan over the list's live tiles, family moe_unsorted 0)
  return !p.moe.unsorted && p.moe.sorted_ids && p.moe.block_experts && p.moe.num_padded && p.moe.a_div > 0 &&
         p.moe.experts > 0 &&
         p.moe.q_stride > 0 && p.moe.q_stride % 16 == 0 && p.moe.s_stride % 16 == 0 && p.k % 8 == 0;
}

// The layers of the weights' tensor maps: none (dense), or the experts.
inline void layers_of(const mgen_launch_args&, long long&, long long&, long long&) {}
inline void layers_of(const MoeParams& p, long long& layers, long long& q_stride, long long& s_stride) {
  layers = p.moe.experts, q_stride = p.moe.q_stride, s_stride = p.moe.s_stride;
}

// The moe segment's rows: row r of slab `slab` holds pair id = sorted_ids[r]; a padding id (>=
// pairs) gets A row -1 (zeros) and C row -1 (not stored). Each reader keeps its own table, so
// that no barrier of the block orders a segment's rows against another's: the producer warp
// `me` its A rows (producer_rows(), its lanes, at each segment's start: a lane reads them only
// when it issues a stage's copies, which need them in registers first), each consumer warpgroup
// the C rows and router weights (consumer_rows(): two tables in turn, `parity`, so that a
// warpgroup's faster threads write the next segment's while the slower still store from this
// one's; one warpgroup barrier after the writes). An expert out of range (none of the launch's)
// leaves every C row -1: the segment is computed on expert 0's weights and nothing is stored,
// so that the blocks sharing its tile still meet (fixup()).
__device__ __forceinline__ uint32_t producer_table(const Ring& ring, int me) { return ring.route + 4 * kTileM * me; }
__device__ __forceinline__ uint32_t consumer_table(const Ring& ring, int c, int parity) {
  return ring.route + 4 * kTileM * kProducers + 8 * kTileM * (2 * c + parity);
}
__device__ __forceinline__ bool expert_ok(const MoeParams& p, int e) { return (unsigned)e < (unsigned)p.moe.experts; }
__device__ __forceinline__ void producer_rows(const MoeParams& p, const Ring& ring, int slab, int me, int lane) {
  const uint32_t table = producer_table(ring, me);
  __syncwarp();  // every lane's gathers of the segment before are issued
  for (int i = lane; i < kTileM; i += 32) {
    const int id = __ldg(p.moe.sorted_ids + (size_t)slab * kTileM + i);
    const int row = mgen::moe_is_pair(id, p.moe.pairs) ? id / p.moe.a_div : -1;
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(table + 4 * i), "r"(row) : "memory");
  }
  __syncwarp();
}
// The segment's expert (0 where out of range), its C rows and weights into `table`, consumer
// warpgroup c's table of this segment (consumer_table(); tid: the thread's index in c).
__device__ __forceinline__ int consumer_rows(const MoeParams& p, uint32_t table, int slab, int c, int tid) {
  const int e = __ldg(p.moe.block_experts + slab);
  const bool ok = expert_ok(p, e);
  for (int i = tid; i < kTileM; i += 128) {
    const int id = __ldg(p.moe.sorted_ids + (size_t)slab * kTileM + i);
    const bool live = ok && mgen::moe_is_pair(id, p.moe.pairs);
    const float w = live && p.moe.topk_weights != nullptr ? __ldg(p.moe.topk_weights + id) : 1.0f;
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(table + 4 * i), "r"(live ? id : -1) : "memory");
    asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(table + 4 * (kTileM + i)), "f"(w) : "memory");
  }
  asm volatile("bar.sync %0, 128;\n" ::"r"(2 + c) : "memory");  // (barrier 1: fixup()'s)
  return ok ? e : 0;
}
__device__ __forceinline__ int consumer_rows(const mgen_launch_args&, uint32_t, int, int, int) { return 0; }
// A moe stage's A (tile rows x 64 elements of K tile kt), gathered by the 32 lanes of producer warp
// `me` (its table of the rows' A rows): lane l copies 16-byte chunk c = l % 8 of rows l / 8 + 4 i,
// so each 8 lanes read one row's 128 contiguous bytes, into chunk c ^ (row % 8) of the row (the
// SW128 layout of encode_rows_sw128's boxes). Rows of padding and columns past k are zero-filled
// (k % 8 == 0: a chunk is all in or all out). The rows' A rows are read kBatch at a time before
// their copies: a load and its copy in turn made every copy wait for its load.
constexpr int kBatch = kTileM / 4 < 8 ? kTileM / 4 : 8;
static_assert(!kMoe || kTileM / 4 % kBatch == 0, "whole batches of a lane's rows");
__device__ __forceinline__ void gather_a(const MoeParams& p, const Ring& ring, int s, int kt, int me, int lane) {
  const int c = lane % 8, col = kt * kTileK + 8 * c;
  const int in_k = col < p.k ? 16 : 0;
  const char* a = static_cast<const char*>(p.a) + (size_t)col * kAElem;
  const unsigned pitch = (unsigned)p.k * kAElem;  // (< 2^31: the runtime's shape limits)
  const uint32_t dst = ring.a_of(s), rows = producer_table(ring, me) + 4 * (lane / 8);
#pragma unroll 1
  for (int i0 = 0; i0 < kTileM / 4; i0 += kBatch) {
    int row[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j)
      asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(row[j]) : "r"(rows + 16 * (i0 + j)));
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int r = lane / 8 + 4 * (i0 + j);
      const char* src = a + (row[j] >= 0 ? (size_t)(unsigned)row[j] * pitch : 0);
      mgen::cp_async16(dst + r * 128 + ((c ^ (r % 8)) << 4), src, row[j] >= 0 ? in_k : 0);
    }
  }
}
// A moe producer warp `me` (all its lanes): the block's stages s with s % kProducers == me, over
// all its segments as produce() walks them, each W, scales and zero points by TMA at the
// segment's expert's layer (lane 0), A gathered (gather_a, by the warp's table of the segment's
// rows), and every lane's arrival on full(s) made by its copies' completion
// (cp.async.mbarrier.arrive).
__device__ __forceinline__ void produce_moe(const CUtensorMap* map_a, const CUtensorMap* map_w,
                                            const CUtensorMap* map_s, const CUtensorMap* map_z, const MoeParams& p,
                                            const Schedule& sc, Cursor cur, Segment seg, bool more, const Ring& ring,
                                            int me, int lane) {
  const bool boxed = p.moe.a_sorted != 0;  // A by one box: lane 0 copies the whole stage
  if (boxed && lane != 0) return;
  Pos pos;
  bool refill = false;
  for (; more; more = cur.next(sc, seg)) {
    const int slab = sc.slab(seg.tile), m0 = slab * kTileM, n0 = sc.col0(seg.tile);
    int e = 0;
    if (lane == 0) e = __ldg(p.moe.block_experts + slab);
    if (!expert_ok(p, e)) e = 0;  // (consumer_rows: nothing of it is stored)
    if (!boxed) producer_rows(p, ring, slab, me, lane);
    for (int kt = seg.kb; kt < seg.ke; ++kt, pos.advance(), refill |= pos.s == 0) {
      const int s = pos.s;
      if (s % kProducers != me) continue;
      if (refill) {
        mgen::tma::mbar_wait(ring.empty_of(s), pos.use ^ 1);  // the release of use - 1
        if (!boxed) mgen::wg::fence_proxy_async();  // the wgmma reads of that use before this lane's writes
      }
      if (boxed) {
        mgen::tma::mbar_expect(ring.full_of(s), kABytes + kWBytes + kSBytes + kZRows * kZRowBytes);
        mgen::tma::load_2d(ring.a_of(s), map_a, kt * kTileK, m0, ring.full_of(s));
      } else if (lane == 0) {
        mgen::tma::mbar_expect(ring.full_of(s), kWBytes + kSBytes + kZRows * kZRowBytes);
      }
      if (lane == 0) {
        mgen::tma::load_3d(ring.w_of(s), map_w, n0, kt * kSteps, e, ring.full_of(s));
        if constexpr (kScaleRows > 0)
          mgen::tma::load_3d(ring.s_of(s), map_s, n0, kt * kTileK / (kGroup > 0 ? kGroup : 1), e, ring.full_of(s));
        if constexpr (kZeros)
          mgen::tma::load_3d(ring.z_of(s), map_z, n0 / 2, kGroup > 0 ? kt * kTileK / kGroup : 0, e, ring.full_of(s));
      }
      if (boxed) continue;
      gather_a(p, ring, s, kt, me, lane);
      // arrives once this lane's copies have landed, without holding the lane: the next stage's
      // gather goes out meanwhile (the consumers fence them to the async proxy: dequant())
      asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(ring.full_of(s)) : "memory");
    }
  }
}
// Where dense and moe differ, by overload on the parameters (only the kernel's own is called).
__device__ __forceinline__ void produce_moe(const CUtensorMap*, const CUtensorMap*, const CUtensorMap*,
                                            const CUtensorMap*, const mgen_launch_args&, const Schedule&, Cursor,
                                            Segment, bool, const Ring&, int, int) {}
// A by a tensor map (dense; moe with A in the list's order), else gathered.
__host__ __device__ __forceinline__ bool a_boxed(const mgen_launch_args&) { return true; }
__host__ __device__ __forceinline__ bool a_boxed(const MoeParams& p) { return p.moe.a_sorted != 0; }
// The stage's full barrier's arrivals: the producer's expect_tx, and a gather's 32 lanes.
__host__ __device__ __forceinline__ int full_arrivals(const Params& p) { return a_boxed(p) ? 1 : 1 + 32; }

// A producer (lane 0 of producer warp `me`): the block's stages in order, stage i (the i-th K
// tile the block runs, over all its segments) of A, W and the scales into buffer i % kStages
// once the consumers have released its previous use, for the buffers s with s % kProducers ==
// me. Each producer walks the whole schedule and issues its share: one thread issuing every
// stage spends ~250 ns per stage (waits, fence, three copies) and caps the ring below the copy
// engine's rate whatever the ring's depth (bench_ring). Three TMA boxes per stage, at element coordinates
// (K, row) of A, (column, 16-deep step) of W and (column, scale row) of the scales, and with
// kZeros a fourth at (byte of the row, zero row) of the zero points (row 0 per channel); boxes
// past n or m arrive zero-filled and count in full toward the stage's bytes. The kernel hands
// over the schedule with its first segment (`more`: there is one) already walked to, and
// producer 0 may find the block's first stage issued (`first_issued`: stage_copies() by the
// thread that set up the barriers, before the block's barrier).
__device__ __forceinline__ void stage_copies(const CUtensorMap* map_a, const CUtensorMap* map_w,
                                             const CUtensorMap* map_s, const CUtensorMap* map_z,
                                             const mgen_launch_args& p, const Ring& ring, int s, int m0, int n0,
                                             int kt) {
  mgen::tma::mbar_expect(ring.full_of(s), a_box_rows(p.m) * kTileK * kAElem + kWBytes + kSBytes + kZRows * kZRowBytes);
  mgen::tma::load_2d(ring.a_of(s), map_a, kt * kTileK, m0, ring.full_of(s));
  mgen::tma::load_2d(ring.w_of(s), map_w, n0, kt * kSteps, ring.full_of(s));
  if constexpr (kScaleRows > 0)
    mgen::tma::load_2d(ring.s_of(s), map_s, n0, kt * kTileK / (kGroup > 0 ? kGroup : 1), ring.full_of(s));
  if constexpr (kZeros)
    mgen::tma::load_2d(ring.z_of(s), map_z, n0 / 2, kGroup > 0 ? kt * kTileK / kGroup : 0, ring.full_of(s));
}
__device__ __forceinline__ void produce(const CUtensorMap* map_a, const CUtensorMap* map_w, const CUtensorMap* map_s,
                                        const CUtensorMap* map_z, const mgen_launch_args& p, const Schedule& sc,
                                        Cursor cur, Segment seg, bool more, bool first_issued, const Ring& ring,
                                        int me) {
  Pos pos;
  bool refill = false;  // the ring has gone round once: each buffer waits for its release
  for (; more; more = cur.next(sc, seg)) {
    const int m0 = sc.row0(seg.tile), n0 = sc.col0(seg.tile);
    for (int kt = seg.kb; kt < seg.ke; ++kt, pos.advance(), refill |= pos.s == 0) {
      const int s = pos.s;
      if (s % kProducers != me) continue;
      if (first_issued) {
        first_issued = false;
        continue;
      }
      if (refill) {
        mgen::tma::mbar_wait(ring.empty_of(s), pos.use ^ 1);  // the release of use - 1
        // The consumers read the words of this buffer through the generic proxy (their release
        // on the empty barrier orders that before this point); the copies below write through
        // the async proxy: one fence here orders the two, instead of one per consumer thread.
        mgen::wg::fence_proxy_async();
      }
      stage_copies(map_a, map_w, map_s, map_z, p, ring, s, m0, n0, kt);
    }
  }
}

// A consumer warpgroup's stage i, in two steps. dequant(): wait for the data, read its words of
// W(i) and its scales and dequantize and scale them into the A fragments r: for each of its
// kHalves 64-column groups h (group 64 (kHalves c + h) of the tile), this warp's tile of each
// step (tile 4 (kHalves c + h) + warp of the chunk, word 4 lane + warp of its 128-word group,
// 32 warp + lane in the e4m3 layout: runtime/src/formats/layout.h) and the scale pair of its
// columns 16 warp + g and + 8 (adjacent in the permuted scale row: one shared load per scale
// row; with kAccScales the weights stay unscaled and the pair goes out in `pairs`, but with
// kFoldScales each 32-deep step's pair goes into the partial's E4M3 tables), and with
// kZeros the zero points of the same two columns (zero_pairs()). issue(): the stage's
// ${k.steps} x kHalves wgmma, one group.
using Frags = uint32_t[kHalves][kMmaSteps][4];
using Accs = float[kHalves][kAcc];
using Zeros = uint32_t[kZRows > 0 ? kZRows : 1][2];
using ZeroSet = Zeros[kHalves];  // a consumer's zeros of each 64-column group, kept across stages
// Stages that take their zero rows over from the stage before (kZKeep), in registers: per
// channel the tile's one row serves every stage of a segment, and at g128 (tile_k 64) a row
// serves two stages, the one of an even K tile reads it. Per stage that saves the load, its
// address and zero_pair()'s 3 instructions per 64 columns. Only where the loops know at
// compile time which stages read: acc_pass<kQ>() knows the group phase, run()'s overlapped
// loops start their pairs on even K tiles; its loop without overlap would need a copy of its
// passes per K tile parity (64x256 wg4 s6: spills 4/12 -> 124/52 bytes), so there g128 reads
// every stage. And only with registers to spare beside the accumulators and the two sets of
// fragments (kRegCap: what ptxas gives a thread of the block): 256x128 wg2 (8 to spare) would
// serialize its wgmma (C7512). SASS per 2 stages (f16): g128 64x128 wg2 s12 198 -> 187 (u4b8
// 180), gc 155 -> 144 (144); g128 32x256 wg4 s6 962 -> 912 per 12 (832).
constexpr int kRegCap = 65536 / kThreads / 8 * 8 > 255 ? 255 : 65536 / kThreads / 8 * 8;
constexpr bool kZKeep = kZeros && kZRows == 1 &&
                        (kGroup == 0 || (kGroup == 2 * kTileK &&
                                         (kAccScales || (kOverlap && kRegCap - kHalves * (kAcc + 8 * kSteps) >= 64))));
// Whether the stage of K tile kt reads its zero rows (past a segment's first stage).
__host__ __device__ constexpr bool zero_rows_start(int kt) { return !kZKeep || (kGroup > 0 && kt % 2 == 0); }
// With kZeros, the zeros of this thread's columns 16 warp + g and + 8 of a 64-column group,
// for each zero row of the stage: word g of the group in the row (`words`; 8 words per 64
// columns, layout.h "Zero points") holds them as pair j = warp, which Dequant::zero_pair turns
// into the codes' biased form (formats/u4/mma_*.cuh: 3 instructions in FP16, 2 in BF16) once
// per row, for every step of the row: the same one for the whole stage where the group spans
// it (g64, g128) or per channel. One ld.shared.b32 per row, 8 distinct words per warp (its 4
// lanes of a g broadcast). Templates on D, so that formats without zero points never compile
// the calls they lack.
template <class D>
__device__ __forceinline__ void zero_pairs(uint32_t words, int warp, Zeros& z) {
  if constexpr (kZeros) {
#pragma unroll
    for (int q = 0; q < kZRows; ++q) {
      uint32_t zw;
      asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(zw) : "r"(words + q * kZRowBytes));
      D::zero_pair(zw, warp, z[q]);
    }
  }
}
// One word of codes into a step's fragments: q - z with zero points (exact: the partial's
// comment), else the format's own bias.
template <class D>
__device__ __forceinline__ void dequant_word(uint32_t w, const uint32_t (&z)[2], uint32_t (&frag)[2][2]) {
  if constexpr (kZeros) D::dequant(w, z, frag);
  else D::dequant(w, frag);
}
// (A template on D so that only the branch of the kernel's own kind of A is instantiated.)
template <class D = Dequant>
__device__ __forceinline__ void dequant(const Ring& ring, Pos at, int c, int warp, int lane, int g, Frags& r,
                                        uint32_t (&pairs)[kHalves], ZeroSet& z, bool zload) {
  const int s = at.s;
  mgen::tma::mbar_wait(ring.full_of(s), at.use);
  // moe: A came by cp.async (the generic proxy); this thread's wgmma read it through the async one
  if (kMoe && ring.gathered) mgen::wg::fence_proxy_async();
#pragma unroll
  for (int h = 0; h < kHalves; ++h) {
    const int grp = kHalves * c + h;
    // (the e4m3 layout keeps a tile's words together: 32 lanes, one wavefront; layout.h)
    const uint32_t words = ring.w_of(s) + (128 * grp + (kA8 ? 32 * warp + lane : 4 * lane + warp)) * 4;
    const uint32_t pair = ring.s_of(s) + (64 * grp + 8 * g + 2 * warp) * kScaleBytes;
    uint32_t sc[kScaleRows > 0 ? kScaleRows : 1];  // one load per scale row: step st uses row st kScaleRows / kSteps
#pragma unroll
    for (int q = 0; q < kScaleRows; ++q) sc[q] = mgen::scale_pair_load<Act, Scales>(pair + q * kSRowBytes);
    pairs[h] = kScaleRows > 0 ? sc[0] : 0u;
    // step st uses zero row st kZRows / kSteps, as the scales; zload: this stage's rows, else
    // the stage before's (kZKeep)
    if (!kZKeep || zload) zero_pairs<D>(ring.z_of(s) + (8 * grp + g) * 4, warp, z[h]);
    if constexpr (kA8) {  // a 32-deep step from the words of its two 16-deep tiles (scaled: kFoldScales)
#pragma unroll
      for (int st = 0; st < kMmaSteps; ++st) {
        uint32_t w0, w1;
        asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(w0) : "r"(words + 2 * st * kChunk));
        asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(w1) : "r"(words + (2 * st + 1) * kChunk));
        if constexpr (kFoldScales) D::dequant(w0, w1, sc[st], r[h][st]);  // (row st: a block per step)
        else if constexpr (kZeros) D::dequant(w0, w1, z[h][st * kZRows / kMmaSteps], r[h][st]);  // (u4: q - z)
        else D::dequant(w0, w1, r[h][st]);
      }
    } else {
#pragma unroll
      for (int st = 0; st < kSteps; ++st) {
        uint32_t w;
        asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(w) : "r"(words + st * kChunk));
        uint32_t frag[2][2];
        dequant_word<D>(w, z[h][st * kZRows / kSteps], frag);
        if constexpr (kGroup > 0 && !kAccScales)
          mgen::scale_frag_pair<Act>(frag, mgen::scale_pair<Act, Scales>(sc[st * kScaleRows / kSteps]));
        r[h][st][0] = frag[0][0], r[h][st][1] = frag[1][0], r[h][st][2] = frag[0][1], r[h][st][3] = frag[1][1];
      }
    }
  }
}
// Buffer s's descriptors are its low word plus 2 per wgmma step (32 bytes along K): adds, no
// address arithmetic per wgmma. keep = 0: the stage's first step overwrites d (kAccScales).
__device__ __forceinline__ void issue(const Ring& ring, int s, Accs& d, Frags& r, uint32_t keep = 1) {
  const uint32_t lo = mgen::wg::desc_sw128_lo(ring.a) + s * (kABytes >> 4);  // (hoisted: ring.a is fixed)
  mgen::wg::pin(d);
  mgen::wg::fence();
#pragma unroll
  for (int st = 0; st < kMmaSteps; ++st)
#pragma unroll
    for (int h = 0; h < kHalves; ++h) {
      if (kAccScales && st == 0) mma_into(d[h], r[h][st], mgen::wg::desc_sw128_at(lo), keep);
      else mma(d[h], r[h][st], mgen::wg::desc_sw128_at(lo + 2 * st));
    }
  mgen::wg::commit();
}
// The consumers' release of buffer s: one arrival per warp.
__device__ __forceinline__ void release(const Ring& ring, int s, int lane) {
  __syncwarp();
  if (lane == 0) mgen::tma::mbar_arrive(ring.empty_of(s));
}

// Stage `at` with kOverlap: dequantize it into `next` while the previous stage's group (on
// `prev`, in buffer `before`) runs, issue it, then wait for the previous group and release its
// buffer; `at` moves on to the next stage, `before` to this one. `prev` is pinned on both
// sides of the issue: its registers stay untouched until its group is done.
__device__ __forceinline__ void overlap_step(const Ring& ring, Accs& d, Pos& at, int& before, int c, int warp,
                                             int lane, int g, Frags& next, Frags& prev, ZeroSet& z, bool zload) {
  uint32_t pairs[kHalves];
  dequant(ring, at, c, warp, lane, g, next, pairs, z, zload);
  mgen::wg::pin(prev);
  issue(ring, at.s, d, next);
  mgen::wg::wait<1>();
  mgen::wg::pin(prev);
  release(ring, before, lane);
  before = at.s;
  at.advance();
}

// The ring in passes. A stage's buffer s gives its barriers', its buffers' and its wgmma
// descriptors' shared-memory addresses; with s in a register (counted, compared and wrapped per
// stage), ptxas builds each descriptor in vector registers and moves it to uniform ones per wgmma
// (R2UR). So a segment's stages run one at a time only up to a pass's first buffer and after the
// last whole pass; in between, passes over the whole ring, unrolled, s a constant in each copy:
// addresses fold into immediates, descriptors stay in uniform registers, the parity flips once
// per pass (SASS per stage: 64x256 wg4 98 -> 78.5, fe2m1 32x256 wg4 116 -> 101; bench/notes.md v21).

// run() for kAccScales tiles over the segment's K tiles [kb, kb + n): the stages of one group
// accumulate into `part` (its first stage's first wgmma overwrites it: keep = 0), and at the
// group's last stage, or the segment's, each sum is folded into d times its column's scale in
// FP32: kAcc FMA per 64 columns and group instead of 4 HMUL2 per step on the weights (32 for
// g128 against 16 FMA at 32 rows), and the scale off the dequantization's path. The pairs are
// read by dequant() before the release and used after it: registers, not the buffer.
__device__ __forceinline__ void fold(Accs& d, Accs& part, const uint32_t (&pairs)[kHalves]) {
  if constexpr (kAccScales && (kGroup == 0 || kFoldScales)) {  // (kA8 per channel or folded: FP32 totals)
#pragma unroll
    for (int h = 0; h < kHalves; ++h)
#pragma unroll
      for (int a = 0; a < kAcc; ++a) d[h][a] += part[h][a];
  } else if constexpr (kAccScales) {  // (only these tiles instantiate the multipliers)
#pragma unroll
    for (int h = 0; h < kHalves; ++h) {
      const typename Scales::Vec v = {static_cast<int>(pairs[h])};  // the pair as packed positions 0, 1
      const float lo = mgen::acc_multiplier<Scales>(v, 0), hi = mgen::acc_multiplier<Scales>(v, 1);
#pragma unroll
      for (int a = 0; a < kAcc; ++a) d[h][a] = fmaf(a & 2 ? hi : lo, part[h][a], d[h][a]);  // rows g, g + 8 (store())
    }
  }
}
// One stage, its group waited for before the next (the loops without overlap: run() and
// run_acc_scales()): keep = 0 starts a group's sums (the stage's first wgmma overwrites d).
__device__ __forceinline__ void one_stage(const Ring& ring, Accs& d, Pos& at, int c, int warp, int lane, int g,
                                          Frags& r, uint32_t (&pairs)[kHalves], uint32_t keep, ZeroSet& z, bool zload) {
  dequant(ring, at, c, warp, lane, g, r, pairs, z, zload);
  issue(ring, at.s, d, r, keep);
  mgen::wg::wait<0>();
  mgen::wg::pin(d);
  release(ring, at.s, lane);
  at.advance();
}
// A stage of run_acc_scales() one at a time: K tile kt, the segment's first and last stage.
__device__ __forceinline__ void acc_stage(const Ring& ring, Accs& d, Accs& part, Pos& at, int kt, bool first,
                                          bool last, int c, int warp, int lane, int g, Frags& r,
                                          uint32_t (&pairs)[kHalves], ZeroSet& z) {
  one_stage(ring, part, at, c, warp, lane, g, r, pairs, first || kt % kGroupTiles == 0 ? 0u : 1u, z,
            first || zero_rows_start(kt));
  if (last || (kt + 1) % kGroupTiles == 0) fold(d, part, pairs);
}
// A pass from buffer 0 where buffer s holds a K tile of group phase (s + kQ) % kGroupTiles
// (constant along a segment: buffer and K tile advance together and kStages % kGroupTiles == 0),
// so which stages start and end a group is known at compile time too. `first`: the pass starts
// the segment, so its first stage reads the zero rows whatever its K tile (per channel, kZKeep,
// no later stage does).
template <int kQ>
__device__ __forceinline__ void acc_pass(const Ring& ring, Accs& d, Accs& part, uint32_t use, bool first, int c,
                                         int warp, int lane, int g, Frags& r, uint32_t (&pairs)[kHalves],
                                         ZeroSet& z) {
#pragma unroll
  for (int s = 0; s < kStages; ++s) {
    Pos at{s, use};  // (kZKeep at g128: kGroupTiles is 2, the K tile's parity (s + kQ) % 2)
    one_stage(ring, part, at, c, warp, lane, g, r, pairs, (s + kQ) % kGroupTiles == 0 ? 0u : 1u, z,
              (s == 0 && first) || zero_rows_start(s + kQ));
    if ((s + kQ + 1) % kGroupTiles == 0) fold(d, part, pairs);
  }
}
__device__ __forceinline__ void run_acc_scales(const Ring& ring, Accs& d, Pos& at, int kb, int n, int c, int warp,
                                               int lane, int g) {
  static_assert(kStages % kGroupTiles == 0 && kGroupTiles <= 2, "passes of whole groups, phase 0 or 1");
  // (kZKeep: at g128 a zero row per two stages, kGroupTiles 2; per channel the segment's first
  // stage reads the one row and z keeps it, whatever kGroupTiles)
  static_assert(!kAccScales || !kZKeep || kGroupTiles == 2 || kGroup == 0, "a zero row per group");
  Frags r;
  Accs part;
  uint32_t pairs[kHalves];
  ZeroSet z;
  int j = 0;
  // One at a time up to buffer 0; a segment that starts there inside a group starts its sums
  // one at a time too (a pass would keep them).
#pragma unroll 1
  for (; kRingPasses && j < n && (at.s != 0 || (j == 0 && kb % kGroupTiles != 0)); ++j)
    acc_stage(ring, d, part, at, kb + j, j == 0, j == n - 1, c, warp, lane, g, r, pairs, z);
  const int q = (kb + j) % kGroupTiles;
  const bool passes = kRingPasses && j + kStages <= n;
  for (; kRingPasses && j + kStages <= n; j += kStages, at.use ^= 1) {
    if (q == 0) acc_pass<0>(ring, d, part, at.use, j == 0, c, warp, lane, g, r, pairs, z);
    else acc_pass<1 % kGroupTiles>(ring, d, part, at.use, false, c, warp, lane, g, r, pairs, z);  // (j > 0 here)
  }
  if (passes && j == n && (kb + n) % kGroupTiles != 0) fold(d, part, pairs);  // ended inside a group
#pragma unroll 1
  for (; j < n; ++j) acc_stage(ring, d, part, at, kb + j, j == 0, j == n - 1, c, warp, lane, g, r, pairs, z);
}

// run_acc_scales() with the overlap (kAccOverlap: a stage per group, kA8's): stage j is
// dequantized into one fragment set while stage j - 1's wgmma run on the other into `part`;
// then stage j - 1 is waited for, its buffer released and its sums folded into d, and only
// then is stage j issued (its first wgmma overwrites part: keep = 0). One set of sums and two
// of fragments: the fold waits for this consumer's tensor work, the dequantization does not.
// pairs: the scale pairs of the stage dequantized now (`pn`) and of the one in flight (`pp`).
__device__ __forceinline__ void acc_overlap_step(const Ring& ring, Accs& d, Accs& part, Pos& at, int& before,
                                                 int c, int warp, int lane, int g, Frags& next, Frags& prev,
                                                 uint32_t (&pn)[kHalves], const uint32_t (&pp)[kHalves],
                                                 ZeroSet& z) {
  dequant(ring, at, c, warp, lane, g, next, pn, z, true);
  mgen::wg::pin(prev);
  mgen::wg::wait<0>();
  mgen::wg::pin(part);
  mgen::wg::pin(prev);
  release(ring, before, lane);
  fold(d, part, pp);
  issue(ring, at.s, part, next, 0u);
  before = at.s;
  at.advance();
}
__device__ __forceinline__ void run_acc_overlap(const Ring& ring, Accs& d, Pos& at, int n, int c, int warp,
                                                int lane, int g) {
  static_assert(!kAccOverlap || (kAccScales && kGroupTiles == 1), "a stage per group");
  Frags ra, rb;
  Accs part;
  uint32_t pa[kHalves], pb[kHalves];
  ZeroSet z;
  dequant(ring, at, c, warp, lane, g, ra, pa, z, true);
  issue(ring, at.s, part, ra, 0u);
  int before = at.s, j = 1;
  at.advance();
#pragma unroll 1
  for (; j + 1 < n; j += 2) {  // by pairs: each set's role fixed at compile time (ptxas keeps wgmma async)
    acc_overlap_step(ring, d, part, at, before, c, warp, lane, g, rb, ra, pb, pa, z);
    acc_overlap_step(ring, d, part, at, before, c, warp, lane, g, ra, rb, pa, pb, z);
  }
  const bool odd = j < n;
  if (odd) acc_overlap_step(ring, d, part, at, before, c, warp, lane, g, rb, ra, pb, pa, z);
  mgen::wg::wait<0>();
  mgen::wg::pin(part);
  release(ring, before, lane);
  if (odd) fold(d, part, pb);
  else fold(d, part, pa);
}

// A pass of the overlapped loop from buffer kP (0 or 1: pairs of stages keep the register
// sets' order, so they reach the ring's start only to within its parity), the first stage on
// `first`: buffer s's stage alternates with i, and its parity is the pass's until it wraps;
// past the segment's first stage, on an even K tile (run()).
template <int kP>
__device__ __forceinline__ void overlap_pass(const Ring& ring, Accs& d, uint32_t use, int c, int warp, int lane,
                                             int g, Frags& first, Frags& second, ZeroSet& z) {
#pragma unroll
  for (int i = 0; i < kStages; ++i) {
    Pos at{(kP + i) % kStages, kP + i >= kStages ? use ^ 1u : use};
    int before = (kP + i + kStages - 1) % kStages;
    if (i % 2 == 0) overlap_step(ring, d, at, before, c, warp, lane, g, first, second, z, zero_rows_start(i));
    else overlap_step(ring, d, at, before, c, warp, lane, g, second, first, z, zero_rows_start(i));
  }
}
// A consumer warpgroup's run over the K tiles [kb, kb + n) of one segment into d, from stage
// `at`. With kOverlap, each stage's group is issued, then the next stage dequantized while it
// runs, and only then waited for (at most one group in flight), so a consumer's own
// dequantization overlaps its tensor work; without it (too few registers for a second set of
// fragments: spec.lua) each group is waited for before the next stage, and the other
// consumers' groups fill the tensor cores. The
// fragments alternate between two register sets, ra and rb, fixed at compile time (the loops
// go by pairs of stages and the passes by even counts): an issued group's operands are never
// written while it runs, which is what ptxas needs to keep wgmma asynchronous (else it
// serializes every wgmma: warning C7513). Columns past n (the last column tile, n % kTileN !=
// 0) are computed on the zeros the copy engine fills in and never stored.
__device__ __forceinline__ void run(const Ring& ring, Accs& d, Pos& at, int kb, int n, int c, int warp, int lane,
                                    int g) {
  ZeroSet z;  // (kZKeep: zero_rows_start() says which stages past a segment's first read)
  if constexpr (!kOverlap) {  // one group at a time: the registers hold no second set of fragments
    Frags r;
    uint32_t pairs[kHalves];
    int j = 0;
#pragma unroll 1
    for (; kRingPasses && j < n && at.s != 0; ++j)
      one_stage(ring, d, at, c, warp, lane, g, r, pairs, 1, z, j == 0 || zero_rows_start(kb + j));
    for (; kRingPasses && j + kStages <= n; j += kStages, at.use ^= 1) {
#pragma unroll
      for (int s = 0; s < kStages; ++s) {
        Pos b{s, at.use};
        const bool zload = (s == 0 && j == 0) || zero_rows_start(kb + j + s);
        one_stage(ring, d, b, c, warp, lane, g, r, pairs, 1, z, zload);
      }
    }
#pragma unroll 1
    for (; j < n; ++j) one_stage(ring, d, at, c, warp, lane, g, r, pairs, 1, z, j == 0 || zero_rows_start(kb + j));
    return;
  }
  static_assert(!kOverlap || kStages % 2 == 0, "passes of the overlapped loop: whole pairs of stages");
  Frags ra, rb;
  uint32_t pairs[kHalves];
  int before, j;
  // With a zero row per two stages (kZKeep at g128) the loops' pairs start on even K tiles: the
  // segment's first stage goes into rb where kb is even, one stage more before the loops, so
  // that a pair's first stage (into rb) reads the row (zero_rows_start(0)) and its second
  // takes it over; the passes (stage i on a K tile of i's parity) likewise.
  if (kZKeep && kGroup > 0 && kb % 2 == 0 && n > 1) {
    dequant(ring, at, c, warp, lane, g, rb, pairs, z, true);
    issue(ring, at.s, d, rb);
    before = at.s;
    at.advance();
    overlap_step(ring, d, at, before, c, warp, lane, g, ra, rb, z, zero_rows_start(1));
    j = 2;
  } else {
    dequant(ring, at, c, warp, lane, g, ra, pairs, z, true);
    issue(ring, at.s, d, ra);
    before = at.s, j = 1;
    at.advance();
  }
#pragma unroll 1
  for (; kRingPasses && j + 1 < n && at.s > 1; j += 2) {
    overlap_step(ring, d, at, before, c, warp, lane, g, rb, ra, z, zero_rows_start(0));
    overlap_step(ring, d, at, before, c, warp, lane, g, ra, rb, z, zero_rows_start(1));
  }
  for (; kRingPasses && j + kStages <= n; j += kStages, at.use ^= 1) {
    if (at.s == 0) overlap_pass<0>(ring, d, at.use, c, warp, lane, g, rb, ra, z);
    else overlap_pass<1>(ring, d, at.use, c, warp, lane, g, rb, ra, z);
    before = (at.s + kStages - 1) % kStages;
  }
#pragma unroll 1
  for (; j + 1 < n; j += 2) {
    overlap_step(ring, d, at, before, c, warp, lane, g, rb, ra, z, zero_rows_start(0));
    overlap_step(ring, d, at, before, c, warp, lane, g, ra, rb, z, zero_rows_start(1));
  }
  if (j < n) overlap_step(ring, d, at, before, c, warp, lane, g, rb, ra, z, zero_rows_start(0));
  mgen::wg::wait<0>();
  mgen::wg::pin(d);
  release(ring, before, lane);
}

// Stream-K meeting point, run by the consumer threads of every block that holds part of tile
// seg.tile (stream-K tile index t) but not all of it: the pieces' owners are the blocks
// first..last (mgen_wgmma_sk_owner of the tile's first and last unit). Each stores its FP32
// partials in its slot, laid out [warpgroup][accumulator][thread] so that the stores coalesce:
// 2 b for the block's first stream-K segment, 2 b + 1 for a later one (a range holds at most
// two shared tiles: one it starts in, one it ends in). So the piece of block b > first is in
// slot 2 b (its range starts inside the tile), and first's is in 2 first + 1 unless first's
// range starts exactly at the tile. Each counts itself in on the tile's counter (counter
// `first`: no two shared tiles have the same first block). The last to arrive sums the slots in
// block order (its own read back too: no second set of registers), so the result is the same
// bit for bit whichever block is last, resets the counter for the next launch and returns
// true: it writes the tile. The workspace holds 2 grid slots of kTileM x kTileN floats and grid
// counters (what runtime/src/families/wgmma.c asks the runtime for).
__device__ __forceinline__ bool fixup(const mgen_launch_args& p, const Ring& ring, const Schedule& sc,
                                      const Segment& seg, bool first_segment, Accs& d, int c, int tid) {
  const long long t = seg.tile - sc.dp_tiles, u0 = t * sc.k_total;  // (64-bit: may pass 2^31)
  const long long first = mgen_wgmma_sk_owner(sc.sk_units, u0, sc.grid);
  const long long last = mgen_wgmma_sk_owner(sc.sk_units, u0 + sc.k_total - 1, sc.grid);
  const size_t slot = (size_t)kConsumers * kHalves * kAcc * 128;  // kTileM x kTileN floats
  float* const base = p.partials + (size_t)c * kHalves * kAcc * 128 + tid;
  float* mine = base + (size_t)(2 * blockIdx.x + (first_segment ? 0 : 1)) * slot;
#pragma unroll
  for (int h = 0; h < kHalves; ++h)
#pragma unroll
    for (int j = 0; j < kAcc; ++j) __stcg(mine + (h * kAcc + j) * 128, d[h][j]);
  // consumers only; the partial is written: one thread's arrival releases it (mgen_ptx.cuh)
  asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumers * 128) : "memory");
  if (c == 0 && tid == 0) {
    const int done = mgen::arrive_acq_rel(p.counters + first) == (int)(last - first);
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(ring.flag), "r"(done) : "memory");
  }
  asm volatile("bar.sync 1, %0;\n" ::"n"(kConsumers * 128) : "memory");  // then the last block's loads
  int done;
  asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(done) : "r"(ring.flag) : "memory");
  if (!done) return false;
  const bool first_starts_here = mgen_wgmma_sk_start(sc.sk_units, first, sc.grid) == u0;
  const float* from = base + (size_t)(2 * first + (first_starts_here ? 0 : 1)) * slot;
#pragma unroll
  for (int h = 0; h < kHalves; ++h)
#pragma unroll
    for (int j = 0; j < kAcc; ++j) d[h][j] = __ldcg(from + (h * kAcc + j) * 128);
  for (long long b = first + 1; b <= last; ++b) {
    from = base + (size_t)(2 * b) * slot;
#pragma unroll
    for (int h = 0; h < kHalves; ++h)
#pragma unroll
      for (int j = 0; j < kAcc; ++j) d[h][j] += __ldcg(from + (h * kAcc + j) * 128);
  }
  if (c == 0 && tid == 0) p.counters[first] = 0;
  return true;
}

// The epilogue of 64 columns of a tile (from nc): d[4i + 0..3] = rows (16 warp + g, + 8) x
// columns (8i + 2t, + 1) of C^T, times the per-channel scales or fe2m1's FP32 column factors
// (1 for group scales: those are in the fragments or folded into d), and with kA8 times
// 2^-kLog2 (the E4M3 weights' exponent offset, exact) and each row's activation scale; plus
// the column's bias where there is one (after the factors; before a moe row's router weight),
// rounded once. bias_at(): column n's bias, read only where there is one (no + 0: -0 stays -0).
__device__ __forceinline__ float bias_at(const Act* bias, int n) {
  return bias != nullptr ? static_cast<float>(bias[n]) : 0.0f;
}
__device__ __forceinline__ float biased(float y, const Act* bias, float b) { return bias != nullptr ? y + b : y; }
__device__ __forceinline__ float row_scale(const mgen_launch_args& p, int m) {
  if constexpr (kA8) return p.a_scales != nullptr ? __ldg(p.a_scales + (size_t)m * p.a_scale_stride) : 1.0f;
  else return 1.0f;
}
__device__ __forceinline__ void store(const mgen_launch_args& p, const float (&d)[kAcc], int m0, int nc,
                                      int warp, int g, int t) {
  const int n_lo = nc + 16 * warp + g, n_hi = n_lo + 8;
  const float s_lo = mgen::column_factor<Scales>(p.scales, p.n, p.k_packed, kGroup, n_lo) * kSumFactor;
  const float s_hi = mgen::column_factor<Scales>(p.scales, p.n, p.k_packed, kGroup, n_hi) * kSumFactor;
  const Act* bias = static_cast<const Act*>(p.bias);
  const float b_lo = bias_at(bias, n_lo), b_hi = bias_at(bias, n_hi);
  Act* out = static_cast<Act*>(p.c);
  // This thread's rows' scales (row_scale(): 1 but for kA8), all loaded before the first store,
  // so that no store waits for its own row's load (ncu, 128x128 W4A8 at M = 4096: such waits
  // were ~4% of the warps' stall samples).
  float r[kTileM / 4];
#pragma unroll
  for (int i = 0; i < kTileM / 8; ++i) {
    const int m = m0 + 8 * i + 2 * t;
    r[2 * i] = m < p.m || !kA8 ? row_scale(p, m) : 0.0f;  // (!kA8: a constant 1, folded)
    r[2 * i + 1] = m + 1 < p.m || !kA8 ? row_scale(p, m + 1) : 0.0f;
  }
#pragma unroll
  for (int i = 0; i < kTileM / 8; ++i) {
    const int m = m0 + 8 * i + 2 * t;
    if (m < p.m) {
      out[(size_t)m * p.n + n_lo] = mgen::wg::from_float<Act>(biased(d[4 * i + 0] * s_lo * r[2 * i], bias, b_lo));
      out[(size_t)m * p.n + n_hi] = mgen::wg::from_float<Act>(biased(d[4 * i + 2] * s_hi * r[2 * i], bias, b_hi));
    }
    if (m + 1 < p.m) {
      out[(size_t)(m + 1) * p.n + n_lo] =
          mgen::wg::from_float<Act>(biased(d[4 * i + 1] * s_lo * r[2 * i + 1], bias, b_lo));
      out[(size_t)(m + 1) * p.n + n_hi] =
          mgen::wg::from_float<Act>(biased(d[4 * i + 3] * s_hi * r[2 * i + 1], bias, b_hi));
    }
  }
}

// store() of a moe tile: row r goes to C's row of its pair (the warpgroup's table of the
// segment's rows, at `rows`: -1, padding, not stored) times its router weight; the column
// factors and the bias are expert e's (its scales at `scales`, its bias at `bias`).
__device__ __forceinline__ void store_moe(const MoeParams& p, uint32_t rows, const void* scales, const Act* bias,
                                          const float (&d)[kAcc], int nc, int warp, int g, int t) {
  const int n_lo = nc + 16 * warp + g, n_hi = n_lo + 8;
  const float s_lo = mgen::column_factor<Scales>(scales, p.n, p.k_packed, kGroup, n_lo);
  const float s_hi = mgen::column_factor<Scales>(scales, p.n, p.k_packed, kGroup, n_hi);
  const float b_lo = bias_at(bias, n_lo), b_hi = bias_at(bias, n_hi);
  Act* out = static_cast<Act*>(p.c);
#pragma unroll
  for (int i = 0; i < kTileM / 8; ++i) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int r = 8 * i + 2 * t + j;
      int row;
      float w;
      asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(row) : "r"(rows + 4 * r));
      asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(w) : "r"(rows + 4 * (kTileM + r)));
      if (row >= 0) {
        out[(size_t)row * p.n + n_lo] = mgen::wg::from_float<Act>(biased(d[4 * i + j] * s_lo, bias, b_lo) * w);
        out[(size_t)row * p.n + n_hi] = mgen::wg::from_float<Act>(biased(d[4 * i + 2 + j] * s_hi, bias, b_hi) * w);
      }
    }
  }
}

__device__ __forceinline__ void store_tile(const mgen_launch_args& p, uint32_t, int, const float (&d)[kAcc],
                                           int m0, int nc, int warp, int g, int t) {
  store(p, d, m0, nc, warp, g, t);
}
__device__ __forceinline__ void store_tile(const MoeParams& p, uint32_t rows, int expert, const float (&d)[kAcc],
                                           int, int nc, int warp, int g, int t) {
  const Act* bias = p.bias != nullptr ? static_cast<const Act*>(p.bias) + (size_t)expert * p.n : nullptr;
  store_moe(p, rows, static_cast<const char*>(p.scales) + (size_t)expert * p.moe.s_stride, bias, d, nc, warp, g, t);
}

__global__ void __launch_bounds__(kThreads, 1)
    ${k.name}_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_w,
                     const __grid_constant__ CUtensorMap map_s, const __grid_constant__ CUtensorMap map_z,
                     const Params p, const int dp_tiles) {
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
  ring.gathered = kMoe && !a_boxed(p);
  const int wg = threadIdx.x / 128;
  // Every thread builds the schedule and walks to its first segment before any branch on its
  // index: ptxas then keeps the schedule and the stage loops' bookkeeping in uniform registers
  // (64x256 wg2: 669 -> 613 instructions between the loops' first and last wgmma, vector integer
  // ones 190 -> 85), 1.5-2.7% faster on every shape; built after the producer's branch, they
  // were per-thread values. Then thread 0 (producer 0) sets up the ring's barriers and copies
  // stage 0 before the block's barrier: 1% (bench/notes.md v27).
  const Schedule sc(p, dp_tiles);
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
    if constexpr (kAccOverlap) run_acc_overlap(ring, d, pos, seg.ke - seg.kb, c, warp, lane, g);
    else if constexpr (kAccScales) run_acc_scales(ring, d, pos, seg.kb, seg.ke - seg.kb, c, warp, lane, g);
    else run(ring, d, pos, seg.kb, seg.ke - seg.kb, c, warp, lane, g);
    if (seg.kb > 0 || seg.ke < sc.k_total)  // part of the tile: the blocks that share it meet
      if (!fixup(p, ring, sc, seg, cur.first_sk, d, c, threadIdx.x % 128)) continue;
#pragma unroll
    for (int h = 0; h < kHalves; ++h) {
      if (nc + 64 * h < p.n) store_tile(p, rows, expert, d[h], m0, nc + 64 * h, warp, g, t);  // (n % 64 == 0)
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
  return (int)mgen::launch(${k.name}_kernel, (unsigned)plan.grid, kThreads, kSmemBytes,
                           static_cast<cudaStream_t>(stream), args->pdl != 0, map_a, map_w, map_s, map_z, p,
                           (int)plan.dp_tiles);
}

extern "C" int ${k.name}_prepare(void) {
  using namespace ${k.name};
  return (int)cudaFuncSetAttribute(${k.name}_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
}
