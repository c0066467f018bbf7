/* cost.c -- the default choice's cost model: each kernel's predicted
 * time from its family's model (families/<family>.c; the mma.sync model is in families/mma.c).
 */
#include "dispatch/cost.h"

#include <math.h>

#include "families/family.h"

double mgen__cost_ns(const mgen_kernel_desc *d, int m, int n, int k, const mgen__device *dev) {
  const mgen__family *f = mgen__family_of(d->family);
  return f != NULL ? f->cost_ns(d, m, n, k, dev) : HUGE_VAL;
}
