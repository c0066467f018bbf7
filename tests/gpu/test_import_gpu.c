/* test_import_gpu.c -- checkpoint import on the GPU against the CPU reference of the published
 * layouts (tests/common/ckpt.c for GPTQ and compressed-tensors, fp4.c for NVFP4 / MXFP4): the
 * test builds each checkpoint's tensors from random codes and scales, imports them, and the
 * packed codes and scales must equal ref_pack / fp4_pack of the same codes and scales bit for
 * bit, for every group, both activation types and FP16/BF16/FP32 scales (converted, ties to
 * even, subnormals kept), k not a multiple of 128 included (the K padding of layout.h, written
 * into buffers poisoned first). Then the data checks: act-order g_idx, asymmetric or mixed GPTQ zeros,
 * each zero convention given the other's checkpoint, scales that are not finite in the
 * activation type, a capturing stream; each must fail with its status and message and leave
 * d_q untouched. For FP4 checkpoints: NaN block scales (E4M3 0x7f, 0xff; E8M0 0xff) and a
 * capturing stream, which mgen_pack_fp4 must refuse without packing.
 * Run: build/tests/test_import_gpu [--quick]   (fresh seed each run; MGEN_TEST_SEED) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "ckpt.h"
#include "fp4.h"
#include "gpu_util.h"
#include "ref.h"
#include "rng.h"

static mgen_ctx *ctx;

/* The checkpoint forms tested. */
enum form { GPTQ_V1, GPTQ_V2, GPTQ_AUTO_V1, GPTQ_AUTO_V2, GPTQ_BARE, CT, CT_GIDX, FORMS };
static const char *const form_name[FORMS] = {"gptq v1 (zero - 1)", "gptq v2", "gptq auto/v1",
                                              "gptq auto/v2", "gptq, no qzeros or g_idx",
                                              "compressed-tensors", "compressed-tensors + g_idx"};

static void *upload(const void *host, size_t bytes) {
  void *d = gpu_alloc(bytes);
  gpu_upload(d, host, bytes);
  return d;
}

static long first_diff(const void *x, const void *y, size_t bytes) {
  const unsigned char *a = x, *b = y;
  for (size_t i = 0; i < bytes; i++)
    if (a[i] != b[i]) return (long)i;
  return -1;
}

static mgen_tensor tensor(const void *d, mgen_dtype dtype, int ndim, int64_t d0, int64_t d1) {
  mgen_tensor t = {.data = d, .dtype = dtype, .ndim = ndim, .shape = {d0, d1}};
  return t;
}

/* A checkpoint of one layer on the device, and what importing it must give. */
typedef struct layer {
  int act, n, k, group, rows, sdtype;
  uint8_t *codes;           /* n x k */
  void *scales;             /* as stored: rows x n (GPTQ) or n x rows (compressed-tensors) */
  uint32_t *words, *zeros;  /* qweight or weight_packed; qzeros (rows x n/8) */
  int32_t *g_idx;
  void *d_words, *d_scales, *d_zeros, *d_gidx;
  mgen_weights w;
  size_t qbytes, sbytes;
} layer;

/* Random codes and scales (magnitudes 2^-20..2^4, FP16 subnormals among them; FP32 values
 * with full significands, so converting rounds) as checkpoint `form` stores them. */
