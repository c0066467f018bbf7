/* gemm.c -- mgen_gemm, mgen_gemm_kernel, mgen_gemm_choice and the grouped GEMM mgen_moe_gemm*
 * (op MGEN_OP_MOE): check the call, pick a kernel (tune.c: cache, tuning or default), take the
 * stream's workspace (workspace.c), fill mgen_launch_args, launch. No file I/O; no allocation
 * or synchronization except where mgen.h says (a new stream's first GEMM; tuning on a miss).
 */
#include <limits.h>
#include <string.h>

#include "families/family.h"
#include "context/internal.h"
#include "formats/layout.h"
#include "context/moe.h"
#include "prepare/format_ops.h" /* mgen__misaligned */

#define MGEN_ALIGN 16

/* A and C must have the type the weights' scales were made for: the kernels read scales and
 * activations as one type (a BF16 GEMM over FP16 scales would be garbage, not an error); with
 * FP8 activations (a8: mgen_gemm_a8) C and the scales. And the weights' layout must be one whose
 * kernels read the call's kind of A: FP8 for a8, the act itself otherwise. */
static mgen_status check_act(mgen_ctx *ctx, mgen_act act, const mgen_weights *w, int a8) {
  if (!mgen__act_valid((int)act))
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "act=%d is not an mgen_act", (int)act);
  if (act != w->act)
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "%s %s with %s scales: quantize or pack the weights with w->act = %s",
                      mgen__act_name(act), a8 ? "output" : "activations", mgen__act_name(w->act),
                      mgen__act_name(act));
  const int layout = mgen__layout_resolve(w->wfmt, w->layout);
  if (mgen__layout_a8(layout) != a8)
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      a8 ? "mgen_gemm_a8 reads FP8 activations, for weights in the e4m3 layout; "
                           "these are in the %s layout (mgen_gemm)"
                         : "weights in the %s layout are read with FP8 E4M3 activations: "
                           "mgen_gemm_a8",
                      mgen__layout_name(layout));
  return MGEN_OK;
}

/* mgen_gemm_a8's own operands: the row scales (per row or per tensor) and the alignment of A. */
static mgen_status check_a8(mgen_ctx *ctx, const float *a_scales, int per_row) {
  if (a_scales == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_a_scales is NULL");
  if (per_row != 0 && per_row != 1)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "a_scale_per_row=%d: 1 (a scale per row of A) or 0 (one per tensor)", per_row);
  if (mgen__misaligned(a_scales, 4))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_a_scales=%p is not 4-byte aligned",
                      (const void *)a_scales);
  return MGEN_OK;
}

