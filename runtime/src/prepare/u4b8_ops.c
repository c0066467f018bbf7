/* u4b8_ops.c -- the u4b8 weight format's GPU hooks (format_ops.h): quantize (prepare.cu), pack
 * codes and scales (one code 0..15 per byte, (k/group or 1) x n scales of the activation
 * type), and the int4 checkpoint import (prepare/import.cu).
 */
#include <stdio.h>

#include "prepare/format_ops.h"
#include "prepare/weights.h"
#include "formats/formats.h"
#include "prepare/prepare.h"

static int quantize(const mgen_weights *w, const void *d_w, void *stream) {
  return mgen__quantize_u4b8(d_w, (int)w->act, w->n, w->k, w->group, w->d_q, w->d_scales, stream);
}

/* Sizes, where the call passes them: n x k code bytes, rows x n scales of the activation type. */
static mgen_status check_sizes(mgen_ctx *ctx, const mgen__pack_src *src, const mgen_weights *w) {
  if (src->codes_bytes_name == NULL) return MGEN_OK;
  const size_t rows = (size_t)(w->group == MGEN_GROUP_CHANNEL ? 1 : w->k / w->group);
  const size_t bytes = (size_t)mgen__scheme_scale_bytes((int)w->scheme, (int)w->act);
  const size_t want_codes = (size_t)w->n * (size_t)w->k, want_scales = rows * (size_t)w->n * bytes;
  if (src->codes_bytes != want_codes)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "%s=%zu: an n=%d x k=%d u4b8 weight, one code per byte, is %zu bytes",
                      src->codes_bytes_name, src->codes_bytes, w->n, w->k, want_codes);
  if (src->scales_bytes != want_scales)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "%s=%zu: k/group (1 per channel) = %zu x n=%d scales of %zu bytes (%s) "
                      "is %zu bytes", src->scales_bytes_name, src->scales_bytes, rows, w->n,
                      bytes, mgen__act_name((int)w->act), want_scales);
  return MGEN_OK;
}

static mgen_status pack(mgen_ctx *ctx, const mgen__pack_src *src, mgen_weights *w, void *stream) {
  mgen_status st = check_sizes(ctx, src, w);
  if (st != MGEN_OK) return st;
  if (mgen__misaligned(src->scales, 2))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "%s=%p is not 2-byte aligned", src->scales_name,
                      src->scales);
  if ((st = mgen__check_device(ctx)) != MGEN_OK) return st;
  unsigned long long first[2];
  if ((st = mgen__check_pack_values(ctx, src->call, w, src->codes, (long long)w->n * w->k,
                                    src->scales, stream, first)) != MGEN_OK)
    return st;
  if ((st = mgen__pack_values_refused(ctx, src, w, "u4b8", first)) != MGEN_OK) return st;
  return mgen__launched(ctx, src->call,
                        mgen__pack_u4b8(src->codes, src->scales, (int)w->act, w->n, w->k, w->group,
                                        w->d_q, w->d_scales, stream));
}

const mgen__format_ops mgen__format_ops_u4b8 = {
    .wfmt = MGEN_WFMT_U4B8,
    .quantize = quantize,
    .pack = pack,
    .import_int4 = mgen__int4_import,
    .inputs = "u4b8 codes and scales",
    .legacy_pack = "mgen_pack",
};
