/* test_import_u4_gpu.c -- the asymmetric int4 imports into u4 weights on the GPU against an
 * FP64 reference built on the CPU from the unpacked tensors (tests/common/ckpt_u4.c, written
 * from the formats' published descriptions): AutoAWQ (mgen_import_awq), GPTQ sym=false v1 and
 * v2 (mgen_import_gptq, MINUS_ONE / EXACT, with and without an identity g_idx) and
 * compressed-tensors asymmetric (mgen_import_ct), zero points over 0..15 (1..15 for v1, whose
 * 0 would be stored 15), FP16/BF16/FP32 scales, both activation types, groups 32/64/128 and per
 * channel, k padded (k = 96 in g32, 192 and 448 in g64, 320 per channel).
 * Each import is checked twice:
 *   - the packed buffers (poisoned first) dequantized on the CPU through layout.h (codes by
 *     mgen__w4_position, scales by mgen__scale_packed_pos, zeros by mgen__zero_offset /
 *     mgen__zero_place) must equal (q - z) * act(s) of the reference exactly, and the K padding
 *     must be code 8, scale 1.0, zero 8;
 *   - mgen_gemm on the imported weights (odd m) against the FP64 GEMM of the reference weights,
 *     within u4b8's bound (q - z is exact in the kernels, the scale rounds once: the u4 partial's
 *     comment), where the table has a kernel for the weights (cases without one are counted and
 *     printed);
 *   - the same import into the e4m3 layout (W4A8 words, poisoned buffers): its words are those
 *     layout.h (mgen__e4m3_source, mgen__e4m3_word) makes of the checked import's codes, its
 *     scale buffer (scales and zero rows) that import's, bit for bit.
 * Then the data checks: a stored 15 under MINUS_ONE (named: qzeros[g][w], its column), act-order
 * g_idx for GPTQ and compressed-tensors into u4; each refused, d_q untouched.
 * Run: build/tests/test_import_u4_gpu [--quick]   (fresh seed each run; MGEN_TEST_SEED) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "ckpt.h"
#include "ckpt_u4.h"
#include "formats/layout.h"
#include "gpu_util.h"
#include "ref_gemm.h"
#include "rng.h"

static mgen_ctx *ctx;
static long gemm_run, gemm_no_kernel;

enum form { AWQ, GPTQ_V1, GPTQ_V2, GPTQ_V1_GIDX, CT, CT_GIDX, FORMS };
static const char *const form_name[FORMS] = {"awq", "gptq v1 (zero - 1)", "gptq v2",
                                              "gptq v1 + g_idx", "compressed-tensors",
                                              "compressed-tensors + g_idx"};
static const int form_layout[FORMS] = {CKPT_U4_AWQ, CKPT_U4_GPTQ_V1, CKPT_U4_GPTQ_V2,
                                       CKPT_U4_GPTQ_V1, CKPT_U4_CT, CKPT_U4_CT};

static void *upload(const void *host, size_t bytes) {
  void *d = gpu_alloc(bytes);
  gpu_upload(d, host, bytes);
  return d;
}

static mgen_tensor tensor(const void *d, int dtype, int ndim, int64_t d0, int64_t d1) {
  mgen_tensor t = {.data = d, .dtype = (mgen_dtype)dtype, .ndim = ndim, .shape = {d0, d1}};
  return t;
}

/* One layer: its checkpoint on the host (c) and the device, and the weights to import into. */
typedef struct layer {
  int form, act, rows;
  ckpt_u4 c;
  int32_t *g_idx;
  void *d_weight, *d_zeros, *d_scales, *d_gidx;
  mgen_weights w;
  size_t qbytes, sbytes;
} layer;

/* A scale exact in `dtype` (F32: a full significand, so converting to the act rounds), either
 * sign, magnitude 2^-12..2^-4 (outputs stay well inside FP16). */
static float random_scale(rng *r, int dtype) {
  float v = (float)ldexp(rng_uniform(r, 1.0, 2.0), (int)rng_below(r, 9) - 12);
  if (rng_below(r, 4) == 0) v = -v;
  if (dtype == MGEN_DTYPE_F16) return act_to_float(MGEN_ACT_F16, act_from_float(MGEN_ACT_F16, v));
  if (dtype == MGEN_DTYPE_BF16) return act_to_float(MGEN_ACT_BF16, act_from_float(MGEN_ACT_BF16, v));
  return v;
}

