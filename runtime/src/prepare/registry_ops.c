/* registry_ops.c -- the GPU hooks of the weight formats this library knows: one line per
 * format (format_ops.h; their descriptions are registry.c's). */
#include "prepare/format_ops.h"

extern const mgen__format_ops mgen__format_ops_u4b8, mgen__format_ops_fe2m1, mgen__format_ops_u4;

const mgen__format_ops *const mgen__format_ops_list[] = {
    &mgen__format_ops_u4b8,  /* prepare/u4b8_ops.c */
    &mgen__format_ops_fe2m1, /* prepare/fe2m1_ops.c */
    &mgen__format_ops_u4,    /* prepare/u4_ops.c */
};
const size_t mgen__format_ops_count = sizeof mgen__format_ops_list / sizeof mgen__format_ops_list[0];

