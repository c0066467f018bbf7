/* rng.h -- deterministic xorshift64* random numbers for tests; the seed is printed so that a
 * failing run can be repeated (MGEN_TEST_SEED=<seed>). */
#ifndef MGEN_TEST_RNG_H
#define MGEN_TEST_RNG_H

#include <stdint.h>

typedef struct rng {
  uint64_t s;
} rng;

void rng_seed(rng *r, uint64_t seed);
uint64_t rng_next(rng *r);
/* Uniform in [0, n). */
uint32_t rng_below(rng *r, uint32_t n);
/* Uniform in [lo, hi). */
double rng_uniform(rng *r, double lo, double hi);

/* MGEN_TEST_SEED if set, else a fresh seed from the clock; prints "<name>: seed=<seed>". */
uint64_t rng_test_seed(const char *name);

#endif /* MGEN_TEST_RNG_H */
