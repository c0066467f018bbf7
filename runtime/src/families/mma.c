/* mma.c -- the mma.sync family's runtime hooks (family.h): its cost model, its workspace rule.
 *
 * Cost model: a roofline of three ceilings plus the striped partition's serial reduction,
 * evaluated per kernel from mgen_kernel_desc data.
 *
 *   mblocks = ceil(m / tile_m)                       row blocks; each re-reads the weights
 *   units   = mblocks * (n / tile_n) * ceil(k / tile_k)  work units of the striped partition
 *                                                    (the last K tile may end in the padding)
 *   grid    = min(units, sm_count * blocks_per_sm)   what the launcher starts
 *   U       = ceil(units / grid)                     units of the busiest block (wave waste)
 *   B       = ceil(grid / sm_count)                  blocks on the busiest SM (occupancy)
 *
 *   issue  = B * U * (tile_n * tile_k * (c_dq * f + tile_m / 16 * c_mma + max(0, tile_m / 16 - 1) * c_rows) / h
 *            + c_unit * s) / clock
 *            every weight element of a unit is dequantized once (c_dq cycles per SM; f: the weight
 *            format's factor over u4b8's, by scheme and mgen__mma_acc_scales: its
 *            mgen__dequant_cost rows, formats/<format>.c) and feeds
 *            tile_m / 16 mma.sync rows (c_mma cycles each, padding rows included: the tile
 *            waste; half of it for W4A8's m16n8k32 .e4m3, the FP8 rate, in the e4m3 layout);
 *            c_rows, per 16-row block beyond the first, is what the multi-block tiles
 *            (32 and 64 rows) cost beyond their MMAs (they run slower than their MMA count says);
 *            h = warps / (warps + 3), warps = B * warps_per_block,
 *            is how much of the SM's issue rate that many warps keep busy (latency hiding);
 *            c_unit is what one pipeline step costs besides the math (barrier, cp.async
 *            issue and wait, address and loop work), s = 1 + 0.2 (k_warps - 1) as warps
 *            that split a stage's K sync and reduce more per step: it is why one 16x256 tile
 *            streams weights faster than four 16x64 ones at M = 1; times 1 + d (tile_k / 128
 *            - 1): a 256-deep step costs less than 2 steps of 128 (one barrier and wait
 *            instead of two, the same fetches)
 *   memory = (W * (W fits half the L2 ? 1 : mblocks) + 2mk + 2mn) / (bw * min(1, grid / sm_count))
 *            W = packed weights + scales of the K tiles read; idle SMs do not pull their
 *            share of bandwidth
 *   reduce = (S - 1) * r_slice + R * r_trip  (S > 1 only; REDUCE_SLICE_NS, REDUCE_TRIP_NS)
 *            S = ceil(k / tile_k / U) blocks share an output tile (slices); the last to arrive
 *            adds their partial sums (templates/mma/include/mgen_mma_body.cuh reduce_grid) with many loads
 *            in flight: 16 blocks at a time where a thread has one vector of the tile
 *            (V = ceil(min(m, tile_m) * tile_n / 4 / threads) = 1), else chunks of 4 vectors x
 *            4 blocks: R = ceil(S / 16) or ceil(V / 4) * ceil(S / 4) L2 round trips
 *   time   = max(issue, memory) + reduce + launch (against the wgmma model's launch term it
 *            ranks the two families)
 *
 * The FLOP roofline is inside `issue`: c_mma is the achieved mma.sync rate. The constants are
 * fitted on the H200 configuration sweeps (bench/fit_cost_models.py; tests/runtime/
 * test_cost_sweep.c holds the fit). Pipeline depth is not in the model (it ranks kernels that
 * differ only in stages by default_rank, the sweep's cover order). Other architectures are
 * extrapolated from their tensor-core rates and are for the default only: tuning measures.
 * Which version fitted what, and the figures: bench/notes/cost-model.md.
 */
#include "mma.h"

#include <math.h>
#include <stdint.h>

