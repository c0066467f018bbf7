/* moe.h -- the route's checks (moe.c), shared by the route, the grouped GEMM (gemm.c) and the
 * sum over top-k.
 */
#ifndef MGEN_CONTEXT_MOE_H
#define MGEN_CONTEXT_MOE_H

#include "core/ctx.h"
#include "mgen/mgen.h"

/* Checks r's sizes (m, topk, num_experts, local_experts, the map rule, unsorted 0 or 1); with
 * `full` also block_rows and the buffers (not NULL, 4-byte aligned; unsorted only d_topk_ids),
 * and then writes *rows, the GEMM's rows: the list's capacity (mgen_moe_route_rows), unsorted
 * block_rows per pair. The reason in ctx (may be NULL) on failure. Statuses: OK,
 * ERR_NULL_POINTER, ERR_INVALID_ARG, ERR_MISALIGNED. */
mgen_status mgen__moe_check_route(mgen_ctx *ctx, const mgen_moe_route *r, int full, int *rows);

/* A copy of r (not NULL) with placeholders for its buffers and map: the calls that read a
 * route's sizes only (mgen_moe_route_rows, mgen_moe_gemm_choice) check it as a whole route
 * whose map, if any, the caller has yet to make. */
mgen_moe_route mgen__moe_sizes(const mgen_moe_route *r);

#endif /* MGEN_CONTEXT_MOE_H */
