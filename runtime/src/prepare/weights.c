/* weights.c -- packed weight buffers: their sizes, their checks (by formats.h's rules), and
 * quantize/pack on the GPU through each format's hooks (format.h, format_ops.h). The index
 * math of the layout lives in layout.h; this file only checks and dispatches.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>

#include "core/ctx.h"
#include "dispatch/shape_rule.h"
#include "formats/format.h"
#include "formats/formats.h"
#include "formats/layout.h"
#include "prepare/fence.h"
#include "prepare/format_ops.h"
#include "prepare/prepare.h"
#include "prepare/weights.h"

const char *mgen__upper(const char *name, char *buf, size_t size) {
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
                             mgen__upper(mgen__scheme_name(scheme), id, sizeof id), groups);
    last = scheme;
  }
}

/* The layouts `wfmt` can be packed in, as "MGEN_LAYOUT_MMA = 1 or MGEN_LAYOUT_E4M3 = 2". */
static void layouts_text(int wfmt, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int layout = 1; layout <= MGEN_LAYOUT_COUNT && used < size; layout++) {
    if (!mgen__layout_fits(wfmt, layout)) continue;
    char id[16];
    used += (size_t)snprintf(buf + used, size - used, "%sMGEN_LAYOUT_%s = %d", used ? " or " : "",
                             mgen__upper(mgen__layout_name(layout), id, sizeof id), layout);
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
  if (!mgen__layout_fits(wfmt, layout)) { /* a kernel reads one layout: packing cannot guess */
    layouts_text(wfmt, text, sizeof text);
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "w->layout=%d (%s): %s weights are packed in %s (or 0: the default, %s) "
                      "and no other",
                      layout, mgen__layout_name(layout), mgen__wfmt_name(wfmt), text,
                      mgen__layout_name(own));
  }
  if (!mgen__scheme_layout_fits(scheme, layout))
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "w->layout=%d (%s): %s weights are not packed in it (its scales have no "
                      "form there; runtime/src/formats/layout.h says why); use %s",
                      layout, mgen__layout_name(layout), mgen__scheme_name(scheme),
                      mgen__layout_name(own));
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
                         mgen__layout_resolve((int)w->wfmt, (int)w->layout), MGEN_OP_DENSE};
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
  if (rule.count == 1 && w->n % rule.n[0] == 0 && w->n < rule.lo[0]) /* one alternative: */
    snprintf(detail, sizeof detail, ": n=%d is below %d", w->n, rule.lo[0]); /* what fails it */
  else if (rule.count == 1)
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
  const mgen__format *f = mgen__format_of((int)w->wfmt);
  if (f == NULL) /* the format table and the registry disagree: a build defect */
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "w->wfmt=%s: this library has no hooks for the format",
                      mgen__wfmt_name((int)w->wfmt));
  const long long words = (long long)w->n * f->k_padded(w->k) / 8;
  if (words > MGEN_MAX_PACKED_WORDS) /* indexed with an int */
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_SHAPE,
                      "w->n=%d x w->k=%d: %lld packed words (k padded to %lld), more than "
                      "MGEN_MAX_PACKED_WORDS (%lld)", w->n, w->k, words, f->k_padded(w->k),
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
  mgen__format_of((int)w->wfmt)->sizes(w, qbytes, sbytes); /* check_desc found it */
  return MGEN_OK;
}

int mgen__misaligned(const void *p, size_t align) { return ((uintptr_t)p & (align - 1)) != 0; }

const mgen__format_ops *mgen__format_ops_of(int wfmt) {
  for (size_t i = 0; i < mgen__format_ops_count; i++)
    if (mgen__format_ops_list[i]->wfmt == wfmt) return mgen__format_ops_list[i];
  return NULL;
}

mgen_status mgen__check_weight_buffers(mgen_ctx *ctx, const mgen_weights *w) {
  if (w->d_q == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "w->d_q is NULL");
  if (w->d_scales == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "w->d_scales is NULL");
  if (mgen__misaligned(w->d_q, 16))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "w->d_q=%p is not 16-byte aligned", w->d_q);
  if (mgen__misaligned(w->d_scales, 16))
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

