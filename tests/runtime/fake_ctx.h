/* fake_ctx.h -- a context without a device for the host-side argument tests, and their check of
 * a refused call. The tests set the hooks they need (capturing, pools) after fake_ctx_init. */
#ifndef MGEN_TEST_FAKE_CTX_H
#define MGEN_TEST_FAKE_CTX_H

#include "core/ctx.h"
#include "expect_status.h"
#include "fake_table.h"

/* Device 0 current, sm_80 with 4 SMs, the fake kernel table (fake_table.h). */
static inline void fake_ctx_init(struct mgen_ctx *ctx) {
  ctx->device = 0;
  ctx->sm = 80;
  ctx->sm_count = 4;
  ctx->table = &fake_table;
  ctx->current_device = fake_current_device;
}

/* A refused call (expect_status.h), the message cleared first: it must come from `call`. */
#define EXPECT_REFUSED(ctx, call, status, text)                                             \
  do {                                                                                      \
    (void)mgen__fail((ctx), MGEN_OK, "%s", "");                                             \
    EXPECT_STATUS(ctx, call, status, text);                                                 \
  } while (0)

#endif /* MGEN_TEST_FAKE_CTX_H */
