/* fp4_bad_inputs.h -- the fe2m1 argument checks of the public API (fp4_bad_inputs.c), shared by
 * test_fp4_args (a context built by hand, no device) and test_gemm_gpu (a real context). */
#ifndef MGEN_TEST_FP4_BAD_INPUTS_H
#define MGEN_TEST_FP4_BAD_INPUTS_H

#include "mgen/mgen.h"

/* Calls every entry point with an fe2m1-specific bad argument: a group the scheme does not
 * have, a scheme the format does not take, a scheme outside the enum, K not a multiple of the
 * block (nor of 64), packed or scale sizes that do not match, a bad global scale, fe2m1 weights
 * through the u4b8 entry point and the reverse. Each must fail with its status, a message
 * naming the problem, and before any launch or memory access: `buf` (16-byte aligned, any
 * memory) is never dereferenced. Counts through check.h. */
void fp4_check_bad_inputs(mgen_ctx *ctx, void *buf);

#endif /* MGEN_TEST_FP4_BAD_INPUTS_H */
