/* test_import_u4.c -- the asymmetric int4 imports into u4 weights without a GPU:
 *   - addressing: the source each import describes (mgen__awq_src, _gptq_src, _ct_src, read
 *     through import.h's mgen__nibble / mgen__int4_zero as the GPU packer reads them) against
 *     the CPU reference of the published layouts (tests/common/ckpt_u4.c), every code, zero
 *     and scale of AWQ, GPTQ v1 / v2 and compressed-tensors checkpoints, zero points 0..15;
 *   - the u4 zero rows the packer writes (mgen__u4_zero_word, layout.h "Zero points") read
 *     back through layout.h's own inverse (mgen__zero_place), K padding rows included;
 *   - the host checks of mgen_import_awq, _gptq and _ct into u4 (and the refusals into u4b8
 *     that now name u4): each bad call fails with its status and a message naming the tensor
 *     before any CUDA call; a valid one gets past them to the (faked) capturing stream.
 * The test links its own registries (format.h, format_ops.h): the library's u4b8 and fe2m1 and
 * a u4 row made of layout.h's sizes and the import hook mgen__int4_import_u4, so that it needs
 * no other part of the u4 format. The packing itself and the data checks run on the GPU:
 * tests/gpu/test_import_u4_gpu.c. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "ckpt.h"
#include "ckpt_u4.h"
#include "context/internal.h"
#include "fake_ctx.h"
#include "fake_table.h"
#include "formats/format.h"
#include "formats/layout.h"
#include "prepare/format_ops.h"
#include "prepare/import.h"
#include "rng.h"

/* ---------------------------------------------------------------- the registries */

static long long u4_k_padded(int k) { return mgen__k_packed(k); }
static void u4_sizes(const mgen_weights *w, size_t *qbytes, size_t *sbytes) {
  const int rows = mgen__scale_rows(w->k, w->group);
  *qbytes = (size_t)w->n * (size_t)mgen__k_packed(w->k) / 2;
  *sbytes = (size_t)mgen__zero_offset(w->n, w->k, w->group, 2) + (size_t)rows * (size_t)w->n / 2;
}
static const mgen__format u4 = {.wfmt = MGEN_WFMT_U4, .name = "u4", .cost_code_bits = 4.0,
                                .cost_scale_bytes = 2.0, .k_padded = u4_k_padded,
                                .sizes = u4_sizes};
static const mgen__format_ops u4_ops = {.wfmt = MGEN_WFMT_U4,
                                        .import_int4 = mgen__int4_import_u4,
                                        .inputs = "u4 codes, scales and zero points"};
extern const mgen__format mgen__format_u4b8, mgen__format_fe2m1;
extern const mgen__format_ops mgen__format_ops_u4b8, mgen__format_ops_fe2m1;
const mgen__format *const mgen__formats[] = {&mgen__format_u4b8, &mgen__format_fe2m1, &u4};
const size_t mgen__format_count = 3;
const mgen__format_ops *const mgen__format_ops_list[] = {&mgen__format_ops_u4b8,
                                                         &mgen__format_ops_fe2m1, &u4_ops};
const size_t mgen__format_ops_count = 3;

/* ---------------------------------------------------------------- addressing */

static const char *const layout_name[] = {"awq", "gptq v1", "gptq v2", "compressed-tensors"};

/* A random checkpoint of `layout` on the host; zero points over 0..15 (1..15 for GPTQ v1,
 * whose stored 15 for a zero point 0 is refused), every value present where there is room. */
static void make_ckpt(rng *r, ckpt_u4 *c, int layout, int n, int k, int group, int dtype) {
  const int rows = ckpt_u4_rows(k, group);
  uint8_t *codes = malloc((size_t)n * k), *zeros = malloc((size_t)rows * n);
  float *scales = malloc(sizeof *scales * (size_t)rows * n);
  const unsigned lo = layout == CKPT_U4_GPTQ_V1;
  for (size_t i = 0; i < (size_t)n * k; i++) codes[i] = (uint8_t)rng_below(r, 16);
  for (size_t i = 0; i < (size_t)rows * n; i++) {
    zeros[i] = (uint8_t)(i < 16 - lo ? i + lo : lo + rng_below(r, 16 - lo));
    scales[i] = (float)(rng_below(r, 255) + 1) / 64.0f; /* exact in every dtype */
  }
  c->layout = layout, c->n = n, c->k = k, c->group = group, c->dtype = dtype;
  c->weight = malloc(sizeof *c->weight * (size_t)ckpt_u4_weight_words(layout, n, k));
  c->zeros = malloc(sizeof *c->zeros * (size_t)ckpt_u4_zero_words(layout, n, k, group));
  c->scales = malloc(ckpt_scale_bytes(dtype) * (size_t)rows * n);
  ckpt_u4_pack(c, codes, zeros, scales);
  free(codes), free(zeros), free(scales);
}

