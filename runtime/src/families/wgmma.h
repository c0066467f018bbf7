/* wgmma.h -- the Hopper wgmma family (templates/wgmma/): its descriptor parameters and hooks. */
#ifndef MGEN_FAMILY_WGMMA_H
#define MGEN_FAMILY_WGMMA_H

#include "family.h"

/* mgen_kernel_desc.params of a wgmma kernel, in the order templates/wgmma/spec.lua writes them. */
typedef enum mgen__wgmma_param {
  MGEN_WGMMA_WARPGROUPS, /* consumer warpgroups per block (64 output columns each) */
  MGEN_WGMMA_STAGES,     /* shared-memory stages of the TMA ring */
  MGEN_WGMMA_MAX_SPLITS, /* stream-K: most blocks sharing a tile where the tiles are few */
  MGEN_WGMMA_MIN_SPLIT_TILES, /* and fewest 64-deep stages per block */
  MGEN_WGMMA_ACC_SCALES, /* 1: group scales on the FP32 sums once per group (spec.lua acc_scales) */
  MGEN_WGMMA_PARAMS
} mgen__wgmma_param;

extern const mgen__family mgen__family_wgmma;

#endif /* MGEN_FAMILY_WGMMA_H */
