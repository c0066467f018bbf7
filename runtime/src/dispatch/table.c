/* table.c -- the table compiled into the library (defined by the generated mgen_table.c). */
#include "dispatch/select.h"

const mgen_table *mgen_builtin_table(void) { return &mgen__builtin_table; }