static void free_ckpt(ckpt_u4 *c) { free(c->weight), free(c->zeros), free(c->scales); }

static mgen_tensor host_tensor(const void *p, int dtype) {
  mgen_tensor t = {.data = p, .dtype = (mgen_dtype)dtype, .ndim = 2};
  return t;
}

/* The source import.c describes for checkpoint c (its tensors on the host). */
static void source_of(const ckpt_u4 *c, mgen__int4_src *s) {
  switch (c->layout) {
  case CKPT_U4_AWQ: {
    const mgen_awq a = {host_tensor(c->weight, MGEN_DTYPE_I32), host_tensor(c->zeros, MGEN_DTYPE_I32),
                        host_tensor(c->scales, c->dtype)};
    mgen__awq_src(&a, c->n, c->k, c->group, s);
    break;
  }
  case CKPT_U4_CT: {
    const mgen_ct t = {.weight_packed = host_tensor(c->weight, MGEN_DTYPE_I32),
                       .weight_scale = host_tensor(c->scales, c->dtype),
                       .weight_zero_point = host_tensor(c->zeros, MGEN_DTYPE_I32)};
    mgen__ct_src(&t, c->n, c->k, c->group, s);
    break;
  }
  default: {
    const mgen_gptq g = {.qweight = host_tensor(c->weight, MGEN_DTYPE_I32),
                         .scales = host_tensor(c->scales, c->dtype),
                         .qzeros = host_tensor(c->zeros, MGEN_DTYPE_I32),
                         .zeros = c->layout == CKPT_U4_GPTQ_V1 ? MGEN_GPTQ_ZEROS_MINUS_ONE
                                                               : MGEN_GPTQ_ZEROS_EXACT};
    mgen__gptq_src(&g, c->n, c->k, c->group, s);
  }
  }
}

static double scale_at(const mgen__int4_src *s, int g, int col) {
  return ckpt_scale_value(s->scales, s->scale_dtype, (size_t)(g * s->scale_g + col * s->scale_n));
}

/* Every code, zero and scale of the source against the reference's reading. */
static void check_addressing(const ckpt_u4 *c) {
  mgen__int4_src s;
  source_of(c, &s);
  const int rows = ckpt_u4_rows(c->k, c->group);
  long bad = 0;
  for (int kk = 0; kk < c->k; kk++)
    for (int nn = 0; nn < c->n; nn++) bad += mgen__nibble(&s.codes, kk, nn) != ckpt_u4_code(c, kk, nn);
  CHECK(bad == 0, "%s n=%d k=%d g=%d: %ld codes differ", layout_name[c->layout], c->n, c->k,
        c->group, bad);
  long zbad = 0, sbad = 0;
  for (int g = 0; g < rows; g++)
    for (int nn = 0; nn < c->n; nn++) {
      zbad += mgen__int4_zero(&s, g, nn) != ckpt_u4_zero(c, g, nn);
      sbad += scale_at(&s, g, nn) != ckpt_u4_scale(c, g, nn);
    }
  CHECK(zbad == 0 && sbad == 0, "%s n=%d k=%d g=%d: %ld zeros, %ld scales differ",
        layout_name[c->layout], c->n, c->k, c->group, zbad, sbad);
  CHECK(s.zero_words == ckpt_u4_zero_words(c->layout, c->n, c->k, c->group),
        "%s: zero_words %lld", layout_name[c->layout], s.zero_words);
}

