/* half.c -- exact binary16 conversions: see half.h. */
#include "half.h"

#include <math.h>

double half_to_double(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0) v = ldexp((double)mant, -24);                 /* zero, subnormal */
  else if (exp == 31) v = mant ? NAN : INFINITY;
  else v = ldexp((double)(mant | 0x400), exp - 25);          /* 1.mant * 2^(exp-15) */
  return sign ? -v : v;
}

float half_to_float(uint16_t h) { return (float)half_to_double(h); }

int half_is_nan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }

uint16_t half_from_double(double x) {
  const uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs(x);
  if (isnan(x)) return sign | 0x7e00;
  if (a >= 65520.0) return sign | 0x7c00; /* 65520 = 65504 + half an ulp: ties go to 2^16 */
  if (a < 0x1p-14) {
    /* Subnormal range: units of 2^-24; rounding up to 1024 units gives the smallest normal,
     * whose encoding is that same integer. */
    return sign | (uint16_t)nearbyint(ldexp(a, 24));
  }
  int e;
  (void)frexp(a, &e);                       /* a = f * 2^e, f in [0.5, 1) */
  int exp = e - 1;                          /* a in [2^exp, 2^(exp+1)) */
  double m = nearbyint(ldexp(a, 10 - exp)); /* 11-bit significand, ties to even */
  if (m >= 2048.0) {
    m = 1024.0;
    exp++;
  }
  if (exp + 15 >= 31) return sign | 0x7c00;
  return sign | (uint16_t)((exp + 15) << 10) | (uint16_t)((int)m - 1024);
}

uint16_t half_from_float(float x) { return half_from_double((double)x); }

uint16_t half_sub(uint16_t a, uint16_t b) {
  return half_from_double(half_to_double(a) - half_to_double(b));
}

uint16_t half_mul(uint16_t a, uint16_t b) {
  return half_from_double(half_to_double(a) * half_to_double(b)); /* 22-bit product: exact */
}

uint16_t half_fma(uint16_t a, uint16_t b, uint16_t c) {
  return half_from_double(fma(half_to_double(a), half_to_double(b), half_to_double(c)));
}
