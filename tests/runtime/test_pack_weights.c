/* test_pack_weights.c -- mgen_pack_weights, the one packing entry point, without a GPU, over
 * a context built by hand on the fake table: its bad arguments (statuses, and messages naming
 * src's fields), the same statuses and messages as mgen_pack / mgen_pack_fp4 where those name
 * no argument, the old calls' own cross-format messages, and valid calls of every scheme
 * reaching the GPU input check (refused on a faked capturing stream, before any CUDA call);
 * and the library's format registries hold every weight format of the table.
 * The packed bytes of both entry points are compared on a GPU: tests/gpu/test_pack_gpu.c. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "fake_ctx.h"
#include "fake_table.h"
#include "context/internal.h"
#include "formats/format.h"
#include "prepare/format_ops.h"
#include "mgen_formats.h"

static _Alignas(16) char buf[64];
static struct mgen_ctx ctx;
static int capturing;

static int fake_capturing(mgen_ctx *c, void *stream, cudaError_t *err) {
  (void)c, (void)stream;
  *err = cudaSuccess;
  return capturing;
}


static mgen_weights u4b8(int group) {
  mgen_weights w = {.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_GROUP,
                    .group = group, .n = 4096, .k = 4096, .d_q = buf, .d_scales = buf};
  return w;
}

static mgen_weights fe2m1(mgen_scheme scheme) {
  mgen_weights w = {.wfmt = MGEN_WFMT_FE2M1, .act = MGEN_ACT_BF16, .scheme = scheme,
                    .group = scheme == MGEN_SCHEME_NVFP4 ? 16 : 32, .n = 256, .k = 512,
                    .d_q = buf, .d_scales = buf};
  return w;
}

/* The sizes the table of mgen.h (mgen_pack_src) gives for weights w. */
static mgen_pack_src source(const mgen_weights *w) {
  const size_t n = (size_t)w->n, k = (size_t)w->k;
  mgen_pack_src s = {.codes = buf, .scales = buf, .global_scale = 1.0f};
  if (w->wfmt == MGEN_WFMT_FE2M1) {
    s.codes_bytes = n * k / 2, s.scales_bytes = n * (k / (size_t)w->group);
  } else {
    s.codes_bytes = n * k, s.scales_bytes = (w->group ? k / (size_t)w->group : 1) * n * 2;
  }
  return s;
}

