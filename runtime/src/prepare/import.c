/* import.c -- int4 checkpoint import (mgen_import_awq, mgen_import_gptq, mgen_import_ct): every
 * tensor's dtype, rank, shape and alignment checked against the weight description on the
 * host, then the data checks and the packing on the GPU (prepare/import.cu). Each checkpoint
 * format is a table of its tensors' expected shapes plus the strides and nibble orders that
 * say where code (k, n), scale (g, n) and zero (g, n) live (mgen__int4_src); the layout side
 * is import.cu's, reached through the weight format's import hook (format_ops.h). Whether the
 * weights take the checkpoint's zero points (u4) or must be symmetric (u4b8) is the format
 * table's: its scheme's zero points (MGEN_SCHEME_ZERO_LIST), never a format named here.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/ctx.h"
#include "prepare/format_ops.h"
#include "formats/formats.h"
#include "prepare/import.h"
#include "prepare/weights.h"

/* ---------------------------------------------------------------- tensors */

static const char *dtype_name(int dtype) {
  switch (dtype) {
    case MGEN_DTYPE_U8: return "u8";
    case MGEN_DTYPE_I32: return "i32";
    case MGEN_DTYPE_F16: return "f16";
    case MGEN_DTYPE_BF16: return "bf16";
    case MGEN_DTYPE_F32: return "f32";
    default: return NULL;
  }
}

static int dtype_bytes(int dtype) {
  return dtype == MGEN_DTYPE_U8 ? 1 : dtype == MGEN_DTYPE_F16 || dtype == MGEN_DTYPE_BF16 ? 2 : 4;
}

#define DT(x) (1u << MGEN_DTYPE_##x)
#define SCALE_DTYPES (DT(F16) | DT(BF16) | DT(F32))

/* What a tensor must be: its dtypes (a mask of DT bits), rank and shape, and the shape's
 * meaning for messages ("k/8", "n"). */
typedef struct expect {
  const char *name;
  unsigned dtypes;
  int ndim;
  int64_t dim[2];
  const char *label[2];
} expect;

static void shape_text(int ndim, const int64_t *dim, const char *const *label, char *buf,
                       size_t size) {
  size_t used = (size_t)snprintf(buf, size, "[");
  for (int i = 0; i < ndim && used < size; i++)
    used += label ? (size_t)snprintf(buf + used, size - used, "%s%s=%" PRId64, i ? ", " : "",
                                     label[i], dim[i])
                  : (size_t)snprintf(buf + used, size - used, "%s%" PRId64, i ? ", " : "", dim[i]);
  if (used < size) snprintf(buf + used, size - used, "]");
}

/* OK if `t` is what `e` says (or absent and optional: *present = 0), else the status with a
 * message naming the tensor, what it is and what it should be. */
static mgen_status check_tensor(mgen_ctx *ctx, const char *what, const mgen_tensor *t,
                                const expect *e, int optional, int *present) {
  *present = t->data != NULL;
  if (t->data == NULL) {
    if (optional) return MGEN_OK;
    return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "%s: %s.data is NULL", what, e->name);
  }
  const char *dn = dtype_name((int)t->dtype);
  if (dn == NULL)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "%s: %s.dtype=%d is not an mgen_dtype", what,
                      e->name, (int)t->dtype);
  char want[96], have[96];
  if (!(e->dtypes & (1u << t->dtype))) {
    size_t used = 0;
    want[0] = '\0';
    for (int d = MGEN_DTYPE_U8; d <= MGEN_DTYPE_F32; d++)
      if (e->dtypes & (1u << d))
        used += (size_t)snprintf(want + used, sizeof want - used, "%s%s", used ? " or " : "",
                                 dtype_name(d));
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "%s: %s is %s, expected %s", what, e->name, dn,
                      want);
  }
  shape_text(e->ndim, e->dim, e->label, want, sizeof want);
  if (t->ndim != e->ndim)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "%s: %s has %d dimensions, expected %d: %s",
                      what, e->name, t->ndim, e->ndim, want);
  if (t->shape[0] != e->dim[0] || (e->ndim == 2 && t->shape[1] != e->dim[1])) {
    shape_text(t->ndim, t->shape, NULL, have, sizeof have);
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "%s: %s has shape %s, expected %s", what,
                      e->name, have, want);
  }
  if ((uintptr_t)t->data % (uintptr_t)dtype_bytes((int)t->dtype) != 0)
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "%s: %s.data=%p is not aligned to its %d-byte %s",
                      what, e->name, t->data, dtype_bytes((int)t->dtype), dn);
  return MGEN_OK;
}

