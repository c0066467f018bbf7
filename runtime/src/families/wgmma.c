/* wgmma.c -- the Hopper wgmma family's runtime hooks (family.h): its cost model, its workspace.
 *
 * Cost model of version 3 (warp-specialized: a TMA producer, w consumer warpgroups of 64
 * columns, one block per SM, split-K for grids of fewer tiles than SMs; bench/notes.md "wgmma
 * v3"), following the launcher (kernel.cu.tpl). Its constants: a least-squares fit (log time)
 * to H200 runs of bench_gemm --all-kernels over the family's default kernels (every u4b8 key,
 * the 8 shapes x 13 M; rms log error 0.185), then moved by a coordinate search that minimizes
 * what test_cost_sweep measures, the default choice's loss against both families' timings
 * (bench/sweep-h200.csv.xz, sweep-h200-wgmma.csv.xz): 1.022 geometric mean, 82% of picks
 * within 3% of the best default kernel; M <= 16 keeps the mma family, M >= 64 picks this one.
 * fe2m1 kernels (sweep-h200-wgmma-fe2m1.csv.xz) add the factor F; with it 1.020 and 83% over
 * all keys (without it 1.035: fe2m1 picked this family at M = 1 where mma is 1.5x faster):
 *
 *   tiles  = ceil(m / tile_m) * ceil(n / tile_n)             (the last may idle consumers)
 *   splits = mgen_wgmma_splits(tiles, SMs, ceil(k / 64), max_splits, min_split_tiles)  (the launcher's;
 *            the last stage may end in the K padding)
 *   waves  = ceil(tiles * splits / SMs)                   one block per SM
 *   stage  = (A + B tile_m tile_n / 16384 + C w) F       ns per 64-deep stage of a block
 *                                                          (F: 1, fe2m1 FE2M1_STAGE)
 *   block  = ceil(ceil(k / 64) / splits) * stage + R splits tile_m tile_n / 16384 [splits > 1]
 *   time   = waves * block + L
 *
 * (stage: the consumers' serial chain per stage, the tensor work growing with the tile, and a
 * cost per consumer warpgroup (more in flight is not free: at M = 128 the 128x128 tile with two
 * beats the 64x256 tile with four); R: the FP32 partials through L2; L: launch and fill.)
 */
#include "wgmma.h"

#include <math.h>

#include "wgmma/mgen_wgmma_split.h" /* the launcher's split rule (generated/include) */

#define STAGE_NS 138.5          /* A */
#define STAGE_NS_PER_TILE 84.3 /* B, per 128 x 128 outputs */
#define STAGE_NS_PER_WG 50.0    /* C, per consumer warpgroup */
#define REDUCE_NS 876.0         /* R, per split and 128 x 128 outputs */
#define LAUNCH_NS 8794.8        /* L */
/* F: an fe2m1 stage over a u4b8 one (its scale bytes converted per step, the FP4 bit moves):
 * fe2m1 over u4b8 g32 kernels of the same tile in bench/sweep-h200-wgmma-fe2m1.csv.xz and
 * sweep-h200-wgmma.csv.xz, geometric mean over M = 1..4096 (1.15 at M <= 64, 1.22 from 256). */
#define FE2M1_STAGE 1.19

static double cost_ns(const mgen_kernel_desc *d, int m, int n, int k, const mgen__device *dev) {
  const double tm = d->tile_m > 0 ? d->tile_m : 1, tn = d->tile_n > 0 ? d->tile_n : 64;
  const double sms = dev->sm_count > 0 ? dev->sm_count : 1, k_tiles = ceil(k / 64.0);
  const int wg = d->params[MGEN_WGMMA_WARPGROUPS] > 0 ? d->params[MGEN_WGMMA_WARPGROUPS] : 1;
  const double tiles = ceil(m / tm) * ceil(n / tn);
  const double splits = (double)mgen_wgmma_splits(
      (long long)tiles, (long long)sms, (long long)k_tiles, d->params[MGEN_WGMMA_MAX_SPLITS],
      d->params[MGEN_WGMMA_MIN_SPLIT_TILES]);
  const double waves = ceil(tiles * splits / sms), area = tm * tn / 16384.0;
  const double stage = (STAGE_NS + STAGE_NS_PER_TILE * area + STAGE_NS_PER_WG * wg) *
                       (d->wfmt == MGEN_WFMT_FE2M1 ? FE2M1_STAGE : 1.0);
  const double block = ceil(k_tiles / splits) * stage + (splits > 1 ? REDUCE_NS * splits * area : 0);
  return waves * block + LAUNCH_NS;
}

/* Split-K (kernel.cu.tpl, reduce()): the launcher splits only grids of fewer tiles than SMs,
 * into at most sm_count blocks, each with a slot of tile_m x tile_n FP32 partials, and counts
 * the arrivals per tile: sm_count slots and sm_count counters. */
static void workspace(const mgen_kernel_desc *d, int sm_count, size_t *floats, size_t *ints) {
  const size_t sms = (size_t)(sm_count > 0 ? sm_count : 1);
  *floats = sms * (size_t)(d->tile_m > 0 ? d->tile_m : 0) * (size_t)(d->tile_n > 0 ? d->tile_n : 0);
  *ints = sms;
}

/* n in whole consumer shares (kernel.cu.tpl: the last tile's consumers past n idle and its
 * producer copies only W's columns below n): tile_n / warpgroups, 64. */
static int n_multiple(const mgen_kernel_desc *d) {
  const int wg = d->params[MGEN_WGMMA_WARPGROUPS];
  return wg > 0 && d->tile_n > 0 && d->tile_n % wg == 0 ? d->tile_n / wg : 0;
}

static const char *const kParamNames[MGEN_WGMMA_PARAMS + 1] = {"warpgroups", "stages", "max_splits",
                                                              "min_split_tiles", NULL};

const mgen__family mgen__family_wgmma = {
    .id = MGEN_FAMILY_WGMMA,
    .name = "wgmma",
    .cost_ns = cost_ns,
    .workspace = workspace,
    .runs_on = NULL, /* sm_min = sm_max = 90: the descriptor's range says it */
    .n_multiple = n_multiple,
    .param_names = kParamNames,
};