mgen_status mgen__weights_written(mgen_ctx *ctx, const char *what, mgen_status st, void *stream) {
  if (st != MGEN_OK || ctx->sm < 90) return st; /* no programmatic launches before sm_90 */
  char fence[96];
  snprintf(fence, sizeof fence, "%s: weights fence", what);
  return mgen__launched(ctx, fence, mgen__fence_weights(stream));
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
  if (mgen__misaligned(d_w, 2))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_w=%p is not 2-byte aligned", d_w);
  if ((st = mgen__check_device(ctx)) != MGEN_OK) return st;
  /* d_w is of type w->act (FP16 or BF16; check_desc accepted it). */
  const mgen__format_ops *ops = mgen__format_ops_of((int)w->wfmt);
  if (ops == NULL || ops->quantize == NULL)
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT, "mgen_quantize: %s weights are not "
                      "quantized by this library", mgen__wfmt_name((int)w->wfmt));
  return mgen__weights_written(ctx, "mgen_quantize",
                               mgen__launched(ctx, "mgen_quantize", ops->quantize(w, d_w, stream)), stream);
}

/* The input check of the pack hooks (format_ops.h): codes above 15 (ncodes of them; 0 for
 * FP4) and non-finite scales are rejected, not masked. It runs on the GPU with w->d_q as its
 * scratch (the packing overwrites it next) and is read back once, so it is refused while
 * `stream` is being captured. */
mgen_status mgen__check_pack_values(mgen_ctx *ctx, const char *call, const mgen_weights *w,
                                    const uint8_t *d_codes, long long ncodes, const void *d_scales,
                                    void *stream, unsigned long long first[2]) {
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

mgen_status mgen__check_codes_scales(mgen_ctx *ctx, const mgen__pack_src *src,
                                     const mgen_weights *w, const char *fmt, void *stream) {
  mgen_status st;
  const int align = mgen__scheme_scale_bytes((int)w->scheme, (int)w->act);
  if (mgen__misaligned(src->scales, (size_t)align))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "%s=%p is not %d-byte aligned", src->scales_name,
                      src->scales, align);
  if ((st = mgen__check_device(ctx)) != MGEN_OK) return st;
  unsigned long long first[2];
  if ((st = mgen__check_pack_values(ctx, src->call, w, src->codes, (long long)w->n * w->k,
                                    src->scales, stream, first)) != MGEN_OK)
    return st;
  return mgen__pack_values_refused(ctx, src, w, fmt, first);
}

mgen_status mgen__check_pack_sizes(mgen_ctx *ctx, const mgen__pack_src *src,
                                   const mgen_weights *w, const char *fmt) {
  if (src->codes_bytes_name == NULL) return MGEN_OK;
  const size_t rows = (size_t)(w->group == MGEN_GROUP_CHANNEL ? 1 : w->k / w->group);
  const size_t bytes = (size_t)mgen__scheme_scale_bytes((int)w->scheme, (int)w->act);
  const size_t want_codes = (size_t)w->n * (size_t)w->k, want_scales = rows * (size_t)w->n * bytes;
  if (src->codes_bytes != want_codes)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "%s=%zu: an n=%d x k=%d %s weight, one code per byte, is %zu bytes",
                      src->codes_bytes_name, src->codes_bytes, w->n, w->k, fmt, want_codes);
  if (src->scales_bytes != want_scales)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "%s=%zu: k/group (1 per channel) = %zu x n=%d scales of %zu bytes (%s) "
                      "is %zu bytes", src->scales_bytes_name, src->scales_bytes, rows, w->n,
                      bytes, mgen__act_name((int)w->act), want_scales);
  return MGEN_OK;
}

mgen_status mgen__pack_values_refused(mgen_ctx *ctx, const mgen__pack_src *src,
                                      const mgen_weights *w, const char *fmt,
                                      const unsigned long long first[2]) {
  if (first[0] != ~0ULL)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "%s[%llu] (row n=%llu, column k=%llu) is above 15: %s codes are 0..15, "
                      "one per byte", src->codes_name, first[0], first[0] / (unsigned)w->k,
                      first[0] % (unsigned)w->k, fmt);
  if (first[1] != ~0ULL)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "%s[%llu] (scale row %llu, column %llu) is not finite (inf or NaN): "
                      "every output of its column would be NaN", src->scales_name, first[1],
                      first[1] / (unsigned)w->n, first[1] % (unsigned)w->n);
  return MGEN_OK;
}

