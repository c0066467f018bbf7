// mgen_mma_body.cuh -- the mma.sync family's kernel body: the parameters, the cp.async
// fetcher, the dequantizing main loops (row-major and swapped), the K-warp reduction and the
// epilogue, as plain CUDA over the constants each kernel defines. kernel.cu.tpl includes it
// inside the kernel's namespace, after those constants (kTileM, kStages, Dequant, mma(), ...)
// and before the kernel's entry point, so every kernel compiles this text with its own values;
// generated/ holds it once instead of once per kernel. No include guard: a shard includes
// several kernels, each its own copy in its own namespace.

// The kernel's parameters: the launch's, and for the moe op the route (mgen_moe_op_args).
struct MoeParams : mgen_launch_args {
  mgen_moe_op_args moe;
};
using Params = std::conditional_t<kMoe, MoeParams, mgen_launch_args>;

// Where dense and moe differ, by overload on the parameters (only the kernel's own is called).
// The weights a column reads: the call's, or its slab's expert's (live false for expert -1,
// whose columns copy no weights and store nothing).
struct ExpertW {
  const void* b;
  const void* scales;
  const Act* bias;  // its n bias values, or nullptr (no bias)
  bool live;
};
__device__ __forceinline__ ExpertW expert_of(const mgen_launch_args& p, int) {
  return {p.b, p.scales, static_cast<const Act*>(p.bias), true};
}
// A moe slab's local expert (-1: none): the route's, or unsorted (mgen_moe_op_args) the one of
// the slab's pair, from the tokens' ids through the map.
__device__ __forceinline__ int slab_expert(const MoeParams& p, int m_slab) {
  if (!p.moe.unsorted) return p.moe.block_experts[m_slab];
  return mgen::moe_local_expert(p.moe.topk_ids, p.moe.expert_map, p.moe.num_experts, p.moe.experts, m_slab);
}
// Row `row`'s pair id in the sorted list: the route's; unsorted, a slab's first row holds its
// pair and the others are padding (pairs).
__device__ __forceinline__ int sorted_id(const MoeParams& p, int row) {
  if (p.moe.unsorted) return row % kTileM == 0 ? row / kTileM : p.moe.pairs;
  return p.moe.sorted_ids[row];
}
__device__ __forceinline__ ExpertW expert_of(const MoeParams& p, int m_slab) {
  const int e = slab_expert(p, m_slab);
  const long long at = e < 0 ? 0 : e;
  return {static_cast<const char*>(p.b) + at * p.moe.q_stride,
          static_cast<const char*>(p.scales) + at * p.moe.s_stride,
          p.bias != nullptr ? static_cast<const Act*>(p.bias) + at * p.n : nullptr, e >= 0};
}
// Row `row` of the partition: its row of A and whether it is live (else zero-filled).
__device__ __forceinline__ int a_row_of(const mgen_launch_args& p, int row, bool& live) {
  live = row < p.m;
  return row;
}
__device__ __forceinline__ int a_row_of(const MoeParams& p, int row, bool& live) {
  // Selects, no branches: the load issues beside the expert's and the other rows' instead of
  // behind them (at decode a column's start is bound by these loads' latency). A in the list's
  // order reads no id.
  const int id = p.moe.a_sorted ? row : sorted_id(p, row);
  const bool pad = !mgen::moe_is_pair(id, p.moe.pairs);
  const int token = (int)((unsigned)id / (unsigned)p.moe.a_div);  // (a padding id's: not used)
  // A in the list's order: its padding rows reach only C rows that are not written
  live = p.moe.a_sorted || !pad;
  return p.moe.a_sorted ? row : pad ? 0 : token;
}
// Its row of C (-1: padding, not written) and the factor of that row.
__device__ __forceinline__ int c_row_of(const mgen_launch_args&, int row, float& factor) {
  factor = 1.f;
  return row;
}
__device__ __forceinline__ int c_row_of(const MoeParams& p, int row, float& factor) {
  const int id = sorted_id(p, row);
  if (!mgen::moe_is_pair(id, p.moe.pairs)) return -1;
  factor = p.moe.topk_weights ? p.moe.topk_weights[id] : 1.f;
  return id;
}
// Slabs of tile_m rows the partition covers: A's, or the route's live ones (after the
// grid-dependency wait: the route is the previous kernels' output), or unsorted one per pair.
__device__ __forceinline__ int m_slabs_of(const mgen_launch_args& p) { return (p.m + kTileM - 1) / kTileM; }
__device__ __forceinline__ int m_slabs_of(const MoeParams& p) {
  return p.moe.unsorted ? p.moe.pairs : mgen::moe_live_rows(p.moe.num_padded, p.m) / kTileM;
}
__device__ __forceinline__ bool slab_live(const mgen_launch_args&, int) { return true; }
__device__ __forceinline__ bool slab_live(const MoeParams& p, int m_slab) { return slab_expert(p, m_slab) >= 0; }

static_assert(kNWarps * kKWarps * 32 == kThreads, "warp grid must cover the block");
static_assert(kKIters * kKWarps * kStepK == kTileK, "warps must cover the stage's K");
static_assert(kBStageVecs % kThreads == 0, "every thread copies whole B vectors");
static_assert(kRedOffset + kRedSlices * kRedSliceFloats * 4 == kSmemBytes, "shared-memory plan");
static_assert(kRedSlices == 1 || kRedSlices == kKWarps, "one reduction tile, or one per K-warp");
static_assert(kRedSliceFloats * 4 % 128 == 0, "slices keep the tile's banks");
static_assert(!kGrouped || kGroup % 16 == 0, "a group spans whole 16-deep MMA steps");
static_assert(kStageBytes % 128 == 0, "stages stay 128-byte aligned for the swizzle");
static_assert(kSwapAB ? kTokBlocks * 8 == kTileM && kTokBlocks <= 2 && kMBlocks == 0 : kMBlocks * 16 == kTileM,
              "16-row blocks, or one or two blocks of 8 swapped rows");
