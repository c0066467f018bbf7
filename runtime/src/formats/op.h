/* op.h -- the names of the operations (mgen_op: dense today), from the format table's
 * MGEN_OP_LIST (templates/formats.lua): the cache key text and messages print and parse them
 * with these. Header-only, pure C, constant data: thread-safe.
 */
#ifndef MGEN_OP_H
#define MGEN_OP_H

#include <stddef.h>
#include <string.h>

#include "mgen_formats.h"

/* The op's name ("dense"), or "?" for a value outside the table. Static storage. */
static inline const char *mgen__op_name(int op) {
#define MGEN_OP_NAME_(id, name, value) if (op == (value)) return name;
  MGEN_OP_LIST(MGEN_OP_NAME_)
#undef MGEN_OP_NAME_
  return "?";
}

/* The op named by the `len` bytes at `s` (need not be NUL-terminated), or -1. */
static inline int mgen__op_parse(const char *s, size_t len) {
#define MGEN_OP_PARSE_(id, name, value) \
  if (len == sizeof name - 1 && memcmp(s, name, len) == 0) return value;
  MGEN_OP_LIST(MGEN_OP_PARSE_)
#undef MGEN_OP_PARSE_
  return -1;
}

#endif /* MGEN_OP_H */
