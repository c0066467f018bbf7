/* test_import_args.c -- mgen_import_gptq and mgen_import_ct's host checks without a GPU, over a
 * context built by hand: every bad tensor (missing, wrong dtype, rank, shape, alignment, an
 * 8-bit or transposed layout, a group that disagrees with w) must fail with its status and a
 * message naming the tensor before any CUDA call; a valid call must get past all of them to
 * the device checks, which fakes answer (a capturing stream, another current device), so no
 * device memory is ever touched: `buf` is never dereferenced. The data checks (g_idx, zeros,
 * scales) need the GPU: tests/gpu/test_import_gpu.c. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "context/internal.h"
#include "fake_ctx.h"
#include "fake_table.h"


enum { N = 256, K = 512, G = 128, ROWS = K / G };

static _Alignas(16) char buf[64];
static struct mgen_ctx ctx;
static int capturing_answer;

static int fake_capturing(mgen_ctx *c, void *stream, cudaError_t *err) {
  (void)c, (void)stream;
  *err = capturing_answer < 0 ? cudaErrorIllegalAddress : cudaSuccess; /* as after a fault */
  return capturing_answer;
}

static mgen_tensor tensor(mgen_dtype dtype, int ndim, int64_t d0, int64_t d1) {
  mgen_tensor t = {.data = buf, .dtype = dtype, .ndim = ndim, .shape = {d0, d1}};
  return t;
}

static mgen_weights weights(int group) {
  mgen_weights w = {.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_GROUP,
                    .group = group, .n = N, .k = K, .d_q = buf, .d_scales = buf};
  return w;
}

static mgen_gptq gptq(void) {
  mgen_gptq s = {.qweight = tensor(MGEN_DTYPE_I32, 2, K / 8, N),
                 .scales = tensor(MGEN_DTYPE_F16, 2, ROWS, N),
                 .qzeros = tensor(MGEN_DTYPE_I32, 2, ROWS, N / 8),
                 .g_idx = tensor(MGEN_DTYPE_I32, 1, K, 0),
                 .zeros = MGEN_GPTQ_ZEROS_AUTO};
  return s;
}

static mgen_ct ct(void) {
  mgen_ct s = {.weight_packed = tensor(MGEN_DTYPE_I32, 2, N, K / 8),
               .weight_scale = tensor(MGEN_DTYPE_BF16, 2, N, ROWS),
               .weight_g_idx = tensor(MGEN_DTYPE_I32, 1, K, 0)};
  return s;
}

/* A call that passed every host check: it stops at the (faked) capturing stream. */
#define EXPECT_PASSES_HOST(call) EXPECT_FAIL(call, MGEN_ERR_STREAM_CAPTURING, "captured")

static void test_gptq(void) {
  mgen_weights w = weights(G);
  mgen_gptq s = gptq();
  EXPECT_PASSES_HOST(mgen_import_gptq(&ctx, &s, &w, NULL));
  CHECK(mgen_import_gptq(NULL, &s, &w, NULL) == MGEN_ERR_NULL_POINTER, "NULL ctx");
  EXPECT_FAIL(mgen_import_gptq(&ctx, NULL, &w, NULL), MGEN_ERR_NULL_POINTER, "src is NULL");
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, NULL, NULL), MGEN_ERR_NULL_POINTER, "w is NULL");

  /* the weights: format, shape rules, buffers */
  w.wfmt = MGEN_WFMT_FE2M1, w.scheme = MGEN_SCHEME_NVFP4, w.group = 16;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT, "mgen_pack_fp4");
  w = weights(G), w.n = 100;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_UNSUPPORTED_SHAPE, "w->n=100");
  w = weights(16);
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT, "w->group=16");
  w = weights(G), w.d_q = NULL;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_NULL_POINTER, "w->d_q");
  w = weights(G), w.d_scales = buf + 8;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_MISALIGNED, "w->d_scales");
  w = weights(G), w.layout = (mgen_layout)7;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT, "layout");
  w = weights(G);

  /* qweight */
  s.qweight.data = NULL;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_NULL_POINTER, "qweight.data");
  s = gptq(), s.qweight.dtype = MGEN_DTYPE_F16;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG,
              "qweight is f16, expected i32");
  s = gptq(), s.qweight.dtype = (mgen_dtype)99;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "not an mgen_dtype");
  s = gptq(), s.qweight.dtype = (mgen_dtype)0;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "not an mgen_dtype");
  s = gptq(), s.qweight.ndim = 1;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG,
              "qweight has 1 dimensions, expected 2");
  s = gptq(), s.qweight.shape[0] = N, s.qweight.shape[1] = K / 8; /* compressed-tensors' */
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG,
              "qweight has shape [256, 64], expected [k/8=64, n=256]");
  s = gptq(), s.qweight.shape[0] = K / 4; /* 8-bit GPTQ */
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "[128, 256]");
  s = gptq(), s.qweight.shape[0] = INT64_MAX, s.qweight.shape[1] = INT64_MAX;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "9223372036854775807");
  s = gptq(), s.qweight.shape[1] = -N;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "[64, -256]");
  s = gptq(), s.qweight.data = buf + 2;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_MISALIGNED, "4-byte i32");

  /* scales */
  s = gptq(), s.scales.data = NULL;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_NULL_POINTER, "scales.data");
  s = gptq(), s.scales.dtype = MGEN_DTYPE_I32;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG,
              "expected f16 or bf16 or f32");
  s = gptq(), s.scales.shape[0] = K / 64; /* group 64's scales for group 128 weights */
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "[k/group=4, n=256]");
  s = gptq(), s.scales.shape[0] = N, s.scales.shape[1] = ROWS;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "scales has shape");
  s = gptq(), s.scales.data = buf + 1;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_MISALIGNED, "2-byte f16");
  s = gptq(), s.scales.dtype = MGEN_DTYPE_F32, s.scales.data = buf + 2;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_MISALIGNED, "4-byte f32");

  /* qzeros and g_idx: optional, checked when given */
  s = gptq(), s.qzeros.shape[1] = N; /* unpacked zeros */
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "n/8=32");
  s = gptq(), s.qzeros.dtype = MGEN_DTYPE_U8;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "qzeros is u8");
  s = gptq(), s.g_idx.ndim = 2, s.g_idx.shape[1] = 1;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "g_idx has 2");
  s = gptq(), s.g_idx.shape[0] = K - 1;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "expected [k=512]");
  s = gptq(), s.zeros = (mgen_gptq_zeros)3;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "mgen_gptq_zeros");
  s = gptq(), s.zeros = (mgen_gptq_zeros)-1;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "mgen_gptq_zeros");

  /* valid variants reach the device checks */
  s = gptq(), s.qzeros.data = NULL, s.g_idx.data = NULL, s.scales.dtype = MGEN_DTYPE_F32;
  EXPECT_PASSES_HOST(mgen_import_gptq(&ctx, &s, &w, NULL));
  s = gptq(), s.qzeros.shape[0] = 99; /* absent tensors' shapes are not read */
  s.qzeros.data = NULL;
  EXPECT_PASSES_HOST(mgen_import_gptq(&ctx, &s, &w, NULL));
  w = weights(MGEN_GROUP_CHANNEL), s = gptq();
  s.scales.shape[0] = 1, s.qzeros.shape[0] = 1, s.scales.dtype = MGEN_DTYPE_BF16;
  EXPECT_PASSES_HOST(mgen_import_gptq(&ctx, &s, &w, NULL));
  s.scales.shape[0] = ROWS; /* group_size -1 has one row */
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "per-channel rows=1");
  w = weights(32), s = gptq(), s.scales.shape[0] = K / 32, s.qzeros.shape[0] = K / 32;
  w.act = MGEN_ACT_BF16;
  EXPECT_PASSES_HOST(mgen_import_gptq(&ctx, &s, &w, NULL));

  /* the device checks themselves */
  w = weights(G), s = gptq();
  fake_device_current = 1;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_WRONG_DEVICE, "cudaSetDevice(0)");
  fake_device_current = 0;
  capturing_answer = -1;
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_CUDA, "cudaStreamIsCapturing");
  /* ... naming the CUDA error: after a fault the query is the first call to fail */
  EXPECT_FAIL(mgen_import_gptq(&ctx, &s, &w, NULL), MGEN_ERR_CUDA, "(cudaErrorIllegalAddress)");
  capturing_answer = 1;
}

