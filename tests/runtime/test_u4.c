/* test_u4.c -- the u4 weight format (asymmetric int4, value (q - z) * s) without a GPU:
 *   - sizes: mgen_weights_bytes of every group, k padded or not, is what layout.h's "Zero
 *     points" says (codes as u4b8's; scales padded to 16 bytes, then rows x n/2 zero bytes),
 *     and one case worked by hand;
 *   - the CPU reference (tests/common/ref_u4.c): pack / unpack round trips, the packed buffers
 *     dequantized where layout.h puts each code, scale and zero (ref_u4_dequantize_packed)
 *     equal the unpacked weights, the padding's included; the quantization rule's round-trip
 *     error within s (1/2 + 16 u) and its clamps;
 *   - mgen_pack_weights's host checks of u4 arguments on a context built by hand (fake
 *     table): zero points missing, of the wrong size, or passed to a format without them;
 *     codes and scales of the wrong size; and mgen_pack naming mgen_pack_weights for u4.
 *     Codes and zeros above 15 are checked on the GPU (tests/gpu/test_pack_gpu.c).
 * Run: build/tests/test_u4 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "fake_ctx.h"
#include "fake_table.h"
#include "formats/layout.h"
#include "ref.h"
#include "ref_u4.h"
#include "rng.h"

/* ---------------------------------------------------------------- sizes */

static void test_sizes(void) {
  static const int groups[] = {0, 32, 64, 128};
  static const int ks[] = {64, 128, 4096, 4160, 4224, 11008, 11072};
  int padded = 0;
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
      const int group = groups[g], k = ks[i], n = 256;
      if (k % mgen__layout_k_step(group) != 0) continue;
      for (int act = MGEN_ACT_F16; act <= MGEN_ACT_BF16; act++) {
        const mgen_weights w = {.wfmt = MGEN_WFMT_U4, .act = (mgen_act)act,
                                .scheme = MGEN_SCHEME_ASYM, .group = group, .n = n, .k = k};
        size_t qb = 0, sb = 0;
        const mgen_status st = mgen_weights_bytes(&w, &qb, &sb);
        const long long kp = mgen__k_packed(k), rows = mgen__scale_rows(k, group);
        const size_t want_s = (size_t)mgen__zero_offset(n, k, group, 2) + (size_t)(rows * n / 2);
        CHECK(st == MGEN_OK && qb == (size_t)(n * kp / 2) && sb == want_s &&
                  sb == ref_u4_sbytes(n, k, group),
              "u4 g%d n=%d k=%d %s: %s, %zu and %zu bytes, layout.h %lld and %zu", group, n, k,
              act_name(act), mgen_status_str(st), qb, sb, n * kp / 2, want_s);
        padded += kp != k;
      }
    }
  CHECK(padded > 0, "no padded k among the cases");
  /* By hand: n = 256, k = 4160, g64 -> k_packed 4224, 66 rows: 66 * 256 * 2 = 33792 scale
   * bytes (a multiple of 16) + 66 * 128 zero bytes. Per channel, k = 4160: one row, 512 + 128. */
  size_t qb, sb;
  mgen_weights w = {.wfmt = MGEN_WFMT_U4, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_ASYM,
                    .group = 64, .n = 256, .k = 4160};
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && qb == 540672 && sb == 33792 + 8448,
        "u4 g64 256x4160: %zu, %zu bytes", qb, sb);
  w.group = 0;
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK && qb == 540672 && sb == 512 + 128,
        "u4 gc 256x4160: %zu, %zu bytes", qb, sb);
  /* The table's rules hold for u4 as for the others: a scheme of another format, a bad group. */
  w.scheme = MGEN_SCHEME_GROUP;
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_ERR_UNSUPPORTED_FORMAT, "u4 with scheme group");
  w.scheme = MGEN_SCHEME_ASYM, w.group = 16;
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_ERR_UNSUPPORTED_FORMAT, "u4 g16");
}

