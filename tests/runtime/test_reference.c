/* test_reference.c -- the CPU reference itself (tests/common): FP16 and BF16 conversions and
 * arithmetic, the scale rule, quantize -> dequantize error, pack/unpack round trip, the K
 * padding as the quantization of zero columns, and the reference GEMM against a naive
 * independent computation, for both activation types.
 * Everything the GPU tests compare against rests on these. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "bf16.h"
#include "check.h"
#include "half.h"
#include "ref.h"
#include "rng.h"

static const int groups[] = {0, 32, 64, 128};
static const int acts[] = {MGEN_ACT_F16, MGEN_ACT_BF16};

static void test_half(rng *r) {
  for (uint32_t h = 0; h < 0x10000; h++) {
    if (half_is_nan((uint16_t)h)) continue;
    CHECK(half_from_double(half_to_double((uint16_t)h)) == h, "round trip 0x%04x", h);
  }
  CHECK(half_to_double(0x3c00) == 1.0 && half_to_double(0x7bff) == 65504.0, "1, max");
  CHECK(half_to_double(0x0001) == 0x1p-24 && half_to_double(0x0400) == 0x1p-14, "min");
  CHECK(half_from_double(1.0 + 0x1p-11) == 0x3c00, "tie to even (down)");
  CHECK(half_from_double(1.0 + 3 * 0x1p-11) == 0x3c02, "tie to even (up)");
  CHECK(half_from_double(65519.99) == 0x7bff, "below the overflow tie");
  CHECK(half_from_double(65520.0) == 0x7c00, "overflow tie goes to inf");
  CHECK(half_from_double(-1e9) == 0xfc00, "-inf");
  CHECK(half_from_double(0x1p-25) == 0x0000, "subnormal tie to even (zero)");
  CHECK(half_from_double(3 * 0x1p-25) == 0x0002, "subnormal tie to even (up)");
  CHECK(half_from_double(1023.5 * 0x1p-24) == 0x0400, "rounds up into the normals");
  CHECK(half_from_double(-0.0) == 0x8000, "-0");
  CHECK(half_is_nan(half_from_double(NAN)) && half_is_nan(HALF_NAN_POISON), "NaN");
  /* Random values: the result is a nearest FP16 value, ties to an even significand. */
  for (int i = 0; i < 100000; i++) {
    const double x = ldexp(rng_uniform(r, 1.0, 2.0), (int)rng_below(r, 40) - 26);
    const uint16_t h = half_from_double(x);
    if (h >= 0x7bff) continue;
    const double v = half_to_double(h), up = half_to_double((uint16_t)(h + 1));
    const double down = h > 0 ? half_to_double((uint16_t)(h - 1)) : -up;
    const double e = fabs(x - v);
    CHECK(e <= fabs(x - up) && e <= fabs(x - down), "x=%.17g -> 0x%04x not nearest", x, h);
    if (e == fabs(x - up) || e == fabs(x - down)) CHECK((h & 1) == 0, "tie not even: %.17g", x);
  }
}

/* float -> BF16 by integer arithmetic on the FP32 bits (round to nearest even: add 0x7fff plus
 * the lowest kept bit, drop the low half), the usual device-independent formulation. It is
 * independent of bf16_from_double, which goes through double and frexp. Not for NaN. */
static uint16_t bf16_by_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

static float float_of_bits(uint32_t x) {
  float f;
  memcpy(&f, &x, sizeof f);
  return f;
}

/* A random finite BF16 value with exponent field in [lo, hi] and a random sign. */
static uint16_t random_bf16(rng *r, int lo, int hi) {
  const uint32_t e = (uint32_t)lo + rng_below(r, (uint32_t)(hi - lo + 1));
  return (uint16_t)(rng_below(r, 2) << 15 | e << 7 | rng_below(r, 128));
}