/* The zero rows as the packer writes them, read back by column through mgen__zero_place. */
static void check_zero_rows(const ckpt_u4 *c) {
  mgen__int4_src s;
  source_of(c, &s);
  const int rows = ckpt_u4_rows(c->k, c->group), prows = mgen__scale_rows(c->k, c->group);
  const int per_row = c->n / 8;
  uint32_t *z = malloc(sizeof *z * (size_t)prows * per_row);
  for (int r = 0; r < prows; r++)
    for (int w = 0; w < per_row; w++) z[(size_t)r * per_row + w] = mgen__u4_zero_word(&s, rows, r, w);
  long bad = 0, pad = 0;
  for (int r = 0; r < prows; r++)
    for (int col = 0; col < c->n; col++) {
      int word, nibble;
      mgen__zero_place(col, &word, &nibble);
      const unsigned got = (z[(size_t)r * per_row + word] >> (4 * nibble)) & 15u;
      if (r < rows) bad += got != ckpt_u4_zero(c, r, col);
      else pad += got != MGEN_U4_PAD_ZERO;
    }
  CHECK(bad == 0 && pad == 0, "%s n=%d k=%d g=%d: %ld packed zeros differ, %ld padded ones not 8",
        layout_name[c->layout], c->n, c->k, c->group, bad, pad);
  free(z);
}

static void test_layouts(rng *r) {
  /* n, k, group: padded K (192 in g64, 96 in g32, per channel 320), several groups */
  static const int shapes[][3] = {{128, 192, 64}, {64, 96, 32}, {192, 256, 128}, {64, 320, 0},
                                  {256, 512, 128}};
  static const int dtypes[] = {MGEN_DTYPE_F16, MGEN_DTYPE_BF16, MGEN_DTYPE_F32};
  int turn = 0;
  for (int layout = CKPT_U4_AWQ; layout <= CKPT_U4_CT; layout++)
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++, turn++) {
      ckpt_u4 c;
      make_ckpt(r, &c, layout, shapes[i][0], shapes[i][1], shapes[i][2], dtypes[turn % 3]);
      check_addressing(&c);
      check_zero_rows(&c);
      free_ckpt(&c);
    }
  /* the orders themselves: AWQ's nibble i holds offset order_map[i] */
  for (int i = 0; i < 8; i++)
    CHECK(((MGEN__NIBBLES_AWQ >> (4 * ckpt_awq_order[i])) & 15u) == (unsigned)i,
          "MGEN__NIBBLES_AWQ puts offset %d elsewhere than nibble %d", ckpt_awq_order[i], i);
}

/* ---------------------------------------------------------------- host checks */


enum { N = 256, K = 512, G = 128, ROWS = K / G };

static _Alignas(16) char buf[64];
static struct mgen_ctx ctx;

static int fake_capturing(mgen_ctx *c, void *stream, cudaError_t *err) {
  (void)c, (void)stream;
  *err = cudaSuccess;
  return 1;
}

static mgen_tensor tensor(mgen_dtype dtype, int ndim, int64_t d0, int64_t d1) {
  mgen_tensor t = {.data = buf, .dtype = dtype, .ndim = ndim, .shape = {d0, d1}};
  return t;
}

static mgen_weights weights(int wfmt, int group) {
  mgen_weights w = {.wfmt = (mgen_wfmt)wfmt, .act = MGEN_ACT_F16, .group = group, .n = N, .k = K,
                    .d_q = buf, .d_scales = buf,
                    .scheme = wfmt == MGEN_WFMT_U4 ? MGEN_SCHEME_ASYM : MGEN_SCHEME_GROUP};
  return w;
}

static mgen_awq awq(void) {
  mgen_awq s = {.qweight = tensor(MGEN_DTYPE_I32, 2, K, N / 8),
                .qzeros = tensor(MGEN_DTYPE_I32, 2, ROWS, N / 8),
                .scales = tensor(MGEN_DTYPE_F16, 2, ROWS, N)};
  return s;
}

static mgen_gptq gptq(void) {
  mgen_gptq s = {.qweight = tensor(MGEN_DTYPE_I32, 2, K / 8, N),
                 .scales = tensor(MGEN_DTYPE_F16, 2, ROWS, N),
                 .qzeros = tensor(MGEN_DTYPE_I32, 2, ROWS, N / 8),
                 .g_idx = tensor(MGEN_DTYPE_I32, 1, K, 0),
                 .zeros = MGEN_GPTQ_ZEROS_MINUS_ONE};
  return s;
}

static mgen_ct ct(void) {
  mgen_ct s = {.weight_packed = tensor(MGEN_DTYPE_I32, 2, N, K / 8),
               .weight_scale = tensor(MGEN_DTYPE_BF16, 2, N, ROWS),
               .weight_zero_point = tensor(MGEN_DTYPE_I32, 2, N / 8, ROWS),
               .weight_g_idx = tensor(MGEN_DTYPE_I32, 1, K, 0)};
  return s;
}

