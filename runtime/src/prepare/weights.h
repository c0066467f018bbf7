/* weights.h -- the checks of a weight description and of the calls that fill or read weights
 * (weights.c), shared by quantize, pack and import (here), GEMM (context/gemm.c) and tuning.
 */
#ifndef MGEN_WEIGHTS_H
#define MGEN_WEIGHTS_H

#include "core/ctx.h"
#include "mgen/mgen.h"

/* NULL, enum values, group sign and scheme of `w` (weights.c); ctx may be NULL. */
mgen_status mgen__check_kind(mgen_ctx *ctx, const mgen_weights *w);
/* The one check of a weight description (weights.c), used by every entry point: kind, group,
 * and the shape rules (mgen.h, "Shapes": the rule of the key's kernels in ctx's table on
 * ctx->sm, dispatch/shape_rule.h; ctx NULL: the builtin table's, any architecture; then the
 * packed layout's own: n a multiple of 64, k of the group (64 per channel), n * k_packed / 8
 * fitting an int). ERR_NULL_POINTER,
 * ERR_INVALID_ARG, ERR_UNSUPPORTED_FORMAT, ERR_UNSUPPORTED_SHAPE. */
mgen_status mgen__check_desc(mgen_ctx *ctx, const mgen_weights *w);
/* mgen__check_desc, then m >= 1 with m * max(n, k) fitting an int (weights.c): the checks of
 * every call that computes a product (GEMM, choice, tuning). */
mgen_status mgen__check_problem(mgen_ctx *ctx, int m, const mgen_weights *w);
/* w->d_q and w->d_scales: not NULL, 16-byte aligned (weights.c; GEMM, quantize and pack). */
mgen_status mgen__check_weight_buffers(mgen_ctx *ctx, const mgen_weights *w);

/* OK for err 0 (cudaSuccess), else the status of CUDA error `err` with "what: message (name)"
 * in ctx (weights.c; quantize, pack and import). */
mgen_status mgen__launched(mgen_ctx *ctx, const char *what, int err);

/* st, after the fence that makes weights just written on `stream` safe for the GEMMs' copies
 * before their grid-dependency wait (fence.h; sm_90 and later): every call that writes packed
 * weights returns through it (weights.c, import.c). */
mgen_status mgen__weights_written(mgen_ctx *ctx, const char *what, mgen_status st, void *stream);

/* OK unless `stream` is being captured into a graph (ERR_STREAM_CAPTURING, "call: the stream is
 * being captured into a CUDA graph: why") or its capture status cannot be queried (the CUDA
 * error, named): for the calls that synchronize or read back (weights.c; tune, pack, import). */
mgen_status mgen__refuse_capture(mgen_ctx *ctx, void *stream, const char *call, const char *why);

#endif /* MGEN_WEIGHTS_H */
