/* test_api_args.c -- argument checking of the public API without a GPU: mgen_gemm,
 * mgen_gemm_kernel and mgen_gemm_choice over a context built by hand on the fake table (its
 * launchers record the call and touch no memory), mgen_weights_bytes, the early checks of
 * mgen_quantize / mgen_pack and mgen_quantize_act, and mgen_ctx_create's failure paths. Every failure must come
 * with its status, a message in last_error, no launch and untouched out-parameters. */
#include <cuda_runtime_api.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "fake_ctx.h"
#include "fake_table.h"
#include "context/internal.h"

static _Alignas(16) char buf_a[64], buf_c[64], buf_q[64], buf_s[64], buf_w[64], buf_b[64];
static struct mgen_ctx ctx;

static mgen_weights weights(int group) {
  mgen_weights w = {.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_GROUP,
                    .group = group, .n = 4096, .k = 4096, .d_q = buf_q, .d_scales = buf_s};
  return w;
}

/* A stream's device, as mgen__stream_device would say (test_gemm's failed launches). */
static int stream_on_device_1(void *stream) { return stream != NULL ? 1 : -1; }
static int stream_on_device_0(void *stream) { return stream != NULL ? 0 : -1; }

static void test_gemm(void) {
  mgen_weights w = weights(128), bad;
  CHECK(mgen_gemm(NULL, w.act, 1, buf_a, &w, buf_c, NULL) == MGEN_ERR_NULL_POINTER, "NULL ctx");
  EXPECT_FAIL(mgen_gemm(&ctx, w.act, 1, NULL, &w, buf_c, NULL), MGEN_ERR_NULL_POINTER, "d_a");
  EXPECT_FAIL(mgen_gemm(&ctx, w.act, 1, buf_a, &w, NULL, NULL), MGEN_ERR_NULL_POINTER, "d_c");
  /* Mixed types: BF16 activations over FP16 scales (and the reverse) name both types. */
  EXPECT_FAIL(mgen_gemm(&ctx, MGEN_ACT_BF16, 1, buf_a, &w, buf_c, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
              "bf16 activations with f16 scales");
  EXPECT_FAIL(mgen_gemm_kernel(&ctx, "fake_gc_a", MGEN_ACT_BF16, 1, buf_a, &w, buf_c, NULL),
              MGEN_ERR_UNSUPPORTED_FORMAT, "bf16 activations");
  EXPECT_FAIL(mgen_gemm(&ctx, (mgen_act)9, 1, buf_a, &w, buf_c, NULL), MGEN_ERR_INVALID_ARG, "act=9");
  EXPECT_FAIL(mgen_gemm(&ctx, MGEN_ACT_F16, 1, buf_a, NULL, buf_c, NULL), MGEN_ERR_NULL_POINTER, "w is NULL");
  bad = w, bad.d_q = NULL;
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_NULL_POINTER, "d_q");
  bad = w, bad.d_scales = NULL;
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_NULL_POINTER, "d_scales");
  EXPECT_FAIL(mgen_gemm(&ctx, w.act, 1, buf_a + 2, &w, buf_c, NULL), MGEN_ERR_MISALIGNED, "d_a");
  EXPECT_FAIL(mgen_gemm(&ctx, w.act, 1, buf_a, &w, buf_c + 8, NULL), MGEN_ERR_MISALIGNED, "d_c");
  bad = w, bad.d_q = buf_q + 4;
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_MISALIGNED, "d_q");
  bad = w, bad.d_scales = buf_s + 2;
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_MISALIGNED, "d_scales");
  bad = w, bad.d_bias = buf_b + 2; /* one element off: the kernels read it 16 bytes at a time */
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_MISALIGNED, "w->d_bias=");
  EXPECT_FAIL(mgen_gemm(&ctx, w.act, 0, buf_a, &w, buf_c, NULL), MGEN_ERR_INVALID_ARG, "m=0");
  EXPECT_FAIL(mgen_gemm(&ctx, w.act, -5, buf_a, &w, buf_c, NULL), MGEN_ERR_INVALID_ARG, "m=-5");
  EXPECT_FAIL(mgen_gemm(&ctx, w.act, INT_MAX, buf_a, &w, buf_c, NULL), MGEN_ERR_UNSUPPORTED_SHAPE, "MGEN_MAX_ELEMENTS");
  bad = w, bad.act = (mgen_act)7;
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_INVALID_ARG, "act=7");
  bad = w, bad.wfmt = (mgen_wfmt)0;
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_INVALID_ARG, "wfmt=0");
  bad = w, bad.group = -1;
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_INVALID_ARG, "group=-1");
  bad = w, bad.n = 0;
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_INVALID_ARG, "n=0");
  bad = w, bad.group = 32;
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
              "no kernel for f16/u4b8/g32");
  bad = w, bad.wfmt = MGEN_WFMT_FE2M1;
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_UNSUPPORTED_FORMAT, "fe2m1");
  bad = w, bad.act = MGEN_ACT_BF16, bad.group = 0;
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_UNSUPPORTED_FORMAT, "bf16/u4b8/gc");
  bad = w, bad.n = 1000;
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_UNSUPPORTED_SHAPE,
              "w->n=1000, w->k=4096: the f16/u4b8/g128 kernels on sm_80 need n a multiple of 64 "
              "(at least 128) and k a multiple of 128 (their tiles and group): n=1000 is not a "
              "multiple of 64");
  bad = w, bad.n = 64; /* a multiple of 64: the table decides (its g128 tiles are 128 wide) */
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_UNSUPPORTED_SHAPE,
              "need n a multiple of 64 (at least 128) and k a multiple of 128 (their tiles and "
              "group): n=64 is below 128");
  bad = w, bad.k = 4160;
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_UNSUPPORTED_SHAPE, "k=4160");
  bad = w, bad.group = 64;
  EXPECT_FAIL(mgen_gemm(&ctx, bad.act, 1, buf_a, &bad, buf_c, NULL), MGEN_ERR_NO_KERNEL, "sm_90");

  /* Success: the default kernel for m=17, and the arguments it received. */
  int launches = fake_launches;
  CHECK(mgen_gemm(&ctx, w.act, 17, buf_a, &w, buf_c, (void *)0x77) == MGEN_OK, "%s",
        mgen_ctx_last_error(&ctx));
  CHECK(fake_launches == launches + 1 && fake_last_kernel == FAKE_G128_32, "kernel %d",
        fake_last_kernel);
  const mgen_launch_args *args = &fake_last_args;
  CHECK(args->m == 17 && args->n == 4096 && args->k == 4096 && args->group == 128, "shape");
  CHECK(args->k_packed == 4096, "k_packed %d: k is a multiple of 128", args->k_packed);
  CHECK(args->a == buf_a && args->c == buf_c && args->b == buf_q && args->scales == buf_s, "buffers");
  CHECK(args->bias == NULL, "no bias: args.bias %p", args->bias);
  bad = w, bad.d_bias = buf_b;
  CHECK(mgen_gemm(&ctx, bad.act, 17, buf_a, &bad, buf_c, NULL) == MGEN_OK && args->bias == buf_b,
        "a bias: args.bias %p, want %p (%s)", args->bias, (void *)buf_b, mgen_ctx_last_error(&ctx));
  CHECK(args->partials == ctx.pool.slot[0].partials && args->counters == ctx.pool.slot[0].counters,
        "workspace");
  CHECK(args->sm_count == ctx.sm_count, "sm_count %d", args->sm_count);
  CHECK(args->pdl == 0, "sm_80: no programmatic dependent launch");
  /* sm_90 and later: programmatic dependent launches unless the context says plain ones. */
  ctx.sm = 90;
  CHECK(mgen_gemm(&ctx, w.act, 17, buf_a, &w, buf_c, NULL) == MGEN_OK && fake_last_args.pdl == 1,
        "sm_90: pdl %d (%s)", fake_last_args.pdl, mgen_ctx_last_error(&ctx));
  ctx.plain_launches = 1;
  CHECK(mgen_gemm(&ctx, w.act, 17, buf_a, &w, buf_c, NULL) == MGEN_OK && fake_last_args.pdl == 0,
        "sm_90, plain_launches: pdl %d", fake_last_args.pdl);
  ctx.sm = 80, ctx.plain_launches = 0;
  w = weights(0);
  CHECK(mgen_gemm(&ctx, w.act, 100, buf_a, &w, buf_c, NULL) == MGEN_OK && fake_last_kernel == FAKE_GC_B,
        "per channel m=100: kernel %d", fake_last_kernel);
  CHECK(fake_last_args.group == 0, "group 0 passed through");
  w.k = 4160; /* the packed layout pads k to 4224: the kernel is told both */
  CHECK(mgen_gemm(&ctx, w.act, 100, buf_a, &w, buf_c, NULL) == MGEN_OK, "%s", mgen_ctx_last_error(&ctx));
  CHECK(fake_last_args.k == 4160 && fake_last_args.k_packed == 4224, "k %d, k_packed %d",
        fake_last_args.k, fake_last_args.k_packed);

  /* A failing launch maps to ERR_CUDA with CUDA's text. */
  fake_launch_result = (int)cudaErrorInvalidValue;
  w = weights(128);
  launches = fake_launches;
  mgen_status st = mgen_gemm(&ctx, w.act, 1, buf_a, &w, buf_c, NULL);
  CHECK(st == MGEN_ERR_CUDA && fake_launches == launches + 1, "%s", mgen_status_str(st));
  const char *error = mgen_ctx_last_error(&ctx);
  CHECK(strstr(error, "cudaErrorInvalidValue") != NULL, "%s", error);
  CHECK(strstr(error, cudaGetErrorString(cudaErrorInvalidValue)) != NULL, "%s", error);
  CHECK(strstr(error, "fake_g128_16_r0") != NULL, "names the kernel: %s", error);
  /* ... unless the stream belongs to another device: then that is the error, named. */
  void *const other_stream = (void *)(uintptr_t)0x5000;
  ctx.stream_device = stream_on_device_1;
  st = mgen_gemm(&ctx, w.act, 1, buf_a, &w, buf_c, other_stream);
  error = mgen_ctx_last_error(&ctx);
  CHECK(st == MGEN_ERR_WRONG_DEVICE && strstr(error, "belongs to device 1, the context's is 0") &&
            strstr(error, "cudaErrorInvalidValue"),
        "%s: %s", mgen_status_str(st), error);
  ctx.stream_device = stream_on_device_0; /* the context's own: CUDA's error stands */
  st = mgen_gemm(&ctx, w.act, 1, buf_a, &w, buf_c, other_stream);
  CHECK(st == MGEN_ERR_CUDA, "a failed launch on the context's device's stream: %s",
        mgen_status_str(st));
  fake_launch_result = 0;
  ctx.stream_device = stream_on_device_1; /* asked only when a launch fails */
  CHECK(mgen_gemm(&ctx, w.act, 1, buf_a, &w, buf_c, other_stream) == MGEN_OK, "%s",
        mgen_ctx_last_error(&ctx));
  ctx.stream_device = NULL;
}

