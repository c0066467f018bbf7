/* weights.c -- packed weight buffers: their sizes, their checks (by formats.h's rules), and
 * quantize/pack on the GPU (prepare.cu for u4b8, prepare_fe2m1.cu for fe2m1). The index math
 * of the layout lives in layout.h; this file only checks and dispatches.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>

#include "core/ctx.h"
#include "dispatch/shape_rule.h"
#include "formats/formats.h"
#include "formats/layout.h"
#include "prepare/prepare.h"
#include "prepare/prepare_fe2m1.h"
#include "prepare/weights.h"

/* An enumerator's suffix from a table name: "nvfp4" -> "NVFP4" (MGEN_SCHEME_NVFP4). */
static const char *upper(const char *name, char *buf, size_t size) {
  size_t j = 0;
  for (; name[j] != '\0' && j + 1 < size; j++)
    buf[j] = (char)(name[j] >= 'a' && name[j] <= 'z' ? name[j] - 'a' + 'A' : name[j]);
  buf[j] = '\0';
  return buf;
}

/* The schemes of `wfmt` as "MGEN_SCHEME_NVFP4 (group 16) or MGEN_SCHEME_MXFP4 (group 32)". */
static void schemes_text(int wfmt, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0, w, scheme, g, last = -1; mgen__format_at(i, &w, &scheme, &g) && used < size; i++) {
    if (w != wfmt || scheme == last) continue;
    char groups[64], id[16];
    mgen__scheme_groups_text(scheme, groups, sizeof groups);
    used += (size_t)snprintf(buf + used, size - used, "%sMGEN_SCHEME_%s (group %s)",
                             last >= 0 ? " or " : "",
                             upper(mgen__scheme_name(scheme), id, sizeof id), groups);
    last = scheme;
  }
}

/* Whether w->scheme fits w->wfmt, w->group fits the scheme, and w->layout fits w->wfmt (the
 * format table, formats.h). w->wfmt must already be a valid mgen_wfmt. Returns OK,
 * ERR_INVALID_ARG (scheme or layout outside their enums) or ERR_UNSUPPORTED_FORMAT, with the
 * message in ctx (which may be NULL). */
static mgen_status check_format(mgen_ctx *ctx, const mgen_weights *w) {
  const int wfmt = (int)w->wfmt, scheme = (int)w->scheme;
  char text[160];
  if (!mgen__scheme_valid(scheme))
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "w->scheme=%d is not an mgen_scheme", scheme);
  if (!mgen__scheme_fits(wfmt, scheme)) {
    schemes_text(wfmt, text, sizeof text);
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "w->scheme=%s with %s weights: %s takes %s; %s is a %s scheme",
                      mgen__scheme_name(scheme), mgen__wfmt_name(wfmt), mgen__wfmt_name(wfmt),
                      text, mgen__scheme_name(scheme), mgen__wfmt_name(mgen__scheme_wfmt(scheme)));
  }
  if (!mgen__group_valid(wfmt, scheme, w->group)) {
    mgen__scheme_groups_text(scheme, text, sizeof text);
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "w->group=%d with %s/%s: its groups are %s", w->group,
                      mgen__wfmt_name(wfmt), mgen__scheme_name(scheme), text);
  }
  if ((int)w->layout < 0)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "w->layout=%d is negative", (int)w->layout);
  const int layout = mgen__layout_resolve(wfmt, (int)w->layout);
  const int own = mgen__wfmt_default_layout(wfmt);
  char id[16];
  if (!mgen__layout_fits(wfmt, layout)) /* kernels read one layout: packing cannot guess */
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "w->layout=%d (%s): %s weights are packed in the %s layout "
                      "(MGEN_LAYOUT_%s = %d, or 0 for the default) and no other",
                      layout, mgen__layout_name(layout), mgen__wfmt_name(wfmt),
                      mgen__layout_name(own), upper(mgen__layout_name(own), id, sizeof id), own);
  return MGEN_OK;
}

mgen_status mgen__check_kind(mgen_ctx *ctx, const mgen_weights *w) {
  if (w == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "w is NULL");
  if (!mgen__act_valid((int)w->act))
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "w->act=%d is not an mgen_act", (int)w->act);
  if (!mgen__wfmt_valid((int)w->wfmt))
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "w->wfmt=%d is not an mgen_wfmt", (int)w->wfmt);
  if (w->group < 0)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "w->group=%d is negative", w->group);
  return check_format(ctx, w); /* the kernels read the scales by the scheme */
}

/* The shape rule (dispatch/shape_rule.h) of w's key: of its kernels that run on the context's
 * device; if none does (ERR_NO_KERNEL at GEMM time), or without a context (mgen_weights_bytes),
 * of its kernels of every architecture in the table (ctx's, else the builtin one). A key the
 * table has no kernel for is left to the packed layout's rule (check_desc) and the GEMM's
 * ERR_UNSUPPORTED_FORMAT. */