#include "formats/format.h"
#include "formats/formats.h" /* mgen__layout_a8 */
#include "formats/layout.h"

#define LATENCY_WARPS 3.0  /* h = warps / (warps + 3) */
#define UNIT_CYCLES 116.4  /* c_unit: one pipeline step's fixed cost */
#define K_WARP_SYNC 0.2    /* s = 1 + 0.2 (k_warps - 1) */
#define STEP_REF_DEPTH 128.0 /* the tile_k c_unit was fitted on */
#define STEP_DEPTH 0.75
#define REDUCE_SLICE_NS 255.0 /* per block beyond the first sharing an output tile */
#define REDUCE_TRIP_NS 1250.0 /* per round trip of the last block's loads of partial sums */
#define LAUNCH_NS 5500.0   /* against the wgmma model's L: the two constants rank the families */

/* Per-architecture constants: the row with the largest `sm` <= the device's applies. */
typedef struct arch_row {
  int sm;
  double c_dq;     /* SM cycles per dequantized weight element */
  double c_mma;    /* SM cycles per weight element per 16 rows of A (mma.sync m16n8k16) */
  double c_rows;   /* and per 16-row block beyond a tile's first (0: not fitted) */
  double clock_hz; /* defaults where the device does not say */
  double mem_bw;
} arch_row;

static const arch_row kArch[] = {
    {80, 0.015, 0.024, 0.0, 1.41e9, 1.7e12}, /* A100: half sm_90's mma rate per SM cycle (extrapolated) */
    {86, 0.015, 0.048, 0.0, 1.70e9, 0.8e12}, /* GA10x: FP32-accumulate mma at a quarter (extrapolated) */
    {89, 0.015, 0.048, 0.0, 2.50e9, 0.9e12}, /* Ada: as GA10x (extrapolated) */
    /* H100 / H200: fitted on an H200; c_rows: test_cost_sweep's M 32-128 loss falls from 1.029
     * to 1.004 from 0.004 on, and stays there up to 0.012 (no decode pick moves: 8- and 16-row
     * tiles have no second block); 0.006 sits inside that range. */
    {90, 0.015, 0.012, 0.006, 1.98e9, 4.2e12},
};

static const arch_row *arch_of(int sm) {
  const arch_row *row = &kArch[0];
  for (size_t i = 0; i < sizeof kArch / sizeof kArch[0]; i++)
    if (kArch[i].sm <= sm) row = &kArch[i];
  return row;
}

static double ceil_div(double a, double b) { return ceil(a / b); }

int mgen__mma_acc_scales(const mgen_kernel_desc *d) { return d->params[MGEN_MMA_ACC_SCALES] != 0; }