/* A, C and the weights' optional bias (the kernels read all three 16 bytes at a time). */
static mgen_status check_buffers(mgen_ctx *ctx, const void *a, const void *c, const mgen_weights *w) {
  if (a == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_a is NULL");
  if (c == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_c is NULL");
  if (mgen__misaligned(a, MGEN_ALIGN))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_a=%p is not %d-byte aligned", a, MGEN_ALIGN);
  if (mgen__misaligned(c, MGEN_ALIGN))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_c=%p is not %d-byte aligned", c, MGEN_ALIGN);
  if (mgen__misaligned(w->d_bias, MGEN_ALIGN))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "w->d_bias=%p is not %d-byte aligned", w->d_bias,
                      MGEN_ALIGN);
  return MGEN_OK;
}

/* The kernel for the call: cache, tuning (if may_tune and the policy allows) or the cost
 * model's default (tune.c), with the reason in ctx on failure. */
static mgen_status choose(mgen_ctx *ctx, int m, const mgen_weights *w, void *stream, int may_tune,
                          int *index) {
  mgen__choice_key ck = mgen__choice_key_of(w, m);
  return mgen__choose(ctx, &ck, stream, may_tune, index);
}

/* The index of the table's kernel named `kernel_name` (mgen_gemm_kernel, mgen_moe_gemm_kernel),
 * or ERR_UNKNOWN_KERNEL naming the table. */
static mgen_status find_named(mgen_ctx *ctx, const char *kernel_name, int *index) {
  *index = mgen_table_find(ctx->table, kernel_name);
  if (*index >= 0) return MGEN_OK;
  return mgen__fail(ctx, MGEN_ERR_UNKNOWN_KERNEL, "no kernel named '%s' in %s", kernel_name,
                    ctx->table->generator ? ctx->table->generator : "the table");
}

/* Whether the named kernel `d` can run the call of key `key`; the reason in ctx if not. */
static mgen_status check_kernel_key(mgen_ctx *ctx, const mgen_kernel_desc *d, int m,
                                    const mgen_weights *w, mgen__key key) {
  char have[48], want[48], why[MGEN_ERROR_SIZE];
  if (!mgen__key_matches(d, &key)) {
    const mgen__key want_key = mgen__desc_key(d);
    mgen__key_str(&key, have, sizeof have);
    mgen__key_str(&want_key, want, sizeof want);
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT, "%s computes %s, the call is %s",
                      d->name, want, have);
  }
  if (!mgen__kernel_runs(d, ctx->sm)) {
    char range[48];
    mgen__arch_range(d, range, sizeof range);
    return mgen__fail(ctx, MGEN_ERR_NO_KERNEL, "%s runs on %s; the device is sm_%d", d->name,
                      range, ctx->sm);
  }
  if (!mgen__can_implement(d, m, w->n, w->k, why, sizeof why))
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_SHAPE, "%s: %s", d->name, why);
  return MGEN_OK;
}

static mgen_status check_kernel(mgen_ctx *ctx, const mgen_kernel_desc *d, int m,
                                const mgen_weights *w) {
  return check_kernel_key(ctx, d, m, w, mgen__choice_key_of(w, m).key);
}

/* Launches `d` with the stream's workspace (workspace.c); a_scales: FP8 A's row scales
 * (mgen_gemm_a8; NULL for 16-bit A). */
static mgen_status launch(mgen_ctx *ctx, const mgen_kernel_desc *d, int m, const void *a,
                          const float *a_scales, int a_scale_per_row, const mgen_weights *w,
                          void *c, void *stream) {
  mgen__lease lease;
  mgen_status st = mgen__ws_acquire(ctx, stream, &lease);
  if (st != MGEN_OK) return st;
  st = mgen__launch_a8(ctx, d, m, a, a_scales, a_scale_per_row, w, c, stream, &lease);
  mgen__ws_release(ctx, stream, &lease);
  return st;
}

mgen_status mgen_gemm(mgen_ctx *ctx, mgen_act act, int m, const void *d_a, const mgen_weights *w, void *d_c,
                      void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st;
  int index = -1;
  MGEN_TRY(mgen__check_problem(ctx, m, w));
  MGEN_TRY(mgen__check_weight_buffers(ctx, w));
  MGEN_TRY(check_act(ctx, act, w, 0));
  MGEN_TRY(check_buffers(ctx, d_a, d_c, w));
  MGEN_TRY(mgen__check_device(ctx));
  MGEN_TRY(choose(ctx, m, w, stream, 1, &index));
  st = launch(ctx, &ctx->table->kernels[index], m, d_a, NULL, 0, w, d_c, stream);
out:
  return st;
}