static void layer_make(layer *L, rng *r, int form, int act, int n, int k, int group, int sdtype) {
  memset(L, 0, sizeof *L);
  L->act = act, L->n = n, L->k = k, L->group = group, L->sdtype = sdtype;
  L->rows = ref_scale_rows(k, group);
  const size_t nk = (size_t)n * k, ns = (size_t)L->rows * n;
  const int ct = form == CT || form == CT_GIDX;
  L->codes = malloc(nk);
  L->scales = malloc(ns * ckpt_scale_bytes(sdtype));
  L->words = malloc(nk / 2);
  L->zeros = malloc(ns / 2);
  L->g_idx = malloc(sizeof *L->g_idx * (size_t)k);
  for (size_t i = 0; i < nk; i++) L->codes[i] = (uint8_t)rng_below(r, 16);
  for (size_t i = 0; i < ns; i++) {
    const double v = ldexp(rng_uniform(r, 1.0, 2.0), (int)rng_below(r, 25) - 20);
    ckpt_scale_store(L->scales, sdtype, i, (float)(rng_below(r, 4) ? v : -v));
  }
  if (ct) ckpt_ct_packed(L->codes, n, k, L->words);
  else ckpt_gptq_qweight(L->codes, n, k, L->words);
  const uint8_t stored = form == GPTQ_V1 || form == GPTQ_AUTO_V1 ? 7 : 8;
  uint8_t *z = malloc(ns);
  memset(z, stored, ns);
  ckpt_gptq_qzeros(z, L->rows, n, L->zeros);
  free(z);
  for (int i = 0; i < k; i++) L->g_idx[i] = i / (group ? group : k);
  L->d_words = upload(L->words, nk / 2);
  L->d_scales = upload(L->scales, ns * ckpt_scale_bytes(sdtype));
  L->d_zeros = upload(L->zeros, ns / 2);
  L->d_gidx = upload(L->g_idx, sizeof *L->g_idx * (size_t)k);
  mgen_weights w = {.wfmt = MGEN_WFMT_U4B8, .act = (mgen_act)act, .scheme = MGEN_SCHEME_GROUP,
                    .group = group, .n = n, .k = k};
  MGEN_CHECK(ctx, mgen_weights_bytes(&w, &L->qbytes, &L->sbytes));
  w.d_q = gpu_alloc(L->qbytes);
  w.d_scales = gpu_alloc(L->sbytes);
  L->w = w;
}

static void layer_free(layer *L) {
  CUDA_CHECK(cudaFree(L->d_words));
  CUDA_CHECK(cudaFree(L->d_scales));
  CUDA_CHECK(cudaFree(L->d_zeros));
  CUDA_CHECK(cudaFree(L->d_gidx));
  CUDA_CHECK(cudaFree(L->w.d_q));
  CUDA_CHECK(cudaFree(L->w.d_scales));
  free(L->codes), free(L->scales), free(L->words), free(L->zeros), free(L->g_idx);
}

static mgen_gptq gptq_of(const layer *L, mgen_gptq_zeros zeros) {
  mgen_gptq s = {
      .qweight = tensor(L->d_words, MGEN_DTYPE_I32, 2, L->k / 8, L->n),
      .scales = tensor(L->d_scales, (mgen_dtype)L->sdtype, 2, L->rows, L->n),
      .qzeros = tensor(L->d_zeros, MGEN_DTYPE_I32, 2, L->rows, L->n / 8),
      .g_idx = tensor(L->d_gidx, MGEN_DTYPE_I32, 1, L->k, 0),
      .zeros = zeros};
  return s;
}

static mgen_ct ct_of(const layer *L, int with_gidx) {
  mgen_ct s = {.weight_packed = tensor(L->d_words, MGEN_DTYPE_I32, 2, L->n, L->k / 8),
               .weight_scale = tensor(L->d_scales, (mgen_dtype)L->sdtype, 2, L->n, L->rows),
               .weight_g_idx = tensor(with_gidx ? L->d_gidx : NULL, MGEN_DTYPE_I32, 1, L->k, 0)};
  return s;
}

static mgen_status import(layer *L, int form) {
  static const mgen_gptq_zeros mode[] = {MGEN_GPTQ_ZEROS_MINUS_ONE, MGEN_GPTQ_ZEROS_EXACT,
                                         MGEN_GPTQ_ZEROS_AUTO, MGEN_GPTQ_ZEROS_AUTO,
                                         MGEN_GPTQ_ZEROS_AUTO};
  if (form == CT || form == CT_GIDX) {
    const mgen_ct s = ct_of(L, form == CT_GIDX);
    return mgen_import_ct(ctx, &s, &L->w, NULL);
  }
  mgen_gptq s = gptq_of(L, mode[form]);
  if (form == GPTQ_BARE) s.qzeros.data = NULL, s.g_idx.data = NULL;
  return mgen_import_gptq(ctx, &s, &L->w, NULL);
}