static void test_ct(void) {
  mgen_weights w = weights(G);
  mgen_ct s = ct();
  EXPECT_PASSES_HOST(mgen_import_ct(&ctx, &s, &w, NULL));
  CHECK(mgen_import_ct(NULL, &s, &w, NULL) == MGEN_ERR_NULL_POINTER, "NULL ctx");
  EXPECT_FAIL(mgen_import_ct(&ctx, NULL, &w, NULL), MGEN_ERR_NULL_POINTER, "src is NULL");
  EXPECT_FAIL(mgen_import_ct(&ctx, &s, NULL, NULL), MGEN_ERR_NULL_POINTER, "w is NULL");
  s.weight_packed.data = NULL;
  EXPECT_FAIL(mgen_import_ct(&ctx, &s, &w, NULL), MGEN_ERR_NULL_POINTER, "weight_packed.data");
  s = ct(), s.weight_packed.shape[0] = K / 8, s.weight_packed.shape[1] = N; /* GPTQ's */
  EXPECT_FAIL(mgen_import_ct(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG,
              "weight_packed has shape [64, 256], expected [n=256, k/8=64]");
  s = ct(), s.weight_scale.shape[0] = ROWS, s.weight_scale.shape[1] = N;
  EXPECT_FAIL(mgen_import_ct(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "[n=256, k/group=4]");
  s = ct(), s.weight_scale.data = NULL;
  EXPECT_FAIL(mgen_import_ct(&ctx, &s, &w, NULL), MGEN_ERR_NULL_POINTER, "weight_scale.data");
  s = ct(), s.weight_zero_point = tensor(MGEN_DTYPE_I32, 2, N / 8, ROWS);
  EXPECT_FAIL(mgen_import_ct(&ctx, &s, &w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT, "asymmetric");
  s = ct(), s.weight_g_idx.shape[0] = 2 * K;
  EXPECT_FAIL(mgen_import_ct(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "weight_g_idx has shape");
  s = ct(), s.weight_g_idx.dtype = MGEN_DTYPE_F32;
  EXPECT_FAIL(mgen_import_ct(&ctx, &s, &w, NULL), MGEN_ERR_INVALID_ARG, "weight_g_idx is f32");
  w.wfmt = (mgen_wfmt)9;
  EXPECT_FAIL(mgen_import_ct(&ctx, &s, &w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT, "w->wfmt=9");
  /* channel strategy: [n, 1] */
  w = weights(MGEN_GROUP_CHANNEL), s = ct(), s.weight_scale.shape[1] = 1, s.weight_g_idx.data = NULL;
  EXPECT_PASSES_HOST(mgen_import_ct(&ctx, &s, &w, NULL));
}

int main(void) {
  fake_ctx_init(&ctx);
  ctx.capturing = fake_capturing;
  capturing_answer = 1;
  if (mgen__ctx_init_host(&ctx) != MGEN_OK) return 1;
  test_gptq();
  test_ct();
  mgen__ctx_free_host(&ctx);
  return check_exit("test_import_args");
}
