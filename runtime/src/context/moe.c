/* moe.c -- the mixture-of-experts calls beside the grouped GEMM (gemm.c): mgen_moe_route_rows,
 * mgen_moe_route, mgen_moe_permute and mgen_moe_sum, with the route's checks. Each launches one
 * ordinary kernel (moe/moe_kernels.cu): no allocation, no synchronization.
 */
#include <stdint.h>

#include "context/moe.h"
#include "core/errors.h"
#include "moe/moe_kernels.h"
#include "prepare/format_ops.h" /* mgen__misaligned */
#include "prepare/weights.h"    /* mgen__launched */

#define MOE_MAX_TOPK 64
#define MOE_MAX_PAIRS (1 << 30) /* the route kernel's pair index, with a chunk past it, fits */
#define MOE_MAX_BLOCK_ROWS 256

mgen_status mgen__moe_check_route(mgen_ctx *ctx, const mgen_moe_route *r, int full, int *rows) {
  if (r == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "the route is NULL");
  if (r->m < 1 || r->topk < 1 || r->topk > MOE_MAX_TOPK)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "m=%d, topk=%d: m >= 1, topk 1..%d", r->m,
                      r->topk, MOE_MAX_TOPK);
  if ((long long)r->m * r->topk >= MOE_MAX_PAIRS)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "m * topk = %lld: at most %d", 
                      (long long)r->m * r->topk, MOE_MAX_PAIRS - 1);
  if (r->num_experts < 1 || r->num_experts > MGEN__MOE_MAX_EXPERTS)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "num_experts=%d: 1..%d", r->num_experts,
                      MGEN__MOE_MAX_EXPERTS);
  if (r->local_experts < 1 || r->local_experts > r->num_experts)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "local_experts=%d: 1..num_experts (%d)",
                      r->local_experts, r->num_experts);
  if (r->d_expert_map == NULL && r->local_experts != r->num_experts)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "local_experts=%d without an expert map: "
                      "must be num_experts (%d)", r->local_experts, r->num_experts);
  if (r->unsorted != 0 && r->unsorted != 1)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "unsorted=%d: 0 (a sorted list) or 1 (none)",
                      r->unsorted);
  if (!full) return MGEN_OK;
  if (r->block_rows < 1 || r->block_rows > MOE_MAX_BLOCK_ROWS)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "block_rows=%d: 1..%d", r->block_rows,
                      MOE_MAX_BLOCK_ROWS);
  /* unsorted: no list, the GEMM's rows are a block per pair */
  const long long cap = r->unsorted ? (long long)r->m * r->topk * r->block_rows
                                    : ((long long)r->m * r->topk +
                                       (long long)r->local_experts * (r->block_rows - 1)) /
                                          r->block_rows * r->block_rows;
  if (cap > INT32_MAX)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "the %s's %lld rows do not fit an int",
                      r->unsorted ? "unsorted route" : "sorted list", cap);
  const struct { const void *p; const char *name; } bufs[] = {
    {r->d_topk_ids, "d_topk_ids"}, {r->d_sorted_ids, "d_sorted_ids"},
    {r->d_block_experts, "d_block_experts"}, {r->d_num_padded, "d_num_padded"},
  };
  for (size_t i = 0; i < (r->unsorted ? 1 : sizeof bufs / sizeof bufs[0]); i++) {
    if (bufs[i].p == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "%s is NULL", bufs[i].name);
    if (mgen__misaligned(bufs[i].p, 4))
      return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "%s=%p is not 4-byte aligned", bufs[i].name,
                        bufs[i].p);
  }
  if (mgen__misaligned(r->d_expert_map, 4))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_expert_map=%p is not 4-byte aligned",
                      (const void *)r->d_expert_map);
  *rows = (int)cap;
  return MGEN_OK;
}

mgen_moe_route mgen__moe_sizes(const mgen_moe_route *r) {
  mgen_moe_route sizes = *r;
  static int32_t any[1];
  sizes.d_topk_ids = sizes.d_sorted_ids = sizes.d_block_experts = sizes.d_num_padded = any;
  sizes.d_expert_map = any;
  return sizes;
}