static mgen_status check_table_shape(mgen_ctx *ctx, const mgen_weights *w) {
  const mgen_table *table = ctx != NULL ? ctx->table : mgen_builtin_table();
  if (table == NULL) return MGEN_OK;
  const mgen__key key = {(int)w->act, (int)w->wfmt, (int)w->scheme, w->group,
                         mgen__layout_resolve((int)w->wfmt, (int)w->layout)};
  mgen__shape_rule rule;
  char where[64];
  const int sm = ctx != NULL ? ctx->sm : MGEN__SM_ANY;
  mgen__shape_rule_of(table, &key, sm, &rule);
  if (sm == MGEN__SM_ANY)
    snprintf(where, sizeof where, "on any architecture");
  else if (rule.count > 0)
    snprintf(where, sizeof where, "on sm_%d", sm);
  else {
    mgen__shape_rule_of(table, &key, MGEN__SM_ANY, &rule);
    snprintf(where, sizeof where, "where they run (none runs on sm_%d)", sm);
  }
  if (rule.count == 0 || mgen__shape_rule_accepts(&rule, w->n, w->k)) return MGEN_OK;
  char key_text[48], text[400], detail[80] = "";
  mgen__key_str(&key, key_text, sizeof key_text);
  mgen__shape_rule_text(&rule, text, sizeof text);
  if (rule.count == 1) /* one alternative: name the dimension that fails it */
    snprintf(detail, sizeof detail, ": %c=%d is not a multiple of %d",
             w->n % rule.n[0] != 0 ? 'n' : 'k', w->n % rule.n[0] != 0 ? w->n : w->k,
             w->n % rule.n[0] != 0 ? rule.n[0] : rule.k[0]);
  return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_SHAPE,
                    "w->n=%d, w->k=%d: the %s kernels %s need %s (their tiles and group)%s",
                    w->n, w->k, key_text, where, text, detail);
}

mgen_status mgen__check_desc(mgen_ctx *ctx, const mgen_weights *w) {
  mgen_status st = mgen__check_kind(ctx, w);
  if (st != MGEN_OK) return st;
  if (w->n < 1 || w->k < 1)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "w->n=%d, w->k=%d: both must be positive",
                      w->n, w->k);
  if ((st = check_table_shape(ctx, w)) != MGEN_OK) return st;
  /* The packers' own preconditions (layout.h), implied by every kernel's rule. */
  if (w->n % MGEN_LAYOUT_DIM != 0)
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_SHAPE,
                      "w->n=%d is not a multiple of %d (the packed layout)", w->n, MGEN_LAYOUT_DIM);
  const int step = mgen__layout_k_step(w->group);
  if (w->k % step != 0)
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_SHAPE, "w->k=%d is not a multiple of %d (%s)",
                      w->k, step, w->group != MGEN_GROUP_CHANNEL ? "w->group" : "per channel");
  const long long words = (long long)w->n * mgen__k_packed(w->k) / 8;
  if (words > MGEN_MAX_PACKED_WORDS) /* indexed with an int */
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_SHAPE,
                      "w->n=%d x w->k=%d: %lld packed words (k padded to %lld), more than "
                      "MGEN_MAX_PACKED_WORDS (%lld)", w->n, w->k, words, mgen__k_packed(w->k),
                      MGEN_MAX_PACKED_WORDS);
  return MGEN_OK;
}

/* weights.h */
mgen_status mgen__check_problem(mgen_ctx *ctx, int m, const mgen_weights *w) {
  mgen_status st = mgen__check_desc(ctx, w);
  if (st != MGEN_OK) return st;
  if (m < 1) return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "m=%d: must be at least 1", m);
  long long widest = w->n > w->k ? w->n : w->k;
  if ((long long)m * widest > MGEN_MAX_ELEMENTS) /* the kernels' element indexes are ints */
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_SHAPE,
                      "m=%d: m x max(n, k) = %lld elements, more than MGEN_MAX_ELEMENTS (%lld): "
                      "split the call along M", m, (long long)m * widest, MGEN_MAX_ELEMENTS);
  return MGEN_OK;
}