static_assert(!kAccScales || (kSwapAB && kGrouped && kGroup <= kTileK && kGroup / kStepK % kStepChunk == 0),
              "a warp's runs of steps lie within one group and one stage");
static_assert(kKIters % kStepChunk == 0 && (kFoldRuns || kStepChunk == 1) && (kFoldRuns || !kAccScales),
              "a warp's steps are whole runs");
static_assert(!kA8 || (kSwapAB && kFoldRuns && !kMoe && kStepK == 32 &&
                       (kAccScales == (kGrouped && !kFoldScales)) && (!kFoldScales || kGrouped)),
              "W4A8: swapped dense tiles, every run folded, group scales on the sums or in the weights");
static_assert(!kZeros || (kZRows == (kGrouped ? kSRows : 1) && kZStageBytes % 128 == 0 &&
                          kZStageBytes >= kZStageVecs * 16 && kZStageVecs == kZRows * kZRowVecs),
              "a stage's zero rows: one per scale row, the region whole 128 bytes");

// The accumulators of a warp's 64 columns: unswapped, the C fragment of m16n8k16 per 16-row
// block mb, 16x16 tile j and 8-column half h (rows g, g + 8 x columns 2t, 2t + 1); swapped, the
// C^T fragment per 8-row block tb and tile j (columns 16j + g, + 8 x rows 8tb + 2t, + 1:
// [tb][j][0..1] and [tb][j][2..3]).
using Acc = std::conditional_t<kSwapAB, float[kTokBlocks > 0 ? kTokBlocks : 1][4][4],
                               float[kMBlocks > 0 ? kMBlocks : 1][4][2][4]>;

// Position of a unit in the partition. Advanced by one per pipeline step, so the main loop
// never divides.
struct Cursor {
  int kt, n_tile, m_slab;
  __device__ __forceinline__ Cursor(int u, int k_tiles, int n_tiles) {
    const int col = u / k_tiles;
    kt = u - col * k_tiles;
    m_slab = col / n_tiles;
    n_tile = col - m_slab * n_tiles;
  }
  __device__ __forceinline__ void advance(int k_tiles, int n_tiles) {
    if (++kt == k_tiles) {
      kt = 0;
      if (++n_tile == n_tiles) {
        n_tile = 0;
        ++m_slab;
      }
    }
  }
  __device__ __forceinline__ int col(int n_tiles) const { return m_slab * n_tiles + n_tile; }
};

// The first 64-column chunk (the layout's unit of n) of output column tile n_tile. Where n is
// no multiple of kTileN the last tile would run past n: it is shifted left to end at n, so that
// its copies read only weights that exist (not the next expert's, nor past the allocation)
// with no check per copy; its first columns are the previous tile's again, which store_c
// leaves to that tile (n >= kTileN: the runtime's shape rule). In chunks, not columns: the
// offsets below are then one multiply each (once per column, Fetcher::start, and per stored
// tile, store_c).
constexpr int kTileChunks = kTileN / 64;
static_assert(kTileN % 64 == 0 && kBRowVecs % kTileChunks == 0 && kSRowVecs % kTileChunks == 0 &&
                  (!kZeros || kZRowVecs % kTileChunks == 0),
              "a row's vectors split evenly into the tile's 64-column chunks");
__device__ __forceinline__ int first_chunk(int n_tile, int n) {
  return min(n_tile * kTileChunks, (n >> 6) - kTileChunks);
}
// The 16-byte vectors before chunk `chunk` in a row of `row_vecs` vectors per kTileN columns
// (packed W's 16-deep rows, scale and zero rows: each chunk's vectors together).
__device__ __forceinline__ int vecs_before(int chunk, int row_vecs) { return chunk * (row_vecs / kTileChunks); }

// Number of copy rounds when `vecs` 16-byte vectors are spread over the block's threads.
constexpr int rounds(int vecs) { return (vecs + kThreads - 1) / kThreads; }
// Grouped, a stage's zero rows follow its scale rows in shared memory and in one copy loop
// (kSideVecs: vector v < kSStageVecs a scale vector, else a zero vector), so that zero points
// add no copy instructions of their own; per channel the zero row is the stage's only side copy.
constexpr int kSideVecs = kSStageVecs + (kGrouped && kZeros ? kZStageVecs : 0);
constexpr int kARounds = rounds(kAStageVecs), kBRounds = rounds(kBStageVecs), kSRounds = rounds(kSideVecs);
constexpr int kZRounds = kGrouped ? 0 : rounds(kZStageVecs);
static_assert(kSStageBytes == kSStageVecs * 16, "the zero rows start where the scale rows end");

// The copies of the unit at the fetch cursor. A thread's share of a stage copy depends only on
// the thread, so its sources are pointers, set where a column starts and stepped by one K tile
// per unit (a constant of the launch): a fetch is its copies and a few 64-bit adds, not the
// index arithmetic of (column, K tile) per unit (bench/notes.md v21 item 9: ~46 instructions per
// unit and warp at M = 16).
struct Fetcher {
  Cursor x;                                     // the unit to fetch next
  const int4* a_src[kARounds];                  // its copies' sources
  int a_kv[kARounds];                           // their 16-byte vectors along K (past k: zero-fill)
  bool a_row_live[kARounds];                    // their rows < m
  int a_dst[kARounds];                          // their swizzled places in the stage
  const int4* b_at;                             // the unit's packed W tile
  size_t b_off[kBRounds];                       // the copies' vectors in it
  const int4* s_src[kSRounds > 0 ? kSRounds : 1];  // scale (or zero) vectors, grouped
  size_t s_row[kSRounds > 0 ? kSRounds : 1];     // their rows' length: n * scale bytes / 16, or n / 32
  const int4* z_src[kZRounds > 0 ? kZRounds : 1];  // the zero row, per channel
  int a_vecs_per_row;                           // k / 8
  size_t b_vecs_per_kt;                         // one K tile of packed W
  bool w_live;                                  // the column's weights exist (moe: an expert)

