/* bf16.c -- exact bfloat16 conversions and arithmetic: see bf16.h. */
#include "bf16.h"

#include <math.h>
#include <string.h>

double bf16_to_double(uint16_t b) {
  const int sign = b >> 15, exp = (b >> 7) & 0xff, mant = b & 0x7f;
  double v;
  if (exp == 0) v = ldexp((double)mant, -133);                /* zero, subnormal: 2^-126 * m/128 */
  else if (exp == 255) v = mant ? NAN : INFINITY;
  else v = ldexp((double)(mant | 0x80), exp - 134);          /* 1.mant * 2^(exp-127) */
  return sign ? -v : v;
}

float bf16_to_float(uint16_t b) {
  const uint32_t bits = (uint32_t)b << 16; /* exact by construction: FP32's upper half */
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

int bf16_is_nan(uint16_t b) { return (b & 0x7f80) == 0x7f80 && (b & 0x7f) != 0; }

uint16_t bf16_from_double(double x) {
  const uint16_t sign = signbit(x) ? 0x8000 : 0;
  const double a = fabs(x);
  if (isnan(x)) return sign | 0x7fc0;
  if (a >= 0x1p128 - 0x1p119) return sign | 0x7f80; /* largest finite + half an ulp: to inf */
  if (a < 0x1p-126) {
    /* Subnormal range: units of 2^-133; rounding up to 128 units gives the smallest normal,
     * whose encoding is that same integer. */
    return sign | (uint16_t)nearbyint(ldexp(a, 133));
  }
  int e;
  (void)frexp(a, &e);                      /* a = f * 2^e, f in [0.5, 1) */
  int exp = e - 1;                         /* a in [2^exp, 2^(exp+1)) */
  double m = nearbyint(ldexp(a, 7 - exp)); /* 8-bit significand, ties to even */
  if (m >= 256.0) {
    m = 128.0;
    exp++;
  }
  return sign | (uint16_t)((exp + 127) << 7) | (uint16_t)((int)m - 128);
}

uint16_t bf16_from_float(float x) { return bf16_from_double((double)x); }

uint16_t bf16_sub(uint16_t a, uint16_t b) {
  return bf16_from_double(bf16_to_double(a) - bf16_to_double(b));
}

uint16_t bf16_mul(uint16_t a, uint16_t b) {
  return bf16_from_double(bf16_to_double(a) * bf16_to_double(b)); /* 16-bit product: exact */
}