/* ---------------------------------------------------------------- the CPU reference */

/* Random weights of the act, sums of two uniforms scaled per row; every 7th column shifted
 * off zero (all positive or all negative groups: the zero point's clamps). */
static void random_weights(rng *r, int act, int n, int k, uint16_t *w) {
  for (int j = 0; j < n; j++) {
    const double scale = ldexp(1.0, (int)rng_below(r, 6) - 4);
    const double shift = j % 7 == 3 ? 3.0 : j % 7 == 5 ? -3.0 : 0.0;
    for (int i = 0; i < k; i++)
      w[(size_t)j * k + i] = act_from_double(
          act, (rng_uniform(r, -1, 1) + rng_uniform(r, -1, 1) + shift) * scale);
  }
}

static void test_reference(int act, int n, int k, int group, rng *r) {
  const int rows = ref_scale_rows(k, group), kp = ref_k_packed(k);
  const size_t nk = (size_t)n * k, sb = ref_u4_sbytes(n, k, group);
  uint16_t *w = malloc(sizeof *w * nk), *scales = malloc(sizeof *scales * rows * n);
  uint16_t *scales2 = malloc(sizeof *scales * rows * n);
  uint8_t *codes = malloc(nk), *codes2 = malloc(nk), *zeros = malloc((size_t)rows * n);
  uint8_t *zeros2 = malloc((size_t)rows * n), *sbuf = malloc(sb);
  uint32_t *q = malloc((size_t)n * kp / 2);
  double *dq = malloc(sizeof *dq * nk), *dqp = malloc(sizeof *dqp * (size_t)n * kp);
  random_weights(r, act, n, k, w);
  ref_u4_quantize(act, w, n, k, group, codes, scales, zeros);
  /* The rule's round trip: within s (1/2 + 16 u) where the group straddles 0 (z unclamped);
   * the clamped groups (shifted columns) reach z = 0 and z = 15. */
  ref_u4_dequantize(act, codes, scales, zeros, n, k, group, dq);
  const double u = act_unit_roundoff(act);
  double worst = 0.0;
  int z_lo = 15, z_hi = 0, distinct = 0, seen[16] = {0};
  for (int j = 0; j < n; j++)
    for (int g = 0; g < rows; g++) {
      const int gs = group ? group : k;
      const size_t at = (size_t)g * n + j;
      const double s = act_to_double(act, scales[at]);
      if (!seen[zeros[at]]++) distinct++;
      z_lo = zeros[at] < z_lo ? zeros[at] : z_lo, z_hi = zeros[at] > z_hi ? zeros[at] : z_hi;
      double lo = INFINITY, hi = -INFINITY;
      for (int i = g * gs; i < (g + 1) * gs; i++) {
        const double v = act_to_double(act, w[(size_t)j * k + i]);
        lo = fmin(lo, v), hi = fmax(hi, v);
      }
      if (lo > 0 || hi < 0) continue;
      for (int i = g * gs; i < (g + 1) * gs; i++)
        worst = fmax(worst, fabs(act_to_double(act, w[(size_t)j * k + i]) - dq[(size_t)j * k + i]) / s);
    }
  CHECK(worst <= 0.5 + 16 * u && worst > 0.25, "%s g%d %dx%d: round-trip error %.4f s",
        act_name(act), group, n, k, worst);
  CHECK(z_lo == 0 && z_hi == 15 && distinct >= 3, "%s g%d: zeros %d..%d, %d distinct",
        act_name(act), group, z_lo, z_hi, distinct);
  /* Zeros over 0..15 for the packing (not the rule's): pack, unpack, dequantize packed. */
  for (size_t i = 0; i < (size_t)rows * n; i++) zeros[i] = (uint8_t)rng_below(r, 16);
  ref_u4_pack(act, codes, scales, zeros, n, k, group, q, sbuf);
  ref_u4_unpack(q, sbuf, n, k, group, codes2, scales2, zeros2);
  CHECK(memcmp(codes, codes2, nk) == 0 && memcmp(zeros, zeros2, (size_t)rows * n) == 0 &&
            memcmp(scales, scales2, sizeof *scales * rows * n) == 0,
        "%s g%d %dx%d: unpack(pack) is not the identity", act_name(act), group, n, k);
  ref_u4_dequantize(act, codes, scales, zeros, n, k, group, dq);
  ref_u4_dequantize_packed(act, q, sbuf, n, k, group, dqp);
  long bad = 0, bad_pad = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < kp; i++) {
      const double got = dqp[(size_t)j * kp + i];
      if (i < k) {
        bad += got != dq[(size_t)j * k + i];
      } else {
        /* Padded rows: (8 - 8) * 1 = 0; per channel the row's zero and scale apply to code 8
         * (the GEMM zero-fills A past k, which alone makes the padding add nothing). */
        const double want = group ? 0.0 : (8 - zeros[j]) * act_to_double(act, scales[j]);
        bad_pad += got != want;
      }
    }
  CHECK(bad == 0 && bad_pad == 0, "%s g%d %dx%d: %ld weights and %ld padded ones differ "
        "from the packed buffers", act_name(act), group, n, k, bad, bad_pad);
  free(w), free(scales), free(scales2), free(codes), free(codes2), free(zeros), free(zeros2);
  free(sbuf), free(q), free(dq), free(dqp);
}

