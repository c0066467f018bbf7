/* fuzz_require.h -- REQUIRE(cond): a property of a fuzz target; a failure names the file, the
 * line and the condition and aborts, which libFuzzer reports as a crash with the input. */
#ifndef FUZZ_REQUIRE_H
#define FUZZ_REQUIRE_H

#include <stdio.h>
#include <stdlib.h>

#define REQUIRE(cond)                                                                      \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      fprintf(stderr, "%s:%d: property failed: %s\n", __FILE__, __LINE__, #cond);          \
      abort();                                                                             \
    }                                                                                      \
  } while (0)

#endif /* FUZZ_REQUIRE_H */