/* ---------------------------------------------------------------- common path */

/* "u4 weights (MGEN_WFMT_U4, scheme MGEN_SCHEME_ASYM)": the weights that take zero points. */
static const char *zero_weights_text(char *buf, size_t size) {
  char wfmt[16], scheme[16];
  snprintf(buf, size, "weights with zero points");
#define X(ID, BITS)                                                                          \
  snprintf(buf, size, "%s weights (MGEN_WFMT_%s, scheme MGEN_SCHEME_%s)",                    \
           mgen__wfmt_name(mgen__scheme_wfmt(MGEN_SCHEME_##ID)),                              \
           mgen__upper(mgen__wfmt_name(mgen__scheme_wfmt(MGEN_SCHEME_##ID)), wfmt, sizeof wfmt), \
           mgen__upper(mgen__scheme_name(MGEN_SCHEME_##ID), scheme, sizeof scheme));
  MGEN_SCHEME_ZERO_LIST(X)
#undef X
  return buf;
}

/* The checks every import makes of `w` before looking at tensors. */
static mgen_status check_weights(mgen_ctx *ctx, const char *what, const void *src,
                                 const mgen_weights *w) {
  if (src == NULL) return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "%s: src is NULL", what);
  const mgen__format_ops *ops = w != NULL ? mgen__format_ops_of((int)w->wfmt) : NULL;
  if (w != NULL && (ops == NULL || ops->import_int4 == NULL)) {
    char into[64];
    size_t used = 0;
    into[0] = '\0';
    for (size_t i = 0; i < mgen__format_ops_count && used < sizeof into; i++)
      if (mgen__format_ops_list[i]->import_int4 != NULL)
        used += (size_t)snprintf(into + used, sizeof into - used, "%s%s", used ? " or " : "",
                                 mgen__wfmt_name(mgen__format_ops_list[i]->wfmt));
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "%s imports int4 checkpoints into %s weights (w->wfmt=%d is not one); FP4 "
                      "checkpoints (NVFP4, MXFP4) go through mgen_pack_fp4",
                      what, into, (int)w->wfmt);
  }
  mgen_status st = mgen__check_desc(ctx, w);
  return st != MGEN_OK ? st : mgen__check_weight_buffers(ctx, w);
}

/* Reads one int32 at `d_p` (a finding's detail for a message); 0 if that fails. */
static int32_t read_i32(const void *d_p) {
  int32_t v = 0;
  if (cudaMemcpy(&v, d_p, sizeof v, cudaMemcpyDeviceToHost) != cudaSuccess) v = 0;
  return v;
}

static void values_text(uint32_t mask, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (int v = 0; v < 16 && used < size; v++)
    if (mask & (1u << v)) used += (size_t)snprintf(buf + used, size - used, "%s%d", used ? ", " : "", v);
}

/* What the data checks need besides the source: names for messages. */
typedef struct names {
  const char *what, *zeros, *g_idx, *scales;
  int scales_nk;  /* the scales tensor is [n, rows] (compressed-tensors), not [rows, n] */
  int zeros_mode; /* mgen_gptq_zeros */
} names;

/* Zeros into symmetric weights: every stored zero must be the symmetric one under the
 * convention (GPTQ's qzeros, along N in order: word `bad` of a row of n/8). */
static mgen_status check_symmetric(mgen_ctx *ctx, const mgen__int4_src *src, const names *nm,
                                   const mgen__int4_findings *f, const mgen_weights *w) {
  int mode = nm->zeros_mode;
  if (mode == MGEN_GPTQ_ZEROS_AUTO) /* v2 only when 8s and no 7s are stored: a lone odd
                                       zero among 7s is reported as itself, not the 7s */
    mode = (f->zero_values & 0x180u) == 0x100u ? MGEN_GPTQ_ZEROS_EXACT : MGEN_GPTQ_ZEROS_MINUS_ONE;
  const uint32_t want = mode == MGEN_GPTQ_ZEROS_MINUS_ONE ? 7u : 8u;
  const uint32_t bad = want == 7u ? f->first_not7 : f->first_not8;
  if (bad == MGEN__NONE) return MGEN_OK;
  const uint32_t word = (uint32_t)read_i32(src->zeros.words + bad), per_row = (uint32_t)w->n / 8;
  int b = 0;
  while (b < 7 && ((word >> (4 * b)) & 15u) == want) b++;
  const uint32_t v = (word >> (4 * b)) & 15u;
  char seen[64], into[96];
  values_text(f->zero_values, seen, sizeof seen);
  const char *hint =
      nm->zeros_mode == MGEN_GPTQ_ZEROS_MINUS_ONE && f->zero_values == 1u << 8
          ? "; every stored zero is 8: a \"gptq_v2\" checkpoint? (MGEN_GPTQ_ZEROS_EXACT or _AUTO)"
      : nm->zeros_mode == MGEN_GPTQ_ZEROS_EXACT && f->zero_values == 1u << 7
          ? "; every stored zero is 7: a v1 \"gptq\" checkpoint, which stores zero - 1? "
            "(MGEN_GPTQ_ZEROS_MINUS_ONE or _AUTO)"
          : "";
  return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                    "%s: %s[%u][%u] stores %u for column %u, zero point %u under the %s "
                    "convention, not 8: asymmetric GPTQ (sym false) imports into %s, %s is "
                    "symmetric; stored zeros seen: %s%s",
                    nm->what, nm->zeros, bad / per_row, bad % per_row, v,
                    8 * (bad % per_row) + (uint32_t)b, v + (want == 7u),
                    want == 7u ? "stored = zero - 1 (\"gptq\")" : "stored = zero (\"gptq_v2\")",
                    zero_weights_text(into, sizeof into), mgen__wfmt_name((int)w->wfmt), seen,
                    hint);
}

/* Zeros into weights with zero points: every stored value is a zero point 0..15 but a 15
 * stored as zero - 1 (GPTQ v1: zero_add 1, qzeros along N in order), which would be 16. */
static mgen_status check_zero_range(mgen_ctx *ctx, const mgen__int4_src *src, const names *nm,
                                    const mgen__int4_findings *f, const mgen_weights *w) {
  if (src->zero_add == 0 || f->first_15 == MGEN__NONE) return MGEN_OK;
  const uint32_t bad = f->first_15, per_row = (uint32_t)w->n / 8;
  const uint32_t word = (uint32_t)read_i32(src->zeros.words + bad);
  int b = 0;
  while (b < 7 && ((word >> (4 * b)) & 15u) != 15u) b++;
  return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                    "%s: %s[%u][%u] stores 15 for column %u (group %u): under "
                    "MGEN_GPTQ_ZEROS_MINUS_ONE (stored = zero - 1, checkpoint_format \"gptq\") "
                    "that is zero point 16, which 4 bits cannot hold (v1 packing wraps a zero "
                    "point 0 to 15); if the checkpoint is \"gptq_v2\" (stored = zero), pass "
                    "MGEN_GPTQ_ZEROS_EXACT",
                    nm->what, nm->zeros, bad / per_row, bad % per_row,
                    8 * (bad % per_row) + (uint32_t)b, bad / per_row);
}

/* The data checks (one synchronization), then the packing. */
static mgen_status import_int4(mgen_ctx *ctx, const mgen__int4_src *src, const names *nm,
                               mgen_weights *w, void *stream) {
  mgen_status st = mgen__check_device(ctx);
  if (st != MGEN_OK) return st;
  st = mgen__refuse_capture(ctx, stream, nm->what,
                            "import checks the checkpoint's data and synchronizes; import "
                            "before capturing");
  if (st != MGEN_OK) return st;
  const int n = w->n, k = w->k, group = w->group, gsize = group ? group : k;
  mgen__int4_findings f;
  st = mgen__launched(ctx, nm->what,
                      mgen__int4_check(src, (int)w->act, n, k, group, w->d_scales, &f, stream));
  if (st != MGEN_OK) return st;

  if (f.first_bad_gidx != MGEN__NONE) {
    const uint32_t i = f.first_bad_gidx;
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "%s: %s[%u] = %d, not %u / %d = %u: an act-order checkpoint (GPTQ desc_act, "
                      "compressed-tensors actorder \"group\") whose groups are not contiguous in "
                      "K; the kernels read contiguous groups only",
                      nm->what, nm->g_idx, i, read_i32(src->g_idx + i), i, gsize, i / gsize);
  }
  if (src->zeros.words != NULL) {
    st = mgen__scheme_zero_bits((int)w->scheme) ? check_zero_range(ctx, src, nm, &f, w)
                                   : check_symmetric(ctx, src, nm, &f, w);
    if (st != MGEN_OK) return st;
  }
  if (f.first_bad_scale != MGEN__NONE) {
    const uint32_t g = f.first_bad_scale / (uint32_t)n, col = f.first_bad_scale % (uint32_t)n;
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "%s: %s[%u][%u] (group %u of column %u) is not "
                      "finite as %s (infinite, NaN, or out of its range)", nm->what, nm->scales,
                      nm->scales_nk ? col : g, nm->scales_nk ? g : col, g, col,
                      mgen__act_name((int)w->act));
  }
  const int layout = mgen__layout_resolve((int)w->wfmt, (int)w->layout);
  const mgen__format_ops *ops = mgen__format_ops_of((int)w->wfmt); /* check_weights found it */
  const mgen_status st_import = mgen__launched(
      ctx, nm->what, ops->import_int4(src, (int)w->act, layout, n, k, group, w->d_q, w->d_scales, stream));
  return mgen__weights_written(ctx, nm->what, st_import, stream);
}

/* Checks `count` tensors against their expectations (optional from index `first_optional`). */
static mgen_status check_tensors(mgen_ctx *ctx, const char *what, const mgen_tensor *const *given,
                                 const expect *tensors, int count, int first_optional) {
  for (int i = 0; i < count; i++) {
    int present;
    mgen_status st = check_tensor(ctx, what, given[i], &tensors[i], i >= first_optional, &present);
    if (st != MGEN_OK) return st;
  }
  return MGEN_OK;
}

/* The zero point tensor weights with zero points need: absent is refused, naming the
 * symmetric format's import instead. */
static mgen_status need_zeros(mgen_ctx *ctx, const char *what, const char *name,
                              const mgen_tensor *t, const mgen_weights *w) {
  if (t->data != NULL) return MGEN_OK;
  return mgen__fail(ctx, MGEN_ERR_NULL_POINTER,
                    "%s: %s.data is NULL: %s weights take their zero points from it (a "
                    "symmetric checkpoint, which may store none, imports into symmetric "
                    "weights such as MGEN_WFMT_U4B8)",
                    what, name, mgen__wfmt_name((int)w->wfmt));
}

static long long rows_of(const mgen_weights *w) { return w->group ? w->k / w->group : 1; }
static const char *rows_label(const mgen_weights *w) {
  return w->group ? "k/group" : "per-channel rows";
}

/* ---------------------------------------------------------------- AWQ */

void mgen__awq_src(const mgen_awq *a, int n, int k, int group, mgen__int4_src *out) {
  const long long rows = group ? k / group : 1;
  const mgen__int4_src s = {
      .codes = {a->qweight.data, n / 8, 1, 1, MGEN__NIBBLES_AWQ},
      .scales = a->scales.data, .scale_dtype = (int)a->scales.dtype, .scale_g = n, .scale_n = 1,
      .zeros = {a->qzeros.data, n / 8, 1, 1, MGEN__NIBBLES_AWQ}, .zero_words = rows * (n / 8)};
  *out = s;
}

mgen_status mgen_import_awq(mgen_ctx *ctx, const mgen_awq *src, mgen_weights *w, void *stream) {
  static const char what[] = "mgen_import_awq";
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st = check_weights(ctx, what, src, w);
  if (st != MGEN_OK) return st;
  char into[96];
  if (!mgen__scheme_zero_bits((int)w->scheme))
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "%s: AWQ checkpoints have zero points: import them into %s; w->wfmt=%s "
                      "is symmetric", what, zero_weights_text(into, sizeof into),
                      mgen__wfmt_name((int)w->wfmt));
  if ((st = need_zeros(ctx, what, "qzeros", &src->qzeros, w)) != MGEN_OK) return st;
  const int64_t n = w->n, k = w->k, rows = rows_of(w);
  const expect tensors[3] = {
      {"qweight", DT(I32), 2, {k, n / 8}, {"k", "n/8"}},
      {"qzeros", DT(I32), 2, {rows, n / 8}, {rows_label(w), "n/8"}},
      {"scales", SCALE_DTYPES, 2, {rows, n}, {rows_label(w), "n"}},
  };
  const mgen_tensor *given[3] = {&src->qweight, &src->qzeros, &src->scales};
  if ((st = check_tensors(ctx, what, given, tensors, 3, 3)) != MGEN_OK) return st;
  mgen__int4_src s;
  mgen__awq_src(src, w->n, w->k, w->group, &s);
  const names nm = {what, "qzeros", NULL, "scales", 0, 0};
  return import_int4(ctx, &s, &nm, w, stream);
}

/* ---------------------------------------------------------------- GPTQ */

void mgen__gptq_src(const mgen_gptq *g, int n, int k, int group, mgen__int4_src *out) {
  const long long rows = group ? k / group : 1;
  const mgen__int4_src s = {
      .codes = {g->qweight.data, n, 1, 0, MGEN__NIBBLES_IN_ORDER},
      .scales = g->scales.data, .scale_dtype = (int)g->scales.dtype, .scale_g = n, .scale_n = 1,
      .zeros = {g->qzeros.data, n / 8, 1, 1, MGEN__NIBBLES_IN_ORDER}, .zero_words = rows * (n / 8),
      .zero_add = g->zeros == MGEN_GPTQ_ZEROS_MINUS_ONE,
      .g_idx = g->g_idx.data};
  *out = s;
}

mgen_status mgen_import_gptq(mgen_ctx *ctx, const mgen_gptq *src, mgen_weights *w, void *stream) {
  static const char what[] = "mgen_import_gptq";
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st = check_weights(ctx, what, src, w);
  if (st != MGEN_OK) return st;
  if ((unsigned)src->zeros > MGEN_GPTQ_ZEROS_EXACT)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "%s: src->zeros=%d is not an mgen_gptq_zeros",
                      what, (int)src->zeros);
  const int asym = mgen__scheme_zero_bits((int)w->scheme) != 0;
  if (asym && src->zeros == MGEN_GPTQ_ZEROS_AUTO)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG,
                      "%s: src->zeros=MGEN_GPTQ_ZEROS_AUTO for %s weights: asymmetric zeros "
                      "cannot tell the two conventions apart (any stored value is a zero point "
                      "under both): pass MGEN_GPTQ_ZEROS_MINUS_ONE for checkpoint_format "
                      "\"gptq\" (or none: the default), MGEN_GPTQ_ZEROS_EXACT for \"gptq_v2\"",
                      what, mgen__wfmt_name((int)w->wfmt));
  if (asym && (st = need_zeros(ctx, what, "qzeros", &src->qzeros, w)) != MGEN_OK) return st;
  const int64_t n = w->n, k = w->k, rows = rows_of(w);
  const expect tensors[4] = {
      {"qweight", DT(I32), 2, {k / 8, n}, {"k/8", "n"}},
      {"scales", SCALE_DTYPES, 2, {rows, n}, {rows_label(w), "n"}},
      {"qzeros", DT(I32), 2, {rows, n / 8}, {rows_label(w), "n/8"}},
      {"g_idx", DT(I32), 1, {k, 0}, {"k", NULL}},
  };
  const mgen_tensor *given[4] = {&src->qweight, &src->scales, &src->qzeros, &src->g_idx};
  if ((st = check_tensors(ctx, what, given, tensors, 4, 2)) != MGEN_OK) return st;
  mgen__int4_src s;
  mgen__gptq_src(src, w->n, w->k, w->group, &s);
  const names nm = {what, "qzeros", "g_idx", "scales", 0, (int)src->zeros};
  return import_int4(ctx, &s, &nm, w, stream);
}

