/* no_gpu_timer.c -- link stand-ins for tune_timer.c's GPU timer and capture query, which
 * ctx.c installs and which need the kernels: the fuzz targets that build contexts tune
 * nothing (a call would be a bug, answered with an error). */
#include "context/internal.h"

mgen_status mgen__gpu_timer(mgen_ctx *ctx, const mgen__tune_problem *p, double *us) {
  (void)ctx, (void)p, (void)us;
  return MGEN_ERR_CUDA;
}

int mgen__gpu_capturing(mgen_ctx *ctx, void *stream, cudaError_t *err) {
  (void)ctx, (void)stream;
  *err = cudaErrorNotSupported;
  return -1;
}
