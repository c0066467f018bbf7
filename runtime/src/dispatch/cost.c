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

double mgen__cost_slabs_ns(const mgen_kernel_desc *d, int m, int n, int k, int slabs,
                           const mgen__device *dev) {
  const double columns = (double)n * (slabs > 1 ? slabs : 1);
  return mgen__cost_ns(d, m, columns < INT_MAX ? (int)columns : INT_MAX, k, dev);
}
