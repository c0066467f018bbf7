/* bits.h -- 32-bit rotations as the kernels' __funnelshift_l / _r of a word with itself do
 * them, for the tests that emulate the dequantization partials on the CPU (test_fp4.c,
 * test_dequant_e4m3.c). */
#ifndef MGEN_TEST_BITS_H
#define MGEN_TEST_BITS_H

#include <stdint.h>

static inline uint32_t rotl(uint32_t x, int s) {
  s &= 31;
  return s ? x << s | x >> (32 - s) : x;
}
static inline uint32_t rotr(uint32_t x, int s) { return rotl(x, 32 - (s & 31)); }

#endif /* MGEN_TEST_BITS_H */
