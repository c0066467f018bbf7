/* fp4_bad_inputs.c -- see fp4_bad_inputs.h. */
#include "fp4_bad_inputs.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "expect_status.h"

#define EXPECT_FAIL EXPECT_STATUS /* (a shorter name: the calls below are long) */

static mgen_weights fe2m1(mgen_scheme scheme, void *buf) {
  mgen_weights w = {.wfmt = MGEN_WFMT_FE2M1, .act = MGEN_ACT_F16, .scheme = scheme,
                    .group = scheme == MGEN_SCHEME_NVFP4 ? 16 : 32, .n = 256, .k = 512,
                    .d_q = buf, .d_scales = buf};
  return w;
}

static void weights_bytes(void *buf) {
  size_t qb = 1, sb = 2;
  mgen_weights w = fe2m1(MGEN_SCHEME_NVFP4, buf);
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && qb == 256u * 512 / 2 &&
            sb == 256u * 32 + 256 * 4, "nvfp4 sizes %zu %zu", qb, sb);
  w = fe2m1(MGEN_SCHEME_MXFP4, buf);
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && sb == 256u * 16 + 256 * 4, "mxfp4 %zu", sb);
  w.act = MGEN_ACT_BF16;
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && sb == 256u * 16 + 256 * 4, "bf16 %zu", sb);
  /* k not a multiple of 128: the sizes of the packed layout's k_packed (K padding, layout.h) */
  w = fe2m1(MGEN_SCHEME_NVFP4, buf), w.k = 3696; /* 231 blocks, padded to 3712 = 232 */
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && qb == 256u * 3712 / 2 &&
            sb == 256u * 232 + 256 * 4, "nvfp4 k=3696 sizes %zu %zu", qb, sb);
  w = fe2m1(MGEN_SCHEME_MXFP4, buf), w.k = 2752; /* 86 blocks, padded to 2816 = 88 */
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && qb == 256u * 2816 / 2 &&
            sb == 256u * 88 + 256 * 4, "mxfp4 k=2752 sizes %zu %zu", qb, sb);
  static const struct {
    int wfmt, scheme, group, k;
    mgen_status expect;
  } cases[] = {
      {MGEN_WFMT_FE2M1, MGEN_SCHEME_NVFP4, 32, 512, MGEN_ERR_UNSUPPORTED_FORMAT},
      {MGEN_WFMT_FE2M1, MGEN_SCHEME_MXFP4, 16, 512, MGEN_ERR_UNSUPPORTED_FORMAT},
      {MGEN_WFMT_FE2M1, MGEN_SCHEME_MXFP4, 64, 512, MGEN_ERR_UNSUPPORTED_FORMAT},
      {MGEN_WFMT_FE2M1, MGEN_SCHEME_GROUP, 128, 512, MGEN_ERR_UNSUPPORTED_FORMAT},
      {MGEN_WFMT_FE2M1, MGEN_SCHEME_GROUP, 16, 512, MGEN_ERR_UNSUPPORTED_FORMAT},
      {MGEN_WFMT_U4B8, MGEN_SCHEME_NVFP4, 16, 512, MGEN_ERR_UNSUPPORTED_FORMAT},
      {MGEN_WFMT_U4B8, MGEN_SCHEME_MXFP4, 128, 512, MGEN_ERR_UNSUPPORTED_FORMAT},
      {MGEN_WFMT_FE2M1, 7, 16, 512, MGEN_ERR_INVALID_ARG},
      {MGEN_WFMT_FE2M1, -1, 16, 512, MGEN_ERR_INVALID_ARG},
      {MGEN_WFMT_FE2M1, MGEN_SCHEME_NVFP4, 16, 520, MGEN_ERR_UNSUPPORTED_SHAPE},  /* not blocks */
      {MGEN_WFMT_FE2M1, MGEN_SCHEME_MXFP4, 32, 4112, MGEN_ERR_UNSUPPORTED_SHAPE}, /* NVFP4's, not MXFP4's */
      {MGEN_WFMT_FE2M1, MGEN_SCHEME_NVFP4, 16, 0, MGEN_ERR_INVALID_ARG},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    w = fe2m1(MGEN_SCHEME_NVFP4, buf);
    w.wfmt = (mgen_wfmt)cases[i].wfmt, w.scheme = (mgen_scheme)cases[i].scheme;
    w.group = cases[i].group, w.k = cases[i].k;
    qb = 1, sb = 2;
    const mgen_status st = mgen_weights_bytes(&w, &qb, &sb);
    CHECK(st == cases[i].expect, "weights_bytes case %zu: %s", i, mgen_status_str(st));
    CHECK(qb == 1 && sb == 2, "case %zu: out-params untouched", i);
  }
}