static void bad_arguments(void) {
  mgen_weights w = u4b8(128);
  mgen_pack_src s = source(&w), bad;
  CHECK(mgen_pack_weights(NULL, &s, &w, NULL) == MGEN_ERR_NULL_POINTER, "NULL ctx");
  EXPECT_FAIL(mgen_pack_weights(&ctx, NULL, &w, NULL), MGEN_ERR_NULL_POINTER, "src is NULL");
  EXPECT_FAIL(mgen_pack_weights(&ctx, &s, NULL, NULL), MGEN_ERR_NULL_POINTER, "w is NULL");
  bad = s, bad.codes = NULL;
  EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, &w, NULL), MGEN_ERR_NULL_POINTER, "src->codes is NULL");
  bad = s, bad.scales = NULL;
  EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, &w, NULL), MGEN_ERR_NULL_POINTER, "src->scales is NULL");
  bad = s, bad.codes_bytes = s.codes_bytes / 2; /* two codes per byte: not u4b8's form */
  EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, &w, NULL), MGEN_ERR_INVALID_ARG,
              "src->codes_bytes=8388608: an n=4096 x k=4096 u4b8 weight, one code per byte, is "
              "16777216 bytes");
  bad = s, bad.scales_bytes = s.scales_bytes + 2;
  EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, &w, NULL), MGEN_ERR_INVALID_ARG,
              "src->scales_bytes=262146: k/group (1 per channel) = 32 x n=4096 scales of 2 bytes (f16) "
              "is 262144 bytes");
  bad = s, bad.scales = buf + 1;
  EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, &w, NULL), MGEN_ERR_MISALIGNED,
              "src->scales=");
  mgen_weights wc = u4b8(MGEN_GROUP_CHANNEL);
  bad = source(&wc), bad.scales_bytes = s.scales_bytes; /* the grouped size, per channel */
  EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, &wc, NULL), MGEN_ERR_INVALID_ARG,
              "src->scales_bytes=262144: k/group (1 per channel) = 1 x n=4096");
  for (int si = 0; si < 2; si++) {
    const mgen_weights f = fe2m1(si ? MGEN_SCHEME_MXFP4 : MGEN_SCHEME_NVFP4);
    const mgen_pack_src fs = source(&f);
    bad = fs, bad.codes_bytes = (size_t)f.n * f.k; /* one code per byte: not fe2m1's form */
    EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, (mgen_weights *)&f, NULL), MGEN_ERR_INVALID_ARG,
                "src->codes_bytes=131072: an n=256 x k=512 FP4 weight");
    bad = fs, bad.scales_bytes = fs.scales_bytes * 2;
    EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, (mgen_weights *)&f, NULL), MGEN_ERR_INVALID_ARG,
                "src->scales_bytes=");
  }
  mgen_weights nv = fe2m1(MGEN_SCHEME_NVFP4);
  bad = source(&nv), bad.global_scale = NAN;
  EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, &nv, NULL), MGEN_ERR_INVALID_ARG,
              "finite and positive");
  fake_device_current = 1;
  s = source(&w);
  EXPECT_FAIL(mgen_pack_weights(&ctx, &s, &w, NULL), MGEN_ERR_WRONG_DEVICE,
              "current CUDA device is 1");
  fake_device_current = 0;
}