static void test_gemm_kernel(void) {
  mgen_weights w = weights(128), bad;
  CHECK(mgen_gemm_kernel(NULL, "fake_gc_a", w.act, 1, buf_a, &w, buf_c, NULL) == MGEN_ERR_NULL_POINTER,
        "NULL ctx");
  EXPECT_FAIL(mgen_gemm_kernel(&ctx, NULL, w.act, 1, buf_a, &w, buf_c, NULL), MGEN_ERR_NULL_POINTER,
              "kernel_name");
  EXPECT_FAIL(mgen_gemm_kernel(&ctx, "mgen_nope", w.act, 1, buf_a, &w, buf_c, NULL),
              MGEN_ERR_UNKNOWN_KERNEL, "mgen_nope");
  EXPECT_FAIL(mgen_gemm_kernel(&ctx, "fake_gc_a", w.act, 1, buf_a, &w, buf_c, NULL),
              MGEN_ERR_UNSUPPORTED_FORMAT, "fake_gc_a computes f16/u4b8/gc, the call is f16/u4b8/g128");
  EXPECT_FAIL(mgen_gemm_kernel(&ctx, "fake_g128_256_sm90", w.act, 1, buf_a, &w, buf_c, NULL),
              MGEN_ERR_NO_KERNEL, "runs on sm_90 and later");
  bad = w, bad.n = 64;
  EXPECT_FAIL(mgen_gemm_kernel(&ctx, "fake_g128_16_r1", bad.act, 1, buf_a, &bad, buf_c, NULL),
              MGEN_ERR_UNSUPPORTED_SHAPE, /* the key's rule comes first (no g128 kernel runs it) */
              "the f16/u4b8/g128 kernels on sm_80 need n a multiple of 64 (at least 128)");
  EXPECT_FAIL(mgen_gemm_kernel(&ctx, "fake_g128_16_r1", w.act, 0, buf_a, &w, buf_c, NULL),
              MGEN_ERR_INVALID_ARG, "m=0");
  EXPECT_FAIL(mgen_gemm_kernel(&ctx, "fake_g128_16_r1", w.act, 1, buf_a + 1, &w, buf_c, NULL),
              MGEN_ERR_MISALIGNED, "d_a");
  bad = w, bad.d_bias = buf_b + 8;
  EXPECT_FAIL(mgen_gemm_kernel(&ctx, "fake_g128_16_r1", bad.act, 1, buf_a, &bad, buf_c, NULL),
              MGEN_ERR_MISALIGNED, "w->d_bias=");
  CHECK(mgen_gemm_kernel(&ctx, "fake_g128_16_r1", w.act, 1000, buf_a, &w, buf_c, NULL) == MGEN_OK &&
            fake_last_kernel == FAKE_G128_16_R1 && fake_last_args.m == 1000,
        "the named kernel runs, not the default one");
}