/* A call that passed every host check: it stops at the (faked) capturing stream. */
#define EXPECT_PASSES_HOST(call) EXPECT_FAIL(call, MGEN_ERR_STREAM_CAPTURING, "captured")

static void test_awq(void) {
  mgen_weights w = weights(MGEN_WFMT_U4, G);
  mgen_awq s = awq();
  EXPECT_PASSES_HOST(mgen_import_awq(&ctx, &s, &w, NULL));
  CHECK(mgen_import_awq(NULL, &s, &w, NULL) == MGEN_ERR_NULL_POINTER, "NULL ctx");
  EXPECT_FAIL(mgen_import_awq(&ctx, NULL, &w, NULL), MGEN_ERR_NULL_POINTER, "src is NULL");
  EXPECT_FAIL(mgen_import_awq(&ctx, &s, NULL, NULL), MGEN_ERR_NULL_POINTER, "w is NULL");
  /* symmetric weights: AWQ has zero points */
  w = weights(MGEN_WFMT_U4B8, G);
  EXPECT_FAIL(mgen_import_awq(&ctx, &s, &w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
              "import them into u4 weights (MGEN_WFMT_U4, scheme MGEN_SCHEME_ASYM)");
  w = weights(MGEN_WFMT_FE2M1, 16), w.scheme = MGEN_SCHEME_NVFP4;
  EXPECT_FAIL(mgen_import_awq(&ctx, &s, &w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT, "mgen_pack_fp4");
  w = weights(MGEN_WFMT_U4, G), w.scheme = MGEN_SCHEME_GROUP;
  EXPECT_FAIL(mgen_import_awq(&ctx, &s, &w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT, "scheme");
  w = weights(MGEN_WFMT_U4, G), w.n = 100;
  EXPECT_FAIL(mgen_import_awq(&ctx, &s, &w, NULL), MGEN_ERR_UNSUPPORTED_SHAPE, "w->n=100");
  w = weights(MGEN_WFMT_U4, G);
  /* tensors */
  s.qzeros.data = NULL;
  EXPECT_FAIL(mgen_import_awq(&ctx, &s, &w, NULL), MGEN_ERR_NULL_POINTER,
              "qzeros.data is NULL: u4 weights take their zero points from it");
  s = awq(), s.qweight.data = NULL;
  EXPECT_FAIL(mgen_import_awq(&ctx, &s, &w, NULL), MGEN_ERR_NULL_POINTER, "qweight.data");
  s = awq(), s.scales.data = NULL;
  EXPECT_FAIL(mgen_import_awq(&ctx, &s, &w, NULL), MGEN_ERR_NULL_POINTER, "scales.data");
  s = awq(), s.qweight.shape[0] = K / 8, s.qweight.shape[1] = N; /* GPTQ's */
  EXPECT_FAIL(mgen_import_awq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG,
              "qweight has shape [64, 256], expected [k=512, n/8=32]");
  s = awq(), s.qweight.shape[0] = N, s.qweight.shape[1] = K / 8; /* GEMV's [n, k/8] */
  EXPECT_FAIL(mgen_import_awq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "expected [k=512, n/8=32]");
  s = awq(), s.qzeros.shape[1] = N; /* unpacked zeros */
  EXPECT_FAIL(mgen_import_awq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG,
              "qzeros has shape [4, 256], expected [k/group=4, n/8=32]");
  s = awq(), s.qzeros.dtype = MGEN_DTYPE_F16;
  EXPECT_FAIL(mgen_import_awq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "qzeros is f16, expected i32");
  s = awq(), s.scales.shape[0] = N, s.scales.shape[1] = ROWS;
  EXPECT_FAIL(mgen_import_awq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "[k/group=4, n=256]");
  s = awq(), s.scales.dtype = MGEN_DTYPE_F32, s.scales.data = buf + 2;
  EXPECT_FAIL(mgen_import_awq(&ctx, &s, &w, NULL), MGEN_ERR_MISALIGNED, "4-byte f32");
  /* valid variants: per channel, group 32, BF16 */
  w = weights(MGEN_WFMT_U4, MGEN_GROUP_CHANNEL), s = awq();
  s.qzeros.shape[0] = 1, s.scales.shape[0] = 1, s.scales.dtype = MGEN_DTYPE_BF16;
  EXPECT_PASSES_HOST(mgen_import_awq(&ctx, &s, &w, NULL));
  w = weights(MGEN_WFMT_U4, 32), w.act = MGEN_ACT_BF16, s = awq();
  s.qzeros.shape[0] = K / 32, s.scales.shape[0] = K / 32;
  EXPECT_PASSES_HOST(mgen_import_awq(&ctx, &s, &w, NULL));
}

static void test_gptq(void) {
  mgen_weights w = weights(MGEN_WFMT_U4, G);
  mgen_gptq s = gptq();
  EXPECT_PASSES_HOST(mgen_import_gptq(&ctx, &s, &w, NULL));
  s.zeros = MGEN_GPTQ_ZEROS_EXACT;
  EXPECT_PASSES_HOST(mgen_import_gptq(&ctx, &s, &w, NULL));
  s.zeros = MGEN_GPTQ_ZEROS_AUTO; /* cannot be told apart: the caller says which */
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG,
              "pass MGEN_GPTQ_ZEROS_MINUS_ONE for checkpoint_format \"gptq\"");
  s = gptq(), s.qzeros.data = NULL;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_NULL_POINTER,
              "qzeros.data is NULL: u4 weights take their zero points from it");
  s = gptq(), s.qzeros.shape[0] = 2 * ROWS;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "qzeros has shape");
  s = gptq(), s.g_idx.shape[0] = K - 1;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "expected [k=512]");
  s = gptq(), s.g_idx.data = NULL; /* optional, as into u4b8 */
  EXPECT_PASSES_HOST(mgen_import_gptq(&ctx, &s, &w, NULL));
  /* u4b8 keeps its rules: qzeros optional, AUTO accepted */
  w = weights(MGEN_WFMT_U4B8, G), s = gptq(), s.qzeros.data = NULL, s.zeros = MGEN_GPTQ_ZEROS_AUTO;
  EXPECT_PASSES_HOST(mgen_import_gptq(&ctx, &s, &w, NULL));
}