  __device__ __forceinline__ Fetcher(const Params& p, int u, int k_tiles, int n_tiles)
      : x(u, k_tiles, n_tiles) {
    a_vecs_per_row = p.k * kAElem / 16;
    b_vecs_per_kt = (size_t)p.n / 2 * (kTileK / 16);  // 16 x n codes = 8n bytes per 16-deep row
#pragma unroll
    for (int i = 0; i < kSRounds; ++i) {
      const int v = threadIdx.x + i * kThreads;
      s_row[i] = v < kSStageVecs ? (size_t)p.n * kScaleBytes / 16 : (size_t)p.n / 32;
    }
#pragma unroll
    for (int i = 0; i < kARounds; ++i) {
      const int v = threadIdx.x + i * kThreads;
      a_dst[i] = Swz::apply(v / kARowVecs * kARowBytes + v % kARowVecs * 16);
    }
#pragma unroll
    for (int i = 0; i < kBRounds; ++i) {
      const int v = threadIdx.x + i * kThreads;
      b_off[i] = (size_t)(v / kBRowVecs) * ((size_t)p.n / 2) + v % kBRowVecs;
    }
    start(p);
  }
  // The sources of unit x from its column and K tile: once per column.
  __device__ __forceinline__ void start(const Params& p) {
    const int4* a = static_cast<const int4*>(p.a);
    const ExpertW w = expert_of(p, x.m_slab);
    w_live = w.live;
#pragma unroll
    for (int i = 0; i < kARounds; ++i) {
      const int v = threadIdx.x + i * kThreads;
      a_kv[i] = x.kt * kARowVecs + v % kARowVecs;  // its 16 bytes of an A row: kv * 16 ...
      // (moe: a round's vectors past the stage would look up rows of the next slab's list; they
      // look up the slab's first row instead, so that every round loads, behind no branch)
      const bool in_tile = !kMoe || v / kARowVecs < kTileM;
      const int row = a_row_of(p, x.m_slab * kTileM + (in_tile ? v / kARowVecs : 0), a_row_live[i]);
      a_row_live[i] = in_tile && a_row_live[i];
      a_src[i] = a + (a_row_live[i] ? (size_t)row * a_vecs_per_row + a_kv[i] : 0);
    }
    const int chunk0 = first_chunk(x.n_tile, p.n);
    b_at = static_cast<const int4*>(w.b) + x.kt * b_vecs_per_kt + vecs_before(chunk0, kBRowVecs);
    // The zero rows (u4) after the scales (mgen::zero_rows), the tile's columns of each.
    const int4* zr = nullptr;
    if constexpr (kZeros)
      zr = static_cast<const int4*>(mgen::zero_rows(w.scales, p.n, p.k_packed, kGroup, sizeof(Act))) +
           vecs_before(chunk0, kZRowVecs);
    if constexpr (kGrouped) {
      const int4* sc = static_cast<const int4*>(w.scales) + vecs_before(chunk0, kSRowVecs);
#pragma unroll
      for (int i = 0; i < kSRounds; ++i) {
        const int v = threadIdx.x + i * kThreads;
        const bool zero = v >= kSStageVecs;  // past the scale rows: a zero vector
        const int w = zero ? v - kSStageVecs : v;
        const int row_vecs = zero ? kZRowVecs : (kSRowVecs > 0 ? kSRowVecs : 1);
        // Groups at least as deep as the stage: one row, shared by consecutive stages.
        const int grow = kSGroup >= kTileK ? x.kt * kTileK / kSGroup : x.kt * kSRows + w / row_vecs;
        s_src[i] = (zero ? zr : sc) + (size_t)grow * s_row[i] + w % row_vecs;
      }
    }
    if constexpr (kZeros && !kGrouped) {  // per channel: the one row, copied with every stage
#pragma unroll
      for (int i = 0; i < kZRounds; ++i) z_src[i] = zr + threadIdx.x + i * kThreads;
    }
  }
  // Issues the cp.async copies of unit x into `stage`: its activations, then its weights.
  __device__ __forceinline__ void issue(const Params& p, unsigned char* stage) const {
    issue_a(p, stage);
    issue_w(stage);
  }
  __device__ __forceinline__ void issue_a(const mgen_launch_args& p, unsigned char* stage) const {
    const uint32_t a_sh = mgen::smem_addr(stage);
#pragma unroll
    for (int i = 0; i < kARounds; ++i) {
      if (kAStageVecs % kThreads == 0 || threadIdx.x + i * kThreads < kAStageVecs) {
        // Rows past m and columns past k (the last K tile of a padded k): zero-fill, read nothing.
        const bool live = a_row_live[i] && a_kv[i] < a_vecs_per_row;
        mgen::cp_async16(a_sh + a_dst[i], live ? a_src[i] : static_cast<const int4*>(p.a), live ? 16 : 0);
      }
    }
  }
  // The packed codes, scales and zero points: read-only from their preparation on (mgen.h), so
  // they may be copied before the grid-dependency wait.
  __device__ __forceinline__ void issue_w(unsigned char* stage) const {
    if (kMoe && !w_live) return;  // expert -1: the column computes nothing it stores
    const uint32_t b_sh = mgen::smem_addr(stage) + kAStageBytes;
#pragma unroll
    for (int i = 0; i < kBRounds; ++i) mgen::cp_async16(b_sh + (threadIdx.x + i * kThreads) * 16, b_at + b_off[i]);
    if constexpr (kGrouped) {
      const uint32_t s_sh = b_sh + kBStageBytes;
#pragma unroll
      for (int i = 0; i < kSRounds; ++i)
        if (kSideVecs % kThreads == 0 || threadIdx.x + i * kThreads < kSideVecs)
          mgen::cp_async16(s_sh + (threadIdx.x + i * kThreads) * 16, s_src[i]);
    }
    if constexpr (kZeros && !kGrouped) {
      const uint32_t z_sh = b_sh + kBStageBytes + kSStageBytes;
#pragma unroll
      for (int i = 0; i < kZRounds; ++i)
        if (kZStageVecs % kThreads == 0 || threadIdx.x + i * kThreads < kZStageVecs)
          mgen::cp_async16(z_sh + (threadIdx.x + i * kThreads) * 16, z_src[i]);
    }
  }
  // The next unit: the next K tile of the column (pointer steps), or a new column (start()).
  __device__ __forceinline__ void advance(const Params& p, int k_tiles, int n_tiles) {
    if (x.kt + 1 == k_tiles) {
      x.advance(k_tiles, n_tiles);
      start(p);
      return;
    }
    ++x.kt;
#pragma unroll
    for (int i = 0; i < kARounds; ++i) a_src[i] += kARowVecs, a_kv[i] += kARowVecs;
    b_at += b_vecs_per_kt;
    if constexpr (kGrouped) {
      constexpr int kTilesPerGroup = kSGroup > kTileK ? kSGroup / kTileK : 1;  // >= 1: no % 0
      if (x.kt % kTilesPerGroup == 0) {
        constexpr int kRows = kSGroup < kTileK ? kSRows : 1;  // scale rows a K tile moves on
#pragma unroll
        for (int i = 0; i < kSRounds; ++i) s_src[i] += kRows * s_row[i];
      }
    }
  }
};