/* mgen_gemm_a8 and mgen_gemm_a8_kernel (kernel_name NULL: the choice, as mgen_gemm's). */
static mgen_status gemm_a8(mgen_ctx *ctx, const char *kernel_name, mgen_act act, int m,
                           const void *d_a8, const float *d_a_scales, int a_scale_per_row,
                           const mgen_weights *w, void *d_c, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st;
  int index = -1;
  if (kernel_name != NULL) MGEN_TRY(find_named(ctx, kernel_name, &index));
  MGEN_TRY(mgen__check_problem(ctx, m, w));
  MGEN_TRY(mgen__check_weight_buffers(ctx, w));
  MGEN_TRY(check_act(ctx, act, w, 1));
  MGEN_TRY(check_buffers(ctx, d_a8, d_c, w));
  MGEN_TRY(check_a8(ctx, d_a_scales, a_scale_per_row));
  if (kernel_name != NULL) MGEN_TRY(check_kernel(ctx, &ctx->table->kernels[index], m, w));
  MGEN_TRY(mgen__check_device(ctx));
  if (kernel_name == NULL) MGEN_TRY(choose(ctx, m, w, stream, 1, &index));
  st = launch(ctx, &ctx->table->kernels[index], m, d_a8, d_a_scales, a_scale_per_row, w, d_c,
              stream);
out:
  return st;
}

mgen_status mgen_gemm_a8(mgen_ctx *ctx, mgen_act act, int m, const void *d_a8,
                         const float *d_a_scales, int a_scale_per_row, const mgen_weights *w,
                         void *d_c, void *stream) {
  return gemm_a8(ctx, NULL, act, m, d_a8, d_a_scales, a_scale_per_row, w, d_c, stream);
}

mgen_status mgen_gemm_a8_kernel(mgen_ctx *ctx, const char *kernel_name, mgen_act act, int m,
                                const void *d_a8, const float *d_a_scales, int a_scale_per_row,
                                const mgen_weights *w, void *d_c, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  if (kernel_name == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "kernel_name is NULL");
  return gemm_a8(ctx, kernel_name, act, m, d_a8, d_a_scales, a_scale_per_row, w, d_c, stream);
}

mgen_status mgen_gemm_kernel(mgen_ctx *ctx, const char *kernel_name, mgen_act act, int m, const void *d_a,
                             const mgen_weights *w, void *d_c, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  if (kernel_name == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "kernel_name is NULL");
  mgen_status st;
  const mgen_kernel_desc *d;
  int index;
  MGEN_TRY(find_named(ctx, kernel_name, &index));
  d = &ctx->table->kernels[index];
  MGEN_TRY(mgen__check_problem(ctx, m, w));
  MGEN_TRY(mgen__check_weight_buffers(ctx, w));
  MGEN_TRY(check_act(ctx, act, w, 0));
  MGEN_TRY(check_buffers(ctx, d_a, d_c, w));
  MGEN_TRY(check_kernel(ctx, d, m, w));
  MGEN_TRY(mgen__check_device(ctx));
  st = launch(ctx, d, m, d_a, NULL, 0, w, d_c, stream);
out:
  return st;
}

mgen_status mgen_gemm_choice(mgen_ctx *ctx, mgen_act act, int m, const mgen_weights *w,
                             const char **kernel_name) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  if (kernel_name == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "kernel_name is NULL");
  mgen_status st;
  int index = -1;
  MGEN_TRY(mgen__check_problem(ctx, m, w));
  /* either kind of A: the weights' layout says which (mgen_gemm or mgen_gemm_a8) */
  MGEN_TRY(check_act(ctx, act, w, mgen__layout_a8(mgen__layout_resolve(w->wfmt, w->layout))));
  MGEN_TRY(choose(ctx, m, w, NULL, 0, &index));
  *kernel_name = ctx->table->kernels[index].name;
out:
  return st;
}

/* ---------------------------------------------------------------- grouped GEMM (moe) */

/* The moe call's choice key (select.h: the dense GEMM it costs as), sorted or unsorted. */
static mgen__choice_key moe_key(const mgen_moe_route *r, const mgen_weights *w) {
  const long long pairs = (long long)r->m * r->topk;
  return r->unsorted ? mgen__moe_unsorted_key_of(w, pairs, r->num_experts, r->local_experts)
                     : mgen__moe_choice_key_of(w, pairs, r->num_experts, r->local_experts);
}

/* The kernel of the call: the named one (checked), or the choice (never tuned: the tuner
 * times dense launches). */
