/* act.c -- values of an activation type: see act.h. */
#include "act.h"

#include <stdio.h>
#include <stdlib.h>

#include "bf16.h"
#include "formats/formats.h"
#include "half.h"

/* The arithmetic below knows FP16 and BF16; an act of the table it does not know is a test bug. */
static int is_bf16(int act) {
  if (act == MGEN_ACT_F16 || act == MGEN_ACT_BF16) return act == MGEN_ACT_BF16;
  fprintf(stderr, "act.c: act=%d is not an mgen_act this file knows\n", act);
  abort();
}

const char *act_name(int act) {
  (void)is_bf16(act); /* aborts on a value outside mgen_act */
  return mgen__act_name(act);
}

double act_to_double(int act, uint16_t bits) {
  return is_bf16(act) ? bf16_to_double(bits) : half_to_double(bits);
}

float act_to_float(int act, uint16_t bits) {
  return is_bf16(act) ? bf16_to_float(bits) : half_to_float(bits);
}

uint16_t act_from_double(int act, double x) {
  return is_bf16(act) ? bf16_from_double(x) : half_from_double(x);
}

uint16_t act_from_float(int act, float x) {
  return is_bf16(act) ? bf16_from_float(x) : half_from_float(x);
}

uint16_t act_mul(int act, uint16_t a, uint16_t b) {
  return is_bf16(act) ? bf16_mul(a, b) : half_mul(a, b);
}

double act_unit_roundoff(int act) { return is_bf16(act) ? 0x1p-8 : 0x1p-11; }

uint16_t act_inf_bits(int act) { return is_bf16(act) ? 0x7f80 : 0x7c00; }
