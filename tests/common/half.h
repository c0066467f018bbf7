/* half.h -- exact IEEE binary16 <-> float/double conversions in plain C (round to nearest,
 * ties to even), for CPU references and for building FP16 test data. */
#ifndef MGEN_TEST_HALF_H
#define MGEN_TEST_HALF_H

#include <stdint.h>

#define HALF_NAN_POISON 0xFFFFu /* a NaN: what cudaMemset(p, 0xFF, ...) leaves in FP16 */

/* Correctly rounded: one rounding from the exact double value (no double rounding). */
uint16_t half_from_double(double x);
uint16_t half_from_float(float x);
/* Exact. */
double half_to_double(uint16_t h);
float half_to_float(uint16_t h);
int half_is_nan(uint16_t h);

/* FP16 arithmetic, each result rounded once as the hardware does: a - b, and a * b + c with a
 * single rounding (exact in double for the magnitudes used in the tests: operands whose
 * product and addend span less than 2^53). */
uint16_t half_sub(uint16_t a, uint16_t b);
uint16_t half_mul(uint16_t a, uint16_t b);
uint16_t half_fma(uint16_t a, uint16_t b, uint16_t c);

#endif /* MGEN_TEST_HALF_H */