static void layer_make(layer *L, rng *r, int form, int act, int n, int k, int group, int dtype) {
  memset(L, 0, sizeof *L);
  L->form = form, L->act = act, L->rows = ckpt_u4_rows(k, group);
  ckpt_u4 *c = &L->c;
  c->layout = form_layout[form], c->n = n, c->k = k, c->group = group, c->dtype = dtype;
  const size_t nk = (size_t)n * k, ns = (size_t)L->rows * n;
  const size_t wwords = (size_t)ckpt_u4_weight_words(c->layout, n, k);
  const size_t zwords = (size_t)ckpt_u4_zero_words(c->layout, n, k, group);
  uint8_t *codes = malloc(nk), *zeros = malloc(ns);
  float *scales = malloc(sizeof *scales * ns);
  const unsigned lo = c->layout == CKPT_U4_GPTQ_V1; /* v1 stores a zero point 0 as 15: refused */
  for (size_t i = 0; i < nk; i++) codes[i] = (uint8_t)rng_below(r, 16);
  for (size_t i = 0; i < ns; i++) {
    zeros[i] = (uint8_t)(i < 16 - lo ? i + lo : lo + rng_below(r, 16 - lo)); /* every value */
    scales[i] = random_scale(r, dtype);
  }
  c->weight = malloc(sizeof *c->weight * wwords);
  c->zeros = malloc(sizeof *c->zeros * zwords);
  c->scales = malloc(ckpt_scale_bytes(dtype) * ns);
  ckpt_u4_pack(c, codes, zeros, scales);
  free(codes), free(zeros), free(scales);
  L->g_idx = malloc(sizeof *L->g_idx * (size_t)k);
  for (int i = 0; i < k; i++) L->g_idx[i] = i / (group ? group : k);
  L->d_weight = upload(c->weight, sizeof *c->weight * wwords);
  L->d_zeros = upload(c->zeros, sizeof *c->zeros * zwords);
  L->d_scales = upload(c->scales, ckpt_scale_bytes(dtype) * ns);
  L->d_gidx = upload(L->g_idx, sizeof *L->g_idx * (size_t)k);
  mgen_weights w = {.wfmt = MGEN_WFMT_U4, .act = (mgen_act)act, .scheme = MGEN_SCHEME_ASYM,
                    .group = group, .n = n, .k = k};
  MGEN_CHECK(ctx, mgen_weights_bytes(&w, &L->qbytes, &L->sbytes));
  w.d_q = gpu_alloc(L->qbytes);
  w.d_scales = gpu_alloc(L->sbytes);
  L->w = w;
}

static void layer_free(layer *L) {
  CUDA_CHECK(cudaFree(L->d_weight));
  CUDA_CHECK(cudaFree(L->d_zeros));
  CUDA_CHECK(cudaFree(L->d_scales));
  CUDA_CHECK(cudaFree(L->d_gidx));
  CUDA_CHECK(cudaFree(L->w.d_q));
  CUDA_CHECK(cudaFree(L->w.d_scales));
  free(L->c.weight), free(L->c.zeros), free(L->c.scales), free(L->g_idx);
}

