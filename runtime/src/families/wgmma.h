/* wgmma.h -- the Hopper wgmma family (templates/wgmma/): its descriptor parameters and hooks. */
#ifndef MGEN_FAMILY_WGMMA_H
#define MGEN_FAMILY_WGMMA_H

#include "family.h"

/* mgen_kernel_desc.params of a wgmma kernel: MGEN_WGMMA_<NAME>, MGEN_WGMMA_PARAMS and their
 * names, generated from templates/wgmma/spec.lua's M.params (marlin-gen: <out>/include/). */
#include "mgen_params_wgmma.h"

extern const mgen__family mgen__family_wgmma;

#endif /* MGEN_FAMILY_WGMMA_H */
