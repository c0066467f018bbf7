/* ctx.c -- mgen_ctx: device, table, identity, workspaces, cache (the last error and the log
 * callback are errors.c's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/device_probe.h"
#include "context/internal.h"
#include "families/family.h"

#define INITIAL_CACHE_SLOTS 1024 /* mgen_gemm remembers defaults only while these last */

static unsigned long long serial_counter; /* read and bumped with __atomic builtins */

mgen_status mgen__ctx_init_host(mgen_ctx *ctx) {
  if (ctx->host_ready) return MGEN_OK;
  ctx->serial = __atomic_add_fetch(&serial_counter, 1, __ATOMIC_RELAXED);
  if (ctx->current_device == NULL) ctx->current_device = mgen__current_device;
  if (ctx->stream_device == NULL) ctx->stream_device = mgen__stream_device;
  if (ctx->model.sm == 0) ctx->model.sm = ctx->sm; /* contexts built by hand */
  if (ctx->model.sm_count == 0) ctx->model.sm_count = ctx->sm_count;
  if (ctx->tune_reps <= 0) ctx->tune_reps = MGEN__DEFAULT_TUNE_REPS;
  if (ctx->timer == NULL) ctx->timer = mgen__gpu_timer;
  if (ctx->capturing == NULL) ctx->capturing = mgen__gpu_capturing;
  if (mgen__cache_init(&ctx->cache, INITIAL_CACHE_SLOTS) != MGEN_OK) return MGEN_ERR_NO_MEMORY;
  int made = 0;
  if (pthread_mutex_init(&ctx->lock, NULL) == 0) made++;
  if (made == 1 && pthread_mutex_init(&ctx->tune_lock, NULL) == 0) made++;
  if (made < 2) {
    if (made > 0) pthread_mutex_destroy(&ctx->lock);
    mgen__cache_free(&ctx->cache);
    return MGEN_ERR_NO_MEMORY;
  }
  ctx->host_ready = 1;
  return MGEN_OK;
}

void mgen__ctx_free_host(mgen_ctx *ctx) {
  if (!ctx->host_ready) return;
  mgen__cache_free(&ctx->cache);
  pthread_mutex_destroy(&ctx->lock);
  pthread_mutex_destroy(&ctx->tune_lock);
  ctx->host_ready = 0;
}

/* Calls prepare() of every kernel this device runs (cudaFuncSetAttribute and the like,
 * which act on the current device). */
static mgen_status prepare_kernels(mgen_ctx *ctx, int *runnable) {
  *runnable = 0;
  for (size_t i = 0; i < ctx->table->count; i++) {
    const mgen_kernel_desc *d = &ctx->table->kernels[i];
    if (!mgen__kernel_runs(d, ctx->sm)) continue;
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

/* The device as the cost model and cache files see it. */
static mgen_status describe_device(mgen_ctx *ctx) {
  mgen_status st = MGEN_OK;
  struct cudaDeviceProp prop;
  int clock_khz = 0, mem_khz = 0, bus_bits = 0, l2 = 0;
  MGEN_CUDA_TRY(ctx, cudaGetDeviceProperties(&prop, ctx->device));
  snprintf(ctx->device_name, sizeof ctx->device_name, "%s", prop.name);
  for (char *c = ctx->device_name; *c != '\0'; c++)
    if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e) *c = '?'; /* one header line */
  MGEN_CUDA_TRY(ctx, cudaRuntimeGetVersion(&ctx->cuda_runtime));
  MGEN_CUDA_TRY(ctx, cudaDriverGetVersion(&ctx->cuda_driver));
  /* Clocks and bus width may be unavailable on some platforms: the model then uses its
   * per-architecture defaults (zero fields). */
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, ctx->device) != cudaSuccess ||
      cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, ctx->device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, ctx->device) != cudaSuccess ||
      cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, ctx->device) != cudaSuccess) {
    (void)cudaGetLastError();
    clock_khz = mem_khz = bus_bits = l2 = 0;
  }
  ctx->model = mgen__device_model(ctx->sm, ctx->sm_count, clock_khz, mem_khz, bus_bits, l2);
out:
  return st;
}

/* The first CUDA call failed: say why as device_probe.c does. Without a driver the runtime
 * reports cudaErrorInsufficientDriver ("CUDA driver version is insufficient"), which reads as
 * "update the driver" on a machine that has none. */
static mgen_status cuda_unavailable(mgen_ctx *ctx, const char *call, cudaError_t err) {
  char why[256];
  int count = 0;
  if (mgen__device_probe(&count, why, sizeof why) != MGEN__PROBE_DEVICE)
    return mgen__fail(ctx, MGEN_ERR_CUDA, "%s (%s: %s)", why, call, cudaGetErrorName(err));
  return mgen__fail(ctx, mgen__cuda_status(err), "%s: %s (%s)", call, cudaGetErrorString(err),
                    cudaGetErrorName(err));
}