static double cost_ns(const mgen_kernel_desc *d, int m, int n, int k, const mgen__device *dev) {
  const arch_row *arch = arch_of(dev->sm);
  const double sms = dev->sm_count > 0 ? dev->sm_count : 1;
  const double clock = dev->clock_hz > 0 ? dev->clock_hz : arch->clock_hz;
  const double bw = dev->mem_bw > 0 ? dev->mem_bw : arch->mem_bw;
  const double tm = d->tile_m > 0 ? d->tile_m : 1, tn = d->tile_n > 0 ? d->tile_n : 1;
  const double tk = d->tile_k > 0 ? d->tile_k : 1;
  const double bps = d->blocks_per_sm > 0 ? d->blocks_per_sm : 1;
  const int warps_param = d->params[MGEN_MMA_WARPS];
  const double warps_per_block = warps_param > 0 ? warps_param : 4;

  const double mblocks = ceil_div(m, tm), ktiles = ceil_div(k, tk);
  const double units = mblocks * ceil_div(n, tn) * ktiles;
  const double grid = fmin(units, sms * bps);
  const double per_block = ceil_div(units, grid);
  const double busiest_sm = ceil_div(grid, sms);
  const double warps = busiest_sm * warps_per_block;
  const double hiding = warps / (warps + LATENCY_WARPS);

  const double n_warps = fmax(1.0, fmin(warps_per_block, tn / 64.0));
  const double k_warps = fmax(1.0, warps_per_block / n_warps);
  const double dequant = arch->c_dq * mgen__dequant_factor(d, mgen__mma_acc_scales(d)); /* f */
  const double c_mma = arch->c_mma * (mgen__layout_a8(d->layout) ? 0.5 : 1.0); /* FP8: twice the rate */
  const double per_element = dequant + tm / 16.0 * c_mma + fmax(0.0, tm / 16.0 - 1.0) * arch->c_rows;
  const double step = UNIT_CYCLES * (1 + K_WARP_SYNC * (k_warps - 1)) *
                      (1 + STEP_DEPTH * (tk / STEP_REF_DEPTH - 1));
  const double per_unit = tn * tk * per_element / hiding + step;
  const double issue_ns = busiest_sm * per_block * per_unit / clock * 1e9;

  const double memory_ns = mgen__memory_ns(d, m, n, k, ktiles * tk, mblocks, grid, bw, dev);

  const double slices = ktiles > per_block ? ceil_div(ktiles, per_block) : 1;
  const double vectors = ceil_div(fmin(m, tm) * tn / 4, warps_per_block * 32);
  const double chunk = MGEN_MMA_REDUCE_CHUNK, per_trip = MGEN_MMA_REDUCE_LOADS / MGEN_MMA_REDUCE_CHUNK;
  const double trips = vectors <= 1 ? ceil_div(slices, MGEN_MMA_REDUCE_LOADS)
                                    : ceil_div(vectors, chunk) * ceil_div(slices, per_trip);
  const double reduce_ns = slices > 1 ? (slices - 1) * REDUCE_SLICE_NS + trips * REDUCE_TRIP_NS : 0;
  return fmax(issue_ns, memory_ns) + reduce_ns + LAUNCH_NS;
}

/* The striped partition (templates/mma/kernel.cu.tpl): at most sm_count * blocks_per_sm blocks,
 * each with two FP32 tile_m x tile_n partial-sum slots (its first and last column) and one
 * arrival counter per block. */
/* a * b, or SIZE_MAX where that overflows: the pool then refuses the size (workspace.c). */
static size_t mul_sat(size_t a, size_t b) {
  size_t r;
  return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}

static void workspace(const mgen_kernel_desc *d, int sm_count, size_t *floats, size_t *ints) {
  const size_t blocks = mul_sat((size_t)(sm_count > 0 ? sm_count : 1),
                                (size_t)(d->blocks_per_sm > 0 ? d->blocks_per_sm : 1));
  *floats = mul_sat(mul_sat(2 * (size_t)(d->tile_m > 0 ? d->tile_m : 0), blocks),
                    (size_t)(d->tile_n > 0 ? d->tile_n : 0));
  *ints = blocks;
}

/* n in whole 64-column chunks of the layout, whatever tile_n, and at least one tile: where
 * tile_n does not divide n, the last column tile is shifted left to end at n (mgen_mma_body.cuh
 * first_col: it reads only columns below n and stores only those the tile before left). */
static int n_multiple(const mgen_kernel_desc *d) {
  (void)d;
  return MGEN_LAYOUT_DIM;
}
static int n_min(const mgen_kernel_desc *d) { return d->tile_n; }

static const char *const kParamNames[MGEN_MMA_PARAMS + 1] = MGEN_MMA_PARAM_NAMES;

const mgen__family mgen__family_mma = {
    .id = MGEN_FAMILY_MMA,
    .name = "mma",
    .cost_ns = cost_ns,
    .workspace = workspace,
    .runs_on = NULL, /* the descriptor's sm range says it all */
    .n_multiple = n_multiple,
    .n_min = n_min,
    .param_names = kParamNames,
    .moe_a_boxed = 0, /* A's rows looked up one by one, in the route's order or not */
    .moe_unsorted = 1, /* its row lookups synthesize the one-pair slabs (mgen_mma_body.cuh) */
};