static void test_gemm_choice(void) {
  mgen_weights w = weights(128);
  const char *name = "untouched";
  CHECK(mgen_gemm_choice(NULL, w.act, 1, &w, &name) == MGEN_ERR_NULL_POINTER, "NULL ctx");
  EXPECT_FAIL(mgen_gemm_choice(&ctx, w.act, 1, &w, NULL), MGEN_ERR_NULL_POINTER, "kernel_name");
  EXPECT_FAIL(mgen_gemm_choice(&ctx, w.act, 0, &w, &name), MGEN_ERR_INVALID_ARG, "m=0");
  w.n = 1000;
  EXPECT_FAIL(mgen_gemm_choice(&ctx, w.act, 1, &w, &name), MGEN_ERR_UNSUPPORTED_SHAPE, "n=1000");
  CHECK(strcmp(name, "untouched") == 0, "out-param untouched on failure");
  w = weights(128);
  w.d_q = w.d_scales = NULL; /* the choice needs no buffers */
  CHECK(mgen_gemm_choice(&ctx, w.act, 1, &w, &name) == MGEN_OK, "%s", mgen_ctx_last_error(&ctx));
  CHECK(name == fake_table.kernels[FAKE_G128_16_R0].name, "name %s is the table's", name);
  /* M=65 is in the 65..96 bucket: the cost model at M=96 on this 4-SM sm_80 context weighs
   * three 32-row blocks against one 128-row block within a few %; with mma.c's step cost
   * (UNIT_CYCLES 116.4, refitted from 145.5 in bench/notes/v31.md item 2: fewer steps weigh less)
   * the three 32-row blocks win (before the refit the 128-row block won by 1.5%; test_select.c
   * and test_cost_sweep.c check the model itself). */
  CHECK(mgen_gemm_choice(&ctx, w.act, 65, &w, &name) == MGEN_OK &&
            strcmp(name, "fake_g128_32") == 0, "m=65: %s", name);
}