static mgen_status moe_kernel(mgen_ctx *ctx, const char *kernel_name, const mgen_moe_route *r,
                              int rows, const mgen_weights *w, int *index) {
  const mgen__choice_key ck = moe_key(r, w);
  if (kernel_name == NULL) return mgen__choose(ctx, &ck, NULL, 0, index);
  int i;
  mgen_status st = find_named(ctx, kernel_name, &i);
  if (st != MGEN_OK) return st;
  st = check_kernel_key(ctx, &ctx->table->kernels[i], rows, w, ck.key);
  if (st == MGEN_OK) *index = i;
  return st;
}

static mgen_status moe_gemm(mgen_ctx *ctx, const char *kernel_name, mgen_act act,
                            const mgen_moe_route *r, int a_rows, const void *d_a,
                            const mgen_weights *w, const float *d_topk_weights, void *d_c,
                            void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st;
  int rows = 0, index = -1;
  size_t qbytes = 0, sbytes = 0;
  if (w == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "w is NULL");
  MGEN_TRY(mgen__moe_check_route(ctx, r, 1, &rows));
  if (a_rows != MGEN_MOE_A_TOKENS && a_rows != MGEN_MOE_A_PAIRS &&
      a_rows != MGEN_MOE_A_SORTED)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "a_rows=%d: 0 (A per token), 1 (per pair) or 2 "
                      "(in the route's order)", a_rows);
  MGEN_TRY(mgen__check_problem(ctx, rows, w));
  MGEN_TRY(mgen__check_weight_buffers(ctx, w));
  MGEN_TRY(check_act(ctx, act, w, 0));
  MGEN_TRY(check_buffers(ctx, d_a, d_c, w));
  if (mgen__misaligned(d_topk_weights, 4))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_topk_weights=%p is not 4-byte aligned",
                      (const void *)d_topk_weights);
  MGEN_TRY(mgen_weights_bytes(w, &qbytes, &sbytes));
  if (qbytes % MGEN_ALIGN || sbytes % MGEN_ALIGN) /* every expert's buffers stay aligned */
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "experts %zu + %zu bytes apart: not %d-byte "
                      "multiples", qbytes, sbytes, MGEN_ALIGN);
  MGEN_TRY(moe_kernel(ctx, kernel_name, r, rows, w, &index));
  const mgen_kernel_desc *d = &ctx->table->kernels[index];
  if (d->tile_m != r->block_rows)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "the route has block_rows %d, %s takes %d "
                      "(route with mgen_moe_gemm_choice's block_rows)", r->block_rows, d->name,
                      d->tile_m);
  if (r->unsorted) {
    const mgen__family *f = mgen__family_of(d->family);
    if (f == NULL || !f->moe_unsorted)
      return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "%s needs a sorted route (its family plans "
                        "over the list): route unsorted only where mgen_moe_unsorted_pays says "
                        "so", d->name);
    if (a_rows == MGEN_MOE_A_SORTED)
      return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "an unsorted route has no order for A to be "
                        "in (a_rows 0 or 1)");
  }
  MGEN_TRY(mgen__check_device(ctx));
  mgen_moe_op_args op;
  memset(&op, 0, sizeof op);
  op.sorted_ids = r->d_sorted_ids;
  op.block_experts = r->d_block_experts;
  op.num_padded = r->d_num_padded;
  op.topk_weights = d_topk_weights;
  op.pairs = r->m * r->topk; /* fits: mgen__moe_check_route */
  op.a_div = a_rows == MGEN_MOE_A_TOKENS ? r->topk : 1;
  op.a_sorted = a_rows == MGEN_MOE_A_SORTED;
  op.q_stride = (long long)qbytes;
  op.s_stride = (long long)sbytes;
  op.experts = r->local_experts;
  op.unsorted = r->unsorted;
  op.topk_ids = r->d_topk_ids;
  op.expert_map = r->d_expert_map;
  op.num_experts = r->num_experts;
  mgen__lease lease;
  MGEN_TRY(mgen__ws_acquire(ctx, stream, &lease));
  st = mgen__launch_op(ctx, d, rows, d_a, w, d_c, &op, stream, &lease);
  mgen__ws_release(ctx, stream, &lease);