static void test_ct(void) {
  mgen_weights w = weights(MGEN_WFMT_U4, G);
  mgen_ct s = ct();
  EXPECT_PASSES_HOST(mgen_import_ct(&ctx, &s, &w, NULL));
  s.weight_zero_point.data = NULL;
  EXPECT_FAIL(mgen_import_ct(&ctx, &s, &w, NULL), MGEN_ERR_NULL_POINTER,
              "weight_zero_point.data is NULL: u4 weights take their zero points from it");
  s = ct(), s.weight_zero_point.shape[0] = N; /* unpacked [n, rows] */
  EXPECT_FAIL(mgen_import_ct(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG,
              "weight_zero_point has shape [256, 4], expected [n/8=32, k/group=4]");
  s = ct(), s.weight_zero_point.shape[0] = ROWS, s.weight_zero_point.shape[1] = N / 8;
  EXPECT_FAIL(mgen_import_ct(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "[n/8=32, k/group=4]");
  s = ct(), s.weight_zero_point.dtype = MGEN_DTYPE_U8;
  EXPECT_FAIL(mgen_import_ct(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG,
              "weight_zero_point is u8, expected i32");
  w = weights(MGEN_WFMT_U4, MGEN_GROUP_CHANNEL), s = ct();
  s.weight_scale.shape[1] = 1, s.weight_zero_point.shape[1] = 1, s.weight_g_idx.data = NULL;
  EXPECT_PASSES_HOST(mgen_import_ct(&ctx, &s, &w, NULL));
  /* a zero point tensor into u4b8: refused, naming u4 */
  w = weights(MGEN_WFMT_U4B8, G), s = ct();
  EXPECT_FAIL(mgen_import_ct(&ctx, &s, &w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
              "import into u4 weights (MGEN_WFMT_U4, scheme MGEN_SCHEME_ASYM); u4b8 is symmetric");
  s.weight_zero_point.data = NULL;
  EXPECT_PASSES_HOST(mgen_import_ct(&ctx, &s, &w, NULL));
}

int main(void) {
  rng r;
  rng_seed(&r, rng_test_seed("test_import_u4"));
  test_layouts(&r);
  fake_ctx_init(&ctx);
  ctx.capturing = fake_capturing;
  if (mgen__ctx_init_host(&ctx) != MGEN_OK) return 1;
  test_awq();
  test_gptq();
  test_ct();
  mgen__ctx_free_host(&ctx);
  return check_exit("test_import_u4");
}