mgen_status mgen_weights_bytes(const mgen_weights *w, size_t *qbytes, size_t *sbytes) {
  if (qbytes == NULL || sbytes == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st = mgen__check_desc(NULL, w);
  if (st != MGEN_OK) return st;
  /* The packed layout's sizes: k padded (layout.h, "K padding") */
  const size_t rows = (size_t)mgen__scale_rows(w->k, w->group);
  *qbytes = (size_t)w->n * (size_t)mgen__k_packed(w->k) * (size_t)mgen__wfmt_bits((int)w->wfmt) / 8;
  /* rows x n scales; with column factors (fe2m1) padded to 16 bytes, then n FP32 factors */
  size_t scales = rows * (size_t)w->n * (size_t)mgen__scheme_scale_bytes((int)w->scheme, (int)w->act);
  if (mgen__scheme_column_factors((int)w->scheme)) scales = (scales + 15) / 16 * 16 + (size_t)w->n * 4;
  *sbytes = scales;
  return MGEN_OK;
}

static int misaligned(const void *p, uintptr_t align) { return ((uintptr_t)p & (align - 1)) != 0; }

mgen_status mgen__check_weight_buffers(mgen_ctx *ctx, const mgen_weights *w) {
  if (w->d_q == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "w->d_q is NULL");
  if (w->d_scales == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "w->d_scales is NULL");
  if (misaligned(w->d_q, 16))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "w->d_q=%p is not 16-byte aligned", w->d_q);
  if (misaligned(w->d_scales, 16))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "w->d_scales=%p is not 16-byte aligned",
                      w->d_scales);
  return MGEN_OK;
}

/* Checks shared by quantize and pack: description and the packed output buffers. */
static mgen_status check_outputs(mgen_ctx *ctx, const mgen_weights *w) {
  mgen_status st = mgen__check_desc(ctx, w);
  return st != MGEN_OK ? st : mgen__check_weight_buffers(ctx, w);
}

mgen_status mgen__launched(mgen_ctx *ctx, const char *what, int err) {
  if (err == 0) return MGEN_OK;
  return mgen__fail(ctx, mgen__cuda_status((cudaError_t)err), "%s: %s (%s)", what,
                    cudaGetErrorString((cudaError_t)err), cudaGetErrorName((cudaError_t)err));
}

mgen_status mgen__refuse_capture(mgen_ctx *ctx, void *stream, const char *call, const char *why) {
  cudaError_t err = cudaSuccess;
  const int capturing = ctx->capturing(ctx, stream, &err);
  if (capturing > 0)
    return mgen__fail(ctx, MGEN_ERR_STREAM_CAPTURING,
                      "%s: the stream is being captured into a CUDA graph: %s", call, why);
  if (capturing == 0) return MGEN_OK;
  char what[96];
  snprintf(what, sizeof what, "%s: cudaStreamIsCapturing", call);
  return mgen__launched(ctx, what, (int)err);
}

mgen_status mgen_quantize(mgen_ctx *ctx, const void *d_w, mgen_weights *w, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st = check_outputs(ctx, w);
  if (st != MGEN_OK) return st;
  if (d_w == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_w is NULL");
  if (misaligned(d_w, 2))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_w=%p is not 2-byte aligned", d_w);
  if ((st = mgen__check_device(ctx)) != MGEN_OK) return st;
  /* d_w (and u4b8's scales) are of type w->act (FP16 or BF16; check_desc accepted it). */
  if (w->wfmt == MGEN_WFMT_FE2M1)
    return mgen__launched(ctx, "mgen_quantize",
                    mgen__quantize_fe2m1((int)w->act, (int)w->scheme, d_w, w->n, w->k, w->d_q,
                                         w->d_scales, stream));
  return mgen__launched(ctx, "mgen_quantize",
                  mgen__quantize_u4b8(d_w, (int)w->act, w->n, w->k, w->group, w->d_q,
                                      w->d_scales, stream));
}

/* The input check of mgen_pack and mgen_pack_fp4 (prepare.h): codes above 15 (ncodes of them;
 * 0 for FP4) and non-finite scales are rejected, not masked. It runs on the GPU with w->d_q as
 * its scratch (the packing overwrites it next) and is read back once, so it is refused while
 * `stream` is being captured. On OK, first[] holds the first bad code's and scale's indices
 * (all ones: none). */
static mgen_status check_pack_inputs(mgen_ctx *ctx, const char *call, const mgen_weights *w,
                                     const uint8_t *d_codes, long long ncodes,
                                     const void *d_scales, void *stream,
                                     unsigned long long first[2]) {
  mgen_status st = mgen__refuse_capture(ctx, stream, call,
                                        "it reads its input check back; pack before capturing");
  if (st != MGEN_OK) return st;
  const int scheme = (int)w->scheme, act = (int)w->act;
  const mgen__pack_inputs in = {
      .codes = d_codes, .ncodes = ncodes, .scales = d_scales,
      .nscales = (long long)(w->group == MGEN_GROUP_CHANNEL ? 1 : w->k / w->group) * w->n,
      .scale_bytes = mgen__scheme_scale_bytes(scheme, act),
      .nonfinite = mgen__scheme_nonfinite_bits(scheme, act)};
  char what[64];
  snprintf(what, sizeof what, "%s: input check", call);
  return mgen__launched(ctx, what, mgen__check_pack_inputs(&in, w->d_q, stream, first));
}

mgen_status mgen_pack(mgen_ctx *ctx, const uint8_t *d_codes, const void *d_scales,
                      mgen_weights *w, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  if (w != NULL && w->wfmt == MGEN_WFMT_FE2M1)
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "mgen_pack packs u4b8 weights; fe2m1 (NVFP4, MXFP4) checkpoints are "
                      "packed by mgen_pack_fp4");
  mgen_status st = check_outputs(ctx, w);
  if (st != MGEN_OK) return st;
  if (d_codes == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_codes is NULL");
  if (d_scales == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_scales is NULL");
  if (misaligned(d_scales, 2))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_scales=%p is not 2-byte aligned", d_scales);
  if ((st = mgen__check_device(ctx)) != MGEN_OK) return st;
  unsigned long long first[2];
  if ((st = check_pack_inputs(ctx, "mgen_pack", w, d_codes, (long long)w->n * w->k, d_scales,
                              stream, first)) != MGEN_OK)
    return st;
  if (first[0] != ~0ULL)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "d_codes[%llu] (row n=%llu, column k=%llu) is above 15: u4b8 codes are "
                      "0..15, one per byte", first[0], first[0] / (unsigned)w->k,
                      first[0] % (unsigned)w->k);
  if (first[1] != ~0ULL)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "d_scales[%llu] (scale row %llu, column %llu) is not finite (inf or NaN): "
                      "every output of its column would be NaN", first[1],
                      first[1] / (unsigned)w->n, first[1] % (unsigned)w->n);
  return mgen__launched(ctx, "mgen_pack",
                        mgen__pack_u4b8(d_codes, d_scales, (int)w->act, w->n, w->k, w->group,
                                        w->d_q, w->d_scales, stream));
}