static void test_bf16(rng *r) {
  for (uint32_t b = 0; b < 0x10000; b++) {
    if (bf16_is_nan((uint16_t)b)) continue;
    CHECK(bf16_from_double(bf16_to_double((uint16_t)b)) == b, "round trip 0x%04x", b);
    CHECK((double)bf16_to_float((uint16_t)b) == bf16_to_double((uint16_t)b), "float 0x%04x", b);
  }
  CHECK(bf16_to_double(0x3f80) == 1.0 && bf16_to_double(0xbf80) == -1.0, "+-1");
  CHECK(bf16_to_double(0x7f7f) == 0x1.fep127 && bf16_to_double(0x7f80) == INFINITY, "max, inf");
  CHECK(bf16_to_double(0x0001) == 0x1p-133 && bf16_to_double(0x0080) == 0x1p-126, "min");
  CHECK(bf16_to_double(0x4300) == 128.0 && bf16_to_double(0x4301) == 129.0, "ulp 1 at 128");
  CHECK(bf16_from_double(1.0 + 0x1p-8) == 0x3f80, "tie to even (down)");
  CHECK(bf16_from_double(1.0 + 3 * 0x1p-8) == 0x3f82, "tie to even (up)");
  CHECK(bf16_from_double(1.0 + 0x1p-8 + 0x1p-30) == 0x3f81, "just past the tie");
  CHECK(bf16_from_double(0x1p128 - 0x1p119) == 0x7f80, "overflow tie goes to inf");
  CHECK(bf16_from_double(0x1p128 - 0x1p119 - 0x1p100) == 0x7f7f, "below the overflow tie");
  CHECK(bf16_from_double(-1e300) == 0xff80, "-inf");
  CHECK(bf16_from_double(0x1p-134) == 0x0000, "subnormal tie to even (zero)");
  CHECK(bf16_from_double(3 * 0x1p-134) == 0x0002, "subnormal tie to even (up)");
  CHECK(bf16_from_double(127.5 * 0x1p-133) == 0x0080, "rounds up into the normals");
  CHECK(bf16_from_double(-0.0) == 0x8000, "-0");
  CHECK(bf16_is_nan(bf16_from_double(NAN)) && bf16_is_nan(BF16_NAN_POISON), "NaN");
  CHECK(!bf16_is_nan(0x7f80) && !bf16_is_nan(0xff80), "inf is not NaN");
  /* Random values: the result is a nearest BF16 value, ties to an even significand. */
  for (int i = 0; i < 100000; i++) {
    const double x = ldexp(rng_uniform(r, 1.0, 2.0), (int)rng_below(r, 270) - 140);
    const uint16_t b = bf16_from_double(x);
    if (b >= 0x7f7f) continue;
    const double v = bf16_to_double(b), up = bf16_to_double((uint16_t)(b + 1));
    const double down = b > 0 ? bf16_to_double((uint16_t)(b - 1)) : -up;
    const double e = fabs(x - v);
    CHECK(e <= fabs(x - up) && e <= fabs(x - down), "x=%.17g -> 0x%04x not nearest", x, b);
    if (e == fabs(x - up) || e == fabs(x - down)) CHECK((b & 1) == 0, "tie not even: %.17g", x);
  }
  /* float -> BF16 (the kernels' __float2bfloat16 of outputs and scales) against the bit
   * formulation, for every upper half with the lower halves around the rounding boundary
   * (0x8000 is the tie) and a random one: covers every exponent, subnormals, overflow. */
  static const uint32_t lows[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff};
  long compared = 0;
  for (uint32_t hi = 0; hi < 0x10000; hi++)
    for (size_t l = 0; l <= sizeof lows / sizeof lows[0]; l++) {
      const uint32_t lo = l < sizeof lows / sizeof lows[0] ? lows[l] : rng_below(r, 0x10000);
      const float f = float_of_bits(hi << 16 | lo);
      if (isnan(f)) continue;
      compared++;
      CHECK(bf16_from_float(f) == bf16_by_bits(f), "float 0x%08x: 0x%04x vs 0x%04x", hi << 16 | lo,
            bf16_from_float(f), bf16_by_bits(f));
    }
  CHECK(compared > 450000, "compared %ld floats", compared);
  /* Arithmetic: where FP32 holds a * b and a - b exactly (products: 16-bit significands;
   * differences: exponents within 15 of each other, results in the normal range), one FP32
   * operation and one rounding to BF16 must agree with the emulation. */
  for (int i = 0; i < 200000; i++) {
    const uint16_t a = random_bf16(r, 70, 180), b = random_bf16(r, 70, 180);
    CHECK(bf16_mul(a, b) == bf16_by_bits(bf16_to_float(a) * bf16_to_float(b)), "mul 0x%04x 0x%04x",
          a, b);
    const uint16_t c = random_bf16(r, 100, 115), d = random_bf16(r, 100, 115);
    CHECK(bf16_sub(c, d) == bf16_by_bits(bf16_to_float(c) - bf16_to_float(d)), "sub 0x%04x 0x%04x",
          c, d);
  }
  CHECK(bf16_mul(0x0001, 0x3f80) == 0x0001 && bf16_mul(0x7f7f, 0x4000) == 0x7f80,
        "mul: subnormal, overflow");
  CHECK(bf16_sub(0x4308, 0x4308) == 0x0000, "x - x = +0");
}