/* One import against ref_pack. */
static void test_form(rng *r, int form, int act, int n, int k, int group, int sdtype) {
  layer L;
  layer_make(&L, r, form, act, n, k, group, sdtype);
  const int ct = form == CT || form == CT_GIDX;
  uint16_t *s_act = malloc(sizeof *s_act * (size_t)L.rows * n);
  ckpt_scales_to_act(L.scales, sdtype, ct, L.rows, n, act, s_act);
  uint32_t *q_ref = malloc(L.qbytes), *q_gpu = malloc(L.qbytes);
  uint16_t *s_ref = malloc(L.sbytes), *s_gpu = malloc(L.sbytes);
  ref_pack(act, L.codes, s_act, n, k, group, q_ref, s_ref);
  gpu_fill(L.w.d_q, 0xAB, L.qbytes);
  gpu_fill(L.w.d_scales, 0xCD, L.sbytes);
  MGEN_CHECK(ctx, import(&L, form));
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(q_gpu, L.w.d_q, L.qbytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(s_gpu, L.w.d_scales, L.sbytes, cudaMemcpyDeviceToHost));
  long d = first_diff(q_ref, q_gpu, L.qbytes);
  CHECK(d < 0, "%s %s n=%d k=%d g=%d: codes differ at byte %ld (ref 0x%08x gpu 0x%08x)",
        form_name[form], act_name(act), n, k, group, d, d < 0 ? 0 : q_ref[d / 4],
        d < 0 ? 0 : q_gpu[d / 4]);
  d = first_diff(s_ref, s_gpu, L.sbytes);
  CHECK(d < 0, "%s %s n=%d k=%d g=%d scales dtype %d: scales differ at byte %ld (ref 0x%04x gpu "
        "0x%04x)", form_name[form], act_name(act), n, k, group, sdtype, d,
        d < 0 ? 0 : s_ref[d / 2], d < 0 ? 0 : s_gpu[d / 2]);
  free(s_act), free(q_ref), free(q_gpu), free(s_ref), free(s_gpu);
  layer_free(&L);
}

/* ---------------------------------------------------------------- the data checks */

/* `call` fails with `status` and a message holding `text`, and d_q keeps its 0xAB fill. */
static void expect_refused(layer *L, mgen_status got, mgen_status status, const char *text,
                           const char *what) {
  gpu_expect_refused(ctx, got, status, text, what, L->w.d_q, L->qbytes, 0xAB);
}

/* Re-uploads the zeros of L with stored value z everywhere but (g, col), which gets `odd`. */
static void set_zeros(layer *L, int z, int g, int col, int odd) {
  uint8_t *zs = malloc((size_t)L->rows * L->n);
  memset(zs, z, (size_t)L->rows * L->n);
  if (g >= 0) zs[(size_t)g * L->n + col] = (uint8_t)odd;
  ckpt_gptq_qzeros(zs, L->rows, L->n, L->zeros);
  gpu_upload(L->d_zeros, L->zeros, (size_t)L->rows * L->n / 2);
  free(zs);
}