static void test_weights(void) {
  size_t qb = 1, sb = 2;
  mgen_weights w = weights(128), bad;
  CHECK(mgen_weights_bytes(NULL, &qb, &sb) == MGEN_ERR_NULL_POINTER, "NULL w");
  CHECK(mgen_weights_bytes(&w, NULL, &sb) == MGEN_ERR_NULL_POINTER, "NULL qbytes");
  CHECK(mgen_weights_bytes(&w, &qb, NULL) == MGEN_ERR_NULL_POINTER, "NULL sbytes");
  CHECK(qb == 1 && sb == 2, "untouched");
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && qb == 4096u * 4096 / 2 &&
            sb == 32u * 4096 * 2, "g128: %zu %zu", qb, sb);
  w = weights(0);
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && sb == 4096u * 2, "gc: %zu", sb);
  /* n = 128: a shape every build's table accepts for g32 (an MGEN_KERNELS subset may lack the
   * 64-column kernels; the shape rule follows the table). */
  w = weights(32), w.n = 128, w.k = 11008;
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && qb == 128u * 11008 / 2 &&
            sb == 344u * 128 * 2, "g32 n=128 k=11008: %zu %zu", qb, sb);
  /* k not a multiple of 128: the sizes of the packed layout's k padded to 128 (layout.h). */
  w = weights(32), w.n = 128, w.k = 1376; /* 43 groups, padded to 1408 = 44 */
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && qb == 128u * 1408 / 2 &&
            sb == 44u * 128 * 2, "g32 n=128 k=1376: %zu %zu", qb, sb);
  w = weights(64), w.n = 128, w.k = 2752; /* 43 groups, padded to 2816 = 44 */
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && qb == 128u * 2816 / 2 &&
            sb == 44u * 128 * 2, "g64 n=128 k=2752: %zu %zu", qb, sb);
  w = weights(0), w.n = 128, w.k = 4160; /* one scale row whatever k */
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && qb == 128u * 4224 / 2 && sb == 128u * 2,
        "gc n=128 k=4160: %zu %zu", qb, sb);
  w = weights(128), w.act = MGEN_ACT_BF16;
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK, "bf16 scales have the same size");
  static const struct {
    int wfmt, act, group, n, k;
    mgen_status expect;
  } bad_cases[] = {
      {MGEN_WFMT_U4B8, MGEN_ACT_F16, 128, 1000, 4096, MGEN_ERR_UNSUPPORTED_SHAPE},
      {MGEN_WFMT_U4B8, MGEN_ACT_F16, 128, 4096, 4160, MGEN_ERR_UNSUPPORTED_SHAPE}, /* k % group */
      {MGEN_WFMT_U4B8, MGEN_ACT_F16, 128, 4096, 0, MGEN_ERR_INVALID_ARG},
      {MGEN_WFMT_U4B8, MGEN_ACT_F16, 128, -64, 4096, MGEN_ERR_INVALID_ARG},
      {MGEN_WFMT_U4B8, MGEN_ACT_F16, 96, 4096, 4224, MGEN_ERR_UNSUPPORTED_FORMAT},
      {MGEN_WFMT_U4B8, MGEN_ACT_F16, -1, 4096, 4096, MGEN_ERR_INVALID_ARG},
      {MGEN_WFMT_FE2M1, MGEN_ACT_F16, 128, 4096, 4096, MGEN_ERR_UNSUPPORTED_FORMAT},
      {0, MGEN_ACT_F16, 128, 4096, 4096, MGEN_ERR_INVALID_ARG},
      {MGEN_WFMT_U4B8, 0, 128, 4096, 4096, MGEN_ERR_INVALID_ARG},
      {MGEN_WFMT_U4B8, MGEN_ACT_F16, 128, 1 << 20, 1 << 16, MGEN_ERR_UNSUPPORTED_SHAPE}, /* 2^31 words */
      {MGEN_WFMT_U4B8, MGEN_ACT_F16, 0, 1 << 20, 16320, MGEN_ERR_UNSUPPORTED_SHAPE}, /* padded to 2^31 */
      {MGEN_WFMT_U4B8, MGEN_ACT_F16, 0, 4096, 4128, MGEN_ERR_UNSUPPORTED_SHAPE}, /* per channel: 64 */
  };
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    bad = weights(bad_cases[i].group);
    bad.wfmt = (mgen_wfmt)bad_cases[i].wfmt, bad.act = (mgen_act)bad_cases[i].act;
    bad.n = bad_cases[i].n, bad.k = bad_cases[i].k;
    qb = 1, sb = 2;
    mgen_status st = mgen_weights_bytes(&bad, &qb, &sb);
    CHECK(st == bad_cases[i].expect, "case %zu: %s", i, mgen_status_str(st));
    CHECK(qb == 1 && sb == 2, "case %zu: out-params untouched", i);
  }

  /* mgen_quantize / mgen_pack: everything checked before any CUDA call. */
  w = weights(128);
  CHECK(mgen_quantize(NULL, buf_w, &w, NULL) == MGEN_ERR_NULL_POINTER, "NULL ctx");
  EXPECT_FAIL(mgen_quantize(&ctx, NULL, &w, NULL), MGEN_ERR_NULL_POINTER, "d_w");
  EXPECT_FAIL(mgen_quantize(&ctx, buf_w, NULL, NULL), MGEN_ERR_NULL_POINTER, "w is NULL");
  EXPECT_FAIL(mgen_quantize(&ctx, buf_w + 1, &w, NULL), MGEN_ERR_MISALIGNED, "d_w");
  bad = w, bad.d_q = buf_q + 8;
  EXPECT_FAIL(mgen_quantize(&ctx, buf_w, &bad, NULL), MGEN_ERR_MISALIGNED, "d_q");
  bad = w, bad.d_scales = NULL;
  EXPECT_FAIL(mgen_quantize(&ctx, buf_w, &bad, NULL), MGEN_ERR_NULL_POINTER, "d_scales");
  bad = w, bad.act = MGEN_ACT_BF16; /* BF16 weights go through the same checks */
  EXPECT_FAIL(mgen_quantize(&ctx, buf_w + 1, &bad, NULL), MGEN_ERR_MISALIGNED, "d_w");
  bad = w, bad.group = 96;
  EXPECT_FAIL(mgen_quantize(&ctx, buf_w, &bad, NULL), MGEN_ERR_UNSUPPORTED_FORMAT, "group=96");
  bad = w, bad.k = 4100;
  EXPECT_FAIL(mgen_quantize(&ctx, buf_w, &bad, NULL), MGEN_ERR_UNSUPPORTED_SHAPE,
              "k=4100 is not a multiple of 128");
  const uint8_t *codes = (const uint8_t *)buf_w;
  CHECK(mgen_pack(NULL, codes, buf_s, &w, NULL) == MGEN_ERR_NULL_POINTER, "NULL ctx");
  EXPECT_FAIL(mgen_pack(&ctx, NULL, buf_s, &w, NULL), MGEN_ERR_NULL_POINTER, "d_codes");
  EXPECT_FAIL(mgen_pack(&ctx, codes, NULL, &w, NULL), MGEN_ERR_NULL_POINTER, "d_scales");
  EXPECT_FAIL(mgen_pack(&ctx, codes, buf_s + 1, &w, NULL), MGEN_ERR_MISALIGNED, "d_scales");
  bad = w, bad.d_scales = buf_s + 4;
  EXPECT_FAIL(mgen_pack(&ctx, codes, buf_s, &bad, NULL), MGEN_ERR_MISALIGNED, "w->d_scales");
  bad = w, bad.wfmt = MGEN_WFMT_FE2M1;
  EXPECT_FAIL(mgen_pack(&ctx, codes, buf_s, &bad, NULL), MGEN_ERR_UNSUPPORTED_FORMAT, "fe2m1");
}