static mgen_status import(layer *L) {
  const int n = L->c.n, k = L->c.k, rows = L->rows, dt = L->c.dtype;
  switch (L->form) {
  case AWQ: {
    const mgen_awq s = {tensor(L->d_weight, MGEN_DTYPE_I32, 2, k, n / 8),
                        tensor(L->d_zeros, MGEN_DTYPE_I32, 2, rows, n / 8),
                        tensor(L->d_scales, dt, 2, rows, n)};
    return mgen_import_awq(ctx, &s, &L->w, NULL);
  }
  case CT:
  case CT_GIDX: {
    const mgen_ct s = {
        .weight_packed = tensor(L->d_weight, MGEN_DTYPE_I32, 2, n, k / 8),
        .weight_scale = tensor(L->d_scales, dt, 2, n, rows),
        .weight_zero_point = tensor(L->d_zeros, MGEN_DTYPE_I32, 2, n / 8, rows),
        .weight_g_idx = tensor(L->form == CT_GIDX ? L->d_gidx : NULL, MGEN_DTYPE_I32, 1, k, 0)};
    return mgen_import_ct(ctx, &s, &L->w, NULL);
  }
  default: {
    const mgen_gptq s = {
        .qweight = tensor(L->d_weight, MGEN_DTYPE_I32, 2, k / 8, n),
        .scales = tensor(L->d_scales, dt, 2, rows, n),
        .qzeros = tensor(L->d_zeros, MGEN_DTYPE_I32, 2, rows, n / 8),
        .g_idx = tensor(L->form == GPTQ_V1_GIDX ? L->d_gidx : NULL, MGEN_DTYPE_I32, 1, k, 0),
        .zeros = L->form == GPTQ_V2 ? MGEN_GPTQ_ZEROS_EXACT : MGEN_GPTQ_ZEROS_MINUS_ONE};
    return mgen_import_gptq(ctx, &s, &L->w, NULL);
  }
  }
}

/* The reference: w[n][k] = (q - z) * act(s) from the unpacked tensors, in FP64. */
static void reference_weights(const layer *L, double *w) {
  const ckpt_u4 *c = &L->c;
  const int gsize = c->group ? c->group : c->k;
  for (int j = 0; j < c->n; j++)
    for (int i = 0; i < c->k; i++) {
      const int g = i / gsize;
      const double s = act_to_double(L->act, act_from_double(L->act, ckpt_u4_scale(c, g, j)));
      w[(size_t)j * c->k + i] = ((int)ckpt_u4_code(c, i, j) - (int)ckpt_u4_zero(c, g, j)) * s;
    }
}

/* The packed buffers read back through layout.h, against the reference and the K padding. */
static void check_packed(const layer *L, const double *ref) {
  const int n = L->c.n, k = L->c.k, group = L->c.group, act = L->act;
  const int prows = mgen__scale_rows(k, group), kp = (int)mgen__k_packed(k);
  const long long zoff = mgen__zero_offset(n, k, group, 2);
  CHECK(L->sbytes == (size_t)zoff + (size_t)prows * n / 2,
        "%s n=%d k=%d g=%d: scale buffer of %zu bytes, layout.h's is %lld + %d x %d / 2",
        form_name[L->form], n, k, group, L->sbytes, zoff, prows, n);
  uint32_t *q = malloc(L->qbytes);
  uint8_t *sb = malloc(L->sbytes);
  CUDA_CHECK(cudaMemcpy(q, L->w.d_q, L->qbytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(sb, L->w.d_scales, L->sbytes, cudaMemcpyDeviceToHost));
  const uint16_t *s = (const uint16_t *)sb;
  const uint32_t *z = (const uint32_t *)(sb + zoff);
  const uint16_t one = act_from_double(act, 1.0);
  long bad = 0, pad = 0, first = -1;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < kp; i++) {
      int word, nibble, zw, zn;
      mgen__w4_position(n, i, j, &word, &nibble);
      const int code = (int)((q[word] >> (4 * nibble)) & 15u);
      const int g = group ? i / group : 0;
      const uint16_t sc = s[(size_t)g * n + (group ? mgen__scale_packed_pos(j) : j)];
      mgen__zero_place(j, &zw, &zn);
      const int zero = (int)((z[(size_t)g * (n / 8) + zw] >> (4 * zn)) & 15u);
      if (i < k) {
        const double got = (code - zero) * act_to_double(act, sc);
        if (got != ref[(size_t)j * k + i] && bad++ == 0) first = (long)j * k + i;
      } else {
        /* padded K: code 8; a padded group's scale 1.0 and zero 8 (per channel: the row's) */
        pad += code != MGEN_U4_PAD_CODE;
        if (group && i / group >= k / group) pad += sc != one || zero != MGEN_U4_PAD_ZERO;
      }
    }
  CHECK(bad == 0, "%s %s n=%d k=%d g=%d scales dtype %d: %ld packed weights differ from the "
        "reference, first (n=%ld, k=%ld) = %g", form_name[L->form], act_name(act), n, k, group,
        L->c.dtype, bad, first < 0 ? 0 : first / k, first < 0 ? 0 : first % k,
        first < 0 ? 0.0 : ref[first]);
  CHECK(pad == 0, "%s n=%d k=%d g=%d: %ld padded codes, scales or zeros wrong", form_name[L->form],
        n, k, group, pad);
  free(q), free(sb);
}

