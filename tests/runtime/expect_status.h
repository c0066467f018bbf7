/* expect_status.h -- the argument tests' check of a refused call: `call` returns `status` and
 * ctx's last message (mgen_ctx_last_error) contains `text`. fake_ctx.h's EXPECT_REFUSED clears
 * the message first; fp4_bad_inputs.c, which the GPU tests share, checks as it stands. */
#ifndef MGEN_TEST_EXPECT_STATUS_H
#define MGEN_TEST_EXPECT_STATUS_H

#include <string.h>

#include "check.h"
#include "mgen/mgen.h"

#define EXPECT_STATUS(ctx, call, status, text)                                              \
  do {                                                                                      \
    mgen_status st_ = (call);                                                               \
    CHECK(st_ == (status), "%s: %s (%s), expected %s", #call, mgen_status_str(st_),         \
          mgen_ctx_last_error(ctx), mgen_status_str(status));                               \
    CHECK(strstr(mgen_ctx_last_error(ctx), (text)) != NULL, "%s: message '%s' lacks '%s'", \
          #call, mgen_ctx_last_error(ctx), (text));                                         \
  } while (0)

#endif /* MGEN_TEST_EXPECT_STATUS_H */
