/* fuzz_import.c -- libFuzzer target for the size, shape and argument checks of the calls that
 * take weights from outside (runtime/src/prepare/weights.c, import.c): mgen_pack_fp4 (FP4
 * checkpoints), mgen_pack (u4b8 codes and scales), mgen_quantize, mgen_import_awq,
 * mgen_import_gptq and mgen_import_ct (int4 checkpoint tensors: dtype, rank, shape, alignment)
 * and mgen_weights_bytes.
 *
 * A context is built by hand whose current-device hook names another device, so a call that
 * passes every argument check stops at ERR_WRONG_DEVICE, the last check before a launch:
 * nothing reaches the GPU (the GPU entry points below abort if called).
 *
 * Each input is read as one call: which entry point, then the weight description, buffers,
 * sizes and global scale, then the entry point's own fields (a checkpoint's tensors), each field
 * drawn from a list of edge values or taken raw (reader below). Properties, beyond "no crash,
 * no sanitizer report":
 * - the status is one the entry point documents, and a failure leaves a message;
 * - a call gets past the checks (ERR_WRONG_DEVICE) exactly when rules restated here from mgen.h
 *   accept it: no check rejects more, or less, than the documentation says.
 *
 * To fuzz another import: write its call and its restated rules (and, if it takes more than
 * the common fields, their reader) as functions and add a row to kImports.
 * Build and run: tests/fuzz/run.sh BUILD_DIR fuzz_import RUNS. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context/internal.h"
#include "formats/formats.h"
#include "prepare/fence.h"
#include "prepare/import.h"
#include "prepare/prepare.h"
#include "prepare/prepare_fe2m1.h"
#include "prepare/prepare_u4.h"

#include "fuzz_require.h"

/* ---------------------------------------------------------------- never reached */

static void reached(const char *what) {
  fprintf(stderr, "fuzz_import: %s was called: a call passed the device check\n", what);
  abort();
}
int mgen__quantize_u4b8(const void *w, int act, int layout, int n, int k, int g, void *q, void *s,
                        void *st) {
  (void)w, (void)act, (void)layout, (void)n, (void)k, (void)g, (void)q, (void)s, (void)st;
  reached("mgen__quantize_u4b8");
  return 0;
}
int mgen__pack_u4b8(const uint8_t *c, const void *src, int act, int layout, int n, int k, int g,
                    void *q, void *s, void *st) {
  (void)c, (void)src, (void)act, (void)layout, (void)n, (void)k, (void)g, (void)q, (void)s, (void)st;
  reached("mgen__pack_u4b8");
  return 0;
}
int mgen__quantize_fe2m1(int act, int scheme, int layout, const void *w, int n, int k, void *q,
                         void *s, void *st) {
  (void)act, (void)scheme, (void)layout, (void)w, (void)n, (void)k, (void)q, (void)s, (void)st;
  reached("mgen__quantize_fe2m1");
  return 0;
}
int mgen__pack_fe2m1(int act, int scheme, int layout, const uint8_t *p, const uint8_t *b, float f,
                     int n, int k, void *q, void *s, void *st) {
  (void)act, (void)scheme, (void)layout, (void)p, (void)b, (void)f, (void)n, (void)k, (void)q, (void)s,
      (void)st;
  reached("mgen__pack_fe2m1");
  return 0;
}
int mgen__quantize_u4(const void *w, int act, int layout, int n, int k, int g, void *q, void *s,
                      void *st) {
  (void)w, (void)act, (void)layout, (void)n, (void)k, (void)g, (void)q, (void)s, (void)st;
  reached("mgen__quantize_u4");
  return 0;
}
int mgen__pack_u4(const uint8_t *c, const void *src, const uint8_t *z, int act, int layout, int n,
                  int k, int g, void *q, void *s, void *st) {
  (void)c, (void)src, (void)z, (void)act, (void)layout, (void)n, (void)k, (void)g, (void)q, (void)s,
      (void)st;
  reached("mgen__pack_u4");
  return 0;
}
int mgen__fence_weights(void *st) {
  (void)st;
  reached("mgen__fence_weights");
  return 0;
}
int mgen__check_pack_inputs(const mgen__pack_inputs *in, void *scratch, void *st,
                            unsigned long long first[2]) {
  (void)in, (void)scratch, (void)st, (void)first;
  reached("mgen__check_pack_inputs");
  return 0;
}
int mgen__int4_check(const mgen__int4_src *src, int act, int n, int k, int group,
                     void *d_scratch, mgen__int4_findings *out, void *stream) {
  (void)src, (void)act, (void)n, (void)k, (void)group, (void)d_scratch, (void)out, (void)stream;
  reached("mgen__int4_check");
  return 0;
}
int mgen__int4_import(const mgen__int4_src *src, int act, int layout, int n, int k, int group,
                      void *d_q, void *d_scales, void *stream) {
  (void)src, (void)act, (void)layout, (void)n, (void)k, (void)group, (void)d_q, (void)d_scales,
      (void)stream;
  reached("mgen__int4_import");
  return 0;
}
int mgen__int4_import_u4(const mgen__int4_src *src, int act, int layout, int n, int k, int group,
                         void *d_q, void *d_scales, void *stream) {
  (void)src, (void)act, (void)layout, (void)n, (void)k, (void)group, (void)d_q, (void)d_scales,
      (void)stream;
  reached("mgen__int4_import_u4");
  return 0;
}
/* The GPU timer and capture query: no_gpu_timer.c. */