/* The scale rule s = act(2 max / 15) is computed as max / 7.5f: both are the correctly rounded
 * FP32 quotient of the same real number whenever 2 max is finite (doubling is exact), and the
 * latter cannot overflow for BF16 weights near FLT_MAX. */
static void test_scale_rule(rng *r) {
  for (int i = 0; i < 1000000; i++) {
    const float x = (float)ldexp(rng_uniform(r, 1.0, 2.0), (int)rng_below(r, 277) - 150);
    if (!(2.0f * x <= FLT_MAX)) continue;
    const float a = 2.0f * x / 15.0f, b = x / 7.5f;
    CHECK(memcmp(&a, &b, sizeof a) == 0, "x=%a: %a vs %a", x, a, b);
  }
  for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++) {
    const int act = acts[ai];
    CHECK(ref_group_scale(act, 0.0f) == act_from_double(act, 1.0), "%s: zero group", act_name(act));
    CHECK(ref_group_scale(act, 7.5f) == act_from_double(act, 1.0), "%s: 7.5 -> 1", act_name(act));
    CHECK(ref_group_scale(act, 15.0f) == act_from_double(act, 2.0), "%s: 15 -> 2", act_name(act));
  }
  CHECK(ref_group_scale(MGEN_ACT_BF16, FLT_MAX) == bf16_from_double((double)(FLT_MAX / 7.5f)),
        "bf16: FLT_MAX gives a finite scale");
  CHECK(ref_group_scale(MGEN_ACT_BF16, 0x1p-133f) == 0x3f80, "bf16: underflowing scale -> 1");
  CHECK(ref_group_scale(MGEN_ACT_F16, 0x1p-24f) == 0x3c00, "f16: underflowing scale -> 1");
}

/* Quantize -> dequantize: |w - (q - 8) s| <= s/2 up to FP32 rounding of w/s inside the range,
 * and up to the rounding of s to the act (s/2 + 7.5 s u, u = 2^-11 FP16, 2^-8 BF16) at the
 * clamped ends +-max. BF16 adds rows far outside FP16's range. */
static void test_quantize(rng *r, int act) {
  const int n = 128, k = 256;
  const double u = act_unit_roundoff(act);
  const uint16_t one = act_from_double(act, 1.0);
  uint16_t *w = malloc(sizeof *w * n * k);
  uint8_t *codes = malloc((size_t)n * k);
  uint16_t *scales = malloc(sizeof *scales * n * k);
  for (size_t gi = 0; gi < sizeof groups / sizeof groups[0]; gi++) {
    const int group = groups[gi], gsize = group ? group : k;
    long clamped_lo = 0, clamped_hi = 0;
    for (int i = 0; i < n * k; i++) w[i] = act_from_double(act, rng_uniform(r, -2.0, 2.0));
    /* row 3: all zero; row 5: only the smallest subnormal (its scale would round to 0) */
    for (int i = 0; i < k; i++) w[3 * k + i] = 0, w[5 * k + i] = i % 2 ? 0x0001 : 0x8001;
    if (act == MGEN_ACT_BF16) /* rows 9, 10: near FLT_MAX (2 max overflows FP32) and 1e-30 */
      for (int i = 0; i < k; i++) {
        w[9 * k + i] = bf16_from_double(rng_uniform(r, -3.3e38, 3.3e38));
        w[10 * k + i] = bf16_from_double(rng_uniform(r, -1e-30, 1e-30));
      }
    ref_quantize(act, w, n, k, group, codes, scales);
    for (int j = 0; j < n; j++)
      for (int i = 0; i < k; i++) {
        const double s = act_to_double(act, ref_scale_of(scales, n, group, j, i));
        const double x = act_to_double(act, w[(size_t)j * k + i]);
        const int q = codes[(size_t)j * k + i];
        const double err = fabs(x - (q - 8) * s);
        CHECK(q <= 15 && isfinite(s), "%s: code %d, s=%g", act_name(act), q, s);
        if (fabs(x) <= 7.0 * s)
          CHECK(err <= 0.5 * s * (1 + 0x1p-20), "%s row %d col %d: %g > s/2 (s=%g)", act_name(act),
                j, i, err, s);
        else
          CHECK(err <= 0.5 * s + 7.5 * s * u, "%s row %d col %d (clamped): %g, s=%g",
                act_name(act), j, i, err, s);
        clamped_lo += q == 0;
        clamped_hi += q == 15;
      }
    for (int g = 0; g < k / gsize; g++) {
      CHECK(scales[(size_t)g * n + 3] == one, "all-zero group: scale 1");
      CHECK(scales[(size_t)g * n + 5] == one, "underflowing scale: 1");
    }
    for (int i = 0; i < k; i++) CHECK(codes[3 * k + i] == 8 && codes[5 * k + i] == 8, "code 8");
    CHECK(clamped_lo > 0 && clamped_hi > 0, "%s group %d: both ends used (%ld, %ld)",
          act_name(act), group, clamped_lo, clamped_hi);
    /* The scale rule itself, as mgen.h states it. */
    const int j = 7, g = 0;
    float max_abs = 0.0f;
    for (int i = 0; i < gsize; i++)
      max_abs = fmaxf(max_abs, fabsf(act_to_float(act, w[(size_t)j * k + i])));
    CHECK(scales[(size_t)g * n + j] == act_from_double(act, (double)(2.0f * max_abs / 15.0f)), "rule");
  }
  free(w);
  free(codes);
  free(scales);
}

