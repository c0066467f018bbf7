/* registry.c -- the kernel families this library knows: one line per family. */
#include "family.h"

#include <stdio.h>

#include "mma.h"

static const mgen__family *const kFamilies[] = {
    &mgen__family_mma, /* mma.sync, sm_80+ (templates/mma/) */
};

const mgen__family *mgen__family_of(int id) {
  for (size_t i = 0; i < sizeof kFamilies / sizeof kFamilies[0]; i++)
    if (kFamilies[i]->id == id) return kFamilies[i];
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