/* mgen_gemm on the imported weights against the FP64 GEMM of the reference weights. */
static void check_gemm(rng *r, const layer *L, const double *ref, int m) {
  const int n = L->c.n, k = L->c.k, act = L->act;
  const size_t cap = (size_t)m * n + 64; /* + a guard the GEMM must not write */
  uint16_t *a = malloc(sizeof *a * (size_t)m * k);
  for (size_t i = 0; i < (size_t)m * k; i++) a[i] = act_from_double(act, rng_uniform(r, -1.0, 1.0));
  uint16_t *d_a = upload(a, sizeof *a * (size_t)m * k), *d_c = gpu_alloc(sizeof *d_c * cap);
  gpu_fill(d_c, 0xFF, sizeof *d_c * cap);
  const mgen_status st = mgen_gemm(ctx, (mgen_act)act, m, d_a, &L->w, d_c, NULL);
  if (st == MGEN_ERR_NO_KERNEL || st == MGEN_ERR_UNSUPPORTED_FORMAT) {
    gemm_no_kernel++; /* this build's table has no kernel for the weights */
  } else {
    MGEN_CHECK(ctx, st);
    gemm_run++;
    double *d_w = upload(ref, sizeof *ref * (size_t)n * k), *d_slack = gpu_alloc(sizeof *d_slack * (size_t)n * k);
    gpu_fill(d_slack, 0, sizeof *d_slack * (size_t)n * k);
    gemm_ref out;
    double **parts[] = {&out.ref, &out.abs_sum, &out.werr, &out.sq_sum};
    for (int i = 0; i < 4; i++) *parts[i] = gpu_alloc(sizeof(double) * (size_t)m * n);
    CUDA_CHECK((cudaError_t)gpu_ref_gemm(act, m, n, k, d_a, d_w, d_slack, &out, NULL));
    const double u = act_unit_roundoff(act); /* u4b8's bound (gemm_formats.c) */
    const gemm_bound bound = {.rel = 2 * u, .abs = 2 * u + k * 0x1p-22, .tiny = 0.0, .unit = u};
    gemm_check init = {0, 0, 0, 0, ~0ull, 0, 0.0, 0.0, 0.0}, res;
    gemm_check *d_check = upload(&init, sizeof init);
    CUDA_CHECK((cudaError_t)gpu_check_gemm(act, m, n, &bound, d_c, cap, &out, NULL, 0, d_check,
                                           NULL));
    CUDA_CHECK(cudaMemcpy(&res, d_check, sizeof res, cudaMemcpyDeviceToHost));
    CHECK(res.bad == 0 && res.nonfinite == 0 && res.unwritten == 0 && res.guard_bad == 0,
          "%s %s n=%d k=%d g=%d m=%d: mgen_gemm: %llu outputs over the bound (first %llu), %llu "
          "NaN/inf, %llu unwritten, %llu written past m x n", form_name[L->form], act_name(act),
          n, k, L->c.group, m, res.bad, res.first_bad, res.nonfinite, res.unwritten, res.guard_bad);
    for (int i = 0; i < 4; i++) CUDA_CHECK(cudaFree(*parts[i]));
    CUDA_CHECK(cudaFree(d_w));
    CUDA_CHECK(cudaFree(d_slack));
    CUDA_CHECK(cudaFree(d_check));
  }
  CUDA_CHECK(cudaFree(d_a));
  CUDA_CHECK(cudaFree(d_c));
  free(a);
}

