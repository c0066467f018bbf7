/* moe_kernels.h -- the mixture-of-experts kernels beside the grouped GEMM (moe_kernels.cu): the
 * route (pairs sorted by expert in block-padded runs), A's rows permuted into the route's order
 * and the sum over top-k. Launchers enqueue one ordinary kernel on `stream` (no allocation, no
 * synchronization: graph-capturable) and return a cudaError_t value (0 on success). Arguments
 * are checked by the caller (context/moe.c); device data (expert ids) is not trusted: an id outside 0..experts-1, or one
 * the map sends outside 0..local-1, routes its pair nowhere.
 */
#ifndef MGEN_MOE_KERNELS_H
#define MGEN_MOE_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most experts a route takes: a block of its kernel keeps at least two rows of counts (an int
 * per local expert each: two segments', or one and the pairs before its slice) in 46 KB of
 * shared memory. */
#define MGEN__MOE_MAX_EXPERTS 4096

typedef struct mgen__moe_route_args {
  const int32_t *topk_ids;    /* [pairs] */
  const int32_t *expert_map;  /* [experts] or NULL */
  int pairs, experts, local, block_rows;
  int capacity;               /* rows of sorted_ids, a multiple of block_rows */
  int32_t *sorted_ids;        /* [capacity] */
  int32_t *block_experts;     /* [capacity / block_rows] */
  int32_t *num_padded;        /* [1] */
} mgen__moe_route_args;

int mgen__moe_route_launch(const mgen__moe_route_args *a, void *stream);

/* out[r, 0..k-1] = a[sorted_ids[r] / a_div, :] (16-bit elements, k % 8 == 0, both 16-byte
 * aligned) for r below min(*num_padded, capacity); zeros where sorted_ids[r] >= pairs. */
int mgen__moe_permute_launch(const int32_t *sorted_ids, const int32_t *num_padded, int capacity,
                             int pairs, int a_div, int k, const void *a, void *out, void *stream);

/* out[t, n] = sum over j < topk, in order, of c[t * topk + j, n] for the pairs routed to a
 * local expert (as the route decides), in FP32, rounded once to `act` (mgen_act). n % 8 == 0;
 * c and out 16-byte aligned. */
int mgen__moe_sum_launch(int act, int tokens, int topk, int n, const int32_t *topk_ids,
                         const int32_t *expert_map, int experts, int local, const void *c,
                         void *out, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_MOE_KERNELS_H */
