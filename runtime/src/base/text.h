/* text.h -- building messages into fixed buffers. */
#ifndef MGEN_BASE_TEXT_H
#define MGEN_BASE_TEXT_H

#include <stddef.h>

/* Appends printf-style text to buf (NUL-terminated, truncating: what does not fit is dropped,
 * never written past size); buf may be NULL. */
void mgen__appendf(char *buf, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
