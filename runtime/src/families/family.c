/* family.c -- lookups over the family registry (registry.c), the one "runs here" rule, and
 * the memory floor the families' cost models share. */
#include "family.h"

#include "formats/format.h"
#include "formats/formats.h" /* mgen__layout_a8 */

#include <math.h>
#include <stdio.h>

const mgen__family *mgen__family_of(int id) {
  for (size_t i = 0; i < mgen__family_count; i++)
    if (mgen__families[i]->id == id) return mgen__families[i];
  return NULL;
}

int mgen__kernel_runs(const mgen_kernel_desc *d, int sm) {
  const mgen__family *f = mgen__family_of(d->family);
  return f != NULL && mgen_kernel_runs_on(d, sm) && (f->runs_on == NULL || f->runs_on(d, sm));
}

void mgen__arch_range(const mgen_kernel_desc *d, char *buf, size_t size) {
  if (mgen__family_of(d->family) == NULL)
    snprintf(buf, size, "no device (unknown kernel family %d)", d->family);
  else if (d->sm_max == MGEN_SM_NO_MAX)
    snprintf(buf, size, "sm_%d and later", d->sm_min);
  else if (d->sm_max == d->sm_min)
    snprintf(buf, size, "sm_%d only", d->sm_min);
  else
    snprintf(buf, size, "sm_%d to sm_%d", d->sm_min, d->sm_max);
}

double mgen__memory_ns(const mgen_kernel_desc *d, int m, int n, int k, double k_read, double row_blocks,
                       double grid, double bw, const mgen__device *dev) {
  if (!(bw > 0)) return 0.0;
  const double sms = dev->sm_count > 0 ? dev->sm_count : 1;
  const double wbytes = mgen__format_cost_bytes(d->wfmt, (double)n, k_read, d->group);
  const double rereads = dev->l2_bytes > 0 && wbytes <= dev->l2_bytes / 2 ? 1 : row_blocks;
  const double a_bytes = mgen__layout_a8(d->layout) ? 1.0 : 2.0; /* E4M3 activations: one byte */
  const double bytes = wbytes * rereads + a_bytes * m * k + 2.0 * m * n;
  return bytes / (bw * fmin(1.0, grid / sms)) * 1e9;
}