/* ---------------------------------------------------------------- the input, read as a call */

typedef struct reader {
  const uint8_t *p;
  size_t left;
} reader;

static unsigned take_u8(reader *r) {
  if (r->left == 0) return 0;
  r->left--;
  return *r->p++;
}

static uint32_t take_u32(reader *r) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v = v << 8 | take_u8(r);
  return v;
}

/* An int: mostly an edge value of the shape rules, else raw bits. */
static int take_int(reader *r) {
  static const int edges[] = {0, 1, -1, 2, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 96, 127, 128,
                              192, 256, 4096, 4160, 11008, 14336, 28672, 57344, 1 << 16,
                              1 << 20, 46336, 46400, 65536 * 8, INT_MAX / 64 * 64, INT_MAX,
                              INT_MIN, -64};
  const unsigned pick = take_u8(r);
  if (pick < 2 * sizeof edges / sizeof edges[0]) return edges[pick / 2];
  return (int)take_u32(r);
}

static float take_float(reader *r) {
  static const float edges[] = {1.0f, 0.0f, -0.0f, -1.0f, INFINITY, -INFINITY, NAN, 3.0e38f,
                                2.6e36f, 2.7e36f, 1e-45f, 0.5f};
  const unsigned pick = take_u8(r);
  if (pick < sizeof edges / sizeof edges[0]) return edges[pick];
  const uint32_t bits = take_u32(r);
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

static _Alignas(16) uint8_t buffer[64];

/* A device pointer: NULL, aligned, or off by 1, 2, 4 or 8 bytes. */
static void *take_ptr(reader *r) {
  static const int offsets[] = {-1, 0, 0, 0, 1, 2, 4, 8};
  const int o = offsets[take_u8(r) % 8];
  return o < 0 ? NULL : buffer + o;
}

static int aligned(const void *p, uintptr_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

typedef struct call {
  mgen_weights w;
  const void *src;       /* d_w, d_codes or d_packed */
  const void *src2;      /* d_scales or d_block_scales */
  size_t packed_bytes, scale_bytes;
  float global_scale;
  mgen_gptq gptq;        /* mgen_import_gptq's source (read_gptq) */
  mgen_ct ct;            /* mgen_import_ct's (read_ct) */
  mgen_awq awq;          /* mgen_import_awq's (read_awq) */
} call;

/* A size: the one the rules want, or another (mostly near it). */
static size_t take_size(reader *r, size_t want) {
  const unsigned pick = take_u8(r) % 8;
  switch (pick) {
  case 0: return want + 1;
  case 1: return want - 1; /* wraps for 0: a huge size */
  case 2: return want * 2;
  case 3: return (size_t)take_u32(r) << (take_u8(r) % 33);
  default: return want;
  }
}

static call read_call(reader *r) {
  call c;
  memset(&c, 0, sizeof c);
  c.w.wfmt = (mgen_wfmt)((int)take_u8(r) % (MGEN_WFMT_COUNT + 2) - 1); /* -1 .. count: past both ends */
  c.w.act = (mgen_act)((int)take_u8(r) % 4 - 1);
  c.w.scheme = (mgen_scheme)((int)take_u8(r) % (MGEN_SCHEME_COUNT + 2) - 1);
  c.w.group = take_int(r);
  c.w.n = take_int(r);
  c.w.k = take_int(r);
  c.w.layout = (mgen_layout)((int)take_u8(r) % 4 - 1);
  c.w.d_q = take_ptr(r);
  c.w.d_scales = take_ptr(r);
  c.src = take_ptr(r);
  c.src2 = take_ptr(r);
  /* Products in 64 bits, as the rules state them; a negative n or k gives a size never wanted. */
  const long long nk = (long long)c.w.n * c.w.k;
  const long long groups = c.w.group > 0 ? (long long)c.w.k / c.w.group : 0;
  c.packed_bytes = take_size(r, nk > 0 ? (size_t)(nk / 2) : 0);
  c.scale_bytes = take_size(r, nk > 0 && groups > 0 ? (size_t)(c.w.n * groups) : 0);
  c.global_scale = take_float(r);
  return c;
}

/* A checkpoint tensor dimension: the one the rules want, or another (near it, past 32 bits,
 * or raw). */
static int64_t take_dim(reader *r, int64_t want) {
  switch (take_u8(r) % 8) {
  case 0: return want + 1;
  case 1: return want - 1;
  case 2: return want * 2;
  case 3: return want + ((int64_t)1 << 32); /* equal in its low 32 bits */
  case 4: return (int64_t)take_int(r);
  default: return want;
  }
}

/* A checkpoint tensor meant to be `ndim`-dimensional [d0, d1] of one of `dtype_a`, `dtype_b`
 * (else another mgen_dtype, or an invalid one), rank and shape mostly right. */
static mgen_tensor take_tensor(reader *r, int ndim, int64_t d0, int64_t d1, int dtype_a,
                               int dtype_b) {
  mgen_tensor t;
  memset(&t, 0, sizeof t);
  t.data = take_ptr(r);
  const unsigned pick = take_u8(r) % 8;
  t.dtype = (mgen_dtype)(pick < 3 ? dtype_a : pick < 5 ? dtype_b : (int)take_u8(r) % 8 - 1);
  const unsigned rank = take_u8(r) % 4;
  t.ndim = rank < 2 ? ndim : rank == 2 ? 3 - ndim : take_int(r);
  t.shape[0] = take_dim(r, d0);
  t.shape[1] = ndim == 2 ? take_dim(r, d1) : take_dim(r, 0);
  return t;
}

/* The weights' scale rows (k / group, or 1 per channel); 0 where the description is bad. */
static int64_t scale_rows(const mgen_weights *w) {
  if (w->group == MGEN_GROUP_CHANNEL) return 1;
  return w->group > 0 ? w->k / w->group : 0;
}

static void read_gptq(reader *r, call *c) {
  const int64_t n = c->w.n, k = c->w.k, rows = scale_rows(&c->w);
  const int scale_dtype = c->w.act == MGEN_ACT_BF16 ? MGEN_DTYPE_BF16 : MGEN_DTYPE_F16;
  c->gptq.qweight = take_tensor(r, 2, k / 8, n, MGEN_DTYPE_I32, MGEN_DTYPE_I32);
  c->gptq.scales = take_tensor(r, 2, rows, n, scale_dtype, MGEN_DTYPE_F32);
  c->gptq.qzeros = take_tensor(r, 2, rows, n / 8, MGEN_DTYPE_I32, MGEN_DTYPE_I32);
  c->gptq.g_idx = take_tensor(r, 1, k, 0, MGEN_DTYPE_I32, MGEN_DTYPE_I32);
  c->gptq.zeros = (mgen_gptq_zeros)((int)take_u8(r) % 5 - 1);
}

static void read_ct(reader *r, call *c) {
  const int64_t n = c->w.n, k = c->w.k, rows = scale_rows(&c->w);
  const int scale_dtype = c->w.act == MGEN_ACT_BF16 ? MGEN_DTYPE_BF16 : MGEN_DTYPE_F16;
  c->ct.weight_packed = take_tensor(r, 2, n, k / 8, MGEN_DTYPE_I32, MGEN_DTYPE_I32);
  c->ct.weight_scale = take_tensor(r, 2, n, rows, scale_dtype, MGEN_DTYPE_F32);
  /* Present now and then (refused into weights without zero points, required into u4), in its
   * shape [n/8, rows] or the transposed one. */
  const unsigned zp = take_u8(r) % 8;
  if (zp == 0) c->ct.weight_zero_point = take_tensor(r, 2, n, rows, MGEN_DTYPE_I32, 0);
  if (zp >= 5) c->ct.weight_zero_point = take_tensor(r, 2, n / 8, rows, MGEN_DTYPE_I32, MGEN_DTYPE_I32);
  c->ct.weight_g_idx = take_tensor(r, 1, k, 0, MGEN_DTYPE_I32, MGEN_DTYPE_I32);
}

static void read_awq(reader *r, call *c) {
  const int64_t n = c->w.n, k = c->w.k, rows = scale_rows(&c->w);
  const int scale_dtype = c->w.act == MGEN_ACT_BF16 ? MGEN_DTYPE_BF16 : MGEN_DTYPE_F16;
  c->awq.qweight = take_tensor(r, 2, k, n / 8, MGEN_DTYPE_I32, MGEN_DTYPE_I32);
  c->awq.qzeros = take_tensor(r, 2, rows, n / 8, MGEN_DTYPE_I32, MGEN_DTYPE_I32);
  c->awq.scales = take_tensor(r, 2, rows, n, scale_dtype, MGEN_DTYPE_F32);
}

/* ---------------------------------------------------------------- the rules, restated */

/* mgen.h, mgen_weights: the packed layout stores k rounded up to a multiple of 128. */
static long long k_packed(const mgen_weights *w) { return ((long long)w->k + 127) / 128 * 128; }

/* mgen.h, "Conventions" and mgen_weights: the description. */
static int desc_ok(const mgen_weights *w) {
  if (!mgen__act_valid((int)w->act) || !mgen__wfmt_valid((int)w->wfmt)) return 0;
  if ((int)w->layout < 0) return 0;
  const int layout = (int)w->layout == 0 ? mgen__wfmt_default_layout((int)w->wfmt) : (int)w->layout;
  if (!mgen__format_valid((int)w->act, (int)w->wfmt, (int)w->scheme, w->group, layout)) return 0;
  if (w->n < 1 || w->k < 1 || w->n % 64 != 0) return 0;
  if (w->k % (w->group != MGEN_GROUP_CHANNEL ? w->group : 64) != 0) return 0;
  return (long long)w->n * k_packed(w) / 8 <= MGEN_MAX_PACKED_WORDS;
}

static int outputs_ok(const mgen_weights *w) {
  return desc_ok(w) && w->d_q != NULL && w->d_scales != NULL && aligned(w->d_q, 16) &&
         aligned(w->d_scales, 16);
}

static int pack_fp4_ok(const call *c) {
  const mgen_weights *w = &c->w;
  if (w->wfmt != MGEN_WFMT_FE2M1 || !outputs_ok(w) || c->src == NULL || c->src2 == NULL)
    return 0;
  if (c->packed_bytes != (size_t)w->n * (size_t)w->k / 2) return 0;
  if (c->scale_bytes != (size_t)w->n * (size_t)(w->k / w->group)) return 0;
  if (w->scheme == MGEN_SCHEME_NVFP4)
    return isfinite(c->global_scale) && c->global_scale > 0 && isfinite(c->global_scale * 128.0f);
  return 1;
}

static int pack_ok(const call *c) {
  return c->w.wfmt == MGEN_WFMT_U4B8 && outputs_ok(&c->w) && c->src != NULL && c->src2 != NULL &&
         aligned(c->src2, 2);
}

static int quantize_ok(const call *c) {
  return outputs_ok(&c->w) && c->src != NULL && aligned(c->src, 2);
}

/* mgen.h, "checkpoint import": a tensor is absent (data NULL; allowed where optional), or of
 * one of the dtypes in `dtypes` (a mask of 1 << mgen_dtype), rank `ndim`, shape [d0, d1] (d0
 * alone for rank 1) and data aligned to its element. */
#define DTYPE_BIT(x) (1u << MGEN_DTYPE_##x)
static int tensor_ok(const mgen_tensor *t, int optional, unsigned dtypes, int ndim, int64_t d0,
                     int64_t d1) {
  if (t->data == NULL) return optional;
  if ((int)t->dtype < MGEN_DTYPE_U8 || (int)t->dtype > MGEN_DTYPE_F32) return 0;
  if (!(dtypes & (1u << t->dtype))) return 0;
  if (t->ndim != ndim || t->shape[0] != d0 || (ndim == 2 && t->shape[1] != d1)) return 0;
  const uintptr_t size = t->dtype == MGEN_DTYPE_U8 ? 1
                         : t->dtype == MGEN_DTYPE_F16 || t->dtype == MGEN_DTYPE_BF16 ? 2 : 4;
  return aligned(t->data, size);
}
static const unsigned kScaleDtypes = DTYPE_BIT(F16) | DTYPE_BIT(BF16) | DTYPE_BIT(F32);

/* mgen.h, mgen_import_gptq: into u4b8, or into u4 (zero points) with qzeros and an explicit
 * zeros convention (AUTO is refused there). */
static int import_gptq_ok(const call *c) {
  const mgen_weights *w = &c->w;
  const int asym = w->wfmt == MGEN_WFMT_U4;
  if ((w->wfmt != MGEN_WFMT_U4B8 && !asym) || !outputs_ok(w)) return 0;
  if ((int)c->gptq.zeros < MGEN_GPTQ_ZEROS_AUTO || (int)c->gptq.zeros > MGEN_GPTQ_ZEROS_EXACT)
    return 0;
  if (asym && c->gptq.zeros == MGEN_GPTQ_ZEROS_AUTO) return 0;
  const int64_t n = w->n, k = w->k, rows = scale_rows(w);
  return tensor_ok(&c->gptq.qweight, 0, DTYPE_BIT(I32), 2, k / 8, n) &&
         tensor_ok(&c->gptq.scales, 0, kScaleDtypes, 2, rows, n) &&
         tensor_ok(&c->gptq.qzeros, !asym, DTYPE_BIT(I32), 2, rows, n / 8) &&
         tensor_ok(&c->gptq.g_idx, 1, DTYPE_BIT(I32), 1, k, 0);
}

/* mgen.h, mgen_import_ct: into u4b8 without weight_zero_point, or into u4 with it. */
static int import_ct_ok(const call *c) {
  const mgen_weights *w = &c->w;
  const int asym = w->wfmt == MGEN_WFMT_U4;
  if ((w->wfmt != MGEN_WFMT_U4B8 && !asym) || !outputs_ok(w)) return 0;
  if (!asym && c->ct.weight_zero_point.data != NULL) return 0;
  const int64_t n = w->n, k = w->k, rows = scale_rows(w);
  return tensor_ok(&c->ct.weight_packed, 0, DTYPE_BIT(I32), 2, n, k / 8) &&
         tensor_ok(&c->ct.weight_scale, 0, kScaleDtypes, 2, n, rows) &&
         (!asym || tensor_ok(&c->ct.weight_zero_point, 0, DTYPE_BIT(I32), 2, n / 8, rows)) &&
         tensor_ok(&c->ct.weight_g_idx, 1, DTYPE_BIT(I32), 1, k, 0);
}

/* mgen.h, mgen_awq: into weights with zero points (u4, scheme ASYM) only, qzeros required. */
static int import_awq_ok(const call *c) {
  const mgen_weights *w = &c->w;
  if (w->wfmt != MGEN_WFMT_U4 || w->scheme != MGEN_SCHEME_ASYM || !outputs_ok(w)) return 0;
  const int64_t n = w->n, k = w->k, rows = scale_rows(w);
  return tensor_ok(&c->awq.qweight, 0, DTYPE_BIT(I32), 2, k, n / 8) &&
         tensor_ok(&c->awq.qzeros, 0, DTYPE_BIT(I32), 2, rows, n / 8) &&
         tensor_ok(&c->awq.scales, 0, kScaleDtypes, 2, rows, n);
}

/* ---------------------------------------------------------------- the calls */

static mgen_ctx ctx;

static mgen_status do_pack_fp4(call *c) {
  return mgen_pack_fp4(&ctx, c->src, c->packed_bytes, c->src2, c->scale_bytes, c->global_scale,
                       &c->w, NULL);
}
static mgen_status do_pack(call *c) { return mgen_pack(&ctx, c->src, c->src2, &c->w, NULL); }
static mgen_status do_quantize(call *c) { return mgen_quantize(&ctx, c->src, &c->w, NULL); }
static mgen_status do_import_gptq(call *c) { return mgen_import_gptq(&ctx, &c->gptq, &c->w, NULL); }
static mgen_status do_import_ct(call *c) { return mgen_import_ct(&ctx, &c->ct, &c->w, NULL); }
static mgen_status do_import_awq(call *c) { return mgen_import_awq(&ctx, &c->awq, &c->w, NULL); }

static const mgen_status kPrepareStatuses[] = {
    MGEN_ERR_NULL_POINTER, MGEN_ERR_MISALIGNED, MGEN_ERR_INVALID_ARG, MGEN_ERR_UNSUPPORTED_FORMAT,
    MGEN_ERR_UNSUPPORTED_SHAPE, MGEN_ERR_WRONG_DEVICE, 0 /* end */};

static const struct {
  const char *name;
  mgen_status (*call)(call *c);
  int (*accepts)(const call *c); /* the documented rules: 1 if the call gets to the device */
  void (*read)(reader *r, call *c); /* its fields beyond read_call's, or NULL */
} kImports[] = {
    {"mgen_pack_fp4", do_pack_fp4, pack_fp4_ok, NULL},
    {"mgen_pack", do_pack, pack_ok, NULL},
    {"mgen_quantize", do_quantize, quantize_ok, NULL},
    {"mgen_import_gptq", do_import_gptq, import_gptq_ok, read_gptq},
    {"mgen_import_ct", do_import_ct, import_ct_ok, read_ct},
    {"mgen_import_awq", do_import_awq, import_awq_ok, read_awq},
};
enum { IMPORTS = sizeof kImports / sizeof kImports[0] };

static int documented(mgen_status st) {
  for (int i = 0; kPrepareStatuses[i] != 0; i++)
    if (st == kPrepareStatuses[i]) return 1;
  return 0;
}

static int other_device(void) { return 1; } /* the context's is 0 */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  ctx.device = 0;
  ctx.sm = 80;
  ctx.sm_count = 4;
  ctx.current_device = other_device;
  mgen__pool_fixed(&ctx.pool, NULL, NULL);
  REQUIRE(mgen__ctx_init_host(&ctx) == MGEN_OK);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reader r = {data, size};
  const unsigned which = take_u8(&r) % (IMPORTS + 1);
  call c = read_call(&r);
  if (which < IMPORTS && kImports[which].read != NULL) kImports[which].read(&r, &c);
  if (which == IMPORTS) { /* mgen_weights_bytes: the description alone */
    size_t qb = 7, sb = 7;
    mgen_status st = mgen_weights_bytes(&c.w, &qb, &sb);
    REQUIRE((st == MGEN_OK) == desc_ok(&c.w));
    if (st == MGEN_OK) {
      REQUIRE(qb == (size_t)c.w.n * (size_t)k_packed(&c.w) / 2 && sb > 0);
    } else {
      REQUIRE(st == MGEN_ERR_NULL_POINTER || st == MGEN_ERR_INVALID_ARG ||
              st == MGEN_ERR_UNSUPPORTED_FORMAT || st == MGEN_ERR_UNSUPPORTED_SHAPE);
      REQUIRE(qb == 7 && sb == 7); /* out-parameters untouched on failure */
    }
    return 0;
  }
  (void)mgen__fail(&ctx, MGEN_OK, "%s", "");
  const mgen_status st = kImports[which].call(&c);
  if (!documented(st))
    fprintf(stderr, "fuzz_import: %s returned %d (%s)\n", kImports[which].name, (int)st,
            mgen_status_str(st));
  REQUIRE(documented(st));
  REQUIRE(mgen_ctx_last_error(&ctx)[0] != '\0');
  const int accepted = kImports[which].accepts(&c);
  if ((st == MGEN_ERR_WRONG_DEVICE) != accepted)
    fprintf(stderr, "fuzz_import: %s: %s (%s); the documented rules %s it (n=%d k=%d group=%d)\n",
            kImports[which].name, mgen_status_str(st), mgen_ctx_last_error(&ctx),
            accepted ? "accept" : "reject", c.w.n, c.w.k, c.w.group);
  REQUIRE((st == MGEN_ERR_WRONG_DEVICE) == accepted);
  return 0;
}