mgen_status mgen_moe_route_rows(const mgen_moe_route *r, int *rows) {
  if (rows == NULL) return MGEN_ERR_NULL_POINTER;
  if (r == NULL) return MGEN_ERR_NULL_POINTER;
  /* Sizes only: the buffers (and the map) are what the caller allocates with the answer. */
  const mgen_moe_route sizes = mgen__moe_sizes(r);
  const mgen_status st = mgen__moe_check_route(NULL, &sizes, 1, rows);
  if (st == MGEN_OK && r->unsorted) *rows = 0; /* no list to allocate */
  return st;
}

mgen_status mgen_moe_route_tokens(mgen_ctx *ctx, const mgen_moe_route *r, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st;
  int rows = 0;
  MGEN_TRY(mgen__moe_check_route(ctx, r, 1, &rows));
  if (r->unsorted) return MGEN_OK; /* nothing to sort: the GEMM reads the ids */
  MGEN_TRY(mgen__check_device(ctx));
  mgen__moe_route_args a = {
    .topk_ids = r->d_topk_ids, .expert_map = r->d_expert_map, .pairs = r->m * r->topk,
    .experts = r->num_experts, .local = r->local_experts, .block_rows = r->block_rows,
    .capacity = rows, .sorted_ids = r->d_sorted_ids, .block_experts = r->d_block_experts,
    .num_padded = r->d_num_padded,
  };
  st = mgen__launched(ctx, "mgen_moe_route_tokens", mgen__moe_route_launch(&a, stream));
out:
  return st;
}

mgen_status mgen_moe_permute(mgen_ctx *ctx, const mgen_moe_route *r, int a_rows, int k,
                             const void *d_a, void *d_sorted, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st;
  int rows = 0;
  MGEN_TRY(mgen__moe_check_route(ctx, r, 1, &rows));
  if (r->unsorted)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "an unsorted route has no order to permute A "
                      "into (mgen_moe_gemm gathers A's rows for it)");
  if (a_rows != MGEN_MOE_A_TOKENS && a_rows != MGEN_MOE_A_PAIRS)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "a_rows=%d: 0 (A per token) or 1 (per pair)",
                      a_rows);
  if (k < 8 || k % 8 != 0 || (long long)rows * k > ((long long)1 << 40))
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "k=%d: a positive multiple of 8 (and the "
                      "sorted A's %d rows of k within 2^40 elements)", k, rows);
  if (d_a == NULL || d_sorted == NULL)
    return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_a or d_sorted is NULL");
  if (mgen__misaligned(d_a, 16) || mgen__misaligned(d_sorted, 16))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_a=%p or d_sorted=%p is not 16-byte aligned",
                      d_a, d_sorted);
  MGEN_TRY(mgen__check_device(ctx));
  st = mgen__launched(ctx, "mgen_moe_permute",
                      mgen__moe_permute_launch(r->d_sorted_ids, r->d_num_padded, rows,
                                               r->m * r->topk,
                                               a_rows == MGEN_MOE_A_TOKENS ? r->topk : 1, k, d_a,
                                               d_sorted, stream));
out:
  return st;
}

mgen_status mgen_moe_sum(mgen_ctx *ctx, mgen_act act, const mgen_moe_route *r, int n,
                         const void *d_c, void *d_out, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st;
  MGEN_TRY(mgen__moe_check_route(ctx, r, 0, NULL));
  if (act != MGEN_ACT_F16 && act != MGEN_ACT_BF16)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "act=%d is not an mgen_act", (int)act);
  if (n < 8 || n % 8 != 0 || (long long)r->m * r->topk * n > 2147483647LL)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "n=%d: a positive multiple of 8 with "
                      "m * topk * n < 2^31", n);
  if (r->d_topk_ids == NULL || d_c == NULL || d_out == NULL)
    return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_topk_ids, d_c or d_out is NULL");
  if (mgen__misaligned(d_c, 16) || mgen__misaligned(d_out, 16) ||
      mgen__misaligned(r->d_topk_ids, 4) || mgen__misaligned(r->d_expert_map, 4))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_c, d_out (16 bytes) or the route's ids "
                      "(4 bytes) misaligned");
  MGEN_TRY(mgen__check_device(ctx));
  st = mgen__launched(ctx, "mgen_moe_sum",
                      mgen__moe_sum_launch((int)act, r->m, r->topk, n, r->d_topk_ids,
                                           r->d_expert_map, r->num_experts, r->local_experts,
                                           d_c, d_out, stream));
out:
  return st;
}
