/* mma.h -- the mma.sync family (templates/mma/): its descriptor parameters and its hooks. */
#ifndef MGEN_FAMILY_MMA_H
#define MGEN_FAMILY_MMA_H

#include "family.h"

/* mgen_kernel_desc.params of an mma kernel, in the order templates/mma/spec.lua writes them
 * (test_family checks the names against the manifest). */
typedef enum mgen__mma_param {
  MGEN_MMA_STAGES,    /* cp.async pipeline stages */
  MGEN_MMA_WARPS,     /* warps per block */
  MGEN_MMA_SWZ_BITS,  /* Swizzle<bits, base, shift> of the A tile */
  MGEN_MMA_SWZ_BASE,
  MGEN_MMA_SWZ_SHIFT,
  MGEN_MMA_PARAMS
} mgen__mma_param;

extern const mgen__family mgen__family_mma;

#endif /* MGEN_FAMILY_MMA_H */
