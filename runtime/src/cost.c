/* cost.c -- the default choice's cost model: a roofline of three ceilings plus the striped
 * partition's serial reduction, evaluated per kernel from mgen_kernel_desc data.
 *
 *   mblocks = ceil(m / tile_m)                       row blocks; each re-reads the weights
 *   units   = mblocks * (n / tile_n) * (k / tile_k)  work units of the striped partition
 *   grid    = min(units, sm_count * blocks_per_sm)   what the launcher starts
 *   U       = ceil(units / grid)                     units of the busiest block (wave waste)
 *   B       = ceil(grid / sm_count)                  blocks on the busiest SM (occupancy)
 *
 *   issue  = B * U * tile_n * tile_k * (c_dq + tile_m / 16 * c_mma) / h / clock
 *            every weight element of a unit is dequantized once (c_dq cycles per SM) and
 *            feeds tile_m / 16 mma.sync rows (c_mma cycles each, padding rows included:
 *            the tile waste); h = warps / (warps + 3), warps = B * warps_per_block, is how
 *            much of the SM's issue rate that many warps keep busy (latency hiding)
 *   memory = (W * (W fits half the L2 ? 1 : mblocks) + 2mk + 2mn) / (bw * min(1, grid / sm_count))
 *            W = packed weights + scales; idle SMs do not pull their share of bandwidth
 *   reduce = (ceil(k / tile_k / U) - 1) * 1 us        blocks sharing one output tile add their
 *                                                     partial sums one after another
 *   time   = max(issue, memory) + reduce + 5 us launch (constant: ranks nothing, reads well)
 *
 * The FLOP roofline is inside `issue`: c_mma is the achieved mma.sync rate (on sm_90 0.016
 * cycles per 16-row element = 2000 FLOP/cycle/SM, ~520 TFLOP/s on an H200). Calibrated on an
 * H200 (bench/notes.md, "Cost model"): over 3 kernels x 39 M x 4 shapes it picks a kernel
 * within 3% of the fastest in 151 of 156 cases (mean loss 0.4%), where the old rule (smallest
 * covering tile) did in 128 (mean loss 3.1%). Other architectures are extrapolated from
 * their tensor-core rates and are for the default only: tuning measures.
 */
#include "cost.h"

#include <math.h>

#define LATENCY_WARPS 3.0  /* h = warps / (warps + 3) */
#define REDUCE_NS 1000.0   /* one serial step of the cross-block reduction */
#define LAUNCH_NS 5000.0

/* Per-architecture constants: the row with the largest `sm` <= the device's applies. */
typedef struct arch_row {
  int sm;
  double c_dq;     /* SM cycles per dequantized weight element */
  double c_mma;    /* SM cycles per weight element per 16 rows of A (mma.sync m16n8k16) */
  double clock_hz; /* defaults where the device does not say */
  double mem_bw;
} arch_row;

static const arch_row kArch[] = {
    {80, 0.025, 0.032, 1.41e9, 1.7e12}, /* A100: half sm_90's mma rate per SM cycle (extrapolated) */
    {86, 0.025, 0.064, 1.70e9, 0.8e12}, /* GA10x: FP32-accumulate mma at a quarter (extrapolated) */
    {89, 0.025, 0.064, 2.50e9, 0.9e12}, /* Ada: as GA10x (extrapolated) */
    {90, 0.025, 0.016, 1.98e9, 4.2e12}, /* H100 / H200: calibrated on an H200 */
};

static const arch_row *arch_of(int sm) {
  const arch_row *row = &kArch[0];
  for (size_t i = 0; i < sizeof kArch / sizeof kArch[0]; i++)
    if (kArch[i].sm <= sm) row = &kArch[i];
  return row;
}

static double ceil_div(double a, double b) { return ceil(a / b); }

double mgen__cost_ns(const mgen_kernel_desc *d, int m, int n, int k, const mgen__device *dev) {
  const arch_row *arch = arch_of(dev->sm);
  const double sms = dev->sm_count > 0 ? dev->sm_count : 1;
  const double clock = dev->clock_hz > 0 ? dev->clock_hz : arch->clock_hz;
  const double bw = dev->mem_bw > 0 ? dev->mem_bw : arch->mem_bw;
  const double tm = d->tile_m > 0 ? d->tile_m : 1, tn = d->tile_n > 0 ? d->tile_n : 1;
  const double tk = d->tile_k > 0 ? d->tile_k : 1;
  const double bps = d->blocks_per_sm > 0 ? d->blocks_per_sm : 1;
  const double warps_per_block = d->warps > 0 ? d->warps : 4;

  const double mblocks = ceil_div(m, tm), ktiles = ceil_div(k, tk);
  const double units = mblocks * ceil_div(n, tn) * ktiles;
  const double grid = fmin(units, sms * bps);
  const double per_block = ceil_div(units, grid);
  const double busiest_sm = ceil_div(grid, sms);
  const double warps = busiest_sm * warps_per_block;
  const double hiding = warps / (warps + LATENCY_WARPS);

  const double per_element = arch->c_dq + tm / 16.0 * arch->c_mma;
  const double issue_ns = busiest_sm * per_block * tn * tk * per_element / hiding / clock * 1e9;

  const double groups = d->group > 0 ? ceil_div(k, d->group) : 1;
  const double wbytes = (double)n * k / 2.0 + (double)n * groups * 2.0;
  const double rereads = dev->l2_bytes > 0 && wbytes <= dev->l2_bytes / 2 ? 1 : mblocks;
  const double bytes = wbytes * rereads + 2.0 * m * k + 2.0 * m * n;
  const double memory_ns = bytes / (bw * fmin(1.0, grid / sms)) * 1e9;

  const double slices = ktiles > per_block ? ceil_div(ktiles, per_block) : 1;
  return fmax(issue_ns, memory_ns) + (slices - 1) * REDUCE_NS + LAUNCH_NS;
}
