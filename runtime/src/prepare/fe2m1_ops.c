/* fe2m1_ops.c -- the fe2m1 weight format's GPU hooks (format_ops.h): quantize and pack
 * (prepare_fe2m1.cu) of NVFP4 / MXFP4 checkpoints as stored: n x k/2 bytes of E2M1 pairs,
 * n x k/group block scale bytes (E4M3 or E8M0), NVFP4's FP32 global scale. No int4 import.
 */
#include <math.h>
#include <stdio.h>

#include "prepare/format_ops.h"
#include "prepare/weights.h"
#include "formats/formats.h"
#include "prepare/prepare_fe2m1.h"

static int quantize(const mgen_weights *w, const void *d_w, void *stream) {
  return mgen__quantize_fe2m1((int)w->act, (int)w->scheme, mgen__layout_resolve((int)w->wfmt, (int)w->layout),
                              d_w, w->n, w->k, w->d_q, w->d_scales, stream);
}

/* The sizes (every call that packs fe2m1 passes them) and the global scale; on OK, the column
 * factor the kernels multiply by (0 for MXFP4: its factors come from the scales). */
static mgen_status check_args(mgen_ctx *ctx, const mgen__pack_src *src, const mgen_weights *w,
                              float *column_factor) {
  const size_t want_packed = (size_t)w->n * (size_t)w->k / 2;
  const size_t want_scales = (size_t)w->n * (size_t)(w->k / w->group);
  if (src->codes_bytes_name == NULL || src->codes_bytes != want_packed)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "%s=%zu: an n=%d x k=%d FP4 weight, two codes per byte, is %zu bytes",
                      src->codes_bytes_name != NULL ? src->codes_bytes_name : "codes_bytes",
                      src->codes_bytes, w->n, w->k, want_packed);
  if (src->scales_bytes != want_scales)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "%s=%zu: %s has one %s scale per %d K elements, n=%d x k/%d = %zu bytes",
                      src->scales_bytes_name, src->scales_bytes, mgen__scheme_name((int)w->scheme),
                      mgen__scheme_storage((int)w->scheme), w->group, w->n, w->group, want_scales);
  *column_factor = 0.0f;
  if (mgen__scheme_global_scale((int)w->scheme)) {
    const float g = src->global_scale;
    if (!(isfinite(g) && g > 0.0f))
      return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                        "global_scale=%g: NVFP4's global scale must be finite and positive",
                        (double)g);
    *column_factor = g * 128.0f; /* the kernels' 16-bit weights are e2m1 * s * 2^-7 */
    if (!isfinite(*column_factor))
      return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                        "global_scale=%g: too large (global_scale * 2^7, the kernels' column "
                        "factor, overflows FP32)", (double)g);
  }
  return MGEN_OK;
}

static mgen_status pack(mgen_ctx *ctx, const mgen__pack_src *src, mgen_weights *w, void *stream) {
  float column_factor = 0.0f;
  mgen_status st = check_args(ctx, src, w, &column_factor);
  if (st != MGEN_OK) return st;
  if ((st = mgen__check_device(ctx)) != MGEN_OK) return st;
  /* A NaN block scale (E4M3 0x7f/0xff, E8M0 0xff) makes every output of its column NaN. */
  unsigned long long first[2];
  if ((st = mgen__check_pack_values(ctx, src->call, w, NULL, 0, src->scales, stream, first)) !=
      MGEN_OK)
    return st;
  if (first[1] != ~0ULL) {
    const unsigned long long groups = (unsigned)(w->k / w->group);
    char storage[16];
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "%s[%llu] (column n=%llu, block %llu along k) is an %s NaN: every output "
                      "of its column would be NaN", src->scales_name, first[1], first[1] / groups,
                      first[1] % groups,
                      mgen__upper(mgen__scheme_storage((int)w->scheme), storage, sizeof storage));
  }
  return mgen__launched(ctx, src->call,
                        mgen__pack_fe2m1((int)w->act, (int)w->scheme,
                                         mgen__layout_resolve((int)w->wfmt, (int)w->layout), src->codes,
                                         src->scales, column_factor, w->n, w->k, w->d_q, w->d_scales,
                                         stream));
}

const mgen__format_ops mgen__format_ops_fe2m1 = {
    .wfmt = MGEN_WFMT_FE2M1,
    .quantize = quantize,
    .pack = pack,
    .import_int4 = NULL, /* FP4 checkpoints are stored packed: pack them */
    .inputs = "fe2m1 (NVFP4, MXFP4) checkpoints",
    .legacy_pack = "mgen_pack_fp4",
};
