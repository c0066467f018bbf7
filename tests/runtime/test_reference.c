/* test_reference.c -- the CPU reference itself (tests/common): FP16 conversions, quantize ->
 * dequantize error, pack/unpack round trip, and the reference GEMM against a naive
 * independent computation. Everything the GPU tests compare against rests on these. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "half.h"
#include "ref.h"
#include "rng.h"

static const int groups[] = {0, 32, 64, 128};

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

/* Quantize -> dequantize: |w - (q - 8) s| <= s/2 up to FP32 rounding of w/s inside the range,
 * and up to the FP16 rounding of s (s/2 + 7.5 s 2^-11) at the clamped ends +-max. */
static void test_quantize(rng *r) {
  const int n = 128, k = 256;
  uint16_t *w = malloc(sizeof *w * n * k);
  uint8_t *codes = malloc((size_t)n * k);
  uint16_t *scales = malloc(sizeof *scales * n * k);
  for (size_t gi = 0; gi < sizeof groups / sizeof groups[0]; gi++) {
    const int group = groups[gi], gsize = group ? group : k;
    long clamped_lo = 0, clamped_hi = 0;
    for (int i = 0; i < n * k; i++) w[i] = half_from_double(rng_uniform(r, -2.0, 2.0));
    /* row 3: all zero; row 5: only the smallest subnormal (its scale would round to 0) */
    for (int i = 0; i < k; i++) w[3 * k + i] = 0, w[5 * k + i] = i % 2 ? 0x0001 : 0x8001;
    ref_quantize(w, n, k, group, codes, scales);
    for (int j = 0; j < n; j++)
      for (int i = 0; i < k; i++) {
        const double s = half_to_double(ref_scale_of(scales, n, group, j, i));
        const double x = half_to_double(w[(size_t)j * k + i]);
        const int q = codes[(size_t)j * k + i];
        const double err = fabs(x - (q - 8) * s);
        CHECK(q <= 15, "code %d", q);
        if (fabs(x) <= 7.0 * s)
          CHECK(err <= 0.5 * s * (1 + 0x1p-20), "row %d col %d: %g > s/2 (s=%g)", j, i, err, s);
        else
          CHECK(err <= 0.5 * s + 7.5 * s * 0x1p-11, "row %d col %d (clamped): %g, s=%g", j, i, err, s);
        clamped_lo += q == 0;
        clamped_hi += q == 15;
      }
    for (int g = 0; g < k / gsize; g++) {
      CHECK(scales[(size_t)g * n + 3] == 0x3c00, "all-zero group: scale 1");
      CHECK(scales[(size_t)g * n + 5] == 0x3c00, "underflowing scale: 1");
    }
    for (int i = 0; i < k; i++) CHECK(codes[3 * k + i] == 8 && codes[5 * k + i] == 8, "code 8");
    CHECK(clamped_lo > 0 && clamped_hi > 0, "group %d: both ends used (%ld, %ld)", group,
          clamped_lo, clamped_hi);
    /* The scale rule itself. */
    const int j = 7, g = 0;
    float max_abs = 0.0f;
    for (int i = 0; i < gsize; i++) max_abs = fmaxf(max_abs, fabsf(half_to_float(w[(size_t)j * k + i])));
    CHECK(scales[(size_t)g * n + j] == half_from_double((double)(2.0f * max_abs / 15.0f)), "rule");
  }
  free(w);
  free(codes);
  free(scales);
}

static void test_pack_round_trip(rng *r) {
  static const int shapes[][2] = {{64, 64}, {128, 256}, {256, 1024}, {1024, 128}};
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
    for (size_t gi = 0; gi < sizeof groups / sizeof groups[0]; gi++) {
      const int n = shapes[si][0], k = shapes[si][1], group = groups[gi];
      const size_t rows = (size_t)ref_scale_rows(k, group);
      uint8_t *codes = malloc((size_t)n * k), *codes2 = malloc((size_t)n * k);
      uint16_t *scales = malloc(sizeof *scales * rows * n), *scales2 = malloc(sizeof *scales * rows * n);
      uint16_t *packed_scales = malloc(sizeof *scales * rows * n);
      uint32_t *q = malloc(sizeof *q * n * k / 8);
      for (int i = 0; i < n * k; i++) codes[i] = (uint8_t)rng_below(r, 16);
      for (size_t i = 0; i < rows * n; i++) scales[i] = (uint16_t)rng_below(r, 0x7c00);
      ref_pack(codes, scales, n, k, group, q, packed_scales);
      ref_unpack(q, packed_scales, n, k, group, codes2, scales2);
      CHECK(memcmp(codes, codes2, (size_t)n * k) == 0, "codes n=%d k=%d g=%d", n, k, group);
      CHECK(memcmp(scales, scales2, sizeof *scales * rows * n) == 0, "scales n=%d k=%d g=%d", n, k, group);
      if (group == 0)
        CHECK(memcmp(scales, packed_scales, sizeof *scales * n) == 0, "per channel: not permuted");
      /* Codes above 15 are masked to their low nibble. */
      for (int i = 0; i < n * k; i++) codes2[i] = (uint8_t)(codes[i] | 0xf0);
      uint32_t *q2 = malloc(sizeof *q * n * k / 8);
      ref_pack(codes2, scales, n, k, group, q2, packed_scales);
      CHECK(memcmp(q, q2, sizeof *q * n * k / 8) == 0, "high nibble ignored");
      free(codes), free(codes2), free(scales), free(scales2), free(packed_scales), free(q), free(q2);
    }
}

static void test_gemm(rng *r) {
  static const int shapes[][3] = {{1, 64, 128}, {3, 128, 256}, {17, 64, 512}, {5, 192, 64}};
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
      for (int i = 0; i < m * k; i++) a[i] = half_from_double(rng_uniform(r, -1, 1));
      for (int i = 0; i < n * k; i++) codes[i] = (uint8_t)rng_below(r, 16);
      for (size_t i = 0; i < rows * n; i++) scales[i] = half_from_double(rng_uniform(r, 0.01, 0.2));
      ref_dequantize(codes, scales, n, k, group, w_dq);
      ref_gemm(m, n, k, a, w_dq, c, c_abs);
      /* Naive: k outermost, straight from codes and the GPTQ-layout scales, long double. */
      for (int kk = 0; kk < k; kk++)
        for (int i = 0; i < m; i++)
          for (int j = 0; j < n; j++) {
            const int g = group ? kk / group : 0;
            naive[(size_t)i * n + j] += (long double)half_to_double(a[(size_t)i * k + kk]) *
                                        (codes[(size_t)j * k + kk] - 8) *
                                        half_to_double(scales[(size_t)g * n + j]);
          }
      for (int i = 0; i < m * n; i++) {
        const double d = fabs(c[i] - (double)naive[i]);
        CHECK(d <= 1e-12 * c_abs[i], "m=%d n=%d k=%d g=%d elem %d: %.17g vs %.17g", m, n, k,
              group, i, c[i], (double)naive[i]);
        CHECK(c_abs[i] >= fabs(c[i]), "abs >= |c|");
      }
      free(a), free(scales), free(codes), free(w_dq), free(c), free(c_abs), free(naive);
    }
}

int main(void) {
  rng r;
  rng_seed(&r, rng_test_seed("test_reference"));
  test_half(&r);
  test_quantize(&r);
  test_pack_round_trip(&r);
  test_gemm(&r);
  return check_exit("test_reference");
}
