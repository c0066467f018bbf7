/* bf16.h -- exact bfloat16 <-> float/double conversions in plain C (round to nearest, ties to
 * even, subnormals kept), and BF16 arithmetic with one rounding, for CPU references and for
 * building BF16 test data. BF16 is FP32's upper half: 1 sign, 8 exponent (bias 127) and 7
 * mantissa bits, so an 8-bit significand: the spacing of values in [1, 2) is 2^-7 and the
 * unit roundoff 2^-8 (FP16: 2^-11). */
#ifndef MGEN_TEST_BF16_H
#define MGEN_TEST_BF16_H

#include <stdint.h>

#define BF16_NAN_POISON 0xFFFFu /* a NaN: what cudaMemset(p, 0xFF, ...) leaves in BF16 */

/* Correctly rounded: one rounding from the exact double value (no double rounding).
 * Overflow gives +-inf (values from 2^128 - 2^119 up: the tie above the largest finite
 * 0x7f7f goes to the even inf), NaN gives the quiet NaN 0x7fc0 with the sign. */
uint16_t bf16_from_double(double x);
uint16_t bf16_from_float(float x);
/* Exact. */
double bf16_to_double(uint16_t b);
float bf16_to_float(uint16_t b);
int bf16_is_nan(uint16_t b);

/* BF16 arithmetic, each result rounded once as the hardware does (fma.rn.bf16x2 / sub.bf16x2 /
 * mul.bf16x2): a - b exact in double when the exponents differ by less than 45 (as in the
 * tests), a * b always exact in double (an 8 x 8-bit significand product). */
uint16_t bf16_sub(uint16_t a, uint16_t b);
uint16_t bf16_mul(uint16_t a, uint16_t b);

#endif /* MGEN_TEST_BF16_H */