// A warp's packed codes and scales of the step starting at 16-deep row kb of a stage: this
// lane's word (8 codes) of each of the four 16x16 tiles j of the warp's 64 columns, per row of
// the step (q[4 r + j]), and (grouped) the scales of columns 16j + 8h + lane/4, packed so that
// one load fetches all 8. The mma layout keeps a lane's 4 words together (one LDS.128); the e4m3
// layout (kA8) a tile's 32 words (word 32 j + lane), which one ldmatrix hands out for 4 tiles.
constexpr int kStepWords = 4 * kRowsPerStep;
__device__ __forceinline__ void load_step(const unsigned char* stage, int kb, int warp_n, int lane,
                                          uint32_t (&q)[kStepWords], typename Scales::Vec& sv) {
  if constexpr (kA8) {
    // one ldmatrix.x4 per 16-deep row: matrix j's 8 rows of 16 bytes are tile j's 32 words, so
    // lane l receives word 32 j + l of each tile (lane l addresses row l % 8 of matrix l / 8)
    const uint32_t w = mgen::smem_addr(stage + kAStageBytes) + (kb * kBRowVecs + warp_n * 32) * 16 +
                       (32 * (lane >> 3) + 4 * (lane & 7)) * 4;
#pragma unroll
    for (int r = 0; r < kRowsPerStep; ++r) {
      uint32_t x[4];
      mgen::ldmatrix_x4(x, w + r * kBRowVecs * 16);
#pragma unroll
      for (int j = 0; j < 4; ++j) q[4 * r + j] = x[j];
    }
  } else {
    const int4 bq = reinterpret_cast<const int4*>(stage + kAStageBytes)[kb * kBRowVecs + warp_n * 32 + lane];
    q[0] = (uint32_t)bq.x, q[1] = (uint32_t)bq.y, q[2] = (uint32_t)bq.z, q[3] = (uint32_t)bq.w;
  }
  if constexpr (kGrouped) {
    const unsigned char* s_sh = stage + kAStageBytes + kBStageBytes;
    const int srow = kSGroup >= kTileK ? 0 : kb * 16 / kSGroup;
    sv = reinterpret_cast<const typename Scales::Vec*>(s_sh + srow * kSRowBytes)[warp_n * 8 + lane / 4];
  }
}

// Zero points (u4): a lane's biased zeros of its 8 columns (Dequant::zeros: pair j for the
// 16x16 tile j), from the zero word of lane / 4 in the warp's 32 bytes of a zero row of the
// stage. One row serves the whole stage where groups are at least as deep (or per channel):
// then once per stage, before the steps, else once per step (the step's group).
using Zeros = uint32_t[4][2];
constexpr bool kZerosPerStage = !kGrouped || kSGroup >= kTileK;
template <class D = Dequant>
__device__ __forceinline__ void load_zeros(const unsigned char* stage, int kb, int warp_n, int lane, Zeros& z) {
  if constexpr (kZeros) {
    const unsigned char* z_sh = stage + kAStageBytes + kBStageBytes + kSStageBytes;
    const int zrow = kZerosPerStage ? 0 : kb * 16 / kSGroup;
    D::zeros(reinterpret_cast<const uint32_t*>(z_sh + zrow * kZRowBytes)[warp_n * 8 + lane / 4], z);
  }
}
// Tile j's codes q into B fragments: with zero points (u4) less pair j's zeros. Templates (D is
// Dequant), so that only the branch of the kernel's format is compiled.
template <class D = Dequant>
__device__ __forceinline__ void dequant(uint32_t q, const Zeros& z, int j, uint32_t (&f)[2][2]) {
  if constexpr (kZeros) D::dequant(q, z[j], f);
  else D::dequant(q, f);
}
// What a folded run's sums are multiplied by: the column's group scale, or 1 (W4A8 per
// channel: the scale is the epilogue's). A template, so that only the kernel's branch compiles.
template <class S = Scales>
__device__ __forceinline__ float run_multiplier(const typename S::Vec& sv, int i) {
  if constexpr (kAccScales) return mgen::acc_multiplier<S>(sv, i);
  else return 1.0f;
}
// kA8: the words of tile j of a 32-deep step's two rows into E4M3 bytes (m16n8k32's A fragment),
// with kFoldScales scaled by the block scales of the tile's columns 16 j + lane / 4 and + 8
// (sv's positions 2 j, 2 j + 1: the step's scale pair), with zero points (u4) less pair j's.
template <class D = Dequant, class S = Scales>
__device__ __forceinline__ void dequant_a8(uint32_t q0, uint32_t q1, const typename S::Vec& sv, const Zeros& z,
                                           int j, uint32_t (&w)[4]) {
  if constexpr (kFoldScales) D::dequant(q0, q1, mgen::byte_pair_of(sv, j), w);
  else if constexpr (kZeros) D::dequant(q0, q1, z[j], w);
  else D::dequant(q0, q1, w);
}
static_assert(mgen::folds_scales<Dequant>::value == kFoldScales, "partials.lua's folds and the partial agree");

