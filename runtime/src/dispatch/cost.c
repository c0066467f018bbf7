/* cost.c -- the default choice's cost model: the device model, and each kernel's predicted
 * time from its family's model (families/<family>.c; the mma.sync model is in families/mma.c).
 */
#include "dispatch/cost.h"

#include <math.h>

#include "families/family.h"
#include "formats/format.h"

mgen__device mgen__device_model(int sm, int sm_count, int clock_khz, int mem_khz, int bus_bits,
                                int l2_bytes) {
  mgen__device dev = {sm, sm_count, clock_khz * 1e3,
                      /* DDR peak, times the fraction a copy achieves (H200: 4.26 of 4.92 TB/s) */
                      2.0 * mem_khz * 1e3 * bus_bits / 8.0 * 0.87, l2_bytes};
  return dev;
}

double mgen__memory_ns(const mgen_kernel_desc *d, int m, int n, int k, double k_read, double row_blocks,
                       double grid, double bw, const mgen__device *dev) {
  if (!(bw > 0)) return 0.0;
  const double sms = dev->sm_count > 0 ? dev->sm_count : 1;
  const double wbytes = mgen__format_cost_bytes(d->wfmt, (double)n, k_read, d->group);
  const double rereads = dev->l2_bytes > 0 && wbytes <= dev->l2_bytes / 2 ? 1 : row_blocks;
  const double bytes = wbytes * rereads + 2.0 * m * k + 2.0 * m * n;
  return bytes / (bw * fmin(1.0, grid / sms)) * 1e9;
}

double mgen__cost_ns(const mgen_kernel_desc *d, int m, int n, int k, const mgen__device *dev) {
  const mgen__family *f = mgen__family_of(d->family);
  return f != NULL ? f->cost_ns(d, m, n, k, dev) : HUGE_VAL;
}
