/* current_device.c -- mgen__check_device: the calling thread's current CUDA device against the
 * context's (ctx.h). */
#include "core/ctx.h"

/* The calling thread's current device (cudaGetDevice: a thread-local read, no driver call). */
int mgen__current_device(void) {
  int device = -1;
  return cudaGetDevice(&device) == cudaSuccess ? device : -1;
}

mgen_status mgen__check_device(mgen_ctx *ctx) {
  const int current = ctx->current_device != NULL ? ctx->current_device() : mgen__current_device();
  if (current == ctx->device) return MGEN_OK;
  return mgen__fail(ctx, MGEN_ERR_WRONG_DEVICE,
                    "the calling thread's current CUDA device is %d, the context's is %d: call "
                    "cudaSetDevice(%d) first (its kernels, workspaces and streams are there)",
                    current, ctx->device, ctx->device);
}
