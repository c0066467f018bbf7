/* table_empty.c -- an empty builtin table, linked instead of the generated mgen_table.c only
 * when the build has no generated kernels (MGEN_GENERATE=OFF without a committed snapshot):
 * the library then builds and links, and mgen_ctx_create reports MGEN_ERR_NO_KERNEL. */
#include "dispatch/select.h"

const mgen_table mgen__builtin_table = {NULL, 0, 0, "marlin-gen (no kernels built)"};