/* Weights the description check refuses: the new entry point says what the old ones say. */
static void same_as_the_old_calls(void) {
  static const struct {
    int wfmt, scheme, group, n, k, layout;
  } cases[] = {
      {MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 96, 4096, 4096, 0},    /* group */
      {MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128, 4096, 4100, 0},   /* k */
      {MGEN_WFMT_U4B8, MGEN_SCHEME_NVFP4, 16, 4096, 4096, 0},    /* scheme */
      {MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128, 4096, 4096, 7},   /* layout */
      {MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128, 0, 4096, 0},      /* n */
      {MGEN_WFMT_FE2M1, MGEN_SCHEME_NVFP4, 32, 256, 512, 0},     /* group */
      {MGEN_WFMT_FE2M1, MGEN_SCHEME_MXFP4, 32, 256, 4112, 0},    /* k */
      {MGEN_WFMT_FE2M1, 7, 16, 256, 512, 0},                     /* scheme */
      {MGEN_WFMT_FE2M1, MGEN_SCHEME_NVFP4, 16, 100, 512, 0},     /* n */
      {9, MGEN_SCHEME_GROUP, 128, 4096, 4096, 0},                /* wfmt */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mgen_weights w = u4b8(128);
    w.wfmt = (mgen_wfmt)cases[i].wfmt, w.scheme = (mgen_scheme)cases[i].scheme;
    w.group = cases[i].group, w.n = cases[i].n, w.k = cases[i].k;
    w.layout = (mgen_layout)cases[i].layout;
    const mgen_pack_src s = source(&w);
    const mgen_status old = cases[i].wfmt == MGEN_WFMT_FE2M1
                                ? mgen_pack_fp4(&ctx, s.codes, s.codes_bytes, s.scales,
                                                s.scales_bytes, s.global_scale, &w, NULL)
                                : mgen_pack(&ctx, s.codes, s.scales, &w, NULL);
    char old_text[512];
    snprintf(old_text, sizeof old_text, "%s", mgen_ctx_last_error(&ctx));
    (void)mgen__fail(&ctx, MGEN_OK, "%s", "");
    const mgen_status st = mgen_pack_weights(&ctx, &s, &w, NULL);
    CHECK(old != MGEN_OK && st == old, "case %zu: %s, the old call %s", i, mgen_status_str(st),
          mgen_status_str(old));
    CHECK(strcmp(mgen_ctx_last_error(&ctx), old_text) == 0, "case %zu: '%s', the old call '%s'", i,
          mgen_ctx_last_error(&ctx), old_text);
  }
  /* The old calls take their own format only, and name the call for the other. */
  mgen_weights f = fe2m1(MGEN_SCHEME_NVFP4), u = u4b8(128);
  EXPECT_FAIL(mgen_pack(&ctx, (const uint8_t *)buf, buf, &f, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
              "mgen_pack packs u4b8 weights; fe2m1 (NVFP4, MXFP4) checkpoints are packed by "
              "mgen_pack_fp4");
  EXPECT_FAIL(mgen_pack_fp4(&ctx, (const uint8_t *)buf, 1, (const uint8_t *)buf, 1, 1.0f, &u, NULL),
              MGEN_ERR_UNSUPPORTED_FORMAT,
              "mgen_pack_fp4 packs fe2m1 weights (w->wfmt=fe2m1); u4b8 codes and scales are "
              "packed by mgen_pack");
}

/* Valid calls of every scheme pass every host check: the GPU input check refuses the
 * capturing stream, named by the entry point (and by the old call for the old call). */
static void valid_calls_reach_the_gpu_check(void) {
  capturing = 1;
  const mgen_weights ws[] = {u4b8(128), u4b8(32), u4b8(MGEN_GROUP_CHANNEL),
                             fe2m1(MGEN_SCHEME_NVFP4), fe2m1(MGEN_SCHEME_MXFP4)};
  for (size_t i = 0; i < sizeof ws / sizeof ws[0]; i++) {
    mgen_weights w = ws[i];
    mgen_pack_src s = source(&w);
    if (w.scheme == MGEN_SCHEME_MXFP4) s.global_scale = NAN; /* ignored */
    EXPECT_FAIL(mgen_pack_weights(&ctx, &s, &w, NULL), MGEN_ERR_STREAM_CAPTURING,
                "mgen_pack_weights: the stream is being captured");
    if (w.wfmt == MGEN_WFMT_U4B8)
      EXPECT_FAIL(mgen_pack(&ctx, s.codes, s.scales, &w, NULL), MGEN_ERR_STREAM_CAPTURING,
                  "mgen_pack: the stream is being captured");
    else
      EXPECT_FAIL(mgen_pack_fp4(&ctx, s.codes, s.codes_bytes, s.scales, s.scales_bytes,
                                s.global_scale, &w, NULL),
                  MGEN_ERR_STREAM_CAPTURING, "mgen_pack_fp4: the stream is being captured");
  }
  capturing = 0;
}

/* Every weight format of the table has its description and its GPU hooks, under its value. */
static void every_format_registered(void) {
  int rows = 0;
#define REGISTERED(ID, text, value, ...)                                                     \
  rows++;                                                                                    \
  CHECK(mgen__format_of(value) != NULL && mgen__format_of(value)->wfmt == (value) &&         \
            strcmp(mgen__format_of(value)->name, text) == 0,                                 \
        "%s: no description in formats/registry.c", text);                                   \
  CHECK(mgen__format_ops_of(value) != NULL && mgen__format_ops_of(value)->pack != NULL,      \
        "%s: no GPU hooks in prepare/registry_ops.c", text);
  MGEN_WFMT_LIST(REGISTERED)
#undef REGISTERED
  CHECK(rows == (int)mgen__format_count && rows == (int)mgen__format_ops_count,
        "%d table formats, %zu descriptions, %zu GPU hooks", rows, mgen__format_count,
        mgen__format_ops_count);
}

int main(void) {
  fake_ctx_init(&ctx);
  ctx.capturing = fake_capturing;
  bad_arguments();
  same_as_the_old_calls();
  valid_calls_reach_the_gpu_check();
  every_format_registered();
  return check_exit("test_pack_weights");
}
