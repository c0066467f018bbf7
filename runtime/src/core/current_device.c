/* current_device.c -- mgen__check_device: the calling thread's current CUDA device against the
 * context's; mgen__stream_device: the device of a stream, for a failed launch's message (ctx.h). */
#include "core/ctx.h"

/* The calling thread's current device (cudaGetDevice: a thread-local read, no driver call). */
int mgen__current_device(void) {
  int device = -1;
  return cudaGetDevice(&device) == cudaSuccess ? device : -1;
}

int mgen__stream_device(void *stream) {
#if CUDART_VERSION >= 13000
  int device = -1;
  if (stream == NULL || stream == (void *)cudaStreamLegacy || stream == (void *)cudaStreamPerThread)
    return -1; /* the current device's: mgen__check_device has checked that */
  if (cudaStreamGetDevice((cudaStream_t)stream, &device) != cudaSuccess) {
    (void)cudaGetLastError();
    return -1;
  }
  return device;
#else
  (void)stream;
  return -1;
#endif
}

mgen_status mgen__check_device(mgen_ctx *ctx) {
  const int current = ctx->current_device != NULL ? ctx->current_device() : mgen__current_device();
  if (current == ctx->device) return MGEN_OK;
  return mgen__fail(ctx, MGEN_ERR_WRONG_DEVICE,
                    "the calling thread's current CUDA device is %d, the context's is %d: call "
                    "cudaSetDevice(%d) first (its kernels, workspaces and streams are there)",
                    current, ctx->device, ctx->device);
}
