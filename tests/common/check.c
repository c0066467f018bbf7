/* check.c -- see check.h. */
#include "check.h"

#include <stdarg.h>

long check_count, check_failures;

void check_report(const char *file, int line, const char *cond, const char *fmt, ...) {
  if (check_failures > 20) return;
  fprintf(stderr, "%s:%d: CHECK(%s) failed: ", file, line, cond);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  if (check_failures == 20) fprintf(stderr, "(further failures not shown)\n");
}

int check_exit(const char *name) {
  printf("%s: %ld checks, %ld failed\n", name, check_count, check_failures);
  if (check_count == 0) {
    printf("%s: FAIL: nothing was checked\n", name);
    return 1;
  }
  printf("%s: %s\n", name, check_failures ? "FAIL" : "PASS");
  return check_failures ? 1 : 0;
}
