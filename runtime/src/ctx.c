/* ctx.c -- mgen_ctx: device, table, reduction workspace, last error, log callback. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

mgen_status mgen__fail(mgen_ctx *ctx, mgen_status status, const char *fmt, ...) {
  if (ctx != NULL) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
    va_end(ap);
  }
  return status;
}

void mgen__log(const mgen_ctx *ctx, mgen_log_level level, const char *fmt, ...) {
  if (ctx == NULL || ctx->log == NULL) return;
  char message[MGEN_ERROR_SIZE];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  ctx->log(ctx->log_user, level, message);
}

mgen_status mgen__cuda_status(cudaError_t err) {
  return err == cudaErrorMemoryAllocation ? MGEN_ERR_NO_MEMORY : MGEN_ERR_CUDA;
}

/* Largest tile_m * tile_n in the table: the size of one block's partial-sum slot. */
/* Per SM, the largest partial-sum tile area and block count any kernel of the table uses. */
static void workspace_per_sm(const mgen_table *table, size_t *tile_elems, size_t *blocks) {
  *tile_elems = 1;
  *blocks = 1;
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    const size_t per_block = d->blocks_per_sm > 0 ? (size_t)d->blocks_per_sm : 1;
    const size_t elems = per_block * (size_t)(d->tile_m > 0 ? d->tile_m : 0) *
                         (size_t)(d->tile_n > 0 ? d->tile_n : 0);
    if (elems > *tile_elems) *tile_elems = elems;
    if (per_block > *blocks) *blocks = per_block;
  }
}

/* Calls prepare() of every kernel this device runs (cudaFuncSetAttribute and the like,
 * which act on the current device). */
static mgen_status prepare_kernels(mgen_ctx *ctx, int *runnable) {
  *runnable = 0;
  for (size_t i = 0; i < ctx->table->count; i++) {
    const mgen_kernel_desc *d = &ctx->table->kernels[i];
    if (d->min_sm > ctx->sm) continue;
    ++*runnable;
    if (d->prepare == NULL) continue;
    cudaError_t err = (cudaError_t)d->prepare();
    if (err != cudaSuccess) {
      (void)cudaGetLastError(); /* clear a non-sticky error */
      return mgen__fail(ctx, mgen__cuda_status(err), "%s_prepare: %s (%s)",
                        d->name ? d->name : "?", cudaGetErrorString(err), cudaGetErrorName(err));
    }
  }
  return MGEN_OK;
}

mgen_status mgen_ctx_create(mgen_ctx **out, const mgen_table *table, const mgen_ctx_opts *opts) {
  if (out == NULL || table == NULL) return MGEN_ERR_NULL_POINTER;
  if (table->count > 0 && table->kernels == NULL) return MGEN_ERR_INVALID_ARG;

  mgen_status st = MGEN_OK;
  int previous = -1, major = 0, minor = 0, count = 0, runnable = 0;
  size_t partial_bytes = 0, counter_bytes = 0, tile_elems = 0, blocks = 0;
  mgen_ctx *ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL) return MGEN_ERR_NO_MEMORY;
  ctx->table = table;
  ctx->device = opts != NULL ? opts->device : -1;
  ctx->log = opts != NULL ? opts->log : NULL;
  ctx->log_user = opts != NULL ? opts->log_user : NULL;

  MGEN_CUDA_TRY(ctx, cudaGetDevice(&previous));
  MGEN_CUDA_TRY(ctx, cudaGetDeviceCount(&count));
  if (ctx->device == -1) ctx->device = previous;
  if (ctx->device < 0 || ctx->device >= count) {
    st = mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "device %d does not exist (%d device(s))",
                    ctx->device, count);
    goto out;
  }
  if (ctx->device != previous) MGEN_CUDA_TRY(ctx, cudaSetDevice(ctx->device));
  MGEN_CUDA_TRY(ctx, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ctx->device));
  MGEN_CUDA_TRY(ctx, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ctx->device));
  MGEN_CUDA_TRY(ctx, cudaDeviceGetAttribute(&ctx->sm_count, cudaDevAttrMultiProcessorCount, ctx->device));
  ctx->sm = 10 * major + minor;

  MGEN_TRY(prepare_kernels(ctx, &runnable));
  if (runnable == 0) {
    st = mgen__fail(ctx, MGEN_ERR_NO_KERNEL, "none of the %zu kernel(s) of %s runs on sm_%d",
                    table->count, table->generator ? table->generator : "the table", ctx->sm);
    goto out;
  }

  /* The workspace promised by mgen_kernel.h, zeroed once; kernels leave it zero again. */
  workspace_per_sm(table, &tile_elems, &blocks);
  partial_bytes = 2 * (size_t)ctx->sm_count * tile_elems * sizeof(float);
  counter_bytes = (size_t)ctx->sm_count * blocks * sizeof(int);
  MGEN_CUDA_TRY(ctx, cudaMalloc((void **)&ctx->partials, partial_bytes));
  MGEN_CUDA_TRY(ctx, cudaMalloc((void **)&ctx->counters, counter_bytes));
  MGEN_CUDA_TRY(ctx, cudaMemset(ctx->partials, 0, partial_bytes));
  MGEN_CUDA_TRY(ctx, cudaMemset(ctx->counters, 0, counter_bytes));
  /* cudaMemset may return before the device is done; GEMMs may run on any stream. */
  MGEN_CUDA_TRY(ctx, cudaDeviceSynchronize());
  mgen__log(ctx, MGEN_LOG_INFO,
            "mgen: device %d sm_%d, %d SMs, %d of %zu kernels runnable, workspace %zu bytes",
            ctx->device, ctx->sm, ctx->sm_count, runnable, table->count,
            partial_bytes + counter_bytes);

out:
  if (previous >= 0 && ctx->device != previous) (void)cudaSetDevice(previous);
  if (st != MGEN_OK) {
    mgen__log(ctx, MGEN_LOG_WARN, "mgen_ctx_create: %s: %s", mgen_status_str(st), ctx->error);
    mgen_ctx_destroy(ctx);
    return st;
  }
  *out = ctx;
  return MGEN_OK;
}

void mgen_ctx_destroy(mgen_ctx *ctx) {
  if (ctx == NULL) return;
  /* cudaFree acts on the allocation's device whatever the current one is. */
  if (ctx->partials != NULL) (void)cudaFree(ctx->partials);
  if (ctx->counters != NULL) (void)cudaFree(ctx->counters);
  free(ctx);
}

const char *mgen_ctx_last_error(const mgen_ctx *ctx) {
  return ctx != NULL ? ctx->error : "no context (mgen_ctx is NULL)";
}

int mgen_ctx_sm(const mgen_ctx *ctx) { return ctx != NULL ? ctx->sm : 0; }
