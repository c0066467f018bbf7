/* registry.c -- the kernel families this library knows: one line per family in
 * MGEN_FAMILY_LIST, X(name) for the mgen__family_<name> its runtime file (families/<name>.c)
 * defines. The build finds the runtime files and the templates itself; this list is the one
 * place the runtime lists families (runtime.test_family_seam adds its toy family here). */
#include "family.h"

#define MGEN_FAMILY_LIST(X)                                                                        \
  X(mma)   /* mma.sync, sm_80+ (templates/mma/) */                                                 \
  X(wgmma) /* wgmma, sm_90a (templates/wgmma/) */

#define DECLARE(name) extern const mgen__family mgen__family_##name;
MGEN_FAMILY_LIST(DECLARE)
#undef DECLARE

#define ENTRY(name) &mgen__family_##name,
const mgen__family *const mgen__families[] = {MGEN_FAMILY_LIST(ENTRY)};
#undef ENTRY
const size_t mgen__family_count = sizeof mgen__families / sizeof mgen__families[0];
