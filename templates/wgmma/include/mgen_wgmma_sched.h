/* mgen_wgmma_sched.h -- how a wgmma launch divides its work among blocks: the launcher's plan
 * (kernel.cu.tpl's launch), which the family's cost model (runtime/src/families/wgmma.c) predicts with
 * and templates/wgmma/smem.lua mirrors for --explain --shape (tests/gen/plan_agree.sh compares
 * the two). Plain C, for both.
 *
 * The work is tiles x k_tiles units (a unit: one 64-deep stage of one output tile), taken by
 * persistent blocks, at most one per SM, in two parts:
 *   - data-parallel: whole tiles, tile w * grid + b to block b in wave w (blocks in step:
 *     neighbours in the tile order share their weights and activations in L2);
 *   - stream-K: the remaining tiles' units in tile-major order, block b taking units
 *     [units * b / grid, units * (b + 1) / grid). A tile whose units span several blocks is
 *     summed from their FP32 partials in a fixed order (deterministic: the same bits
 *     whichever block finishes last).
 * The plan (measured on an H200, bench/notes.md "wgmma v4"): where whole tiles fill the SMs to
 * at least 90% (tiles >= SMs: tiles over the waves' slots), whole tiles only; where the tiles
 * are fewer than the SMs, split-K (stream-K with each tile cut into `splits` equal pieces) if
 * that fills them to 90%; else stream-K over all tiles, after whole waves while two grids'
 * worth remain. A shared tile costs its blocks a store, a fence and its last block a sum,
 * which is why balance alone does not decide: a shallow stream-K piece can cost more than the
 * idle SMs it saves. Each piece is at least `min_units` deep where that is possible and no tile
 * is shared by more than `max_pieces` blocks. */
#ifndef MGEN_WGMMA_SCHED_H
#define MGEN_WGMMA_SCHED_H

#ifdef __CUDACC__
#define MGEN_SCHED_FN __host__ __device__ static inline
#else
#define MGEN_SCHED_FN static inline
#endif

/* A launch's division of the work: `grid` blocks; tiles [0, dp_tiles) whole, tile w * grid + b
 * to block b; the units of the rest by stream-K. */
typedef struct mgen_wgmma_plan {
  long long grid, dp_tiles;
} mgen_wgmma_plan;

/* The plan for `tiles` output tiles of `k_tiles` stages on `sm_count` SMs; without a workspace
 * (workspace 0) one block per tile, no tile shared. */
MGEN_SCHED_FN mgen_wgmma_plan mgen_wgmma_schedule(long long tiles, long long sm_count, long long k_tiles,
                                                  int max_pieces, int min_units, int workspace) {
  mgen_wgmma_plan plan = {tiles, tiles};
  const long long depth = min_units > 0 ? min_units : 1, most = max_pieces > 0 ? max_pieces : 1;
  if (!workspace || sm_count < 1 || tiles < 1) return plan;
  if (tiles >= sm_count) {
    plan.grid = sm_count;
    const long long waves = (tiles + sm_count - 1) / sm_count;
    if (10 * tiles >= 9 * waves * sm_count) return plan; /* whole tiles fill 90% */
    plan.dp_tiles = tiles >= 2 * sm_count ? (tiles / sm_count - 1) * sm_count : 0;
    return plan;
  }
  long long splits = sm_count / tiles;
  if (splits > k_tiles / depth) splits = k_tiles / depth;
  if (splits > most) splits = most;
  if (splits < 1) splits = 1;
  if (10 * tiles * splits >= 9 * sm_count || splits < sm_count / tiles) {
    /* split-K fills 90%, or depth / max_pieces stop it short: stream-K could not split more */
    plan.grid = tiles * splits;
    plan.dp_tiles = splits == 1 ? tiles : 0;
    return plan;
  }
  long long grid = sm_count;
  if (grid > tiles * k_tiles / depth) grid = tiles * k_tiles / depth;
  if (grid > tiles * most) grid = tiles * most;
  if (grid < tiles) grid = tiles;
  plan.grid = grid;
  plan.dp_tiles = 0;
  return plan;
}

/* First stream-K unit of block b (of grid), for `units` units in all. */
MGEN_SCHED_FN long long mgen_wgmma_sk_start(long long units, long long b, long long grid) {
  return units * b / grid;
}

/* The block whose stream-K range holds unit u. */
MGEN_SCHED_FN long long mgen_wgmma_sk_owner(long long units, long long u, long long grid) {
  long long b = u * grid / units;
  while (b + 1 < grid && mgen_wgmma_sk_start(units, b + 1, grid) <= u) ++b;
  while (b > 0 && mgen_wgmma_sk_start(units, b, grid) > u) --b;
  return b;
}

/* The tile order: bands of `band` m slabs (the last band may be shorter), each band's tiles
 * slab fastest, column tile by column tile. Tile t's m slab and column tile. */
typedef struct mgen_wgmma_place {
  int slab, col_tile;
} mgen_wgmma_place;
MGEN_SCHED_FN mgen_wgmma_place mgen_wgmma_tile_place(int t, int m_slabs, int n_tiles, int band) {
  const int b = t / (band * n_tiles), i = t - b * band * n_tiles;
  const int rows = m_slabs - b * band < band ? m_slabs - b * band : band;
  const mgen_wgmma_place place = {b * band + i % rows, i / rows};
  return place;
}

/* A dense launch's band, from the bytes a wave of `wave` blocks (those on the SMs at once)
 * reads: an m slab's A over the whole K (`slab_bytes`) and a column tile's weights, scales and
 * zero points (`col_bytes`).
 * Slab fastest, a wave's blocks share each column tile's weights in the L2; where all of A fits
 * `budget` (half the L2 or less: the weights stream past it), A stays there from wave to wave
 * too: one band, every slab. Where it does not, a wave of one band takes a few column tiles of
 * every slab and reads all of A from HBM again (M = 4096, K = 8192: 64 MB a wave); bands of
 * the most slabs whose A fits the budget read it once while their column tiles pass, the
 * weights once a band. Where not even the bands that make a wave's bytes fewest (a slabs and
 * wave / a column tiles: a * slab_bytes = wave / a * col_bytes) fit, those. At least 1. */
MGEN_SCHED_FN int mgen_wgmma_band(int m_slabs, long long wave, long long slab_bytes, long long col_bytes,
                                  long long budget) {
  if (m_slabs < 1) return 1;
  if ((long long)m_slabs * slab_bytes <= budget) return m_slabs;
  int band = slab_bytes > 0 ? (int)(budget / slab_bytes) : m_slabs;
  int fewest = 1; /* the least a with a * a * slab_bytes >= wave * col_bytes */
  while (fewest < m_slabs && (long long)fewest * fewest * slab_bytes < wave * col_bytes) ++fewest;
  return band < fewest ? fewest : band; /* both <= m_slabs: A did not fit, fewest stops there */
}

#endif /* MGEN_WGMMA_SCHED_H */
