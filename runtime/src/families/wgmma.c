/* wgmma.c -- the Hopper wgmma family's runtime hooks (family.h): its cost model, its workspace.
 *
 * Fitted on an H200 run of bench_gemm --all-kernels of version 1 (one 16-deep step at a time:
 * load the packed word, dequantize, wgmma, wait; f16 g128, 8 shapes x M 1..4096; bench/notes.md
 * "wgmma v1, v2"), two ceilings, per 64 output columns (one warpgroup, w = params[warpgroups]
 * of them in a block, tile_n = 64 w):
 *
 *   blocks  = ceil(m / tile_m) * n / tile_n          one block per (row slab, tile_n columns)
 *   latency = ceil(blocks / (sm_count * 8 / w)) * (k / 16) * (150 + 6.5 tile_m) ns
 *             a block's K steps one after another, the grid in waves of 8 warpgroups per SM
 *   issue   = blocks * w * (k / 16) * 1.9 tile_m / sm_count ns
 *             what an SM's tensor and issue rate sustain once enough warpgroups overlap
 *   time    = max(latency, issue) + 5 us
 *
 * On version 2 (the cp.async ring, a wgmma group per stage, one or two warpgroups sharing the
 * activations) it predicts 0.55x to 4.7x of the measured time (geometric mean 1.75x:
 * pessimistic), and never less than 1.5x the fastest mma kernel's measured time at those 48
 * points: the default choice keeps the mma family until this family is faster (test_cost_sweep
 * checks it on the mma sweep). Tuning measures both.
 */
#include "wgmma.h"

#include <math.h>

#define LATENCY_NS 150.0         /* one 16-deep step, fixed part */
#define LATENCY_NS_PER_ROW 6.5   /* and its growth with wgmma's n (tile_m) */
#define ISSUE_NS_PER_ROW 1.9     /* an SM's throughput per step and row */
#define RESIDENT 8.0             /* warpgroups per SM: registers and shared memory */
#define LAUNCH_NS 5000.0

static double cost_ns(const mgen_kernel_desc *d, int m, int n, int k, const mgen__device *dev) {
  const double tm = d->tile_m > 0 ? d->tile_m : 1, tn = d->tile_n > 0 ? d->tile_n : 64;
  const double sms = dev->sm_count > 0 ? dev->sm_count : 1, steps = k / 16.0;
  const int wg_param = d->params[MGEN_WGMMA_WARPGROUPS];
  const double warpgroups = wg_param > 0 ? wg_param : 1;
  const double blocks = ceil(m / tm) * ceil(n / tn);
  const double latency = ceil(blocks / (sms * RESIDENT / warpgroups)) * steps *
                         (LATENCY_NS + LATENCY_NS_PER_ROW * tm);
  const double issue = blocks * warpgroups * steps * ISSUE_NS_PER_ROW * tm / sms;
  return fmax(latency, issue) + LAUNCH_NS;
}

/* Split-K (kernel.cu.tpl, reduce()): the launcher splits only grids of fewer tiles than SMs,
 * into at most sm_count blocks, each with a slot of tile_m x tile_n FP32 partials, and counts
 * the arrivals per tile: sm_count slots and sm_count counters. */
static void workspace(const mgen_kernel_desc *d, int sm_count, size_t *floats, size_t *ints) {
  const size_t sms = (size_t)(sm_count > 0 ? sm_count : 1);
  *floats = sms * (size_t)(d->tile_m > 0 ? d->tile_m : 0) * (size_t)(d->tile_n > 0 ? d->tile_n : 0);
  *ints = sms;
}

static const char *const kParamNames[MGEN_WGMMA_PARAMS + 1] = {"warpgroups", "stages", NULL};

const mgen__family mgen__family_wgmma = {
    .id = MGEN_FAMILY_WGMMA,
    .name = "wgmma",
    .cost_ns = cost_ns,
    .workspace = workspace,
    .runs_on = NULL, /* sm_min = sm_max = 90: the descriptor's range says it */
    .param_names = kParamNames,
};
