/* status.c -- status texts (from MGEN_STATUS_MAP) and the library version. */
#include "mgen/mgen.h"

const char *mgen_status_str(mgen_status status) {
  switch (status) {
#define MGEN_STATUS_CASE_(name, value, msg) \
  case MGEN_##name:                         \
    return msg;
    MGEN_STATUS_MAP(MGEN_STATUS_CASE_)
#undef MGEN_STATUS_CASE_
  }
  return "unknown status";
}

int mgen_version_number(void) { return MGEN_VERSION_NUMBER; }