static void test_pack_round_trip(rng *r) {
  static const int shapes[][2] = {{64, 64}, {128, 256}, {256, 1024}, {1024, 128}, {192, 1376}};
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
    for (size_t gi = 0; gi < sizeof groups / sizeof groups[0]; gi++) {
      const int n = shapes[si][0], k = shapes[si][1], group = groups[gi];
      if (group && k % group) continue;
      const size_t rows = (size_t)ref_scale_rows(k, group), prows = (size_t)ref_packed_rows(k, group);
      const size_t words = (size_t)n * ref_k_packed(k) / 8;
      uint8_t *codes = malloc((size_t)n * k), *codes2 = malloc((size_t)n * k);
      uint16_t *scales = malloc(sizeof *scales * rows * n), *scales2 = malloc(sizeof *scales * rows * n);
      uint16_t *packed_scales = malloc(sizeof *scales * prows * n);
      uint32_t *q = malloc(sizeof *q * words);
      for (int i = 0; i < n * k; i++) codes[i] = (uint8_t)rng_below(r, 16);
      for (size_t i = 0; i < rows * n; i++) scales[i] = (uint16_t)rng_below(r, 0x7c00);
      ref_pack(MGEN_ACT_F16, codes, scales, n, k, group, q, packed_scales);
      ref_unpack(q, packed_scales, n, k, group, codes2, scales2);
      CHECK(memcmp(codes, codes2, (size_t)n * k) == 0, "codes n=%d k=%d g=%d", n, k, group);
      CHECK(memcmp(scales, scales2, sizeof *scales * rows * n) == 0, "scales n=%d k=%d g=%d", n, k, group);
      if (group == 0)
        CHECK(memcmp(scales, packed_scales, sizeof *scales * n) == 0, "per channel: not permuted");
      /* Codes above 15 are masked to their low nibble. */
      for (int i = 0; i < n * k; i++) codes2[i] = (uint8_t)(codes[i] | 0xf0);
      uint32_t *q2 = malloc(sizeof *q * words);
      ref_pack(MGEN_ACT_F16, codes2, scales, n, k, group, q2, packed_scales);
      CHECK(memcmp(q, q2, sizeof *q * words) == 0, "high nibble ignored");
      free(codes), free(codes2), free(scales), free(scales2), free(packed_scales), free(q), free(q2);
    }
}

/* The K padding is the quantization of zeros: quantizing a weight with k not a multiple of the
 * padding and packing it gives the buffers of the weight with zero columns appended up to
 * k_packed, quantized and packed at k_packed (ref_quantize sees those zeros; ref_pack does not). */