// The MMA step (of the stage) that a warp takes i-th: runs of kStepChunk, the K-warps'
// runs side by side (kStepChunk 1: warp_k, warp_k + kKWarps, ...).
__device__ __forceinline__ constexpr int step_of(int warp_k, int i) {
  return (i / kStepChunk) * (kStepChunk * kKWarps) + warp_k * kStepChunk + i % kStepChunk;
}

// A lane's ldmatrix address in a stage's A tile at the 16-deep step step_of(warp_k, i) and
// block row mb * 16: the swizzle is linear over XOR, and the offset's parts share no bit (the
// lane's row below 16 and K half, warp_k's share of the step, i's share, the block's rows; with
// kStepChunk and kKWarps powers of two), so the sum of the parts is their XOR and so is its
// swizzle. The lane's part (a_lane_offset) is swizzled once per stage, the rest is a constant
// per unrolled step: one XOR an ldmatrix, where swizzling the whole offset took five.
static_assert((kARowBytes & (kARowBytes - 1)) == 0 && (kStepChunk & (kStepChunk - 1)) == 0 &&
                  (kKWarps & (kKWarps - 1)) == 0 && kKIters * kKWarps * 32 <= kARowBytes,
              "A offsets split into bit-disjoint parts");
__device__ __forceinline__ uint32_t a_lane_offset(int row, int k_half, int warp_k) {
  return static_cast<uint32_t>(Swz::apply(row * kARowBytes + k_half * 16 + step_of(warp_k, 0) * 32));
}
__device__ __forceinline__ uint32_t a_step_address(uint32_t a_sh, uint32_t lane_off, int i, int mb = 0) {
  return a_sh + (lane_off ^ static_cast<uint32_t>(Swz::apply(mb * 16 * kARowBytes + step_of(0, i) * 32)));
}

// One stage of MMAs: each warp takes its 16-deep steps step_of(warp_k, i)
template <class A>
__device__ __forceinline__ void compute_rows(const unsigned char* stage, int warp_n, int warp_k, int lane, A& acc) {
  const uint32_t a_sh = mgen::smem_addr(stage);
  // Lane l addresses row l%16 of each 16-row block, 8-column half l/16: the four 8x8 matrices
  // come back as the A fragment registers a0..a3 of m16n8k16.
  const uint32_t a_lane = a_lane_offset(lane & 15, lane >> 4, warp_k);
  Zeros z = {};
  if constexpr (kZerosPerStage) load_zeros(stage, 0, warp_n, lane, z);
#pragma unroll
  for (int i = 0; i < kKIters; ++i) {
    const int kb = step_of(warp_k, i);
    if constexpr (!kZerosPerStage) load_zeros(stage, kb, warp_n, lane, z);
    uint32_t a[kMBlocks][4];
#pragma unroll
    for (int mb = 0; mb < kMBlocks; ++mb) mgen::ldmatrix_x4(a[mb], a_step_address(a_sh, a_lane, i, mb));
    uint32_t q[kStepWords];
    typename Scales::Vec sv;
    load_step(stage, kb, warp_n, lane, q, sv);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      uint32_t f[2][2];
      dequant(q[j], z, j, f);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if constexpr (kGrouped) mgen::scale_step<Act, Scales>(f, sv, j, h);
#pragma unroll
        for (int mb = 0; mb < kMBlocks; ++mb) mma(acc[mb][j][h], a[mb], f[h][0], f[h][1]);
      }
    }
  }
}

