/* launch.c -- mgen__launch: one kernel of the table on a checked call, with a workspace lease:
 * fills mgen_launch_args from the call, the lease and the context (ctx.h). GEMM (context/gemm.c)
 * and the tuner's timer (tuning/tune_timer.c) launch through it.
 */
#include <string.h>

#include "core/ctx.h"
#include "formats/layout.h"

mgen_status mgen__launch(mgen_ctx *ctx, const mgen_kernel_desc *d, int m, const void *a,
                         const mgen_weights *w, void *c, void *stream, const mgen__lease *lease) {
  return mgen__launch_op(ctx, d, m, a, w, c, NULL, stream, lease);
}

static mgen_status launch(mgen_ctx *ctx, const mgen_kernel_desc *d, int m, const void *a,
                          const float *a_scales, int a_scale_stride, const mgen_weights *w,
                          void *c, const void *op_args, void *stream, const mgen__lease *lease);

mgen_status mgen__launch_op(mgen_ctx *ctx, const mgen_kernel_desc *d, int m, const void *a,
                            const mgen_weights *w, void *c, const void *op_args, void *stream,
                            const mgen__lease *lease) {
  return launch(ctx, d, m, a, NULL, 0, w, c, op_args, stream, lease);
}

mgen_status mgen__launch_a8(mgen_ctx *ctx, const mgen_kernel_desc *d, int m, const void *a,
                            const float *a_scales, int a_scale_stride, const mgen_weights *w,
                            void *c, void *stream, const mgen__lease *lease) {
  return launch(ctx, d, m, a, a_scales, a_scale_stride, w, c, NULL, stream, lease);
}

static mgen_status launch(mgen_ctx *ctx, const mgen_kernel_desc *d, int m, const void *a,
                          const float *a_scales, int a_scale_stride, const mgen_weights *w,
                          void *c, const void *op_args, void *stream, const mgen__lease *lease) {
  if (d->launch == NULL)
    return mgen__fail(ctx, MGEN_ERR_NO_KERNEL, "%s has no launcher", d->name);
  mgen_launch_args args;
  memset(&args, 0, sizeof args);
  args.m = m;
  args.n = w->n;
  args.k = w->k;
  args.k_packed = (int)mgen__k_packed(w->k); /* fits: mgen__check_desc bounds n * k_packed */
  args.group = w->group;
  args.a = a;
  args.b = w->d_q;
  args.scales = w->d_scales;
  args.c = c;
  args.partials = lease->partials;
  args.counters = lease->counters;
  args.sm_count = ctx->sm_count;
  args.pdl = ctx->sm >= 90 && !ctx->plain_launches; /* griddepcontrol: sm_90 and later */
  args.op = d->op; /* the caller matched it: dense has no op_args, moe its route */
  args.op_args = op_args;
  args.a_scales = a_scales;
  args.a_scale_stride = a_scale_stride;
  args.bias = w->d_bias;
  cudaError_t err = (cudaError_t)d->launch(&args, stream);
  if (err != cudaSuccess) {
    (void)cudaGetLastError(); /* clear a non-sticky launch error */
    /* A stream of another device fails the launch (CUDA launches only into the current
     * device's streams): say so, instead of CUDA's "invalid resource handle". */
    const int owner = ctx->stream_device != NULL ? ctx->stream_device(stream) : -1;
    if (owner >= 0 && owner != ctx->device)
      return mgen__fail(ctx, MGEN_ERR_WRONG_DEVICE, "%s: stream %p belongs to device %d, the "
                        "context's is %d: pass a stream of device %d (CUDA: %s)", d->name, stream,
                        owner, ctx->device, ctx->device, cudaGetErrorName(err));
    return mgen__fail(ctx, MGEN_ERR_CUDA, "%s (m=%d n=%d k=%d): %s (%s)", d->name, m, w->n,
                      w->k, cudaGetErrorString(err), cudaGetErrorName(err));
  }
  return MGEN_OK;
}
