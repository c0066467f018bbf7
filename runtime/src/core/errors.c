/* errors.c -- the per-thread last error (mgen__fail, mgen_ctx_last_error), the log callback
 * (mgen__log) and CUDA error statuses: errors.h. */
#include <stdarg.h>
#include <stdio.h>

#include "core/ctx.h"

/* The last error, per thread: a thread's message is never overwritten by another thread's
 * failure, and reading it needs no lock. It names the context it belongs to by the context's
 * serial number (never reused, unlike an address), so a message is never shown for a context
 * it does not belong to. */
static _Thread_local struct {
  unsigned long long ctx_serial;
  char message[MGEN_ERROR_SIZE];
} last_error;

/* A failed mgen_ctx_create's message: apart from the contexts' one, which a context's failing
 * call overwrites, so that mgen_ctx_last_error(NULL) still says why the thread has no context. */
static _Thread_local char create_error[MGEN_ERROR_SIZE];

void mgen__create_begin(void) { create_error[0] = '\0'; }

mgen_status mgen__create_failed(mgen_status status, const char *why) {
  snprintf(create_error, sizeof create_error, "mgen_ctx_create: %s%s%s", mgen_status_str(status),
           why != NULL ? ": " : "", why != NULL ? why : "");
  return status;
}

mgen_status mgen__fail(mgen_ctx *ctx, mgen_status status, const char *fmt, ...) {
  if (ctx != NULL) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error.message, sizeof last_error.message, fmt, ap);
    va_end(ap);
    last_error.ctx_serial = ctx->serial;
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

const char *mgen_ctx_last_error(const mgen_ctx *ctx) {
  if (ctx == NULL) return create_error[0] != '\0' ? create_error : "no context (mgen_ctx is NULL)";
  return last_error.ctx_serial == ctx->serial ? last_error.message : "";
}
