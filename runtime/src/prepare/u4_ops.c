/* u4_ops.c -- the u4 weight format's GPU hooks (format_ops.h): quantize and pack
 * (prepare_u4.cu) of asymmetric int4 weights as a checkpoint's tensors unpack to: codes 0..15
 * one per byte (the unsigned q), (k/group or 1) x n scales of the activation type and as many
 * zero points 0..15, one per byte. The int4 checkpoint imports (AWQ, GPTQ sym=false,
 * compressed-tensors asymmetric) are prepare/import.*'s.
 */
#include <stdio.h>

#include "prepare/format_ops.h"
#include "prepare/weights.h"
#include "formats/formats.h"
#include "prepare/prepare.h"
#include "prepare/prepare_u4.h"

static int quantize(const mgen_weights *w, const void *d_w, void *stream) {
  return mgen__quantize_u4(d_w, (int)w->act, mgen__layout_resolve((int)w->wfmt, (int)w->layout),
                           w->n, w->k, w->group, w->d_q, w->d_scales, stream);
}

/* The zero points and the sizes, where the call passes them (mgen_pack_weights does): n x k
 * code bytes, rows x n scales of the activation type, rows x n zero bytes. */
static mgen_status check_args(mgen_ctx *ctx, const mgen__pack_src *src, const mgen_weights *w) {
  const char *zeros_name = src->zeros_name != NULL ? src->zeros_name : "zeros";
  if (src->zeros == NULL)
    return mgen__fail(ctx, MGEN_ERR_NULL_POINTER,
                      "%s is NULL: u4 weights need their zero points, k/group (1 per channel) x "
                      "n bytes of 0..15", zeros_name);
  mgen_status st = mgen__check_pack_sizes(ctx, src, w, "u4");
  if (st != MGEN_OK || src->codes_bytes_name == NULL) return st;
  const size_t rows = (size_t)(w->group == MGEN_GROUP_CHANNEL ? 1 : w->k / w->group);
  const size_t want_zeros = rows * (size_t)w->n;
  if (src->zeros_bytes != want_zeros)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "%s=%zu: k/group (1 per channel) = %zu x n=%d zero points, one per byte, "
                      "is %zu bytes", src->zeros_bytes_name != NULL ? src->zeros_bytes_name
                                                                    : "zeros_bytes",
                      src->zeros_bytes, rows, w->n, want_zeros);
  return MGEN_OK;
}

/* The zero points checked on the GPU as the codes are (0..15), with w->d_q as scratch (the
 * capture check ran in mgen__check_pack_values): *first the first bad one (all ones: none). */
static mgen_status check_zeros(mgen_ctx *ctx, const mgen__pack_src *src, const mgen_weights *w,
                               void *stream, unsigned long long *first) {
  const mgen__pack_inputs in = {
      .codes = src->zeros,
      .ncodes = (long long)(w->group == MGEN_GROUP_CHANNEL ? 1 : w->k / w->group) * w->n};
  unsigned long long found[2];
  char what[64];
  snprintf(what, sizeof what, "%s: input check", src->call);
  mgen_status st = mgen__launched(ctx, what, mgen__check_pack_inputs(&in, w->d_q, stream, found));
  if (st == MGEN_OK) *first = found[0];
  return st;
}

static mgen_status pack(mgen_ctx *ctx, const mgen__pack_src *src, mgen_weights *w, void *stream) {
  mgen_status st = check_args(ctx, src, w);
  unsigned long long zero = ~0ULL;
  if (st != MGEN_OK || (st = mgen__check_codes_scales(ctx, src, w, "u4", stream)) != MGEN_OK ||
      (st = check_zeros(ctx, src, w, stream, &zero)) != MGEN_OK)
    return st;
  if (zero != ~0ULL)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "%s[%llu] (scale row %llu, column %llu) is above 15: u4 zero points are "
                      "0..15, one per byte", src->zeros_name, zero, zero / (unsigned)w->n,
                      zero % (unsigned)w->n);
  return mgen__launched(ctx, src->call,
                        mgen__pack_u4(src->codes, src->scales, src->zeros, (int)w->act,
                                      mgen__layout_resolve((int)w->wfmt, (int)w->layout), w->n,
                                      w->k, w->group, w->d_q, w->d_scales, stream));
}

const mgen__format_ops mgen__format_ops_u4 = {
    .wfmt = MGEN_WFMT_U4,
    .quantize = quantize,
    .pack = pack,
    .import_int4 = mgen__int4_import_u4, /* AWQ, GPTQ sym=false, compressed-tensors asym: prepare/import.* */
    .inputs = "u4 codes, scales and zero points",
    .legacy_pack = NULL, /* mgen_pack_weights only */
};
