/* mma.h -- the mma.sync family (templates/mma/): its descriptor parameters and its hooks. */
#ifndef MGEN_FAMILY_MMA_H
#define MGEN_FAMILY_MMA_H

#include "family.h"

/* mgen_kernel_desc.params of an mma kernel: MGEN_MMA_<NAME>, MGEN_MMA_PARAMS and their names,
 * generated from templates/mma/spec.lua's M.params (marlin-gen: <out>/include/). */
#include "mgen_params_mma.h"

extern const mgen__family mgen__family_mma;

/* Whether kernel d applies its group scales to its FP32 sums once per group (kAccScales of
 * templates/mma/kernel.cu.tpl; its descriptor's acc_scales parameter, written by spec.lua's
 * acc_scales: 8-row swapped tiles whose warps each take at least two 16-deep steps of every
 * group inside one stage), rather than to every dequantized weight. The cost model prices the
 * two ways differently; test_cost_sweep checks the table against every generated mma kernel's
 * kAccScales. */
int mgen__mma_acc_scales(const mgen_kernel_desc *d);

/* The last block of a split column sums its partials with MGEN_MMA_REDUCE_LOADS float4 loads in
 * flight per thread: that many blocks at once where a thread has one vector of the tile, else
 * chunks of at most MGEN_MMA_REDUCE_CHUNK vectors x the rest in blocks (kRedLoads and
 * kRedMaxChunk of templates/mma/include/mgen_mma_body.cuh reduce_grid, which every mma kernel
 * compiles; test_cost_sweep checks the generated body's). The cost model counts the L2 round
 * trips from them. */
#define MGEN_MMA_REDUCE_LOADS 16
#define MGEN_MMA_REDUCE_CHUNK 4

#endif /* MGEN_FAMILY_MMA_H */
