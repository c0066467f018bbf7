/* internal.h -- the context's layout and the error/log helpers shared by the runtime's C files.
 * Not installed; tests/runtime may include it to build contexts over fake tables.
 */
#ifndef MGEN_INTERNAL_H
#define MGEN_INTERNAL_H

#include <cuda_runtime_api.h>

#include "mgen/mgen.h"
#include "select.h"

#define MGEN_ERROR_SIZE 512

struct mgen_ctx {
  int device;             /* CUDA ordinal */
  int sm;                 /* 10*major + minor */
  int sm_count;           /* multiprocessors */
  const mgen_table *table;
  /* Cross-block reduction workspace (mgen_kernel.h), zeroed once at creation; every launch
   * leaves the counters zero again. Sized by mgen_kernel.h's rule for every kernel of the table. */
  float *partials;        /* 2 * sm_count * max(blocks_per_sm * tile_m * tile_n) floats */
  int *counters;          /* sm_count * max(blocks_per_sm) ints */
  mgen_log_fn log;
  void *log_user;
  char error[MGEN_ERROR_SIZE]; /* mgen_ctx_last_error() */
};

/* The generated table (mgen_table.c). */
extern const mgen_table mgen__builtin_table;

/* Formats the message of a failing call into ctx->error (ctx may be NULL) and returns
 * `status`, so that error paths read `return mgen__fail(ctx, MGEN_ERR_X, "...", ...)`. */
mgen_status mgen__fail(mgen_ctx *ctx, mgen_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Sends a message to the ctx's log callback, if any. */
void mgen__log(const mgen_ctx *ctx, mgen_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Status for a CUDA error: ERR_NO_MEMORY for allocation failures, else ERR_CUDA. */
mgen_status mgen__cuda_status(cudaError_t err);

/* Runs a CUDA call; on failure records "what: cudaGetErrorString (name)" in ctx, sets the
 * local `st` and jumps to the function's `out` label (one cleanup path). */
#define MGEN_CUDA_TRY(ctx, call)                                                            \
  do {                                                                                      \
    cudaError_t mgen_err_ = (call);                                                         \
    if (mgen_err_ != cudaSuccess) {                                                         \
      st = mgen__fail((ctx), mgen__cuda_status(mgen_err_), "%s: %s (%s)", #call,            \
                      cudaGetErrorString(mgen_err_), cudaGetErrorName(mgen_err_));          \
      goto out;                                                                             \
    }                                                                                       \
  } while (0)

/* Sets `st` to the result of an mgen call and jumps to `out` on failure. */
#define MGEN_TRY(expr)                                                                      \
  do {                                                                                      \
    st = (expr);                                                                            \
    if (st != MGEN_OK) goto out;                                                            \
  } while (0)

#endif /* MGEN_INTERNAL_H */
