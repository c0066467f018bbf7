/* check.h -- minimal assertions for the C tests: CHECK counts checks and failures, prints the
 * first failures with file:line, and check_exit() turns the tally into the exit status (a
 * test that checked nothing fails too). */
#ifndef MGEN_TEST_CHECK_H
#define MGEN_TEST_CHECK_H

#include <stdio.h>

extern long check_count, check_failures;

/* Prints "file:line: CHECK(cond) failed: <message>" for the first 20 failures. */
void check_report(const char *file, int line, const char *cond, const char *fmt, ...);

#define CHECK(cond, ...)                                        \
  do {                                                          \
    check_count++;                                              \
    if (!(cond)) {                                              \
      check_failures++;                                         \
      check_report(__FILE__, __LINE__, #cond, __VA_ARGS__);     \
    }                                                           \
  } while (0)

/* "name: N checks, F failed" and 0 or 1 for main to return. */
int check_exit(const char *name);

#endif /* MGEN_TEST_CHECK_H */