static void pack_fp4(mgen_ctx *ctx, void *buf) {
  const uint8_t *bytes = (const uint8_t *)buf;
  for (int si = 0; si < 2; si++) {
    const mgen_scheme scheme = si ? MGEN_SCHEME_MXFP4 : MGEN_SCHEME_NVFP4;
    mgen_weights w = fe2m1(scheme, buf), bad;
    const size_t pb = 256u * 512 / 2, sb = 256u * 512 / (size_t)w.group;
    CHECK(mgen_pack_fp4(NULL, bytes, pb, bytes, sb, 1.0f, &w, NULL) == MGEN_ERR_NULL_POINTER, "ctx");
    EXPECT_FAIL(ctx, mgen_pack_fp4(ctx, bytes, pb, bytes, sb, 1.0f, NULL, NULL), MGEN_ERR_NULL_POINTER,
                "w is NULL");
    EXPECT_FAIL(ctx, mgen_pack_fp4(ctx, NULL, pb, bytes, sb, 1.0f, &w, NULL), MGEN_ERR_NULL_POINTER,
                "d_packed");
    EXPECT_FAIL(ctx, mgen_pack_fp4(ctx, bytes, pb, NULL, sb, 1.0f, &w, NULL), MGEN_ERR_NULL_POINTER,
                "d_block_scales");
    EXPECT_FAIL(ctx, mgen_pack_fp4(ctx, bytes, pb - 1, bytes, sb, 1.0f, &w, NULL),
                MGEN_ERR_INVALID_ARG, "packed_bytes");
    EXPECT_FAIL(ctx, mgen_pack_fp4(ctx, bytes, pb * 2, bytes, sb, 1.0f, &w, NULL),
                MGEN_ERR_INVALID_ARG, "packed_bytes");
    EXPECT_FAIL(ctx, mgen_pack_fp4(ctx, bytes, pb, bytes, si ? sb * 2 : sb / 2, 1.0f, &w, NULL),
                MGEN_ERR_INVALID_ARG, "scale_bytes");
    bad = w, bad.group = si ? 16 : 32;
    EXPECT_FAIL(ctx, mgen_pack_fp4(ctx, bytes, pb, bytes, 256u * 512 / bad.group, 1.0f, &bad, NULL),
                MGEN_ERR_UNSUPPORTED_FORMAT, "group");
    bad = w, bad.scheme = MGEN_SCHEME_GROUP;
    EXPECT_FAIL(ctx, mgen_pack_fp4(ctx, bytes, pb, bytes, sb, 1.0f, &bad, NULL),
                MGEN_ERR_UNSUPPORTED_FORMAT, "fe2m1");
    bad = w, bad.k = 520;
    EXPECT_FAIL(ctx, mgen_pack_fp4(ctx, bytes, 256u * 520 / 2, bytes, sb, 1.0f, &bad, NULL),
                MGEN_ERR_UNSUPPORTED_SHAPE, "k=520");
    bad = w, bad.wfmt = MGEN_WFMT_U4B8, bad.scheme = MGEN_SCHEME_GROUP, bad.group = 128;
    EXPECT_FAIL(ctx, mgen_pack_fp4(ctx, bytes, pb, bytes, sb, 1.0f, &bad, NULL),
                MGEN_ERR_UNSUPPORTED_FORMAT, "mgen_pack");
    bad = w, bad.d_q = (char *)buf + 8;
    EXPECT_FAIL(ctx, mgen_pack_fp4(ctx, bytes, pb, bytes, sb, 1.0f, &bad, NULL), MGEN_ERR_MISALIGNED,
                "d_q");
  }
  /* NVFP4's global scale: finite, positive, and its column factor (x 2^7) finite. */
  mgen_weights w = fe2m1(MGEN_SCHEME_NVFP4, buf);
  const size_t pb = 256u * 512 / 2, sb = 256u * 512 / 16;
  const float globals[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, -1.0f};
  for (size_t i = 0; i < sizeof globals / sizeof globals[0]; i++)
    EXPECT_FAIL(ctx, mgen_pack_fp4(ctx, bytes, pb, bytes, sb, globals[i], &w, NULL),
                MGEN_ERR_INVALID_ARG, "finite and positive");
  EXPECT_FAIL(ctx, mgen_pack_fp4(ctx, bytes, pb, bytes, sb, FLT_MAX, &w, NULL), MGEN_ERR_INVALID_ARG,
              "too large");
}

