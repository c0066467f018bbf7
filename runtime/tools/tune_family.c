/* tune_family.c -- marlin_tune_family (marlin_tune.h): a kernel's family name, for --show's
 * table (tune_show.c) and its JSON (tune_json.c), which both read it here. */
#include "marlin_tune.h"
#include "mgen_internal.h"

const char *marlin_tune_family(const char *kernel) {
  const mgen_table *t = mgen_builtin_table();
  const int i = mgen_table_find(t, kernel);
  const mgen__family *f = i >= 0 ? mgen__family_of(t->kernels[i].family) : NULL;
  return f != NULL ? f->name : "?";
}