/* Crafted groups: a constant group gets s = 1; an all-zero one s = 1, z = 0, codes 0. */
static void test_rule_cases(void) {
  uint16_t s;
  uint8_t z;
  ref_u4_scale_zero(MGEN_ACT_F16, 0.0f, 0.0f, &s, &z);
  CHECK(s == 0x3c00 && z == 0, "all-zero group: s 0x%04x z %d", s, z);
  ref_u4_scale_zero(MGEN_ACT_F16, -1.0f, 2.0f, &s, &z); /* s = 0.2 (FP16 0x3266), z = rint(5) */
  CHECK(s == 0x3266 && z == 5, "[-1, 2]: s 0x%04x z %d", s, z);
  ref_u4_scale_zero(MGEN_ACT_BF16, -3.0e38f, 3.0e38f, &s, &z); /* no FP32 overflow */
  CHECK(isfinite(act_to_double(MGEN_ACT_BF16, s)) && (z == 7 || z == 8),
        "BF16 near FLT_MAX: s 0x%04x z %d", s, z);
  ref_u4_scale_zero(MGEN_ACT_F16, 1.0f, 2.0f, &s, &z); /* all positive: z clamped at 0 */
  CHECK(z == 0, "[1, 2]: z %d", z);
}

/* ---------------------------------------------------------------- mgen_pack_weights */

static _Alignas(16) char buf[64];
static struct mgen_ctx ctx;
static int capturing;

static int fake_capturing(mgen_ctx *c, void *stream, cudaError_t *err) {
  (void)c, (void)stream;
  *err = cudaSuccess;
  return capturing;
}


static mgen_pack_src u4_source(const mgen_weights *w) {
  const size_t rows = w->group ? (size_t)(w->k / w->group) : 1;
  const mgen_pack_src s = {.codes = buf, .codes_bytes = (size_t)w->n * w->k, .scales = buf,
                           .scales_bytes = rows * w->n * 2, .zeros = buf,
                           .zeros_bytes = rows * w->n};
  return s;
}

