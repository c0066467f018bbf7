/* errors.h -- the runtime's error and logging helpers (errors.c): the per-thread last error
 * behind mgen_ctx_last_error, the log callback, CUDA error statuses and the one-cleanup-path
 * macros. Used by every runtime file from core/ up (LAYERS); errors.c reads the context's
 * layout (ctx.h) for the serial and log fields. */
#ifndef MGEN_ERRORS_H
#define MGEN_ERRORS_H

#include <cuda_runtime_api.h>

#include "mgen/mgen.h"

#define MGEN_ERROR_SIZE 512

/* Formats the message of a failing call into the calling thread's last error for ctx (ctx may
 * be NULL: no message kept) and returns `status`, so that error paths read
 * `return mgen__fail(ctx, MGEN_ERR_X, "...", ...)`. mgen_ctx_last_error reads it back. */
mgen_status mgen__fail(mgen_ctx *ctx, mgen_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The calling thread's last mgen_ctx_create failure, which mgen_ctx_last_error(NULL) reads
 * (a failed create leaves no context to hold it): "mgen_ctx_create: <mgen_status_str>: <why>",
 * or with why == NULL the status alone. Returns `status`. mgen__create_begin clears it. */
mgen_status mgen__create_failed(mgen_status status, const char *why);
void mgen__create_begin(void);

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

#endif /* MGEN_ERRORS_H */
