/* registry.c -- the kernel families this library knows: one line per family. */
#include "family.h"

#include "mma.h"
#include "wgmma.h"

const mgen__family *const mgen__families[] = {
    &mgen__family_mma,   /* mma.sync, sm_80+ (templates/mma/) */
    &mgen__family_wgmma, /* wgmma, sm_90a (templates/wgmma/) */
};
const size_t mgen__family_count = sizeof mgen__families / sizeof mgen__families[0];
