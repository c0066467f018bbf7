/* format.c -- lookups over the format registry (registry.c) for sizes and the cost models. */
#include "formats/format.h"

#include <math.h>

const mgen__format *mgen__format_of(int wfmt) {
  for (size_t i = 0; i < mgen__format_count; i++)
    if (mgen__formats[i]->wfmt == wfmt) return mgen__formats[i];
  return NULL;
}

static int matches(int want, int value) { return want == MGEN__ANY || want == value; }

double mgen__dequant_factor(const mgen_kernel_desc *d, int acc_scales) {
  const mgen__format *f = mgen__format_of(d->wfmt);
  if (f == NULL || f->dequant_costs == NULL) return 1.0;
  for (const mgen__dequant_cost *r = f->dequant_costs; r->family != 0; r++)
    if (r->family == d->family && matches(r->scheme, d->scheme) && matches(r->acc_scales, acc_scales))
      return r->factor;
  return 1.0;
}

double mgen__format_cost_bytes(int wfmt, double n, double k_read, int group) {
  const mgen__format *f = mgen__format_of(wfmt);
  const double bits = f != NULL ? f->cost_code_bits : 4.0;
  const double scale_bytes = f != NULL ? f->cost_scale_bytes : 2.0;
  const double groups = group > 0 ? ceil(k_read / group) : 1;
  return n * k_read * bits / 8.0 + n * groups * scale_bytes;
}
