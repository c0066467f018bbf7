/* weights.c -- packed weight buffers: their sizes, and quantize/pack on the GPU (prepare.cu).
 * The index math of the layout lives in layout.h; this file only checks and dispatches.
 */
#include <limits.h>
#include <stdint.h>

#include "internal.h"
#include "prepare.h"

/* Group sizes the packed layout is defined for (mgen.h), besides MGEN_GROUP_CHANNEL. */
static const int supported_groups[] = {32, 64, 128};

/* Checks the description of `w` (not its buffers); ctx may be NULL (no message kept). */
static mgen_status check_desc(mgen_ctx *ctx, const mgen_weights *w) {
  if (w == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "w is NULL");
  if (w->act != MGEN_ACT_F16 && w->act != MGEN_ACT_BF16)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "w->act=%d is not an mgen_act", (int)w->act);
  if (w->wfmt == MGEN_WFMT_FE2M1)
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT, "w->wfmt=fe2m1 is not implemented yet");
  if (w->wfmt != MGEN_WFMT_U4B8)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "w->wfmt=%d is not an mgen_wfmt", (int)w->wfmt);
  if (w->group < 0)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "w->group=%d is negative", w->group);
  if (w->group != MGEN_GROUP_CHANNEL) {
    int known = 0;
    for (size_t i = 0; i < sizeof supported_groups / sizeof supported_groups[0]; i++)
      known |= w->group == supported_groups[i];
    if (!known)
      return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                        "w->group=%d: groups are 32, 64, 128 or 0 (per channel)", w->group);
  }
  if (w->n < 64 || w->n % 64 != 0 || w->k < 64 || w->k % 64 != 0)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "w->n=%d, w->k=%d: both must be positive multiples of 64", w->n, w->k);
  if (w->group != MGEN_GROUP_CHANNEL && w->k % w->group != 0)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "w->k=%d is not a multiple of w->group=%d",
                      w->k, w->group);
  if ((long long)w->n * w->k / 8 > INT_MAX)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "w->n=%d x w->k=%d: too many packed words",
                      w->n, w->k);
  return MGEN_OK;
}

mgen_status mgen_weights_bytes(const mgen_weights *w, size_t *qbytes, size_t *sbytes) {
  if (qbytes == NULL || sbytes == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st = check_desc(NULL, w);
  if (st != MGEN_OK) return st;
  size_t rows = w->group == MGEN_GROUP_CHANNEL ? 1 : (size_t)(w->k / w->group);
  *qbytes = (size_t)w->n * (size_t)w->k / 2;
  *sbytes = rows * (size_t)w->n * 2;
  return MGEN_OK;
}

static int misaligned(const void *p, uintptr_t align) { return ((uintptr_t)p & (align - 1)) != 0; }

/* Checks shared by quantize and pack: description and the packed output buffers. */
static mgen_status check_outputs(mgen_ctx *ctx, const mgen_weights *w) {
  mgen_status st = check_desc(ctx, w);
  if (st != MGEN_OK) return st;
  if (w->d_q == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "w->d_q is NULL");
  if (w->d_scales == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "w->d_scales is NULL");
  if (misaligned(w->d_q, 16))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "w->d_q=%p is not 16-byte aligned", w->d_q);
  if (misaligned(w->d_scales, 16))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "w->d_scales=%p is not 16-byte aligned",
                      w->d_scales);
  return MGEN_OK;
}

static mgen_status launched(mgen_ctx *ctx, const char *what, int err) {
  if (err == 0) return MGEN_OK;
  return mgen__fail(ctx, mgen__cuda_status((cudaError_t)err), "%s: %s (%s)", what,
                    cudaGetErrorString((cudaError_t)err), cudaGetErrorName((cudaError_t)err));
}

mgen_status mgen_quantize(mgen_ctx *ctx, const void *d_w, mgen_weights *w, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st = check_outputs(ctx, w);
  if (st != MGEN_OK) return st;
  if (d_w == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_w is NULL");
  if (misaligned(d_w, 2))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_w=%p is not 2-byte aligned", d_w);
  if (w->act != MGEN_ACT_F16)
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "mgen_quantize reads FP16 weights and writes FP16 scales (w->act=f16)");
  return launched(ctx, "mgen_quantize",
                  mgen__quantize_u4b8(d_w, w->n, w->k, w->group, w->d_q, w->d_scales, stream));
}

mgen_status mgen_pack(mgen_ctx *ctx, const uint8_t *d_codes, const void *d_scales,
                      mgen_weights *w, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st = check_outputs(ctx, w);
  if (st != MGEN_OK) return st;
  if (d_codes == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_codes is NULL");
  if (d_scales == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_scales is NULL");
  if (misaligned(d_scales, 2))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_scales=%p is not 2-byte aligned", d_scales);
  return launched(ctx, "mgen_pack",
                  mgen__pack_u4b8(d_codes, d_scales, w->n, w->k, w->group, w->d_q, w->d_scales,
                                  stream));
}