static void test_padding_is_zeros(rng *r, int act) {
  static const int ks[] = {64, 1376, 2752};
  const int n = 128;
  for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
    for (size_t gi = 0; gi < sizeof groups / sizeof groups[0]; gi++) {
      const int k = ks[ki], kp = ref_k_packed(k), group = groups[gi];
      if (k % (group ? group : 64)) continue;
      const size_t prows = (size_t)ref_packed_rows(k, group), words = (size_t)n * kp / 8;
      uint16_t *w = calloc((size_t)n * kp, sizeof *w), *wp = calloc((size_t)n * kp, sizeof *w);
      uint8_t *codes = malloc((size_t)n * kp);
      uint16_t *scales = malloc(sizeof *scales * prows * n), *ps[2];
      uint32_t *q[2];
      for (int i = 0; i < n * k; i++) w[i] = act_from_double(act, rng_uniform(r, -2.0, 2.0));
      for (int j = 0; j < n; j++) memcpy(wp + (size_t)j * kp, w + (size_t)j * k, sizeof *w * k);
      for (int i = 0; i < 2; i++) {
        const int kk = i ? kp : k;
        ps[i] = malloc(sizeof *scales * prows * n), q[i] = malloc(sizeof *q[i] * words);
        ref_quantize(act, i ? wp : w, n, kk, group, codes, scales);
        ref_pack(act, codes, scales, n, kk, group, q[i], ps[i]);
      }
      CHECK(memcmp(q[0], q[1], sizeof *q[0] * words) == 0 &&
                memcmp(ps[0], ps[1], sizeof *scales * prows * n) == 0,
            "%s n=%d k=%d g=%d: padding is not the quantization of zero columns", act_name(act),
            n, k, group);
      free(w), free(wp), free(codes), free(scales);
      for (int i = 0; i < 2; i++) free(ps[i]), free(q[i]);
    }
}

static void test_gemm(rng *r, int act) {
  static const int shapes[][3] = {{1, 64, 128}, {3, 128, 256}, {17, 64, 512}, {5, 192, 64}};
  /* The naive sum decodes the values itself rather than through act.c. */
  double (*value)(uint16_t) = act == MGEN_ACT_BF16 ? bf16_to_double : half_to_double;
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
    for (size_t gi = 0; gi < sizeof groups / sizeof groups[0]; gi++) {
      const int m = shapes[si][0], n = shapes[si][1], k = shapes[si][2], group = groups[gi];
      if (group && k % group) continue;
      const size_t rows = (size_t)ref_scale_rows(k, group);
      uint16_t *a = malloc(sizeof *a * m * k), *scales = malloc(sizeof *scales * rows * n);
      uint8_t *codes = malloc((size_t)n * k);
      double *w_dq = malloc(sizeof *w_dq * n * k), *c = malloc(sizeof *c * m * n);
      double *c_abs = malloc(sizeof *c * m * n);
      long double *naive = calloc((size_t)m * n, sizeof *naive);
      for (int i = 0; i < m * k; i++) a[i] = act_from_double(act, rng_uniform(r, -1, 1));
      for (int i = 0; i < n * k; i++) codes[i] = (uint8_t)rng_below(r, 16);
      for (size_t i = 0; i < rows * n; i++) scales[i] = act_from_double(act, rng_uniform(r, 0.01, 0.2));
      ref_dequantize(act, codes, scales, n, k, group, w_dq);
      ref_gemm(act, m, n, k, a, w_dq, c, c_abs);
      /* Naive: k outermost, straight from codes and the GPTQ-layout scales, long double. */
      for (int kk = 0; kk < k; kk++)
        for (int i = 0; i < m; i++)
          for (int j = 0; j < n; j++) {
            const int g = group ? kk / group : 0;
            naive[(size_t)i * n + j] += (long double)value(a[(size_t)i * k + kk]) *
                                        (codes[(size_t)j * k + kk] - 8) *
                                        value(scales[(size_t)g * n + j]);
          }
      for (int i = 0; i < m * n; i++) {
        const double d = fabs(c[i] - (double)naive[i]);
        CHECK(d <= 1e-12 * c_abs[i], "%s m=%d n=%d k=%d g=%d elem %d: %.17g vs %.17g",
              act_name(act), m, n, k, group, i, c[i], (double)naive[i]);
        CHECK(c_abs[i] >= fabs(c[i]), "abs >= |c|");
      }
      free(a), free(scales), free(codes), free(w_dq), free(c), free(c_abs), free(naive);
    }
}

int main(void) {
  rng r;
  rng_seed(&r, rng_test_seed("test_reference"));
  test_half(&r);
  test_bf16(&r);
  test_scale_rule(&r);
  for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++) {
    test_quantize(&r, acts[ai]);
    test_gemm(&r, acts[ai]);
    test_padding_is_zeros(&r, acts[ai]);
  }
  test_pack_round_trip(&r);
  return check_exit("test_reference");
}