/* The import of L into the e4m3 layout against L's own (the mma layout, checked already). */
static void check_e4m3(const layer *L) {
  const int n = L->c.n;
  uint32_t *q = malloc(L->qbytes), *want = malloc(L->qbytes), *got = malloc(L->qbytes);
  uint8_t *s = malloc(L->sbytes), *s_got = malloc(L->sbytes);
  CUDA_CHECK(cudaMemcpy(q, L->w.d_q, L->qbytes, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(s, L->w.d_scales, L->sbytes, cudaMemcpyDeviceToHost));
  for (size_t word = 0; word < L->qbytes / 4; word++) {
    uint8_t codes[MGEN_W4_NIBBLES];
    for (int slot = 0; slot < MGEN_W4_NIBBLES; slot++) {
      int kk, nn, at, nibble;
      mgen__e4m3_source(n, (int)word, slot, &kk, &nn);
      mgen__w4_position(n, kk, nn, &at, &nibble);
      codes[slot] = (uint8_t)((q[at] >> (4 * nibble)) & 15u);
    }
    want[word] = mgen__e4m3_word(MGEN_E4M3_WORDS_U4, codes);
  }
  layer E = *L;
  E.w.layout = MGEN_LAYOUT_E4M3;
  E.w.d_q = gpu_alloc(L->qbytes), E.w.d_scales = gpu_alloc(L->sbytes);
  gpu_fill(E.w.d_q, 0x5A, L->qbytes);
  gpu_fill(E.w.d_scales, 0x5A, L->sbytes);
  const mgen_status st = import(&E);
  CHECK(st == MGEN_OK, "%s e4m3: %s: %s", form_name[L->form], mgen_status_str(st), mgen_ctx_last_error(ctx));
  if (st == MGEN_OK) {
    CUDA_CHECK(cudaMemcpy(got, E.w.d_q, L->qbytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(s_got, E.w.d_scales, L->sbytes, cudaMemcpyDeviceToHost));
    long d = -1;
    for (size_t i = 0; i < L->qbytes / 4 && d < 0; i++)
      if (want[i] != got[i]) d = (long)i;
    CHECK(d < 0, "%s %s n=%d k=%d g=%d e4m3: word %ld is 0x%08x, the mma import's codes make 0x%08x",
          form_name[L->form], act_name(L->act), n, L->c.k, L->c.group, d, d < 0 ? 0 : got[d], d < 0 ? 0 : want[d]);
    CHECK(memcmp(s, s_got, L->sbytes) == 0, "%s %s n=%d k=%d g=%d e4m3: the scale buffer differs from the "
          "mma import's", form_name[L->form], act_name(L->act), n, L->c.k, L->c.group);
  }
  CUDA_CHECK(cudaFree(E.w.d_q));
  CUDA_CHECK(cudaFree(E.w.d_scales));
  free(q), free(want), free(got), free(s), free(s_got);
}

static void test_form(rng *r, int form, int act, int n, int k, int group, int dtype) {
  layer L;
  layer_make(&L, r, form, act, n, k, group, dtype);
  double *ref = malloc(sizeof *ref * (size_t)n * k);
  reference_weights(&L, ref);
  gpu_fill(L.w.d_q, 0xAB, L.qbytes);
  gpu_fill(L.w.d_scales, 0xCD, L.sbytes);
  const mgen_status st = import(&L);
  CHECK(st == MGEN_OK, "%s %s n=%d k=%d g=%d: %s: %s", form_name[form], act_name(act), n, k, group,
        mgen_status_str(st), mgen_ctx_last_error(ctx));
  if (st == MGEN_OK) {
    CUDA_CHECK(cudaDeviceSynchronize());
    check_packed(&L, ref);
    check_gemm(r, &L, ref, (int)(1 + 2 * rng_below(r, 20))); /* odd m 1..39 */
    check_e4m3(&L);
  }
  free(ref);
  layer_free(&L);
}

/* ---------------------------------------------------------------- the data checks */

static void expect_refused(layer *L, mgen_status got, mgen_status status, const char *text,
                           const char *what) {
  gpu_expect_refused(ctx, got, status, text, what, L->w.d_q, L->qbytes, 0xAB);
}

static void test_refusals(rng *r) {
  layer L;
  /* GPTQ v1: a stored 15 (zero point 16) at group 1, column 29 and a later one */
  layer_make(&L, r, GPTQ_V1, MGEN_ACT_F16, 128, 256, 64, MGEN_DTYPE_F16);
  gpu_fill(L.w.d_q, 0xAB, L.qbytes);
  uint32_t *zw = L.c.zeros; /* [rows, n/8], column n at nibble n % 8 */
  const uint32_t keep1 = zw[1 * 16 + 3], keep2 = zw[3 * 16 + 9];
  zw[1 * 16 + 3] |= 15u << 4 * 5;  /* column 29 of group 1 */
  zw[3 * 16 + 9] |= 15u << 4 * 0;  /* column 72 of group 3 */
  gpu_upload(L.d_zeros, zw, sizeof *zw * 4 * 16);
  expect_refused(&L, import(&L), MGEN_ERR_UNSUPPORTED_FORMAT,
                 "qzeros[1][3] stores 15 for column 29 (group 1): under MGEN_GPTQ_ZEROS_MINUS_ONE",
                 "v1 stored 15");
  /* the same words under EXACT are zero points 15: accepted */
  L.form = GPTQ_V2;
  CHECK(import(&L) == MGEN_OK, "v2 zero point 15: %s", mgen_ctx_last_error(ctx));
  CUDA_CHECK(cudaDeviceSynchronize());
  L.form = GPTQ_V1, zw[1 * 16 + 3] = keep1, zw[3 * 16 + 9] = keep2;
  gpu_upload(L.d_zeros, zw, sizeof *zw * 4 * 16);
  gpu_fill(L.w.d_q, 0xAB, L.qbytes);

  /* act order into u4: K index 5 (group 0) says group 1 */
  L.form = GPTQ_V1_GIDX, L.g_idx[5] = 1;
  gpu_upload(L.d_gidx, L.g_idx, sizeof *L.g_idx * 256);
  expect_refused(&L, import(&L), MGEN_ERR_UNSUPPORTED_FORMAT,
                 "g_idx[5] = 1, not 5 / 64 = 0: an act-order", "act-order g_idx (gptq into u4)");
  layer_free(&L);

  layer_make(&L, r, CT_GIDX, MGEN_ACT_BF16, 64, 192, 64, MGEN_DTYPE_BF16);
  gpu_fill(L.w.d_q, 0xAB, L.qbytes);
  L.g_idx[100] = 0;
  gpu_upload(L.d_gidx, L.g_idx, sizeof *L.g_idx * 192);
  expect_refused(&L, import(&L), MGEN_ERR_UNSUPPORTED_FORMAT, "weight_g_idx[100] = 0",
                 "act-order weight_g_idx (compressed-tensors into u4)");
  layer_free(&L);
}

int main(int argc, char **argv) {
  gpu_require_device("test_import_u4_gpu");
  const int quick = gpu_quick_mode(argc, argv);
  rng r;
  rng_seed(&r, rng_test_seed("test_import_u4_gpu"));
  /* The builtin table, for the GEMMs; a build without kernels still imports (test_import_gpu). */
  static const mgen_kernel_desc stub = {.name = "stub", .sm_min = 0, .tile_m = 16, .tile_n = 64};
  static const mgen_table stub_table = {&stub, 1, 0, "stub"};
  const mgen_table *table = mgen_builtin_table()->count ? mgen_builtin_table() : &stub_table;
  MGEN_CHECK(ctx, mgen_ctx_create(&ctx, table, NULL));

  /* n, k, group: padded K (96 g32, 192 and 448 g64, 320 per channel); --quick: the first 3 */
  static const int shapes[][3] = {{64, 192, 64}, {128, 96, 32}, {64, 320, 0}, {192, 256, 128},
                                  {128, 448, 64}, {256, 512, 128}, {64, 1024, 32}, {128, 256, 0}};
  static const int acts[] = {MGEN_ACT_F16, MGEN_ACT_BF16};
  static const int dtypes[] = {MGEN_DTYPE_F16, MGEN_DTYPE_BF16, MGEN_DTYPE_F32};
  const int nshapes = quick ? 3 : (int)(sizeof shapes / sizeof shapes[0]);
  int turn = 0;
  for (int a = 0; a < 2; a++)
    for (int s = 0; s < nshapes; s++)
      for (int f = 0; f < FORMS; f++, turn++)
        test_form(&r, f, acts[a], shapes[s][0], shapes[s][1], shapes[s][2], dtypes[turn % 3]);
  test_refusals(&r);
  printf("test_import_u4_gpu: %ld GEMMs checked, %ld imports without a kernel in this table\n",
         gemm_run, gemm_no_kernel);
  mgen_ctx_destroy(ctx);
  return check_exit("test_import_u4_gpu");
}