// One stage of a swapped (8- or 16-row) tile. Per 16-deep step, one ldmatrix of the rows of A:
// .x2 for 8 rows (rows g, K 2t.. and 2t + 8.. are the B fragment b0, b1), .x4 for 16 (matrices
// 0, 1: rows 0-7 x K halves 0, 1, the first 8-row block's b0, b1; 2, 3: rows 8-15), in the
// order the MMAs take them as register pairs (the row tile's order, rows 0-7 / 8-15 first,
// cost two moves per pair and step);
// per 16x16 weight tile j one mma per 8-row block with the dequantized codes as the A fragment
// (a0..a3 = f[0][0], f[1][0], f[0][1], f[1][1]: columns g, g + 8 x K halves 0, 1), so a 16-row
// tile dequantizes each weight once for two MMAs. With kFoldRuns a warp's run of steps (of one
// group) accumulates into `part`, and at the run's last step each sum is folded into acc, times
// its column's scale (FP32) with kAccScales, else as is (W4A8 per channel).
// W4A8 (kA8): the step is 32 deep, two HMMAs per weight tile and 8-row block (the header).
template <class A>
__device__ __forceinline__ void compute_swapped(const unsigned char* stage, int warp_n, int warp_k, int lane,
                                                A& acc) {
  const uint32_t a_sh = mgen::smem_addr(stage);
  // .x2: lanes 0-7 address rows 0-7 of the step's K half 0, lanes 8-15 of K half 1 (lanes
  // 16-31 repeat them, unused); .x4: lanes 8m..8m+7 address matrix m, rows 8 (m / 2) + 0..7,
  // K half m % 2.
  const uint32_t a_lane = a_lane_offset((lane & 7) + (kTokBlocks == 1 ? 0 : (lane >> 4) * 8), (lane >> 3) & 1, warp_k);
  float part[kTokBlocks][4][4];
  Zeros z = {};
  if constexpr (kZerosPerStage) load_zeros(stage, 0, warp_n, lane, z);
#pragma unroll
  for (int i = 0; i < kKIters; ++i) {
    const int kb = step_of(warp_k, i) * kRowsPerStep;  // the step's first 16-deep row
    if constexpr (!kZerosPerStage) load_zeros(stage, kb, warp_n, lane, z);
    // b[tb]: the B fragment (b0, b1) of 8-row block tb.
    uint32_t b[kTokBlocks][2];
    if constexpr (kTokBlocks == 1) {
      uint32_t x[2];
      mgen::ldmatrix_x2(x, a_step_address(a_sh, a_lane, i));
      b[0][0] = x[0], b[0][1] = x[1];
    } else {
      uint32_t x[4];
      mgen::ldmatrix_x4(x, a_step_address(a_sh, a_lane, i));
      b[0][0] = x[0], b[0][1] = x[1], b[1][0] = x[2], b[1][1] = x[3];
    }
    // kA8: the rows' E4M3 bytes as FP16, per 16-deep half (b[tb][0]: K 0-15 of the step) two
    // registers: bytes 4t, 4t+1 and 4t+2, 4t+3 of row g.
    uint32_t bh[kTokBlocks][2][2];
    if constexpr (kA8) {
#pragma unroll
      for (int tb = 0; tb < kTokBlocks; ++tb)
#pragma unroll
        for (int h = 0; h < 2; ++h) mgen::e4m3x4_to_f16x2(b[tb][h], bh[tb][h][0], bh[tb][h][1]);
    }
    uint32_t q[kStepWords];
    typename Scales::Vec sv;
    load_step(stage, kb, warp_n, lane, q, sv);
    if constexpr (kFoldRuns) {
      if (i % kStepChunk == 0) {
#pragma unroll
        for (int tb = 0; tb < kTokBlocks; ++tb)
#pragma unroll
          for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) part[tb][j][e] = 0.f;
      }
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      if constexpr (kA8) {
        // E4M3 registers: rows g, g + 8 of K half 0, then of half 1; each as two FP16 pairs
        uint32_t e[4], w[2][4];
        dequant_a8(q[j], q[4 + j], sv, z, j, e);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          mgen::e4m3x4_to_f16x2(e[2 * h], w[h][0], w[h][2]);
          mgen::e4m3x4_to_f16x2(e[2 * h + 1], w[h][1], w[h][3]);
        }
#pragma unroll
        for (int tb = 0; tb < kTokBlocks; ++tb)
#pragma unroll
          for (int h = 0; h < 2; ++h) mma(part[tb][j], w[h], bh[tb][h][0], bh[tb][h][1]);
      } else {
        uint32_t f[2][2];
        dequant(q[j], z, j, f);
        if constexpr (kGrouped && !kAccScales) {
          mgen::scale_step<Act, Scales>(f, sv, j, 0);
          mgen::scale_step<Act, Scales>(f, sv, j, 1);
        }
        const uint32_t w[4] = {f[0][0], f[1][0], f[0][1], f[1][1]};
#pragma unroll
        for (int tb = 0; tb < kTokBlocks; ++tb)
          mma(kFoldRuns ? part[tb][j] : acc[tb][j], w, b[tb][0], b[tb][1]);
      }
    }
    if constexpr (kFoldRuns) {
      if ((i + 1) % kStepChunk == 0) {
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const float s = run_multiplier(sv, 2 * j + h);
#pragma unroll
            for (int tb = 0; tb < kTokBlocks; ++tb) {
              acc[tb][j][2 * h] = fmaf(s, part[tb][j][2 * h], acc[tb][j][2 * h]);
              acc[tb][j][2 * h + 1] = fmaf(s, part[tb][j][2 * h + 1], acc[tb][j][2 * h + 1]);
            }
          }
      }
    }
  }
}

// Float4 v of the reduction tile, row by row (kRedVecsPerRow a row, rows kRedStride floats apart).
__device__ __forceinline__ float4* red_vec(float* red, int v) {
  return reinterpret_cast<float4*>(red + v / kRedVecsPerRow * kRedStride + v % kRedVecsPerRow * 4);
}

// With one reduction tile per K-warp: slice 0 += slice 1, += slice 2 ... (the order of the
// turn-taking adds, so the same sums), a float4 per thread and step over the whole tile.
__device__ __forceinline__ void add_slices(float* red) {
  if constexpr (kRedSlices > 1) {
    for (int v = threadIdx.x; v < kTileM * kRedVecsPerRow; v += kThreads) {
      float4* sum = red_vec(red, v);
      float4 s = *sum;
#pragma unroll
      for (int w = 1; w < kRedSlices; ++w) {
        const float4 x = sum[w * kRedSliceFloats / 4];
        s.x += x.x; s.y += x.y; s.z += x.z; s.w += x.w;
      }
      *sum = s;
    }
    __syncthreads();
  }
}

