// mgen_wgmma_body.cuh -- the wgmma family's kernel body: its shared-memory ring, producers,
// consumers' dequantization and main loops, stream-K fixup and epilogue, as plain CUDA over the
// constants each kernel defines. kernel.cu.tpl includes it inside the kernel's namespace, after
// those constants (kTileM, kStages, Dequant, ...) and before the kernel's entry point, so every
// kernel compiles this text with its own values; generated/ holds it once instead of once per
// kernel. No include guard: a shard includes several kernels, each its own copy in its own
// namespace.

// Shared memory, from a 1 KiB aligned base: the stages of A, the stages of W, the stages of the
// scales, the stages of the zero points, then the barriers full[kStages] and empty[kStages]
// (8 bytes each), then split-K's "last block" flag, then (kMoe) the tile's route: A rows,
// C rows, router weights; else (dense) each consumer warpgroup's kCRows staged rows of C.
struct Ring {
  uint32_t a, w, s, z, full, empty, flag, route, stage_c;  // stage_c: the dense epilogue's rows
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
  int m_slabs, n_tiles, k_total, grid, dp_waves, dp_tiles, band;
  long long sk_units, sk_begin, sk_end;
  template <class P>
  __device__ Schedule(const P& p, int dp, int band_of_launch) {
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
    band = band_of_launch;  // (moe: kBand, which place() divides by as a constant)
  }
  // Tile t's m slab and column tile: slab fastest (neighbours share W's column tile), within
  // bands of `band` slabs that run through all the column tiles in turn (mgen_wgmma_sched.h:
  // moe kBand; dense by the L2 rule, one band wherever A fits it).
  __device__ __forceinline__ mgen_wgmma_place place(int t) const {
    return mgen_wgmma_tile_place(t, m_slabs, n_tiles, kBand > 0 ? kBand : band);
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
// kHalves 64-column groups h (group 64 (kHalves c + h) of the tile), the lane's `tile` of each
// step (tile 4 (kHalves c + h) + tile of the chunk, word 4 lane + tile of its 128-word group,
// 32 tile + lane in the e4m3 layout: runtime/src/formats/layout.h; the kernel's entry says
// which tile a lane takes) and the scale pair of its columns 16 tile + g and + 8 (adjacent in
// the permuted scale row: one shared load per scale row; with kAccScales the weights stay
// unscaled and the pair goes out in `pairs`, but with kFoldScales each 32-deep step's pair
// goes into the partial's E4M3 tables), and with kZeros the zero points of the same two
// columns (zero_pairs()); with kA8Steps it only loads them (a8_convert()). issue(): the stage's
// kMmaSteps x kHalves wgmma, one group.
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
// serialize its wgmma (C7512); with 64 to 72 (g128 128x128 wg2, 64x192 wg3) the kept rows cost
// more than the loads they save: ptxas spills (128x128: 166 bytes) and feeds the stream-K sum's
// adds (fixup()) one load at a time instead of all at once. SASS per 2 stages (f16): g128 64x128
// wg2 s12 198 -> 187 (u4b8 180), gc 155 -> 144 (144); g128 32x256 wg4 s6 962 -> 912 per 12 (832).
constexpr int kRegCap = 65536 / kThreads / 8 * 8 > 255 ? 255 : 65536 / kThreads / 8 * 8;
constexpr bool kZKeep = kZeros && kZRows == 1 &&
                        (kGroup == 0 || (kGroup == 2 * kTileK &&
                                         (kAccScales || (kOverlap && kRegCap - kHalves * (kAcc + 8 * kSteps) >= 80))));
// Whether the stage of K tile kt reads its zero rows (past a segment's first stage).
__host__ __device__ constexpr bool zero_rows_start(int kt) { return !kZKeep || (kGroup > 0 && kt % 2 == 0); }
// With kZeros, the zeros of this thread's columns 16 tile + g and + 8 of a 64-column group,
// for each zero row of the stage: word g of the group in the row (`words`; 8 words per 64
// columns, layout.h "Zero points") holds them as pair j = tile, which Dequant::zero_pair turns
// into the codes' biased form (formats/u4/mma_*.cuh: 3 instructions in FP16, 2 in BF16) once
// per row, for every step of the row: the same one for the whole stage where the group spans
// it (g64, g128) or per channel. One ld.shared.b32 per row, 8 distinct words per warp (its 4
// lanes of a g broadcast). Templates on D, so that formats without zero points never compile
// the calls they lack.
template <class D>
__device__ __forceinline__ void zero_pairs(uint32_t words, int tile, Zeros& z) {
  if constexpr (kZeros) {
#pragma unroll
    for (int q = 0; q < kZRows; ++q) {
      uint32_t zw;
      asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(zw) : "r"(words + q * kZRowBytes));
      D::zero_pair(zw, tile, z[q]);
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
// W4A8 (kA8): a step's registers as dequant() loads them, its two words and then the scale
// pair (kFoldScales) or the zero pair (kZeros, u4: q - z), become its fragment in place. With
// kA8Steps issue() does it right before the step's wgmma, so that only step 0's conversion
// stands between the wait for the stage before and the tensor pipe (converted all before the
// stage's first wgmma, ptxas put the whole conversion after that wait, beside the fold:
// bench/notes/v45.md item 3); else dequant() does it as it loads.
template <class D = Dequant>
__device__ __forceinline__ void a8_convert(uint32_t (&x)[4]) {
  const uint32_t w0 = x[0], w1 = x[1];
  if constexpr (kFoldScales) {
    D::dequant(w0, w1, x[2], x);
  } else if constexpr (kZeros) {
    const uint32_t z[2] = {x[2], x[3]};
    D::dequant(w0, w1, z, x);
  } else {
    D::dequant(w0, w1, x);
  }
}
// (A template on D so that only the branch of the kernel's own kind of A is instantiated.)
template <class D = Dequant>
__device__ __forceinline__ void dequant(const Ring& ring, Pos at, int c, int tile, int lane, int g, Frags& r,
                                        uint32_t (&pairs)[kHalves], ZeroSet& z, bool zload) {
  const int s = at.s;
  mgen::tma::mbar_wait(ring.full_of(s), at.use);
  // moe: A came by cp.async (the generic proxy); this thread's wgmma read it through the async one
  if (kMoe && ring.gathered) mgen::wg::fence_proxy_async();
#pragma unroll
  for (int h = 0; h < kHalves; ++h) {
    const int grp = kHalves * c + h;
    // (the e4m3 layout keeps a tile's words together: 32 lanes, one wavefront; layout.h)
    const uint32_t words = ring.w_of(s) + (128 * grp + (kA8 ? 32 * tile + lane : 4 * lane + tile)) * 4;
    const uint32_t pair = ring.s_of(s) + (64 * grp + 8 * g + 2 * tile) * kScaleBytes;
    uint32_t sc[kScaleRows > 0 ? kScaleRows : 1];  // one load per scale row: step st uses row st kScaleRows / kSteps
#pragma unroll
    for (int q = 0; q < kScaleRows; ++q) sc[q] = mgen::scale_pair_load<Act, Scales>(pair + q * kSRowBytes);
    pairs[h] = kScaleRows > 0 ? sc[0] : 0u;
    // step st uses zero row st kZRows / kSteps, as the scales; zload: this stage's rows, else
    // the stage before's (kZKeep)
    if (!kZKeep || zload) zero_pairs<D>(ring.z_of(s) + (8 * grp + g) * 4, tile, z[h]);
    if constexpr (kA8) {  // a 32-deep step from the words of its two 16-deep tiles (scaled: kFoldScales)
#pragma unroll
      for (int st = 0; st < kMmaSteps; ++st) {
        uint32_t(&x)[4] = r[h][st];  // (kA8Steps: the step's inputs, converted by issue())
        asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(x[0]) : "r"(words + 2 * st * kChunk));
        asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(x[1]) : "r"(words + (2 * st + 1) * kChunk));
        if constexpr (kFoldScales) x[2] = sc[st];  // (row st: a block per step)
        if constexpr (kZeros) x[2] = z[h][st * kZRows / kMmaSteps][0], x[3] = z[h][st * kZRows / kMmaSteps][1];
        if constexpr (!kA8Steps) a8_convert<D>(x);
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
// kA8Steps: each step converted (a8_convert()) and fenced right before its wgmma.
__device__ __forceinline__ void issue(const Ring& ring, int s, Accs& d, Frags& r, uint32_t keep = 1) {
  const uint32_t lo = mgen::wg::desc_sw128_lo(ring.a) + s * (kABytes >> 4);  // (hoisted: ring.a is fixed)
  mgen::wg::pin(d);
  if constexpr (!kA8Steps) mgen::wg::fence();
#pragma unroll
  for (int st = 0; st < kMmaSteps; ++st) {
    if constexpr (kA8Steps) {
#pragma unroll
      for (int h = 0; h < kHalves; ++h) a8_convert(r[h][st]);
      mgen::wg::fence();
    }
#pragma unroll
    for (int h = 0; h < kHalves; ++h) {
      if (kAccScales && st == 0) mma_into(d[h], r[h][st], mgen::wg::desc_sw128_at(lo), keep);
      else mma(d[h], r[h][st], mgen::wg::desc_sw128_at(lo + 2 * st));
    }
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
__device__ __forceinline__ void overlap_step(const Ring& ring, Accs& d, Pos& at, int& before, int c, int tile,
                                             int lane, int g, Frags& next, Frags& prev, ZeroSet& z, bool zload) {
  uint32_t pairs[kHalves];
  dequant(ring, at, c, tile, lane, g, next, pairs, z, zload);
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
__device__ __forceinline__ void one_stage(const Ring& ring, Accs& d, Pos& at, int c, int tile, int lane, int g,
                                          Frags& r, uint32_t (&pairs)[kHalves], uint32_t keep, ZeroSet& z, bool zload) {
  dequant(ring, at, c, tile, lane, g, r, pairs, z, zload);
  issue(ring, at.s, d, r, keep);
  mgen::wg::wait<0>();
  mgen::wg::pin(d);
  release(ring, at.s, lane);
  at.advance();
}
// A stage of run_acc_scales() one at a time: K tile kt, the segment's first and last stage.
__device__ __forceinline__ void acc_stage(const Ring& ring, Accs& d, Accs& part, Pos& at, int kt, bool first,
                                          bool last, int c, int tile, int lane, int g, Frags& r,
                                          uint32_t (&pairs)[kHalves], ZeroSet& z) {
  one_stage(ring, part, at, c, tile, lane, g, r, pairs, first || kt % kGroupTiles == 0 ? 0u : 1u, z,
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
                                         int tile, int lane, int g, Frags& r, uint32_t (&pairs)[kHalves],
                                         ZeroSet& z) {
#pragma unroll
  for (int s = 0; s < kStages; ++s) {
    Pos at{s, use};  // (kZKeep at g128: kGroupTiles is 2, the K tile's parity (s + kQ) % 2)
    one_stage(ring, part, at, c, tile, lane, g, r, pairs, (s + kQ) % kGroupTiles == 0 ? 0u : 1u, z,
              (s == 0 && first) || zero_rows_start(s + kQ));
    if ((s + kQ + 1) % kGroupTiles == 0) fold(d, part, pairs);
  }
}
__device__ __forceinline__ void run_acc_scales(const Ring& ring, Accs& d, Pos& at, int kb, int n, int c, int tile,
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
    acc_stage(ring, d, part, at, kb + j, j == 0, j == n - 1, c, tile, lane, g, r, pairs, z);
  const int q = (kb + j) % kGroupTiles;
  const bool passes = kRingPasses && j + kStages <= n;
  for (; kRingPasses && j + kStages <= n; j += kStages, at.use ^= 1) {
    if (q == 0) acc_pass<0>(ring, d, part, at.use, j == 0, c, tile, lane, g, r, pairs, z);
    else acc_pass<1 % kGroupTiles>(ring, d, part, at.use, false, c, tile, lane, g, r, pairs, z);  // (j > 0 here)
  }
  if (passes && j == n && (kb + n) % kGroupTiles != 0) fold(d, part, pairs);  // ended inside a group
#pragma unroll 1
  for (; j < n; ++j) acc_stage(ring, d, part, at, kb + j, j == 0, j == n - 1, c, tile, lane, g, r, pairs, z);
}

// run_acc_scales() with the overlap (kAccOverlap: a stage per group, kA8's): stage j is
// dequantized into one fragment set while stage j - 1's wgmma run on the other into `part`;
// then stage j - 1 is waited for, its buffer released and its sums folded into d, and only
// then is stage j issued (its first wgmma overwrites part: keep = 0). One set of sums and two
// of fragments: the fold waits for this consumer's tensor work, the dequantization does not.
// pairs: the scale pairs of the stage dequantized now (`pn`) and of the one in flight (`pp`).
// With kZKeep (here per channel: a stage per group rules out g128's row per two stages) only
// the segment's first stage, run_acc_overlap()'s own, reads the zero row; the steps keep it,
// but for one consumer (128x64 wg1), whose steps are 2% slower keeping it though they issue 4%
// fewer instructions (bench/notes/v63.md item 3): a cover by measurement, the cause unprofiled.
__device__ __forceinline__ void acc_overlap_step(const Ring& ring, Accs& d, Accs& part, Pos& at, int& before,
                                                 int c, int tile, int lane, int g, Frags& next, Frags& prev,
                                                 uint32_t (&pn)[kHalves], const uint32_t (&pp)[kHalves],
                                                 ZeroSet& z) {
  static_assert(!kAccOverlap || !kZKeep || kGroup == 0, "kZKeep with a stage per group: per channel");
  dequant(ring, at, c, tile, lane, g, next, pn, z, !kZKeep || kConsumers == 1);
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
__device__ __forceinline__ void run_acc_overlap(const Ring& ring, Accs& d, Pos& at, int n, int c, int tile,
                                                int lane, int g) {
  static_assert(!kAccOverlap || (kAccScales && kGroupTiles == 1), "a stage per group");
  Frags ra, rb;
  Accs part;
  uint32_t pa[kHalves], pb[kHalves];
  ZeroSet z;
  dequant(ring, at, c, tile, lane, g, ra, pa, z, true);
  issue(ring, at.s, part, ra, 0u);
  int before = at.s, j = 1;
  at.advance();
#pragma unroll 1
  for (; j + 1 < n; j += 2) {  // by pairs: each set's role fixed at compile time (ptxas keeps wgmma async)
    acc_overlap_step(ring, d, part, at, before, c, tile, lane, g, rb, ra, pb, pa, z);
    acc_overlap_step(ring, d, part, at, before, c, tile, lane, g, ra, rb, pa, pb, z);
  }
  const bool odd = j < n;
  if (odd) acc_overlap_step(ring, d, part, at, before, c, tile, lane, g, rb, ra, pb, pa, z);
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
__device__ __forceinline__ void overlap_pass(const Ring& ring, Accs& d, uint32_t use, int c, int tile, int lane,
                                             int g, Frags& first, Frags& second, ZeroSet& z) {
#pragma unroll
  for (int i = 0; i < kStages; ++i) {
    Pos at{(kP + i) % kStages, kP + i >= kStages ? use ^ 1u : use};
    int before = (kP + i + kStages - 1) % kStages;
    if (i % 2 == 0) overlap_step(ring, d, at, before, c, tile, lane, g, first, second, z, zero_rows_start(i));
    else overlap_step(ring, d, at, before, c, tile, lane, g, second, first, z, zero_rows_start(i));
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
__device__ __forceinline__ void run(const Ring& ring, Accs& d, Pos& at, int kb, int n, int c, int tile, int lane,
                                    int g) {
  ZeroSet z;  // (kZKeep: zero_rows_start() says which stages past a segment's first read)
  if constexpr (!kOverlap) {  // one group at a time: the registers hold no second set of fragments
    Frags r;
    uint32_t pairs[kHalves];
    int j = 0;
#pragma unroll 1
    for (; kRingPasses && j < n && at.s != 0; ++j)
      one_stage(ring, d, at, c, tile, lane, g, r, pairs, 1, z, j == 0 || zero_rows_start(kb + j));
    for (; kRingPasses && j + kStages <= n; j += kStages, at.use ^= 1) {
#pragma unroll
      for (int s = 0; s < kStages; ++s) {
        Pos b{s, at.use};
        const bool zload = (s == 0 && j == 0) || zero_rows_start(kb + j + s);
        one_stage(ring, d, b, c, tile, lane, g, r, pairs, 1, z, zload);
      }
    }
#pragma unroll 1
    for (; j < n; ++j) one_stage(ring, d, at, c, tile, lane, g, r, pairs, 1, z, j == 0 || zero_rows_start(kb + j));
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
    dequant(ring, at, c, tile, lane, g, rb, pairs, z, true);
    issue(ring, at.s, d, rb);
    before = at.s;
    at.advance();
    overlap_step(ring, d, at, before, c, tile, lane, g, ra, rb, z, zero_rows_start(1));
    j = 2;
  } else {
    dequant(ring, at, c, tile, lane, g, ra, pairs, z, true);
    issue(ring, at.s, d, ra);
    before = at.s, j = 1;
    at.advance();
  }
#pragma unroll 1
  for (; kRingPasses && j + 1 < n && at.s > 1; j += 2) {
    overlap_step(ring, d, at, before, c, tile, lane, g, rb, ra, z, zero_rows_start(0));
    overlap_step(ring, d, at, before, c, tile, lane, g, ra, rb, z, zero_rows_start(1));
  }
  for (; kRingPasses && j + kStages <= n; j += kStages, at.use ^= 1) {
    if (at.s == 0) overlap_pass<0>(ring, d, at.use, c, tile, lane, g, rb, ra, z);
    else overlap_pass<1>(ring, d, at.use, c, tile, lane, g, rb, ra, z);
    before = (at.s + kStages - 1) % kStages;
  }
#pragma unroll 1
  for (; j + 1 < n; j += 2) {
    overlap_step(ring, d, at, before, c, tile, lane, g, rb, ra, z, zero_rows_start(0));
    overlap_step(ring, d, at, before, c, tile, lane, g, ra, rb, z, zero_rows_start(1));
  }
  if (j < n) overlap_step(ring, d, at, before, c, tile, lane, g, rb, ra, z, zero_rows_start(0));
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

// The epilogue of 64 columns of a tile (from nc): d[4i + 0..3] = rows (16 tile + g, + 8) x
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
// The dense epilogue's staging rows: kCRows rows of the 64-column group (128 bytes each)
// per consumer warpgroup, in the 128-byte swizzle of the A stages (Swizzle<3,4,3>: 16-byte
// chunk c of row r at c ^ (r % 8)), so that a warp's 2-byte stores (4 rows x 8 columns of each
// tile: 16 words) and its 16-byte reads (4 whole rows) each take one wavefront, whichever tiles
// its lanes hold (rotated or not).
__device__ __forceinline__ uint32_t staged(int row, int byte) {
  return mgen::Swizzle<3, 4, 3>::apply(row * 128 + byte);
}
__device__ __forceinline__ void st_shared_u16(uint32_t addr, Act v) {
  asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(addr), "h"(*reinterpret_cast<const unsigned short*>(&v)) : "memory");
}
// Called for every 64-column group of the tile, those past n too (nc >= p.n: n % 64 == 0), so
// that its meetings stay out of any branch on the warpgroup's columns. Under such a
// branch (one on threadIdx.x, to ptxas) a bar.sync cost the whole persistent loop its uniform
// datapath (ptxas moved the schedule and the stages' bookkeeping into vector registers: +60
// R2UR in a 16x256 main loop, every staged tile 5-30% slower; H100, bench/notes/v66.md item 2).
__device__ __forceinline__ void store(const mgen_launch_args& p, const float (&d)[kAcc], int m0, int nc,
                                      int tile, int g, int t, uint32_t stage_c, int c) {
  const bool live = nc < p.n;  // the group's columns are C's (else: staged, not read, not stored)
  const int n_lo = nc + 16 * tile + g, n_hi = n_lo + 8;
  const float s_lo = live ? mgen::column_factor<Scales>(p.scales, p.n, p.k_packed, kGroup, n_lo) * kSumFactor : 0.0f;
  const float s_hi = live ? mgen::column_factor<Scales>(p.scales, p.n, p.k_packed, kGroup, n_hi) * kSumFactor : 0.0f;
  const Act* bias = live ? static_cast<const Act*>(p.bias) : nullptr;
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
  // Through shared memory, kCRows rows at a time: each thread writes its values of the rows
  // (2 bytes each, at its columns), the warpgroup meets, each thread reads 16 bytes of one
  // row (8 adjacent columns) and stores them: a warp writes 4 whole 128-byte rows of C, where
  // the 2-byte stores straight from the fragments wrote each 32-byte sector in two halves
  // (or, with rotated tiles, in 4-byte pieces of four sectors). Rows past m are staged and
  // never stored. A second meeting before a chunk's writes keeps the reads of the chunk
  // before (this group's, or the previous call's last) whole.
  const int tid = threadIdx.x % 128, rr = tid / 8, cc = tid % 8;
  const int lo = 2 * (16 * tile + g), hi = lo + 16;  // the thread's bytes in a staged row
#pragma unroll
  for (int j = 0; j < kTileM / kCRows; ++j) {
    asm volatile("bar.sync %0, 128;\n" ::"r"(2 + c) : "memory");
#pragma unroll
    for (int q = 0; q < kCRows / 8; ++q) {
      const int i = j * (kCRows / 8) + q, row = 8 * q + 2 * t;
      st_shared_u16(stage_c + staged(row, lo), mgen::wg::from_float<Act>(biased(d[4 * i + 0] * s_lo * r[2 * i], bias, b_lo)));
      st_shared_u16(stage_c + staged(row, hi), mgen::wg::from_float<Act>(biased(d[4 * i + 2] * s_hi * r[2 * i], bias, b_hi)));
      st_shared_u16(stage_c + staged(row + 1, lo),
                    mgen::wg::from_float<Act>(biased(d[4 * i + 1] * s_lo * r[2 * i + 1], bias, b_lo)));
      st_shared_u16(stage_c + staged(row + 1, hi),
                    mgen::wg::from_float<Act>(biased(d[4 * i + 3] * s_hi * r[2 * i + 1], bias, b_hi)));
    }
    asm volatile("bar.sync %0, 128;\n" ::"r"(2 + c) : "memory");
    const int m = m0 + j * kCRows + rr;
    if (rr < kCRows) {  // (an 8-row tile: half the threads read)
      uint4 v;
      asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                   : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                   : "r"(stage_c + staged(rr, 16 * cc)) : "memory");
      if (live && m < p.m)  // (16-byte aligned: C is, n % 64 == 0; spelled out: nvcc split it in four)
        asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(out + (size_t)m * p.n + nc + 8 * cc),
                     "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
    }
  }
}

// store() of a moe tile: row r goes to C's row of its pair (the warpgroup's table of the
// segment's rows, at `rows`: -1, padding, not stored) times its router weight; the column
// factors and the bias are expert e's (its scales at `scales`, its bias at `bias`).
__device__ __forceinline__ void store_moe(const MoeParams& p, uint32_t rows, const void* scales, const Act* bias,
                                          const float (&d)[kAcc], int nc, int tile, int g, int t) {
  const int n_lo = nc + 16 * tile + g, n_hi = n_lo + 8;
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

__device__ __forceinline__ void store_tile(const mgen_launch_args& p, uint32_t, int, uint32_t stage_c,
                                           const float (&d)[kAcc], int m0, int nc, int tile, int g, int t, int c) {
  store(p, d, m0, nc, tile, g, t, stage_c, c);
}
__device__ __forceinline__ void store_tile(const MoeParams& p, uint32_t rows, int expert, uint32_t,
                                           const float (&d)[kAcc], int, int nc, int tile, int g, int t, int) {
  if (nc >= p.n) return;  // (a group past n: no meeting in store_moe, so a branch is free)
  const Act* bias = p.bias != nullptr ? static_cast<const Act*>(p.bias) + (size_t)expert * p.n : nullptr;
  store_moe(p, rows, static_cast<const char*>(p.scales) + (size_t)expert * p.moe.s_stride, bias, d, nc, tile, g, t);
}