mgen_status mgen_ctx_create(mgen_ctx **out, const mgen_table *table, const mgen_ctx_opts *opts) {
  mgen__create_begin();
  if (out == NULL || table == NULL)
    return mgen__create_failed(MGEN_ERR_NULL_POINTER,
                               out == NULL ? "out is NULL" : "table is NULL");
  if (table->count > 0 && table->kernels == NULL)
    return mgen__create_failed(MGEN_ERR_INVALID_ARG, "table->kernels is NULL with count > 0");

  mgen_status st = MGEN_OK;
  int previous = -1, major = 0, minor = 0, count = 0, runnable = 0;
  mgen_ctx *ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL) return mgen__create_failed(MGEN_ERR_NO_MEMORY, "no host memory for a context");
  ctx->table = table;
  ctx->device = opts != NULL ? opts->device : -1;
  ctx->log = opts != NULL ? opts->log : NULL;
  ctx->log_user = opts != NULL ? opts->log_user : NULL;
  ctx->plain_launches = opts != NULL && opts->plain_launches != 0;
  const int eager = opts != NULL && opts->max_workspaces != 0 ? opts->max_workspaces
                                                              : MGEN__WORKSPACES;
  const int max_sms = opts != NULL ? opts->max_sms : 0;
  if (eager < 1 || eager > MGEN__WORKSPACES || max_sms < 0) {
    free(ctx);
    char why[96]; /* before any CUDA call */
    if (eager < 1 || eager > MGEN__WORKSPACES)
      snprintf(why, sizeof why, "opts->max_workspaces=%d: 0 (default) to %d", eager,
               MGEN__WORKSPACES);
    else
      snprintf(why, sizeof why, "opts->max_sms=%d: 0 (all) or more", max_sms);
    return mgen__create_failed(MGEN_ERR_INVALID_ARG, why);
  }
  if (mgen__ctx_init_host(ctx) != MGEN_OK) {
    free(ctx);
    return mgen__create_failed(MGEN_ERR_NO_MEMORY, "no host memory for the context's cache");
  }

  cudaError_t err = cudaGetDevice(&previous);
  const char *call = "cudaGetDevice";
  if (err == cudaSuccess) err = cudaGetDeviceCount(&count), call = "cudaGetDeviceCount";
  if (err != cudaSuccess) {
    st = cuda_unavailable(ctx, call, err);
    goto out;
  }
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
  const int device_sms = ctx->sm_count;
  if (max_sms > 0 && max_sms < ctx->sm_count) ctx->sm_count = max_sms; /* before the model */
  ctx->sm = 10 * major + minor;
  MGEN_TRY(describe_device(ctx));

  MGEN_TRY(prepare_kernels(ctx, &runnable));
  if (runnable == 0) {
    st = mgen__fail(ctx, MGEN_ERR_NO_KERNEL, "none of the %zu kernel(s) of %s runs on sm_%d",
                    table->count, table->generator ? table->generator : "the table", ctx->sm);
    goto out;
  }

  /* The first workspace, zeroed (kernels leave it zero again); more come per stream. */
  MGEN_TRY(mgen__pool_init(ctx, eager));
  mgen__log(ctx, MGEN_LOG_INFO,
            "mgen: device %d (%s) sm_%d, %d of %d SMs, %d of %zu kernels runnable, workspace %zu "
            "bytes per stream, at most %d for eager streams + %d for streams capturing graphs",
            ctx->device, ctx->device_name, ctx->sm, ctx->sm_count, device_sms, runnable, table->count,
            ctx->pool.partial_bytes + ctx->pool.counter_bytes, eager, eager);

out:
  if (previous >= 0 && ctx->device != previous) (void)cudaSetDevice(previous);
  if (st != MGEN_OK) {
    mgen__log(ctx, MGEN_LOG_WARN, "mgen_ctx_create: %s: %s", mgen_status_str(st),
              mgen_ctx_last_error(ctx));
    const char *why = mgen_ctx_last_error(ctx);
    mgen__create_failed(st, why[0] != '\0' ? why : NULL);
    mgen_ctx_destroy(ctx);
    return st;
  }
  *out = ctx;
  return MGEN_OK;
}

mgen_status mgen_ctx_set_tune(mgen_ctx *ctx, mgen_tune_policy policy, int reps) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  if (policy != MGEN_TUNE_NEVER && policy != MGEN_TUNE_ON_MISS)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "policy %d is not an mgen_tune_policy", (int)policy);
  if (reps < 0 || reps > 10000)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "reps=%d: 0 (default) to 10000", reps);
  ctx->tune_policy = (int)policy;
  ctx->tune_reps = reps > 0 ? reps : MGEN__DEFAULT_TUNE_REPS;
  return MGEN_OK;
}

void mgen_ctx_destroy(mgen_ctx *ctx) {
  if (ctx == NULL) return;
  mgen__pool_free(ctx);
  mgen__ctx_free_host(ctx);
  free(ctx);
}

int mgen_ctx_sm(const mgen_ctx *ctx) { return ctx != NULL ? ctx->sm : 0; }
