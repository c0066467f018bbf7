/* cost.c -- the default choice's cost model: each kernel's predicted
 * time from its family's model (families/<family>.c; the mma.sync model is in families/mma.c).
 */
#include "dispatch/cost.h"

#include <limits.h>
#include <math.h>

#include "families/family.h"

double mgen__cost_ns(const mgen_kernel_desc *d, int m, int n, int k, const mgen__device *dev) {
  const mgen__family *f = mgen__family_of(d->family);
  return f != NULL ? f->cost_ns(d, m, n, k, dev) : HUGE_VAL;
}

/* E[ceil(R / tile) | R >= 1] for an expert's rows R, mean m, spread as a Poisson count (the
 * router's pairs fall on the experts independently): sum over j >= 0 of P(R > j tile | R >= 1),
 * the tail by the normal approximation with continuity correction (exact enough where it
 * matters: m of tens of rows and more; below, P(R > tile) is negligible either way). */
static double expected_slabs(double m, double tile) {
  const double sd = sqrt(m), live = -expm1(-m); /* P(R >= 1) */
  /* the terms below m - 8 sd are 1 (to 1e-15): counted, not summed, so that the loop runs
   * over the ~16 sd / tile terms around the mean whatever m */
  const double whole = fmax(0.0, floor((m - 8.0 * sd - 0.5) / tile));
  double slabs = 1.0 + whole;
  for (double j = whole + 1.0;; j += 1.0) {
    const double tail = 0.5 * erfc((j * tile + 0.5 - m) / (sd * sqrt(2.0)));
    if (tail < 1e-4) break;
    slabs += fmin(1.0, tail / live);
  }
  return slabs;
}

double mgen__cost_slabs_ns(const mgen_kernel_desc *d, int m, int n, int k, int slabs,
                           const mgen__device *dev) {
  if (slabs <= 1) return mgen__cost_ns(d, m, n, k, dev);
  /* An expert's rows run in ceil(rows / tile_m) slabs of the route, and the experts' rows
   * spread about their mean m: the kernel runs the expected slabs of each (a 64-row tile over
   * experts of 64 +- 8 rows runs ~1.5, not 1 or 2), costed as that many GEMMs of min(m,
   * tile_m) rows side by side. */
  const double tile = d->tile_m > 0 ? d->tile_m : 1;
  const double each = expected_slabs(m, tile), rows = fmin((double)m, tile);
  const double columns = (double)n * slabs * each;
  return mgen__cost_ns(d, (int)rows, columns < INT_MAX ? (int)columns : INT_MAX, k, dev);
}
