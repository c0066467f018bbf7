/* text.c -- building messages into fixed buffers (text.h). */
#include "base/text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void mgen__appendf(char *buf, size_t size, const char *fmt, ...) {
  if (buf == NULL || size == 0) return;
  size_t used = strnlen(buf, size);
  if (used + 1 >= size) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf + used, size - used, fmt, ap);
  va_end(ap);
}