/* Packed layouts (mgen.h, "Layouts"): 0 is the format's default, a layout of the format is
 * accepted (u4b8: mma and e4m3, the W4A8 words, which only mgen_gemm_a8 reads: mgen_gemm refuses
 * them, and mgen_gemm_a8 refuses the others), any other is refused by every entry point with
 * the layouts the format has; a layout is part of the kernel-choice key. */
static void test_layouts(void) {
  size_t qb = 1, sb = 2, qb0, sb0;
  mgen_weights w = weights(128), bad;
  CHECK(mgen_weights_bytes(&w, &qb0, &sb0) == MGEN_OK, "layout 0: the default");
  w.layout = MGEN_LAYOUT_MMA;
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && qb == qb0 && sb == sb0,
        "MGEN_LAYOUT_MMA: the same buffers");
  const char *name = NULL;
  CHECK(mgen_gemm_choice(&ctx, MGEN_ACT_F16, 1, &w, &name) == MGEN_OK && name != NULL,
        "a GEMM on MMA-layout weights has kernels");
  w.layout = MGEN_LAYOUT_E4M3;
  qb = 1, sb = 2;
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && qb == qb0 && sb == sb0,
        "MGEN_LAYOUT_E4M3: the same buffers (the same words, other codes in them)");
  EXPECT_FAIL(mgen_gemm(&ctx, MGEN_ACT_F16, 1, buf_a, &w, buf_c, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
              "weights in the e4m3 layout are read with FP8 E4M3 activations: mgen_gemm_a8");
  EXPECT_FAIL(mgen_gemm_kernel(&ctx, name, MGEN_ACT_F16, 1, buf_a, &w, buf_c, NULL),
              MGEN_ERR_UNSUPPORTED_FORMAT, "mgen_gemm_a8");
  /* mgen_gemm_a8's own arguments, checked before the kernel choice */
  const float *scales = (const float *)buf_s;
  CHECK(mgen_gemm_a8(NULL, MGEN_ACT_F16, 1, buf_a, scales, 1, &w, buf_c, NULL) == MGEN_ERR_NULL_POINTER,
        "mgen_gemm_a8: NULL ctx");
  EXPECT_FAIL(mgen_gemm_a8(&ctx, MGEN_ACT_F16, 1, buf_a, NULL, 1, &w, buf_c, NULL), MGEN_ERR_NULL_POINTER,
              "d_a_scales is NULL");
  EXPECT_FAIL(mgen_gemm_a8(&ctx, MGEN_ACT_F16, 1, buf_a, scales, 2, &w, buf_c, NULL), MGEN_ERR_INVALID_ARG,
              "a_scale_per_row=2");
  EXPECT_FAIL(mgen_gemm_a8(&ctx, MGEN_ACT_F16, 1, buf_a, (const float *)((const char *)buf_s + 2), 0, &w,
                           buf_c, NULL),
              MGEN_ERR_MISALIGNED, "d_a_scales=");
  EXPECT_FAIL(mgen_gemm_a8(&ctx, MGEN_ACT_BF16, 1, buf_a, scales, 1, &w, buf_c, NULL),
              MGEN_ERR_UNSUPPORTED_FORMAT, "bf16 output with f16 scales");
  EXPECT_FAIL(mgen_gemm_a8(&ctx, MGEN_ACT_F16, 1, NULL, scales, 1, &w, buf_c, NULL), MGEN_ERR_NULL_POINTER,
              "d_a");
  bad = w, bad.d_bias = buf_b + 2;
  EXPECT_FAIL(mgen_gemm_a8(&ctx, MGEN_ACT_F16, 1, buf_a, scales, 1, &bad, buf_c, NULL), MGEN_ERR_MISALIGNED,
              "w->d_bias=");
  EXPECT_FAIL(mgen_gemm_a8_kernel(&ctx, "fake_e4m3_g128", MGEN_ACT_F16, 1, buf_a, scales, 1, &bad, buf_c,
                                  NULL),
              MGEN_ERR_MISALIGNED, "w->d_bias=");
  bad.d_bias = buf_b;
  CHECK(mgen_gemm_a8(&ctx, MGEN_ACT_F16, 1, buf_a, scales, 1, &bad, buf_c, NULL) == MGEN_OK &&
            fake_last_kernel == FAKE_E4M3_G128 && fake_last_args.bias == buf_b,
        "mgen_gemm_a8 with a bias: kernel %d, args.bias %p (%s)", fake_last_kernel, fake_last_args.bias,
        mgen_ctx_last_error(&ctx));
  EXPECT_FAIL(mgen_gemm_a8_kernel(&ctx, "mgen_no_such_kernel", MGEN_ACT_F16, 1, buf_a, scales, 1, &w, buf_c,
                                  NULL),
              MGEN_ERR_UNKNOWN_KERNEL, "mgen_no_such_kernel");
  w.layout = MGEN_LAYOUT_MMA;
  EXPECT_FAIL(mgen_gemm_a8(&ctx, MGEN_ACT_F16, 1, buf_a, scales, 1, &w, buf_c, NULL),
              MGEN_ERR_UNSUPPORTED_FORMAT, "these are in the mma layout (mgen_gemm)");
  w.layout = MGEN_LAYOUT_E4M3;
  bad = weights(128), bad.wfmt = MGEN_WFMT_FE2M1, bad.scheme = MGEN_SCHEME_NVFP4, bad.group = 16;
  bad.layout = MGEN_LAYOUT_E4M3;
  qb = 1;
  CHECK(mgen_weights_bytes(&bad, &qb, &sb) == MGEN_ERR_UNSUPPORTED_FORMAT && qb == 1,
        "NVFP4 has no e4m3 layout (layout.h, \"W4A8 words\")");
  EXPECT_FAIL(mgen_quantize(&ctx, buf_w, &bad, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
              "w->layout=2 (e4m3): nvfp4 weights are not packed in it");
  bad.scheme = MGEN_SCHEME_MXFP4, bad.group = 32; /* MXFP4 is, at the mma layout's sizes */
  mgen_weights mma = bad;
  mma.layout = MGEN_LAYOUT_MMA;
  size_t mq = 0, ms = 0;
  CHECK(mgen_weights_bytes(&bad, &qb, &sb) == MGEN_OK && mgen_weights_bytes(&mma, &mq, &ms) == MGEN_OK &&
            qb == mq && sb == ms,
        "MXFP4 in the e4m3 layout: %zu + %zu bytes, the mma layout's %zu + %zu", qb, sb, mq, ms);
  bad = weights(128), bad.wfmt = MGEN_WFMT_U4, bad.scheme = MGEN_SCHEME_ASYM; /* u4 is, zero rows included */
  bad.layout = MGEN_LAYOUT_E4M3;
  mma = bad, mma.layout = MGEN_LAYOUT_MMA;
  mgen_weights sym = mma;
  sym.wfmt = MGEN_WFMT_U4B8, sym.scheme = MGEN_SCHEME_GROUP;
  size_t yq = 0, ys = 0;
  CHECK(mgen_weights_bytes(&bad, &qb, &sb) == MGEN_OK && mgen_weights_bytes(&mma, &mq, &ms) == MGEN_OK &&
            mgen_weights_bytes(&sym, &yq, &ys) == MGEN_OK && qb == mq && sb == ms && sb > ys,
        "u4 in the e4m3 layout: %zu + %zu bytes, the mma layout's %zu + %zu (u4b8's scales %zu)", qb, sb, mq,
        ms, ys);
  static const int layouts[] = {3, 7, 1000};
  for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
    bad = weights(128), bad.layout = (mgen_layout)layouts[i];
    qb = 1, sb = 2;
    CHECK(mgen_weights_bytes(&bad, &qb, &sb) == MGEN_ERR_UNSUPPORTED_FORMAT && qb == 1 && sb == 2,
          "layout %d refused by mgen_weights_bytes", layouts[i]);
    EXPECT_FAIL(mgen_quantize(&ctx, buf_w, &bad, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
                "u4b8 weights are packed in MGEN_LAYOUT_MMA = 1 or MGEN_LAYOUT_E4M3 = 2 (or 0: "
                "the default, mma)");
    EXPECT_FAIL(mgen_pack(&ctx, (const uint8_t *)buf_w, buf_s, &bad, NULL),
                MGEN_ERR_UNSUPPORTED_FORMAT, "w->layout=");
    EXPECT_FAIL(mgen_gemm(&ctx, MGEN_ACT_F16, 1, buf_a, &bad, buf_c, NULL),
                MGEN_ERR_UNSUPPORTED_FORMAT, "w->layout=");
    EXPECT_FAIL(mgen_gemm_choice(&ctx, MGEN_ACT_F16, 1, &bad, &name), MGEN_ERR_UNSUPPORTED_FORMAT,
                "w->layout=");
  }
  bad = weights(128), bad.layout = (mgen_layout)-1;
  EXPECT_FAIL(mgen_quantize(&ctx, buf_w, &bad, NULL), MGEN_ERR_INVALID_ARG, "negative");
  qb = 1;
  CHECK(mgen_weights_bytes(&bad, &qb, &sb) == MGEN_ERR_INVALID_ARG && qb == 1, "layout -1");
}

static int log_calls, log_warns;
static char log_text[600];
static void log_fn(void *user, mgen_log_level level, const char *message) {
  (void)user;
  log_calls++;
  log_warns += level == MGEN_LOG_WARN;
  snprintf(log_text, sizeof log_text, "%s", message);
}

static void test_ctx(void) {
  mgen_ctx *out = (mgen_ctx *)0x1;
  CHECK(mgen_ctx_create(NULL, &fake_table, NULL) == MGEN_ERR_NULL_POINTER, "NULL out");
  CHECK(mgen_ctx_create(&out, NULL, NULL) == MGEN_ERR_NULL_POINTER, "NULL table");
  mgen_table broken = {NULL, 3, 0, "broken"};
  CHECK(mgen_ctx_create(&out, &broken, NULL) == MGEN_ERR_INVALID_ARG, "kernels NULL, count 3");
  CHECK(out == (mgen_ctx *)0x1, "out untouched");
  mgen_ctx_destroy(NULL);
  CHECK(mgen_ctx_sm(NULL) == 0, "sm of NULL");
  CHECK(mgen_ctx_last_error(NULL) != NULL && mgen_ctx_last_error(NULL)[0] != '\0', "NULL ctx text");

  /* max_workspaces is checked before any CUDA call. */
  for (int bad = -1; bad <= 5; bad += 6) {
    mgen_ctx_opts limits = {.device = -1, .max_workspaces = bad};
    out = (mgen_ctx *)0x1;
    CHECK(mgen_ctx_create(&out, &fake_table, &limits) == MGEN_ERR_INVALID_ARG &&
              out == (mgen_ctx *)0x1, "max_workspaces %d", bad);
  }
  /* So is max_sms: negative is an error (0 = all SMs, more than the device has = all). */
  for (int bad = -1; bad >= -2; --bad) {
    mgen_ctx_opts sms = {.device = -1, .max_sms = bad};
    out = (mgen_ctx *)0x1;
    CHECK(mgen_ctx_create(&out, &fake_table, &sms) == MGEN_ERR_INVALID_ARG && out == (mgen_ctx *)0x1,
          "max_sms %d", bad);
  }
  size_t each = 1;
  int allocated = -1, limit = -1;
  CHECK(mgen_ctx_workspaces(NULL, &each, &allocated, &limit) == MGEN_ERR_NULL_POINTER, "NULL");
  CHECK(mgen_ctx_workspaces(&ctx, &each, &allocated, &limit) == MGEN_OK && allocated == 1 &&
            limit == 2, "the fixed pool: %d allocated, limit %d", allocated, limit);
  int devices = 0;
  const int have_gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
  (void)cudaGetLastError();
  mgen_ctx_opts opts = {.device = -1, .log = log_fn};
  mgen_status st = mgen_ctx_create(&out, &fake_table, &opts);
  if (!have_gpu) {
    CHECK(st == MGEN_ERR_CUDA, "no GPU: %s", mgen_status_str(st));
    CHECK(out == (mgen_ctx *)0x1, "out untouched");
    CHECK(log_warns == 1 && strstr(log_text, "mgen_ctx_create") != NULL, "logged: %s", log_text);
  } else {
    CHECK(st == MGEN_OK, "ctx on the fake table: %s", mgen_status_str(st));
    if (st == MGEN_OK) {
      CHECK(mgen_ctx_sm(out) >= 80 && fake_prepares > 0, "sm %d, %d prepares", mgen_ctx_sm(out),
            fake_prepares);
      CHECK(strcmp(mgen_ctx_last_error(out), "") == 0, "no error yet");
      mgen_ctx_destroy(out);
    }
    opts.device = devices; /* one past the last */
    out = (mgen_ctx *)0x1;
    CHECK(mgen_ctx_create(&out, &fake_table, &opts) == MGEN_ERR_INVALID_ARG, "bad device");
    CHECK(out == (mgen_ctx *)0x1, "out untouched");
  }
}

/* One shape check for every entry point: a shape mgen_weights_bytes refuses is refused by the
 * GEMM calls, tuning, quantize and pack with the same status and message (the audit found
 * n=2^20, k=2^16 refused by one and accepted by the other). */
static void test_one_shape_check(void) {
  static const struct { int group, n, k; } shapes[] = {
      {128, 1 << 20, 1 << 16}, /* 2^31 packed words */
      {128, 1000, 4096},       /* n not a multiple of 64 */
      {128, 4096, 4160},       /* k not a multiple of the group */
      {0, 4096, 4100},         /* k not a multiple of 64 */
      {128, 0, 4096},
      {96, 4096, 4224}, /* no such group */
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
    mgen_weights w = weights(shapes[i].group);
    w.n = shapes[i].n, w.k = shapes[i].k;
    size_t qb, sb;
    const char *name = NULL;
    mgen_tune_result r;
    const mgen_status want = mgen_weights_bytes(&w, &qb, &sb);
    CHECK(want != MGEN_OK, "shape %zu accepted by mgen_weights_bytes", i);
    (void)mgen_quantize(&ctx, buf_w, &w, NULL);
    char message[600];
    snprintf(message, sizeof message, "%s", mgen_ctx_last_error(&ctx));
    const mgen_status got[] = {
        mgen_gemm(&ctx, w.act, 1, buf_a, &w, buf_c, NULL),
        mgen_gemm_kernel(&ctx, "fake_g128_16_r0", w.act, 1, buf_a, &w, buf_c, NULL),
        mgen_gemm_choice(&ctx, w.act, 1, &w, &name),
        mgen_tune(&ctx, 1, &w, NULL, &r),
        mgen_quantize(&ctx, buf_w, &w, NULL),
        mgen_pack(&ctx, (const uint8_t *)buf_w, buf_s, &w, NULL),
    };
    for (size_t j = 0; j < sizeof got / sizeof got[0]; j++)
      CHECK(got[j] == want, "shape %zu (n=%d k=%d g%d), entry point %zu: %s, weights_bytes %s",
            i, w.n, w.k, w.group, j, mgen_status_str(got[j]), mgen_status_str(want));
    EXPECT_FAIL(mgen_gemm(&ctx, w.act, 1, buf_a, &w, buf_c, NULL), want, message);
    EXPECT_FAIL(mgen_tune(&ctx, 1, &w, NULL, &r), want, message);
  }
}

/* GEMM, tuning, quantize and pack refuse to run while another device is current: the
 * context's kernels were prepared, and its workspaces allocated, on its own device. */
static void test_wrong_device(void) {
  mgen_weights w = weights(128);
  mgen_tune_result r;
  fake_device_current = 1;
  const char *text = "current CUDA device is 1, the context's is 0: call cudaSetDevice(0)";
  EXPECT_FAIL(mgen_gemm(&ctx, w.act, 1, buf_a, &w, buf_c, NULL), MGEN_ERR_WRONG_DEVICE, text);
  EXPECT_FAIL(mgen_gemm_kernel(&ctx, "fake_g128_16_r0", w.act, 1, buf_a, &w, buf_c, NULL),
              MGEN_ERR_WRONG_DEVICE, text);
  EXPECT_FAIL(mgen_tune(&ctx, 1, &w, NULL, &r), MGEN_ERR_WRONG_DEVICE, text);
  EXPECT_FAIL(mgen_quantize(&ctx, buf_w, &w, NULL), MGEN_ERR_WRONG_DEVICE, text);
  EXPECT_FAIL(mgen_pack(&ctx, (const uint8_t *)buf_w, buf_s, &w, NULL), MGEN_ERR_WRONG_DEVICE,
              text);
  const char *name = NULL; /* no GPU work: any thread, any device */
  CHECK(mgen_gemm_choice(&ctx, w.act, 1, &w, &name) == MGEN_OK, "choice on another device");
  fake_device_current = 0;
  CHECK(mgen_gemm(&ctx, w.act, 1, buf_a, &w, buf_c, NULL) == MGEN_OK, "%s",
        mgen_ctx_last_error(&ctx));
}

/* mgen_ctx_last_error is per thread: two threads fail in turn on one context, and each reads
 * back its own message (with one shared buffer, the first read the second's). */
static pthread_barrier_t turn;
static void *fail_then_read(void *arg) {
  const int m = -(int)(intptr_t)arg; /* -1 or -2: a distinct message per thread */
  mgen_weights w = weights(128);
  char want[64];
  snprintf(want, sizeof want, "m=%d:", m);
  if (m == -2) pthread_barrier_wait(&turn); /* thread 2 fails after thread 1 */
  mgen_status st = mgen_gemm(&ctx, w.act, m, buf_a, &w, buf_c, NULL);
  if (m == -1) pthread_barrier_wait(&turn);
  pthread_barrier_wait(&turn); /* both have failed; now read */
  const int own = st == MGEN_ERR_INVALID_ARG && strstr(mgen_ctx_last_error(&ctx), want) != NULL;
  return (void *)(intptr_t)own;
}

static void test_last_error_per_thread(void) {
  pthread_t t[2];
  void *own[2];
  pthread_barrier_init(&turn, NULL, 2);
  for (intptr_t i = 0; i < 2; i++) pthread_create(&t[i], NULL, fail_then_read, (void *)(i + 1));
  for (int i = 0; i < 2; i++) pthread_join(t[i], &own[i]);
  pthread_barrier_destroy(&turn);
  CHECK(own[0] && own[1], "each thread reads its own last error (%d, %d)", own[0] != NULL,
        own[1] != NULL);
  /* A message belongs to its context: another context has none in this thread. */
  struct mgen_ctx other = ctx;
  (void)mgen__fail(&ctx, MGEN_ERR_INVALID_ARG, "%s", "ctx's failure");
  other.serial = ctx.serial + 1000;
  CHECK(strcmp(mgen_ctx_last_error(&other), "") == 0, "other ctx: '%s'",
        mgen_ctx_last_error(&other));
  CHECK(strcmp(mgen_ctx_last_error(&ctx), "ctx's failure") == 0, "ctx: '%s'",
        mgen_ctx_last_error(&ctx));
}

/* mgen_quantize_act's refusals, each before any launch. */
static void test_quantize_act(void) {
  uint8_t *q = (uint8_t *)buf_q;
  float *s = (float *)buf_s;
  CHECK(mgen_quantize_act(NULL, MGEN_ACT_F16, 1, 16, buf_a, q, s, NULL) == MGEN_ERR_NULL_POINTER,
        "NULL ctx");
  EXPECT_FAIL(mgen_quantize_act(&ctx, (mgen_act)7, 1, 16, buf_a, q, s, NULL),
              MGEN_ERR_INVALID_ARG, "act=7");
  EXPECT_FAIL(mgen_quantize_act(&ctx, MGEN_ACT_F16, 0, 16, buf_a, q, s, NULL),
              MGEN_ERR_INVALID_ARG, "m=0");
  EXPECT_FAIL(mgen_quantize_act(&ctx, MGEN_ACT_BF16, 3, 8, buf_a, q, s, NULL),
              MGEN_ERR_INVALID_ARG, "k=8");
  EXPECT_FAIL(mgen_quantize_act(&ctx, MGEN_ACT_BF16, 3, 24, buf_a, q, s, NULL),
              MGEN_ERR_INVALID_ARG, "k=24");
  EXPECT_FAIL(mgen_quantize_act(&ctx, MGEN_ACT_F16, 1, 16, NULL, q, s, NULL),
              MGEN_ERR_NULL_POINTER, "d_x");
  EXPECT_FAIL(mgen_quantize_act(&ctx, MGEN_ACT_F16, 1, 16, buf_a, NULL, s, NULL),
              MGEN_ERR_NULL_POINTER, "d_q");
  EXPECT_FAIL(mgen_quantize_act(&ctx, MGEN_ACT_F16, 1, 16, buf_a, q, NULL, NULL),
              MGEN_ERR_NULL_POINTER, "d_scales");
  EXPECT_FAIL(mgen_quantize_act(&ctx, MGEN_ACT_F16, 1, 16, buf_a + 8, q, s, NULL),
              MGEN_ERR_MISALIGNED, "d_x");
  EXPECT_FAIL(mgen_quantize_act(&ctx, MGEN_ACT_F16, 1, 16, buf_a, q + 4, s, NULL),
              MGEN_ERR_MISALIGNED, "d_q");
  EXPECT_FAIL(mgen_quantize_act(&ctx, MGEN_ACT_F16, 1, 16, buf_a, q, (float *)(buf_s + 2), NULL),
              MGEN_ERR_MISALIGNED, "d_scales");
}

int main(void) {
  fake_ctx_init(&ctx);
  /* One fixed workspace, never dereferenced by the fake launchers; no tuning. */
  mgen__pool_fixed(&ctx.pool, (float *)buf_c, (int *)buf_q);
  if (mgen__ctx_init_host(&ctx) != MGEN_OK) return 1;
  test_gemm();
  test_gemm_kernel();
  test_gemm_choice();
  test_weights();
  test_layouts();
  test_ctx();
  test_one_shape_check();
  test_wrong_device();
  test_last_error_per_thread();
  test_quantize_act();
  return check_exit("test_api_args");
}