/* The schemes with zero points, "u4/asym" (or "u4/asym, ..."): the format table's. */
static const char *zero_schemes_text(char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int s = 0; s < MGEN_SCHEME_COUNT; s++)
    if (mgen__scheme_zero_bits(s) > 0 && used < size)
      used += (size_t)snprintf(buf + used, size - used, "%s%s/%s", used ? ", " : "",
                               mgen__wfmt_name(mgen__scheme_wfmt(s)), mgen__scheme_name(s));
  return buf;
}

/* Every packing call: w and its buffers, src's pointers, then the format's pack hook. */
static mgen_status pack(mgen_ctx *ctx, const mgen__pack_src *src, mgen_weights *w, void *stream) {
  mgen_status st = check_outputs(ctx, w);
  if (st != MGEN_OK) return st;
  if (src->codes == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "%s is NULL", src->codes_name);
  if (src->scales == NULL)
    return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "%s is NULL", src->scales_name);
  char text[96];
  if (src->zeros != NULL && mgen__scheme_zero_bits((int)w->scheme) == 0)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "%s=%p: %s/%s weights have no zero points (pass NULL; %s have them)",
                      src->zeros_name, src->zeros, mgen__wfmt_name((int)w->wfmt),
                      mgen__scheme_name((int)w->scheme), zero_schemes_text(text, sizeof text));
  const mgen__format_ops *ops = mgen__format_ops_of((int)w->wfmt);
  if (ops == NULL || ops->pack == NULL)
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT, "%s: %s weights are not packed by this "
                      "library", src->call, mgen__wfmt_name((int)w->wfmt));
  return mgen__weights_written(ctx, src->call, ops->pack(ctx, src, w, stream), stream);
}

mgen_status mgen_pack_weights(mgen_ctx *ctx, const mgen_pack_src *src, mgen_weights *w,
                              void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  if (src == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "src is NULL");
  const mgen__pack_src s = {"mgen_pack_weights", "src->codes", "src->scales", "src->codes_bytes",
                            "src->scales_bytes", src->codes, src->codes_bytes, src->scales,
                            src->scales_bytes, src->global_scale, "src->zeros",
                            "src->zeros_bytes", src->zeros, src->zeros_bytes};
  return pack(ctx, &s, w, stream);
}

/* The old per-format entry points take weights of their own format only: another table format
 * is named with the call that packs it. */
static mgen_status legacy_format(mgen_ctx *ctx, const char *call, int wfmt, const char *intro,
                                 const mgen_weights *w) {
  if (w == NULL || (int)w->wfmt == wfmt || !mgen__wfmt_valid((int)w->wfmt)) return MGEN_OK;
  const mgen__format_ops *ops = mgen__format_ops_of((int)w->wfmt);
  return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT, "%s %s; %s are packed by %s", call, intro,
                    ops != NULL ? ops->inputs : mgen__wfmt_name((int)w->wfmt),
                    ops != NULL && ops->legacy_pack != NULL ? ops->legacy_pack : "mgen_pack_weights");
}

mgen_status mgen_pack(mgen_ctx *ctx, const uint8_t *d_codes, const void *d_scales,
                      mgen_weights *w, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st = legacy_format(ctx, "mgen_pack", MGEN_WFMT_U4B8, "packs u4b8 weights", w);
  if (st != MGEN_OK) return st;
  const mgen__pack_src s = {"mgen_pack", "d_codes", "d_scales", NULL, NULL,
                            d_codes, 0, d_scales, 0, 0.0f, NULL, NULL, NULL, 0};
  return pack(ctx, &s, w, stream);
}

mgen_status mgen_pack_fp4(mgen_ctx *ctx, const uint8_t *d_packed, size_t packed_bytes,
                          const uint8_t *d_block_scales, size_t scale_bytes, float global_scale,
                          mgen_weights *w, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st = legacy_format(ctx, "mgen_pack_fp4", MGEN_WFMT_FE2M1,
                                 "packs fe2m1 weights (w->wfmt=fe2m1)", w);
  if (st != MGEN_OK) return st;
  const mgen__pack_src s = {"mgen_pack_fp4", "d_packed", "d_block_scales", "packed_bytes",
                            "scale_bytes", d_packed, packed_bytes, d_block_scales, scale_bytes,
                            global_scale, NULL, NULL, NULL, 0};
  return pack(ctx, &s, w, stream);
}