/* ---------------------------------------------------------------- compressed-tensors */

void mgen__ct_src(const mgen_ct *c, int n, int k, int group, mgen__int4_src *out) {
  const long long rows = group ? k / group : 1;
  const mgen__int4_src s = {
      .codes = {c->weight_packed.data, 1, k / 8, 0, MGEN__NIBBLES_IN_ORDER},
      .scales = c->weight_scale.data, .scale_dtype = (int)c->weight_scale.dtype,
      .scale_g = 1, .scale_n = rows,
      .zeros = {c->weight_zero_point.data, 1, rows, 1, MGEN__NIBBLES_IN_ORDER},
      .zero_words = rows * (n / 8),
      .g_idx = c->weight_g_idx.data};
  *out = s;
}

mgen_status mgen_import_ct(mgen_ctx *ctx, const mgen_ct *src, mgen_weights *w, void *stream) {
  static const char what[] = "mgen_import_ct";
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st = check_weights(ctx, what, src, w);
  if (st != MGEN_OK) return st;
  char into[96];
  const int asym = mgen__scheme_zero_bits((int)w->scheme) != 0;
  if (!asym && src->weight_zero_point.data != NULL)
    return mgen__fail(ctx, MGEN_ERR_UNSUPPORTED_FORMAT,
                      "%s: weight_zero_point is given: compressed-tensors stores it for "
                      "asymmetric schemes (symmetric false) only, which import into %s; %s is "
                      "symmetric", what, zero_weights_text(into, sizeof into),
                      mgen__wfmt_name((int)w->wfmt));
  if (asym && (st = need_zeros(ctx, what, "weight_zero_point", &src->weight_zero_point, w)) !=
                  MGEN_OK)
    return st;
  const int64_t n = w->n, k = w->k, rows = rows_of(w);
  const expect tensors[4] = {
      {"weight_packed", DT(I32), 2, {n, k / 8}, {"n", "k/8"}},
      {"weight_scale", SCALE_DTYPES, 2, {n, rows}, {"n", rows_label(w)}},
      {"weight_zero_point", DT(I32), 2, {n / 8, rows}, {"n/8", rows_label(w)}},
      {"weight_g_idx", DT(I32), 1, {k, 0}, {"k", NULL}},
  };
  const mgen_tensor *given[4] = {&src->weight_packed, &src->weight_scale,
                                 &src->weight_zero_point, &src->weight_g_idx};
  if ((st = check_tensors(ctx, what, given, tensors, 4, 2)) != MGEN_OK) return st;
  mgen__int4_src s;
  mgen__ct_src(src, w->n, w->k, w->group, &s);
  const names nm = {what, "weight_zero_point", "weight_g_idx", "weight_scale", 1, 0};
  return import_int4(ctx, &s, &nm, w, stream);
}
