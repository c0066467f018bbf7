/* moe_ref.h -- the CPU reference of the MoE route (mgen_moe_route_tokens, runtime/src/moe/
 * moe_kernels.cu): what the sorted list, the block experts and the count must be, written as
 * plainly as possible (a loop over experts, then over pairs in id order), so that the GPU
 * route is checked entry for entry against it (tests/gpu/test_moe_gpu.c). */
#ifndef MGEN_TEST_MOE_REF_H
#define MGEN_TEST_MOE_REF_H

#include <stdint.h>

/* The local expert of pair `pair`: map[ids[pair]] (ids[pair] without a map) when the id is in
 * 0..experts-1 and that is in 0..local-1, else -1 (routed nowhere). */
int moe_ref_local(const int32_t *ids, const int32_t *map, int experts, int local, int pair);

/* Fills sorted[capacity] (pair ids by local expert in increasing id, each expert's run padded
 * to a multiple of block_rows with the id `pairs`, then padding to the end),
 * blocks[capacity / block_rows] (each block's expert, -1 past the runs) and *num_padded (the
 * runs' total). capacity must be at least that total (mgen_moe_route_rows); returns 0, or -1
 * where it is not. */
int moe_ref_route(const int32_t *ids, const int32_t *map, int pairs, int experts, int local,
                  int block_rows, int capacity, int32_t *sorted, int32_t *blocks,
                  int32_t *num_padded);

#endif /* MGEN_TEST_MOE_REF_H */
