/* act.h -- values of an activation type (mgen_act: FP16 or BF16) as 16-bit patterns:
 * conversions and one-rounding arithmetic chosen by the act, over half.h and bf16.h, so that a
 * reference or a test is written once for both types. An act outside mgen_act is a bug in the
 * test: these print it and abort. */
#ifndef MGEN_TEST_ACT_H
#define MGEN_TEST_ACT_H

#include <stdint.h>

#include "mgen/mgen_kernel.h"

/* "f16", "bf16" (the kernel-name field). */
const char *act_name(int act);
/* Exact. */
double act_to_double(int act, uint16_t bits);
float act_to_float(int act, uint16_t bits);
/* Correctly rounded (ties to even). */
uint16_t act_from_double(int act, double x);
uint16_t act_from_float(int act, float x);
/* a * b, rounded once (half_mul / bf16_mul). */
uint16_t act_mul(int act, uint16_t a, uint16_t b);
/* Unit roundoff u = 2^-p for a p-bit significand: 2^-11 (FP16), 2^-8 (BF16). A correctly
 * rounded normal result x' of x has |x' - x| <= u |x|. */
double act_unit_roundoff(int act);
/* The pattern just past the largest finite positive value: +inf (0x7c00, 0x7f80). */
uint16_t act_inf_bits(int act);

#endif /* MGEN_TEST_ACT_H */