static void quantize_and_pack(mgen_ctx *ctx, void *buf) {
  mgen_weights w = fe2m1(MGEN_SCHEME_NVFP4, buf), bad;
  bad = w, bad.group = 32;
  EXPECT_FAIL(ctx, mgen_quantize(ctx, buf, &bad, NULL), MGEN_ERR_UNSUPPORTED_FORMAT, "nvfp4");
  bad = w, bad.scheme = MGEN_SCHEME_GROUP;
  EXPECT_FAIL(ctx, mgen_quantize(ctx, buf, &bad, NULL), MGEN_ERR_UNSUPPORTED_FORMAT, "fe2m1");
  bad = w, bad.scheme = MGEN_SCHEME_ASYM;
  EXPECT_FAIL(ctx, mgen_quantize(ctx, buf, &bad, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
              "asym is a u4 scheme");
  bad = w, bad.scheme = (mgen_scheme)99; /* outside the enum */
  EXPECT_FAIL(ctx, mgen_quantize(ctx, buf, &bad, NULL), MGEN_ERR_INVALID_ARG, "scheme=99");
  bad = w, bad.k = 4100;
  EXPECT_FAIL(ctx, mgen_quantize(ctx, buf, &bad, NULL), MGEN_ERR_UNSUPPORTED_SHAPE,
              "k=4100");
  EXPECT_FAIL(ctx, mgen_quantize(ctx, (char *)buf + 1, &w, NULL), MGEN_ERR_MISALIGNED, "d_w");
  bad = w, bad.act = MGEN_ACT_BF16, bad.d_scales = (char *)buf + 4;
  EXPECT_FAIL(ctx, mgen_quantize(ctx, buf, &bad, NULL), MGEN_ERR_MISALIGNED, "d_scales");
  EXPECT_FAIL(ctx, mgen_pack(ctx, (const uint8_t *)buf, buf, &w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
              "mgen_pack_fp4");
}

static void gemm(mgen_ctx *ctx, void *buf) {
  const char *name = "untouched";
  mgen_weights w = fe2m1(MGEN_SCHEME_MXFP4, buf), bad;
  bad = w, bad.scheme = MGEN_SCHEME_GROUP;
  EXPECT_FAIL(ctx, mgen_gemm(ctx, bad.act, 1, buf, &bad, buf, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
              "fe2m1 takes MGEN_SCHEME_NVFP4");
  bad = w, bad.scheme = MGEN_SCHEME_NVFP4; /* group 32 is MXFP4's */
  EXPECT_FAIL(ctx, mgen_gemm(ctx, bad.act, 1, buf, &bad, buf, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
              "w->group=32");
  bad = w, bad.group = 16;
  EXPECT_FAIL(ctx, mgen_gemm_choice(ctx, bad.act, 1, &bad, &name), MGEN_ERR_UNSUPPORTED_FORMAT,
              "w->group=16");
  bad = w, bad.scheme = (mgen_scheme)5;
  EXPECT_FAIL(ctx, mgen_gemm(ctx, bad.act, 1, buf, &bad, buf, NULL), MGEN_ERR_INVALID_ARG,
              "scheme=5");
  bad = w, bad.wfmt = MGEN_WFMT_U4B8, bad.group = 128;
  EXPECT_FAIL(ctx, mgen_gemm(ctx, bad.act, 1, buf, &bad, buf, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
              "u4b8 takes MGEN_SCHEME_GROUP");
  CHECK(strcmp(name, "untouched") == 0, "choice out-param untouched");
}

void fp4_check_bad_inputs(mgen_ctx *ctx, void *buf) {
  weights_bytes(buf);
  pack_fp4(ctx, buf);
  quantize_and_pack(ctx, buf);
  gemm(ctx, buf);
}