static void test_refusals(rng *r) {
  layer L;
  layer_make(&L, r, GPTQ_V1, MGEN_ACT_F16, 128, 256, 128, MGEN_DTYPE_F16);
  gpu_fill(L.w.d_q, 0xAB, L.qbytes);
  mgen_gptq s = gptq_of(&L, MGEN_GPTQ_ZEROS_AUTO);

  /* act order: K index 5 (group 0) says group 1, index 200 (group 1) says 0 */
  L.g_idx[5] = 1, L.g_idx[200] = 0;
  gpu_upload(L.d_gidx, L.g_idx, sizeof *L.g_idx * 256);
  expect_refused(&L, mgen_import_gptq(ctx, &s, &L.w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
                 "g_idx[5] = 1, not 5 / 128 = 0: an act-order", "act-order g_idx");
  const mgen_ct c = ct_of(&L, 1);
  expect_refused(&L, mgen_import_ct(ctx, &c, &L.w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
                 "weight_g_idx[5] = 1", "act-order weight_g_idx");
  L.g_idx[5] = 0, L.g_idx[200] = 1;
  gpu_upload(L.d_gidx, L.g_idx, sizeof *L.g_idx * 256);

  /* zeros: one asymmetric zero among v1's 7s; v2 under MINUS_ONE, v1 under EXACT; a mix */
  set_zeros(&L, 7, 1, 13, 5);
  expect_refused(&L, mgen_import_gptq(ctx, &s, &L.w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
                 "qzeros[1][1] stores 5 for column 13, zero point 6", "asymmetric zero");
  expect_refused(&L, mgen_import_gptq(ctx, &s, &L.w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
                 "asymmetric GPTQ (sym false) imports into u4 weights (MGEN_WFMT_U4, scheme "
                 "MGEN_SCHEME_ASYM), u4b8 is symmetric", "asymmetric zero: where it goes");
  set_zeros(&L, 8, -1, 0, 0);
  s.zeros = MGEN_GPTQ_ZEROS_MINUS_ONE;
  expect_refused(&L, mgen_import_gptq(ctx, &s, &L.w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
                 "\"gptq_v2\" checkpoint?", "v2 zeros read as v1");
  set_zeros(&L, 7, -1, 0, 0);
  s.zeros = MGEN_GPTQ_ZEROS_EXACT;
  expect_refused(&L, mgen_import_gptq(ctx, &s, &L.w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
                 "MGEN_GPTQ_ZEROS_MINUS_ONE", "v1 zeros read as v2");
  set_zeros(&L, 7, 0, 100, 8);
  s.zeros = MGEN_GPTQ_ZEROS_AUTO;
  expect_refused(&L, mgen_import_gptq(ctx, &s, &L.w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
                 "stored zeros seen: 7, 8", "mixed 7 and 8");
  set_zeros(&L, 7, -1, 0, 0);

  /* scales not finite in the activation type: FP16 NaN; BF16 99840 for FP16 activations */
  uint16_t *sc = (uint16_t *)L.scales;
  const uint16_t keep = sc[1 * 128 + 77];
  sc[1 * 128 + 77] = 0x7e00;
  gpu_upload(L.d_scales, L.scales, 2 * 128 * 2);
  expect_refused(&L, mgen_import_gptq(ctx, &s, &L.w, NULL), MGEN_ERR_INVALID_ARG,
                 "scales[1][77] (group 1 of column 77) is not finite as f16", "NaN scale");
  sc[1 * 128 + 77] = keep;
  layer_free(&L);

  layer_make(&L, r, CT, MGEN_ACT_F16, 128, 256, 64, MGEN_DTYPE_BF16);
  gpu_fill(L.w.d_q, 0xAB, L.qbytes);
  ((uint16_t *)L.scales)[9 * 4 + 2] = 0x47c3; /* weight_scale[9][2] = 99840 */
  gpu_upload(L.d_scales, L.scales, 128 * 4 * 2);
  const mgen_ct c2 = ct_of(&L, 0);
  expect_refused(&L, mgen_import_ct(ctx, &c2, &L.w, NULL), MGEN_ERR_INVALID_ARG,
                 "weight_scale[9][2] (group 2 of column 9) is not finite as f16", "BF16 overflow");
  L.w.act = MGEN_ACT_BF16; /* finite there: accepted (the sizes do not depend on the act) */
  MGEN_CHECK(ctx, mgen_import_ct(ctx, &c2, &L.w, NULL));
  CUDA_CHECK(cudaDeviceSynchronize());
  gpu_fill(L.w.d_q, 0xAB, L.qbytes);

  /* a capturing stream: refused before any work is enqueued (the capture stays valid) */
  cudaStream_t st;
  cudaGraph_t graph;
  CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  const mgen_status got = mgen_import_ct(ctx, &c2, &L.w, st);
  CUDA_CHECK(cudaStreamEndCapture(st, &graph));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(st));
  expect_refused(&L, got, MGEN_ERR_STREAM_CAPTURING, "import before capturing", "capturing");
  layer_free(&L);
}

/* ---------------------------------------------------------------- FP4 checkpoints */

/* mgen_pack_fp4 refuses a NaN block scale, naming the first (d_block_scales[i], its column and
 * block), and packs nothing: w->d_scales keeps its fill, and so does w->d_q past its first 16
 * bytes (the check's scratch); then a capturing stream is refused before any work. bs (nb
 * bytes, no NaN) is restored on the device afterwards. */
static void test_fp4_refusals(mgen_weights *w, const uint8_t *d_packed, uint8_t *d_bs,
                              const uint8_t *bs, size_t nb, float global) {
  const size_t groups = (size_t)(w->k / w->group), qb = fp4_qbytes(w->n, w->k);
  const size_t sb = fp4_sbytes(w->scheme, w->n, w->k);
  const char *scheme = w->scheme == MGEN_SCHEME_NVFP4 ? "nvfp4" : "mxfp4";
  static const uint8_t e4m3_nans[] = {0x7f, 0xff}, e8m0_nans[] = {0xff};
  const uint8_t *nans = w->scheme == MGEN_SCHEME_NVFP4 ? e4m3_nans : e8m0_nans;
  const int count = w->scheme == MGEN_SCHEME_NVFP4 ? 2 : 1;
  const size_t at[] = {0, nb / 2 + 3, nb - 1}; /* the first, a middle and the last scale */
  uint8_t *q = malloc(qb), *s = malloc(sb);
  for (int i = 0; i < count; i++)
    for (int p = 0; p < 3; p++) {
      /* the first also with a later NaN: the first in memory order is named */
      gpu_upload(d_bs + at[p], &nans[i], 1);
      if (p == 0) gpu_upload(d_bs + nb - 1, &nans[i], 1);
      gpu_fill(w->d_q, 0xAB, qb);
      gpu_fill(w->d_scales, 0xCD, sb);
      const mgen_status st = mgen_pack_fp4(ctx, d_packed, (size_t)w->n * w->k / 2, d_bs, nb,
                                           global, w, NULL);
      char want[96];
      snprintf(want, sizeof want, "d_block_scales[%zu] (column n=%zu, block %zu along k)", at[p],
               at[p] / groups, at[p] % groups);
      CHECK(st == MGEN_ERR_INVALID_ARG && strstr(mgen_ctx_last_error(ctx), want) != NULL,
            "fp4 %s: scale 0x%02x at %zu: %s (%s), expected INVALID_ARG naming '%s'", scheme,
            nans[i], at[p], mgen_status_str(st), mgen_ctx_last_error(ctx), want);
      CUDA_CHECK(cudaMemcpy(q, w->d_q, qb, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(s, w->d_scales, sb, cudaMemcpyDeviceToHost));
      size_t touched = 0;
      for (size_t j = 16; j < qb; j++) touched += q[j] != 0xAB;
      for (size_t j = 0; j < sb; j++) touched += s[j] != 0xCD;
      CHECK(touched == 0, "fp4 %s: a refused pack wrote %zu bytes", scheme, touched);
      gpu_upload(d_bs + at[p], bs + at[p], 1);
      gpu_upload(d_bs + nb - 1, bs + nb - 1, 1);
    }
  /* a capturing stream: refused before any work is enqueued (the capture stays valid) */
  cudaStream_t stream;
  cudaGraph_t graph;
  gpu_fill(w->d_q, 0xAB, qb);
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const mgen_status got = mgen_pack_fp4(ctx, d_packed, (size_t)w->n * w->k / 2, d_bs, nb, global,
                                        w, stream);
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(stream));
  CHECK(got == MGEN_ERR_STREAM_CAPTURING &&
            strstr(mgen_ctx_last_error(ctx), "pack before capturing") != NULL,
        "fp4 %s capturing: %s (%s)", scheme, mgen_status_str(got), mgen_ctx_last_error(ctx));
  CUDA_CHECK(cudaMemcpy(q, w->d_q, qb, cudaMemcpyDeviceToHost));
  size_t touched = 0;
  for (size_t j = 0; j < qb; j++) touched += q[j] != 0xAB;
  CHECK(touched == 0, "fp4 %s: a pack refused for capture wrote %zu bytes of d_q", scheme, touched);
  free(q), free(s);
}

/* mgen_pack_fp4 from bytes built as ModelOpt NVFP4 / OCP MXFP4 store them, against fp4_pack;
 * then its refusals (test_fp4_refusals). */
static void test_fp4(rng *r, int act, int scheme, int n, int k) {
  const int group = scheme == MGEN_SCHEME_NVFP4 ? FP4_NVFP4_GROUP : FP4_MXFP4_GROUP;
  const size_t nk = (size_t)n * k, nb = nk / (size_t)group;
  uint8_t *codes = malloc(nk), *packed = malloc(nk / 2), *bs = malloc(nb);
  for (size_t i = 0; i < nk; i++) codes[i] = (uint8_t)rng_below(r, 16);
  for (size_t i = 0; i < nb; i++) /* E4M3 without NaN (0x7f); E8M0 around 2^0 */
    bs[i] = (uint8_t)(scheme == MGEN_SCHEME_NVFP4 ? rng_below(r, 0x7f) : 115 + rng_below(r, 24));
  if (scheme == MGEN_SCHEME_MXFP4) bs[1] = 0x7f; /* E8M0 1.0, E4M3's NaN pattern: accepted */
  const float global = scheme == MGEN_SCHEME_NVFP4 ? 0.0123f : 1.0f;
  fp4_pack_bytes(codes, n, k, packed);
  mgen_weights w = {.wfmt = MGEN_WFMT_FE2M1, .act = (mgen_act)act, .scheme = (mgen_scheme)scheme,
                    .group = group, .n = n, .k = k};
  size_t qb, sb;
  MGEN_CHECK(ctx, mgen_weights_bytes(&w, &qb, &sb));
  CHECK(qb == fp4_qbytes(n, k) && sb == fp4_sbytes(scheme, n, k), "fp4 sizes");
  w.d_q = gpu_alloc(qb), w.d_scales = gpu_alloc(sb);
  gpu_fill(w.d_q, 0xAB, qb), gpu_fill(w.d_scales, 0xCD, sb); /* the padding must be written */
  uint8_t *d_packed = upload(packed, nk / 2), *d_bs = upload(bs, nb);
  MGEN_CHECK(ctx, mgen_pack_fp4(ctx, d_packed, nk / 2, d_bs, nb, global, &w, NULL));
  uint32_t *q_ref = malloc(qb), *q_gpu = malloc(qb);
  uint8_t *s_ref = malloc(sb), *s_gpu = malloc(sb);
  fp4_pack(act, scheme, codes, bs, global, n, k, q_ref, s_ref);
  CUDA_CHECK(cudaMemcpy(q_gpu, w.d_q, qb, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(s_gpu, w.d_scales, sb, cudaMemcpyDeviceToHost));
  long d = first_diff(q_ref, q_gpu, qb);
  CHECK(d < 0, "fp4 scheme %d n=%d k=%d: codes differ at byte %ld", scheme, n, k, d);
  d = first_diff(s_ref, s_gpu, sb);
  CHECK(d < 0, "fp4 scheme %d n=%d k=%d: scales differ at byte %ld", scheme, n, k, d);
  test_fp4_refusals(&w, d_packed, d_bs, bs, nb, global);
  CUDA_CHECK(cudaFree(w.d_q));
  CUDA_CHECK(cudaFree(w.d_scales));
  CUDA_CHECK(cudaFree(d_packed));
  CUDA_CHECK(cudaFree(d_bs));
  free(codes), free(packed), free(bs), free(q_ref), free(q_gpu), free(s_ref), free(s_gpu);
}

int main(int argc, char **argv) {
  gpu_require_device("test_import_gpu");
  const int quick = gpu_quick_mode(argc, argv);
  rng r;
  rng_seed(&r, rng_test_seed("test_import_gpu"));
  /* Importing needs no kernel of the table; see test_pack_gpu for the stub table. */
  static const mgen_kernel_desc stub = {.name = "stub", .sm_min = 0, .tile_m = 16, .tile_n = 64};
  static const mgen_table stub_table = {&stub, 1, 0, "stub"};
  const mgen_table *table = mgen_builtin_table()->count ? mgen_builtin_table() : &stub_table;
  MGEN_CHECK(ctx, mgen_ctx_create(&ctx, table, NULL));

  /* (n, k); k = 2752 and 1376 are padded (to 2816, 1408); --quick: the first two */
  static const int shapes[][2] = {{64, 128}, {64, 2752}, {128, 256}, {256, 512}, {192, 1376}};
  static const int groups[] = {MGEN_GROUP_CHANNEL, 32, 64, 128};
  static const int acts[] = {MGEN_ACT_F16, MGEN_ACT_BF16};
  static const int sdtypes[] = {MGEN_DTYPE_F16, MGEN_DTYPE_BF16, MGEN_DTYPE_F32};
  int turn = 0;
  for (int a = 0; a < 2; a++)
    for (int s = 0; s < (quick ? 2 : 5); s++)
      for (int g = 0; g < 4; g++)
        for (int f = 0; f < FORMS; f++, turn++)
          if (shapes[s][1] % (groups[g] ? groups[g] : 64) == 0)
            test_form(&r, f, acts[a], shapes[s][0], shapes[s][1], groups[g], sdtypes[turn % 3]);
  test_refusals(&r);
  for (int a = 0; a < 2; a++) {
    test_fp4(&r, acts[a], MGEN_SCHEME_NVFP4, 128, 256);
    test_fp4(&r, acts[a], MGEN_SCHEME_MXFP4, 64, 512);
    test_fp4(&r, acts[a], MGEN_SCHEME_NVFP4, 128, 3696); /* padded to 3712 */
    test_fp4(&r, acts[a], MGEN_SCHEME_MXFP4, 192, 1376); /* padded to 1408 */
  }
  mgen_ctx_destroy(ctx);
  return check_exit("test_import_gpu");
}
