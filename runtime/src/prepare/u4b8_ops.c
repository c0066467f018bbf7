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
  return mgen__quantize_u4b8(d_w, (int)w->act, mgen__layout_resolve((int)w->wfmt, (int)w->layout),
                             w->n, w->k, w->group, w->d_q, w->d_scales, stream);
}

static mgen_status pack(mgen_ctx *ctx, const mgen__pack_src *src, mgen_weights *w, void *stream) {
  mgen_status st = mgen__check_pack_sizes(ctx, src, w, "u4b8");
  if (st != MGEN_OK || (st = mgen__check_codes_scales(ctx, src, w, "u4b8", stream)) != MGEN_OK)
    return st;
  return mgen__launched(ctx, src->call,
                        mgen__pack_u4b8(src->codes, src->scales, (int)w->act,
                                        mgen__layout_resolve((int)w->wfmt, (int)w->layout), w->n,
                                        w->k, w->group, w->d_q, w->d_scales, stream));
}

const mgen__format_ops mgen__format_ops_u4b8 = {
    .wfmt = MGEN_WFMT_U4B8,
    .quantize = quantize,
    .pack = pack,
    .import_int4 = mgen__int4_import,
    .inputs = "u4b8 codes and scales",
    .legacy_pack = "mgen_pack",
};
