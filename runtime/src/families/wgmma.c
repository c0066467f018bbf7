/* wgmma.c -- the Hopper wgmma family's runtime hooks (family.h): its cost model, its workspace.
 *
 * Cost model of version 4 (warp-specialized: a TMA producer, w consumer warpgroups of 64
 * columns, persistent blocks, one per SM; bench/notes/v11.md), following the launcher's
 * plan (mgen_wgmma_sched.h): the busiest block's stages, plus the pieces of shared tiles.
 *
 *   tiles  = ceil(m / tile_m) * ceil(n / tile_n)             (the last may idle consumers)
 *   plan   = mgen_wgmma_schedule(tiles, SMs, ceil(k / tile_k), max_splits, min_split_tiles)
 *   units  = ceil(dp_tiles / grid) * ceil(k / tile_k) + ceil((tiles - dp_tiles) * ceil(k / tile_k) / grid)
 *   stage  = max(T0 + T a, A + B a + C w + D (g - 1)) F   ns per stage of a block (tile_k deep:
 *            64, or W4A8's 128 with its own A, B, T, T0 and R)
 *            (a = tile_m tile_n / 16384; g = tile_n / 64 / w: a consumer's 64-column groups,
 *            1 or 2; F: the weight format's factor over u4b8's, its
 *            mgen__dequant_cost rows in formats/<format>.c)
 *   pieces = 0 where no tile is shared, else ceil(ceil(k / 64) / share) + 1: the pieces the
 *            last block of a tile sums (share = stream-K units per block)
 *   time   = max(units * stage, memory) + R pieces tile_m tile_n / 16384 + L
 *            memory: the bytes at the device's bandwidth (cost.c mgen__memory_ns, as the mma
 *            model's)
 *
 * The moe op (kernel.cu.tpl kMoe) follows the same plan, which its blocks make on the device
 * over the live slabs' tiles (its m, n: min(an expert's mean rows, tile_m) and n times the
 * experts' expected slabs of this tile, as cost.c's mgen__cost_slabs_ns gives them), and two
 * costs the dense kernel has not:
 *   stage += E0 + E r   the producer warp gathers A's r = tile_m / 64 blocks of 64 rows by
 *                       cp.async (a row id from shared memory, then its copy) instead of one
 *                       TMA box, and the consumers fence each stage to the async proxy
 *   time  += P t        per tile a block starts (t = ceil(tiles / grid)): the segment's route
 *                       rows read into its tables
 * fitted on the moe sweeps of both families (test_moe_choice; bench/fit_cost_models.py --moe:
 * the sweep of the persistent kernels moved no constant, bench/notes/v54.md).
 * (stage: the consumers' serial chain per stage, the tensor work growing with the tile, and a
 * cost per consumer warpgroup (more in flight is not free: at M = 128 the 128x128 tile with two
 * beats the 64x256 tile with four); T0 + T a: the tensor pipe's floor, which the big tiles
 * reach (without it A + B a made the 256x128 tile look cheaper than it runs at M >= 256);
 * R: the FP32 partials through L2; L: launch and fill.)
 * The constants are fitted on the H200 sweeps of both families (bench/fit_cost_models.py: a
 * coordinate search that minimizes what tests/runtime/test_cost_sweep.c measures, the default
 * choice's loss against the fastest kernel). Which version fitted what, and the figures:
 * bench/notes/cost-model.md.
 */
#include "wgmma.h"

#include <math.h>

#include "formats/format.h"
#include "formats/formats.h" /* mgen__layout_a8 */
#include "wgmma/mgen_wgmma_sched.h" /* the kernel's schedule (generated/include) */

#define STAGE_NS 151.5          /* A */
#define STAGE_NS_PER_TILE 121.4 /* B, per 128 x 128 outputs */
#define STAGE_NS_PER_WG 35.0    /* C, per consumer warpgroup */
#define STAGE_NS_PER_GROUP 125.0 /* D, per 64-column group a consumer has beyond its first */
#define TENSOR_STAGE_NS 279.0   /* T, per 128 x 128 outputs: the floor of a stage (below) */
#define TENSOR_STAGE_FIXED_NS 86.4 /* T0 */
#define REDUCE_NS 1705.9        /* R, per split and 128 x 128 outputs */
#define LAUNCH_NS 7018.2        /* L */
#define MOE_STAGE_NS 187.5      /* E0: the moe op's gather and fence per stage */
#define MOE_STAGE_NS_PER_ROWS 62.5 /* E, per 64 rows of the tile */
#define MOE_TILE_NS 720.0       /* P, per tile a block runs */
/* W4A8 (FP8 activations, weights in the e4m3 layout: 128-deep stages at twice the 16-bit
 * tensor rate, a stage's 64 x 128 weights dequantized per consumer and its sums folded once):
 * the same form per 128-deep stage, its own A, B, T, T0 and R (C, D and L kept), fitted on the
 * W4A8 sweep (bench/notes/v46.md; test_cost_sweep's W4A8 figures). */
#define A8_STAGE_NS 178.8
#define A8_STAGE_NS_PER_TILE 146.1
#define A8_TENSOR_STAGE_NS 329.2
#define A8_TENSOR_STAGE_FIXED_NS 43.2
#define A8_REDUCE_NS 1653.0
/* No factor for the tiles that scale their FP32 sums once per group (acc_scales: the 32-row
 * tiles at g128, 1.03x faster per stage on the H200): at M = 16 the 32x256 tile is 8-30% slower
 * than the swapped 16-row mma tiles (u4b8 g128), and test_cost_sweep's loss is lowest without
 * a factor (figures: bench/notes/v25.md item 5). */

