/* registry.c -- the weight formats this library knows: one line per format (format.h). */
#include "formats/format.h"

extern const mgen__format mgen__format_u4b8, mgen__format_fe2m1, mgen__format_u4;

const mgen__format *const mgen__formats[] = {
    &mgen__format_u4b8,  /* GPTQ symmetric int4 (formats/u4b8.c) */
    &mgen__format_fe2m1, /* FP4 E2M1: NVFP4, MXFP4 (formats/fe2m1.c) */
    &mgen__format_u4,    /* asymmetric int4, zero points: AWQ, GPTQ sym=false (formats/u4.c) */
};
const size_t mgen__format_count = sizeof mgen__formats / sizeof mgen__formats[0];