// reduce_block of the unswapped tiles: C fragments as float2.
template <class A>
__device__ __forceinline__ void reduce_block_rows(float* red, int warp_n, int warp_k, int lane, A& acc) {
  // With slices every K-warp stores at once (w = its own slice, never an add); without, they
  // take turns adding into slice 0.
#pragma unroll 1
  for (int w = 0; w < (kRedSlices > 1 ? 1 : kKWarps); ++w) {
    if (kRedSlices > 1 || warp_k == w) {
      float* tile = red + (kRedSlices > 1 ? warp_k * kRedSliceFloats : 0);
#pragma unroll
      for (int mb = 0; mb < kMBlocks; ++mb)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            // C fragment: (row g, cols 2q..2q+1) in acc[0..1], row g+8 in acc[2..3].
            const int row = mb * 16 + lane / 4;
            const int col = warp_n * 64 + j * 16 + h * 8 + (lane % 4) * 2;
            float2* lo = reinterpret_cast<float2*>(tile + row * kRedStride + col);
            float2* hi = reinterpret_cast<float2*>(tile + (row + 8) * kRedStride + col);
            const float* c = acc[mb][j][h];
            if (kRedSlices > 1 || w == 0) {
              *lo = make_float2(c[0], c[1]);
              *hi = make_float2(c[2], c[3]);
            } else {
              const float2 l = *lo, u = *hi;
              *lo = make_float2(l.x + c[0], l.y + c[1]);
              *hi = make_float2(u.x + c[2], u.y + c[3]);
            }
          }
    }
    __syncthreads();
  }
  add_slices(red);
#pragma unroll
  for (int mb = 0; mb < kMBlocks; ++mb)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[mb][j][h][e] = 0.f;
}

// reduce_block of the swapped tiles: one float per lane (C^T fragment: column 16j + g, + 8 for
// e >= 2, row 2t + (e & 1)).
template <class A>
__device__ __forceinline__ void reduce_block_swapped(float* red, int warp_n, int warp_k, int lane, A& acc) {
#pragma unroll 1
  for (int w = 0; w < (kRedSlices > 1 ? 1 : kKWarps); ++w) {
    if (kRedSlices > 1 || warp_k == w) {
      float* tile = red + (kRedSlices > 1 ? warp_k * kRedSliceFloats : 0);
#pragma unroll
      for (int tb = 0; tb < kTokBlocks; ++tb)
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int row = tb * 8 + (lane % 4) * 2 + (e & 1);
            const int col = warp_n * 64 + j * 16 + (e >> 1) * 8 + lane / 4;
            float* r = tile + row * kRedStride + col;
            *r = kRedSlices > 1 || w == 0 ? acc[tb][j][e] : *r + acc[tb][j][e];
          }
    }
    __syncthreads();
  }
  add_slices(red);
#pragma unroll
  for (int tb = 0; tb < kTokBlocks; ++tb)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[tb][j][e] = 0.f;
}

// A stage's MMAs and the block's reduction, by tile kind. Templates, so that only the kind's own
// functions are instantiated (Acc differs).
template <class A>
__device__ __forceinline__ void compute(const unsigned char* stage, int warp_n, int warp_k, int lane, A& acc) {
  if constexpr (kSwapAB) compute_swapped(stage, warp_n, warp_k, lane, acc);
  else compute_rows(stage, warp_n, warp_k, lane, acc);
}
// Adds the K-warps' accumulators into the reduction tile (row-major: row = row of A and C) in
// warp order (deterministic) and clears them for the next column.
template <class A>
__device__ __forceinline__ void reduce_block(float* red, int warp_n, int warp_k, int lane, A& acc) {
  if constexpr (kSwapAB) reduce_block_swapped(red, warp_n, warp_k, lane, acc);
  else reduce_block_rows(red, warp_n, warp_k, lane, acc);
}

// Partial-sum slot of block b for column col: 2b for its first column, 2b+1 otherwise.
__device__ __forceinline__ int slot_of(int b, int col, int per, int k_tiles) {
  return 2 * b + (col == (b * per) / k_tiles ? 0 : 1);
}