out:
  return st;
}

mgen_status mgen_moe_gemm(mgen_ctx *ctx, mgen_act act, const mgen_moe_route *r, int a_rows,
                          const void *d_a, const mgen_weights *w, const float *d_topk_weights,
                          void *d_c, void *stream) {
  return moe_gemm(ctx, NULL, act, r, a_rows, d_a, w, d_topk_weights, d_c, stream);
}

mgen_status mgen_moe_gemm_kernel(mgen_ctx *ctx, const char *kernel_name, mgen_act act,
                                 const mgen_moe_route *r, int a_rows, const void *d_a,
                                 const mgen_weights *w, const float *d_topk_weights, void *d_c,
                                 void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  if (kernel_name == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "kernel_name is NULL");
  return moe_gemm(ctx, kernel_name, act, r, a_rows, d_a, w, d_topk_weights, d_c, stream);
}

/* The kernel mgen_moe_gemm chooses for r's sizes over w (*index into the table). */
static mgen_status moe_choice(mgen_ctx *ctx, mgen_act act, const mgen_moe_route *r,
                              const mgen_weights *w, int *index) {
  mgen_status st;
  if (r == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "the route is NULL");
  if (w == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "w is NULL");
  const mgen_moe_route sizes = mgen__moe_sizes(r); /* the map's presence is not read either */
  MGEN_TRY(mgen__moe_check_route(ctx, &sizes, 0, NULL));
  MGEN_TRY(mgen__check_problem(ctx, r->m * r->topk, w));
  MGEN_TRY(check_act(ctx, act, w, 0));
  MGEN_TRY(moe_kernel(ctx, NULL, &sizes, 0, w, index));
out:
  return st;
}

mgen_status mgen_moe_gemm_choice(mgen_ctx *ctx, mgen_act act, const mgen_moe_route *r,
                                 const mgen_weights *w, const char **kernel_name,
                                 int *block_rows) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  if (w == NULL || kernel_name == NULL || block_rows == NULL)
    return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "w, kernel_name or block_rows is NULL");
  int index = -1;
  const mgen_status st = moe_choice(ctx, act, r, w, &index);
  if (st != MGEN_OK) return st;
  *kernel_name = ctx->table->kernels[index].name;
  *block_rows = ctx->table->kernels[index].tile_m;
  return MGEN_OK;
}

mgen_status mgen_moe_unsorted_pays(mgen_ctx *ctx, mgen_act act, const mgen_moe_route *r,
                                   const mgen_weights *w, int *pays, int *block_rows) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  if (pays == NULL || block_rows == NULL)
    return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "pays or block_rows is NULL");
  if (r == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "the route is NULL");
  mgen_moe_route unsorted = *r;
  unsorted.unsorted = 1;
  int index = -1;
  const mgen_status st = moe_choice(ctx, act, &unsorted, w, &index);
  if (st != MGEN_OK) return st;
  const mgen_kernel_desc *d = &ctx->table->kernels[index];
  *pays = mgen__moe_unsorted_pays(d, r->m, r->topk, r->num_experts, r->local_experts, w->n, w->k);
  *block_rows = d->tile_m;
  return MGEN_OK;
}

mgen_status mgen_moe_gemm_a_sorted(mgen_ctx *ctx, mgen_act act, const mgen_moe_route *r,
                                   const mgen_weights *w, int *pays) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  if (pays == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "pays is NULL");
  int index = -1;
  const mgen_status st = moe_choice(ctx, act, r, w, &index);
  if (st != MGEN_OK) return st;
  *pays = !r->unsorted && /* (no order to permute into) */
          mgen__moe_a_sorted_pays(&ctx->table->kernels[index], (long long)r->m * r->topk,
                                  r->num_experts, r->local_experts, w->n);
  return MGEN_OK;
}
