/* rng.c -- xorshift64* (Vigna): see rng.h. */
#include "rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void rng_seed(rng *r, uint64_t seed) {
  /* splitmix64 step, so that small seeds give well-mixed non-zero states */
  uint64_t z = seed + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  r->s = (z ^ (z >> 31)) | 1;
}

uint64_t rng_next(rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 0x2545f4914f6cdd1dull;
}

uint32_t rng_below(rng *r, uint32_t n) { return (uint32_t)((rng_next(r) >> 32) * n >> 32); }

double rng_uniform(rng *r, double lo, double hi) {
  return lo + (hi - lo) * (double)(rng_next(r) >> 11) * 0x1p-53;
}

uint64_t rng_test_seed(const char *name) {
  const char *env = getenv("MGEN_TEST_SEED");
  uint64_t seed;
  if (env != NULL && *env != '\0') {
    seed = strtoull(env, NULL, 0);
  } else {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    seed = ((uint64_t)ts.tv_sec * 1000000007ull) ^ (uint64_t)ts.tv_nsec;
  }
  printf("%s: seed=%llu (MGEN_TEST_SEED=%llu repeats this run)\n", name,
         (unsigned long long)seed, (unsigned long long)seed);
  fflush(stdout);
  return seed;
}
