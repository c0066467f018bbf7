/* gemm.c -- mgen_gemm, mgen_gemm_kernel, mgen_gemm_choice: check the call, pick a kernel
 * (tune.c: cache, tuning or default), take the stream's workspace (workspace.c), fill
 * mgen_launch_args, launch. No file I/O; no allocation or synchronization except where
 * mgen.h says (a new stream's first GEMM; tuning on a miss).
 */
#include <limits.h>
#include <string.h>

#include "families/family.h"
#include "context/internal.h"
#include "formats/layout.h"
#include "prepare/format_ops.h" /* mgen__misaligned */

#define MGEN_ALIGN 16

/* A and C must have the type the weights' scales were made for: the kernels read scales and
 * activations as one type (a BF16 GEMM over FP16 scales would be garbage, not an error). */
static mgen_status check_act(mgen_ctx *ctx, mgen_act act, const mgen_weights *w) {
  if (!mgen__act_valid((int)act))
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "act=%d is not an mgen_act", (int)act);
  if (act != w->act)
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "%s activations with %s scales: quantize or pack the weights with w->act = %s",
                      mgen__act_name(act), mgen__act_name(w->act), mgen__act_name(act));
  return MGEN_OK;
}

static mgen_status check_buffers(mgen_ctx *ctx, const void *a, const void *c) {
  if (a == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_a is NULL");
  if (c == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_c is NULL");
  if (mgen__misaligned(a, MGEN_ALIGN))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_a=%p is not %d-byte aligned", a, MGEN_ALIGN);
  if (mgen__misaligned(c, MGEN_ALIGN))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_c=%p is not %d-byte aligned", c, MGEN_ALIGN);
  return MGEN_OK;
}

/* The kernel for the call: cache, tuning (if may_tune and the policy allows) or the cost
 * model's default (tune.c), with the reason in ctx on failure. */
static mgen_status choose(mgen_ctx *ctx, int m, const mgen_weights *w, void *stream, int may_tune,
                          int *index) {
  mgen__choice_key ck = mgen__choice_key_of(w, m);
  return mgen__choose(ctx, &ck, stream, may_tune, index);
}

/* Whether the named kernel `d` can run the call; the reason in ctx if not. */
static mgen_status check_kernel(mgen_ctx *ctx, const mgen_kernel_desc *d, int m,
                                const mgen_weights *w) {
  const mgen__key key = mgen__choice_key_of(w, m).key;
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

/* Launches `d` with the stream's workspace (workspace.c). */
static mgen_status launch(mgen_ctx *ctx, const mgen_kernel_desc *d, int m, const void *a,
                          const mgen_weights *w, void *c, void *stream) {
  mgen__lease lease;
  mgen_status st = mgen__ws_acquire(ctx, stream, &lease);
  if (st != MGEN_OK) return st;
  st = mgen__launch(ctx, d, m, a, w, c, stream, &lease);
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
  MGEN_TRY(check_act(ctx, act, w));
  MGEN_TRY(check_buffers(ctx, d_a, d_c));
  MGEN_TRY(mgen__check_device(ctx));
  MGEN_TRY(choose(ctx, m, w, stream, 1, &index));
  st = launch(ctx, &ctx->table->kernels[index], m, d_a, w, d_c, stream);
out:
  return st;
}

mgen_status mgen_gemm_kernel(mgen_ctx *ctx, const char *kernel_name, mgen_act act, int m, const void *d_a,
                             const mgen_weights *w, void *d_c, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  if (kernel_name == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "kernel_name is NULL");
  mgen_status st;
  const mgen_kernel_desc *d;
  int index = mgen_table_find(ctx->table, kernel_name);
  if (index < 0)
    return mgen__fail(ctx, MGEN_ERR_UNKNOWN_KERNEL, "no kernel named '%s' in %s", kernel_name,
                      ctx->table->generator ? ctx->table->generator : "the table");
  d = &ctx->table->kernels[index];
  MGEN_TRY(mgen__check_problem(ctx, m, w));
  MGEN_TRY(mgen__check_weight_buffers(ctx, w));
  MGEN_TRY(check_act(ctx, act, w));
  MGEN_TRY(check_buffers(ctx, d_a, d_c));
  MGEN_TRY(check_kernel(ctx, d, m, w));
  MGEN_TRY(mgen__check_device(ctx));
  st = launch(ctx, d, m, d_a, w, d_c, stream);
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
  MGEN_TRY(check_act(ctx, act, w));
  MGEN_TRY(choose(ctx, m, w, NULL, 0, &index));
  *kernel_name = ctx->table->kernels[index].name;
out:
  return st;
}
