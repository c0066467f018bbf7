/* cost.c -- the default choice's cost model: the device model, and each kernel's predicted
 * time from its family's model (families/<family>.c; the mma.sync model is in families/mma.c).
 */
#include "dispatch/cost.h"

#include <math.h>

#include "families/family.h"

mgen__device mgen__device_model(int sm, int sm_count, int clock_khz, int mem_khz, int bus_bits,
                                int l2_bytes) {
  mgen__device dev = {sm, sm_count, clock_khz * 1e3,
                      /* DDR peak, times the fraction a copy achieves (H200: 4.26 of 4.92 TB/s) */
                      2.0 * mem_khz * 1e3 * bus_bits / 8.0 * 0.87, l2_bytes};
  return dev;
}

double mgen__cost_ns(const mgen_kernel_desc *d, int m, int n, int k, const mgen__device *dev) {
  const mgen__family *f = mgen__family_of(d->family);
  return f != NULL ? f->cost_ns(d, m, n, k, dev) : HUGE_VAL;
}
