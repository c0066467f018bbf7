/* internal.h -- every internal header of the runtime, for the composition root (context/: the
 * context's life, the GEMM entry points, the cache files) and for tests/runtime, which build
 * contexts over fake tables and fake timers. Nothing in runtime/src below context/ includes
 * it (LAYERS). Not installed.
 */
#ifndef MGEN_INTERNAL_H
#define MGEN_INTERNAL_H

#include "base/device.h"
#include "base/key.h"
#include "cache/cache.h"
#include "core/ctx.h"
#include "core/errors.h"
#include "core/workspace.h"
#include "dispatch/cost.h"
#include "dispatch/select.h"
#include "mgen/mgen.h"
#include "prepare/weights.h"
#include "tuning/tune.h"

/* Initializes the host-side parts of a context (locks, cache; tune_reps and the hooks where
 * zero). mgen_ctx_create calls it; tests call it on contexts they build by hand. */
mgen_status mgen__ctx_init_host(mgen_ctx *ctx);
void mgen__ctx_free_host(mgen_ctx *ctx);

#endif /* MGEN_INTERNAL_H */
