/* fake_table.h -- a small hand-written kernel table for the selection and API tests: the
 * descriptors are data like the generated ones, with dummy launchers that record the call. */
#ifndef MGEN_TEST_FAKE_TABLE_H
#define MGEN_TEST_FAKE_TABLE_H

#include "mgen/mgen.h"

enum {
  FAKE_GC_A,         /* f16/u4b8/gc    16 x  64 x  64 */
  FAKE_GC_B,         /* f16/u4b8/gc    64 x 128 x 128 */
  FAKE_G64_SM90,     /* f16/u4b8/g64   16 x 256 x  64, sm_90 only */
  FAKE_G128_16_R1,   /* f16/u4b8/g128  16 x 128 x 128, rank 1 */
  FAKE_G128_16_R0,   /* f16/u4b8/g128  16 x 128 x 128, rank 0 (preferred over R1) */
  FAKE_G128_16_R0B,  /* the same again (table order decides) */
  FAKE_G128_32,      /* f16/u4b8/g128  32 x 128 x 128 */
  FAKE_G128_64,      /* f16/u4b8/g128  64 x 128 x 128 */
  FAKE_G128_128,     /* f16/u4b8/g128 128 x 128 x 128 */
  FAKE_G128_256_SM90,/* f16/u4b8/g128 256 x 128 x 128, sm_90 only */
  FAKE_BF16_G128,    /* bf16/u4b8/g128 16 x  64 x  64 */
  FAKE_E4M3_G128,    /* f16/u4b8/g128  64 x 128 x 128 in the e4m3 layout (W4A8; sm_80 here) */
  FAKE_COUNT
};

extern const mgen_table fake_table;

/* What the last fake launch saw; fake_launch_result is what the launchers return. */
extern mgen_launch_args fake_last_args;
extern int fake_last_kernel;   /* index of the launched kernel, -1 before any launch */
extern int fake_launches;
extern int fake_launch_result; /* a cudaError_t value */
extern int fake_prepares;

/* A context's current_device hook (internal.h) for contexts built by hand: returns
 * fake_device_current (0 unless a test changes it). */
extern int fake_device_current;
int fake_current_device(void);

/* A failing call on the test's context `ctx` (fake_ctx.h's EXPECT_REFUSED): status, message
 * containing `text`, and no launch. */
#define EXPECT_FAIL(call, status, text)                                                     \
  do {                                                                                      \
    int launches_ = fake_launches;                                                          \
    EXPECT_REFUSED(&ctx, call, status, text);                                               \
    CHECK(fake_launches == launches_, "%s launched", #call);                                \
  } while (0)

#endif /* MGEN_TEST_FAKE_TABLE_H */