static void test_pack_checks(void) {
  fake_ctx_init(&ctx);
  ctx.capturing = fake_capturing;
  const int groups[] = {0, 32, 128};
  for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
    mgen_weights w = {.wfmt = MGEN_WFMT_U4, .act = MGEN_ACT_BF16, .scheme = MGEN_SCHEME_ASYM,
                      .group = groups[i], .n = 256, .k = 4224, .d_q = buf, .d_scales = buf};
    const mgen_pack_src s = u4_source(&w);
    mgen_pack_src bad = s;
    bad.zeros = NULL;
    EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, &w, NULL), MGEN_ERR_NULL_POINTER,
                "src->zeros is NULL: u4 weights need their zero points");
    bad = s, bad.zeros_bytes++;
    EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, &w, NULL), MGEN_ERR_INVALID_ARG,
                "src->zeros_bytes=");
    bad = s, bad.zeros_bytes = s.scales_bytes; /* a zero per byte, not per scale's 2 */
    EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, &w, NULL), MGEN_ERR_INVALID_ARG, "zero points, one per byte");
    bad = s, bad.codes_bytes /= 2; /* two codes per byte is not u4's input */
    EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, &w, NULL), MGEN_ERR_INVALID_ARG,
                "src->codes_bytes=");
    bad = s, bad.scales_bytes += 2;
    EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, &w, NULL), MGEN_ERR_INVALID_ARG,
                "src->scales_bytes=");
    bad = s, bad.scales = buf + 1;
    EXPECT_FAIL(mgen_pack_weights(&ctx, &bad, &w, NULL), MGEN_ERR_MISALIGNED, "src->scales=");
    /* mgen_pack is u4b8's: it names the call that packs u4. */
    EXPECT_FAIL(mgen_pack(&ctx, (const uint8_t *)buf, buf, &w, NULL), MGEN_ERR_UNSUPPORTED_FORMAT,
                "mgen_pack packs u4b8 weights; u4 codes, scales and zero points are packed by "
                "mgen_pack_weights");
    /* Valid arguments pass every host check: the GPU input check refuses the capturing stream. */
    capturing = 1;
    EXPECT_FAIL(mgen_pack_weights(&ctx, &s, &w, NULL), MGEN_ERR_STREAM_CAPTURING,
                "mgen_pack_weights: the stream is being captured");
    capturing = 0;
  }
  /* Zero points for a format without them: refused whatever else is right. */
  mgen_weights u = {.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_GROUP,
                    .group = 128, .n = 256, .k = 4224, .d_q = buf, .d_scales = buf};
  mgen_pack_src s = u4_source(&u);
  EXPECT_FAIL(mgen_pack_weights(&ctx, &s, &u, NULL), MGEN_ERR_INVALID_ARG,
              "u4b8/group weights have no zero points (pass NULL; u4/asym have them)");
  mgen_weights f = {.wfmt = MGEN_WFMT_FE2M1, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_NVFP4,
                    .group = 16, .n = 256, .k = 512, .d_q = buf, .d_scales = buf};
  s = (mgen_pack_src){.codes = buf, .codes_bytes = 256 * 512 / 2, .scales = buf,
                      .scales_bytes = 256 * 512 / 16, .global_scale = 1.0f, .zeros = buf};
  EXPECT_FAIL(mgen_pack_weights(&ctx, &s, &f, NULL), MGEN_ERR_INVALID_ARG,
              "src->zeros=");
  /* ...and without them, the same call reaches the GPU check. */
  capturing = 1;
  s.zeros = NULL;
  EXPECT_FAIL(mgen_pack_weights(&ctx, &s, &f, NULL), MGEN_ERR_STREAM_CAPTURING,
              "mgen_pack_weights: the stream is being captured");
  capturing = 0;
}

int main(void) {
  rng r;
  rng_seed(&r, rng_test_seed("test_u4"));
  test_sizes();
  test_rule_cases();
  static const int groups[] = {0, 32, 64, 128};
  for (int act = MGEN_ACT_F16; act <= MGEN_ACT_BF16; act++)
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++) {
      const int group = groups[g];
      test_reference(act, 128, group == 128 ? 384 : 320, group, &r); /* 320: padded to 384 */
      test_reference(act, 64, 128, group, &r);
    }
  test_pack_checks();
  return check_exit("test_u4");
}