// The last block's sum of a split column's partials into `red`: a thread's vectors v = tid + i *
// kThreads in chunks of kChunk, the partials of kTrip blocks for a chunk all loaded before any is
// added (kChunk x kTrip loads in flight), then added in block order. Block b_first's partial is
// at `first`, block b's after it at rest + 2b tiles. The cost model prices these trips
// (runtime/src/families/mma.h MGEN_MMA_REDUCE_LOADS and _CHUNK; test_cost_sweep compares).
constexpr int kRedLoads = 16;     // float4 loads in flight per thread
constexpr int kRedMaxChunk = 4;   // vectors per thread and trip where a thread has several
constexpr int kRedIters = (kTileM * kRedVecsPerRow + kThreads - 1) / kThreads;  // vectors a thread, at most
constexpr int kRedChunk = kRedIters < kRedMaxChunk ? kRedIters : kRedMaxChunk;
template <int kChunk, int kTrip>
__device__ __forceinline__ void sum_partials(float* red, const float4* first, const float4* rest, int b_first,
                                             int b_last, int vecs) {
  const int tid = threadIdx.x;
  for (int i0 = 0; i0 * kThreads < vecs; i0 += kChunk) {
    float4 sum[kChunk];
#pragma unroll
    for (int i = 0; i < kChunk; ++i) sum[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int b0 = b_first; b0 <= b_last; b0 += kTrip) {
      float4 x[kTrip][kChunk];
#pragma unroll
      for (int t = 0; t < kTrip; ++t) {
        const float4* part = b0 + t == b_first ? first : rest + (size_t)(2 * (b0 + t)) * (kTileM * kTileN / 4);
#pragma unroll
        for (int i = 0; i < kChunk; ++i) {
          const int v = tid + (i0 + i) * kThreads;
          x[t][i] = b0 + t <= b_last && v < vecs ? __ldcg(part + v) : make_float4(0.f, 0.f, 0.f, 0.f);
        }
      }
#pragma unroll
      for (int t = 0; t < kTrip; ++t) {
        if (b0 + t > b_last) break;
#pragma unroll
        for (int i = 0; i < kChunk; ++i) {
          sum[i].x += x[t][i].x; sum[i].y += x[t][i].y; sum[i].z += x[t][i].z; sum[i].w += x[t][i].w;
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kChunk; ++i) {
      const int v = tid + (i0 + i) * kThreads;
      if (v < vecs) *red_vec(red, v) = sum[i];
    }
  }
}

// Cross-block reduction of a split column. Returns true in the block that must write C (the
// last to arrive), with the full sum in `red`.
__device__ __forceinline__ bool reduce_grid(const Params& p, float* red, int col, int rows,
                                            int per, int k_tiles) {
  __shared__ int last;
  const int tid = threadIdx.x;
  const int b_first = col * k_tiles / per;
  const int b_last = ((col + 1) * k_tiles - 1) / per;
  const int vecs = rows * kRedVecsPerRow;
  float4* mine = reinterpret_cast<float4*>(p.partials + (size_t)slot_of(blockIdx.x, col, per, k_tiles) * kTileM * kTileN);
  for (int v = tid; v < vecs; v += kThreads) __stcg(mine + v, *red_vec(red, v));
  __syncthreads();  // the partial is written: thread 0's arrival releases it (mgen_ptx.cuh)
  if (tid == 0) {
    const int arrived = mgen::arrive_acq_rel(p.counters + b_first) + 1;
    last = arrived == b_last - b_first + 1;
    if (last) p.counters[b_first] = 0;  // ready for the next launch
  }
  __syncthreads();  // the last block: its loads below come after the acquire
  if (!last) return false;
  // The last block adds the column's partials, block b_first first (the order fixes the bits),
  // with many loads in flight: one L2 round trip per vector and block made M = 16 on a 16x256
  // w4 tile 4.7 us slower than M = 1 (bench/notes.md v23 item 10). Every block after b_first
  // starts inside the column, so its slot is 2b: no division per block.
  const float4* first = reinterpret_cast<const float4*>(p.partials + (size_t)slot_of(b_first, col, per, k_tiles) * kTileM * kTileN);
  const float4* rest = reinterpret_cast<const float4*>(p.partials);
  if (vecs <= kThreads) sum_partials<1, kRedLoads>(red, first, rest, b_first, b_last, vecs);  // one vector a thread
  else sum_partials<kRedChunk, kRedLoads / kRedChunk>(red, first, rest, b_first, b_last, vecs);
  __syncthreads();
  return true;
}

// What row `row`'s FP32 sums are multiplied by with kA8: 2^-kLog2 (each E4M3 weight byte reads
// as its code value times 2^Dequant::kLog2: exact) times the row's activation scale
// (p.a_scales[row * p.a_scale_stride]; none: 1). A template, so that only kA8 reads kLog2.
template <class D = Dequant>
__device__ __forceinline__ float a8_row_factor(const mgen_launch_args& p, int row) {
  if constexpr (kA8) {
    const float s = p.a_scales != nullptr ? __ldg(p.a_scales + (size_t)row * p.a_scale_stride) : 1.0f;
    return s * mgen::pow2_neg(D::kLog2);
  } else {
    return 1.0f;
  }
}

// Writes `rows` rows of the reduction tile to C as Act, 16 bytes per thread and step:
// each sum times its column factor (and W4A8's row factor), plus the bias, times a moe row's
// router weight, rounded once.
__device__ __forceinline__ void store_c(const Params& p, const float* red, const Cursor& x, int rows) {
  constexpr int kVecsPerRow = kTileN / 8;
  Act* c = static_cast<Act*>(p.c);
  const ExpertW ew = expert_of(p, x.m_slab);
  const void* scales = ew.scales;
  // a shifted last tile (first_chunk): its first `skip` columns are the previous tile's to store
  const int chunk0 = first_chunk(x.n_tile, p.n);
  const int col0 = chunk0 * 64, skip = (x.n_tile * kTileChunks - chunk0) * 64;
  for (int v = threadIdx.x; v < rows * kVecsPerRow; v += kThreads) {
    const int r = v / kVecsPerRow, c8 = v % kVecsPerRow;
    if (c8 * 8 < skip) continue;
    float factor;  // moe: the router weight of the row's pair; W4A8: a8_row_factor
    const int c_row = c_row_of(p, x.m_slab * kTileM + r, factor);
    if (kMoe && c_row < 0) continue;  // a padding row
    if constexpr (kA8) factor = a8_row_factor(p, c_row);
    const int col = col0 + c8 * 8;
    // Two float4 32 bytes apart; lanes with bit 2 of c8 set read their high half first, so
    // lanes 4 apart never meet in a bank in one instruction (proof: templates/mma/smem.lua).
    alignas(16) float src[8];
    const int hi_first = (c8 >> 2) & 1;
    const float4 first = *reinterpret_cast<const float4*>(red + r * kRedStride + c8 * 8 + 4 * hi_first);
    const float4 second = *reinterpret_cast<const float4*>(red + r * kRedStride + c8 * 8 + 4 - 4 * hi_first);
    *reinterpret_cast<float4*>(src) = hi_first ? second : first;
    *reinterpret_cast<float4*>(src + 4) = hi_first ? first : second;
    // Column factors multiply the FP32 sums: one multiply per output (per-channel scales, the
    // fe2m1 global / exponent factors).
    float f[8];
    if constexpr (Scales::kColumn) Scales::column(scales, p.n, p.k_packed, kSGroup, col, f);
    alignas(16) Act bias[8];
    if (ew.bias != nullptr) *reinterpret_cast<int4*>(bias) = __ldg(reinterpret_cast<const int4*>(ew.bias + col));
    alignas(16) Act out[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      float y = src[e];
      if constexpr (Scales::kColumn) y *= f[e];
      if constexpr (kA8) y *= factor;
      if (ew.bias != nullptr) y += static_cast<float>(bias[e]);  // (no + 0: -0 stays -0)
      if constexpr (kMoe && !kA8) y *= factor;
      out[e] = Act(y);
    }
    *reinterpret_cast<int4*>(c + (size_t)c_row * p.n + col) = *reinterpret_cast<const int4*>(out);
  }
  __syncthreads();  // the reduction tile is reused by the next column
}