mgen_status mgen_pack_fp4(mgen_ctx *ctx, const uint8_t *d_packed, size_t packed_bytes,
                          const uint8_t *d_block_scales, size_t scale_bytes, float global_scale,
                          mgen_weights *w, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  if (w != NULL && w->wfmt == MGEN_WFMT_U4B8)
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "mgen_pack_fp4 packs fe2m1 weights (w->wfmt=fe2m1); u4b8 codes and scales "
                      "are packed by mgen_pack");
  mgen_status st = check_outputs(ctx, w);
  if (st != MGEN_OK) return st;
  if (d_packed == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_packed is NULL");
  if (d_block_scales == NULL)
    return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_block_scales is NULL");
  const size_t want_packed = (size_t)w->n * (size_t)w->k / 2;
  const size_t want_scales = (size_t)w->n * (size_t)(w->k / w->group);
  if (packed_bytes != want_packed)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "packed_bytes=%zu: an n=%d x k=%d FP4 weight, two codes per byte, is %zu "
                      "bytes", packed_bytes, w->n, w->k, want_packed);
  if (scale_bytes != want_scales)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "scale_bytes=%zu: %s has one %s scale per %d K elements, n=%d x k/%d = %zu "
                      "bytes", scale_bytes, mgen__scheme_name((int)w->scheme),
                      mgen__scheme_storage((int)w->scheme), w->group, w->n, w->group,
                      want_scales);
  float column_factor = 0.0f; /* MXFP4: the factors come from the scales */
  if (mgen__scheme_global_scale((int)w->scheme)) {
    if (!(isfinite(global_scale) && global_scale > 0.0f))
      return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                        "global_scale=%g: NVFP4's global scale must be finite and positive",
                        (double)global_scale);
    column_factor = global_scale * 128.0f; /* the kernels' 16-bit weights are e2m1 * s * 2^-7 */
    if (!isfinite(column_factor))
      return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                        "global_scale=%g: too large (global_scale * 2^7, the kernels' column "
                        "factor, overflows FP32)", (double)global_scale);
  }
  if ((st = mgen__check_device(ctx)) != MGEN_OK) return st;
  /* A NaN block scale (E4M3 0x7f/0xff, E8M0 0xff) makes every output of its column NaN. */
  unsigned long long first[2];
  if ((st = check_pack_inputs(ctx, "mgen_pack_fp4", w, NULL, 0, d_block_scales, stream, first)) !=
      MGEN_OK)
    return st;
  if (first[1] != ~0ULL) {
    const unsigned long long groups = (unsigned)(w->k / w->group);
    char storage[16];
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "d_block_scales[%llu] (column n=%llu, block %llu along k) is an %s NaN: "
                      "every output of its column would be NaN", first[1], first[1] / groups,
                      first[1] % groups,
                      upper(mgen__scheme_storage((int)w->scheme), storage, sizeof storage));
  }
  return mgen__launched(ctx, "mgen_pack_fp4",
                  mgen__pack_fe2m1((int)w->act, (int)w->scheme, d_packed, d_block_scales, column_factor, w->n,
                                   w->k, w->d_q, w->d_scales, stream));
}