static double cost_ns(const mgen_kernel_desc *d, int m, int n, int k, const mgen__device *dev) {
  const double tm = d->tile_m > 0 ? d->tile_m : 1, tn = d->tile_n > 0 ? d->tile_n : 64;
  const int a8 = mgen__layout_a8(d->layout); /* W4A8: FP8 activations, 128-deep stages */
  const long long tk = d->tile_k > 0 ? d->tile_k : 64; /* a stage's depth: the launcher's k tiles */
  const long long sms = dev->sm_count > 0 ? dev->sm_count : 1, k_tiles = (k + tk - 1) / tk;
  const int wg = d->params[MGEN_WGMMA_WARPGROUPS] > 0 ? d->params[MGEN_WGMMA_WARPGROUPS] : 1;
  const long long tiles = (long long)ceil(m / tm) * (long long)ceil(n / tn);
  const int moe = d->op == MGEN_OP_MOE; /* the same plan, made by the kernel over the live tiles */
  const mgen_wgmma_plan plan = mgen_wgmma_schedule(tiles, sms, k_tiles, d->params[MGEN_WGMMA_MAX_SPLITS],
                                                   d->params[MGEN_WGMMA_MIN_SPLIT_TILES], 1);
  const long long grid = plan.grid, dp = plan.dp_tiles;
  const long long sk_units = (tiles - dp) * k_tiles;
  const double share = ceil((double)sk_units / (double)grid);
  const long long waves = (dp + grid - 1) / grid;
  const long long block_tiles = (tiles + grid - 1) / grid; /* tiles a block starts: the moe op's P term */
  const double units = (double)(waves * k_tiles) + share;
  const double pieces = sk_units % grid == 0 && (sk_units / grid) % k_tiles == 0
                            ? 0.0
                            : ceil((double)k_tiles / share) + 1.0;
  const double area = tm * tn / 16384.0;
  const double groups = tn / 64.0 / wg; /* a consumer's 64-column groups: 1 or 2 */
  const double t0 = a8 ? A8_TENSOR_STAGE_FIXED_NS : TENSOR_STAGE_FIXED_NS;
  const double t = a8 ? A8_TENSOR_STAGE_NS : TENSOR_STAGE_NS;
  const double s0 = a8 ? A8_STAGE_NS : STAGE_NS, s_tile = a8 ? A8_STAGE_NS_PER_TILE : STAGE_NS_PER_TILE;
  const double stage = fmax(t0 + t * area,
                            s0 + s_tile * area + STAGE_NS_PER_WG * wg + STAGE_NS_PER_GROUP * (groups - 1)) *
                           mgen__dequant_factor(d, d->params[MGEN_WGMMA_ACC_SCALES]) + /* F */
                       (moe ? MOE_STAGE_NS + MOE_STAGE_NS_PER_ROWS * tm / 64.0 : 0.0);
  /* Never faster than its bytes: without this floor the model, fitted on an H200, does not slow
   * down on a device with less bandwidth while the mma.sync model does, and on an H100 it put
   * decode (M <= 16) on wgmma tiles 1.3-1.6x slower than the mma ones. */
  const double memory = mgen__memory_ns(d, m, n, k, (double)(k_tiles * tk), ceil(m / tm), (double)grid,
                                        dev->mem_bw, dev);
  return fmax(units * stage, memory) + (a8 ? A8_REDUCE_NS : REDUCE_NS) * pieces * area +
         (moe ? MOE_TILE_NS * (double)block_tiles : 0.0) + LAUNCH_NS;
}

/* Stream-K (mgen_wgmma_body.cuh, fixup()): at most sm_count persistent blocks, each with two slots of
 * tile_m x tile_n FP32 partials (a block's range holds at most two shared tiles, where it
 * starts and where it ends) and one arrival counter (a shared tile counts on its first
 * block's): 2 sm_count slots and sm_count counters. */
static void workspace(const mgen_kernel_desc *d, int sm_count, size_t *floats, size_t *ints) {
  const size_t sms = (size_t)(sm_count > 0 ? sm_count : 1);
  *floats = 2 * sms * (size_t)(d->tile_m > 0 ? d->tile_m : 0) * (size_t)(d->tile_n > 0 ? d->tile_n : 0);
  *ints = sms;
}

/* n in whole 64-column groups (mgen_wgmma_body.cuh: in the last column tile the copy engine fills
 * W's columns past n with zeros, which the consumers compute on and never store; each
 * consumer's columns are one or two m64 wgmma groups of 64). */
static int n_multiple(const mgen_kernel_desc *d) {
  (void)d;
  return 64;
}

static const char *const kParamNames[MGEN_WGMMA_PARAMS + 1] = MGEN_WGMMA_PARAM_NAMES;

const mgen__family mgen__family_wgmma = {
    .id = MGEN_FAMILY_WGMMA,
    .name = "wgmma",
    .cost_ns = cost_ns,
    .workspace = workspace,
    .runs_on = NULL, /* sm_min = sm_max = 90: the descriptor's range says it */
    .n_multiple = n_multiple,
    .param_names = kParamNames,
    .moe_a_boxed = 1,
    .moe_unsorted = 0, /* its blocks plan over the route's live tiles (num_padded) */
};
