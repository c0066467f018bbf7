/* tune.h -- the kernel choice (tune.c: cache, tuning or default) and the tuner's CUDA timer
 * (tune_timer.c).
 */
#ifndef MGEN_TUNE_H
#define MGEN_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "base/key.h"
#include "core/ctx.h"
#include "mgen/mgen.h"

/* The candidate (index into p->candidates) that round `r` of the timer runs at `step`, under
 * p->order (tune.c). `perm` (p->count ints) holds the round's permutation: a call with
 * step 0 makes it for MGEN__TUNE_SHUFFLE, later steps of the round read it. */
int mgen__tune_candidate_at(const mgen__tune_problem *p, int r, int step, int *perm);

/* tune.c: the kernel for a checked call, by cache, tuning or default (mgen.h, "Kernel
 * choice"); tunes only if may_tune and the policy says so (mgen_gemm_choice passes 0). */
mgen_status mgen__choose(mgen_ctx *ctx, const mgen__choice_key *ck, void *stream, int may_tune,
                         int *index);

/* tune_timer.c: the CUDA timer and capture query installed by mgen_ctx_create. */
mgen_status mgen__gpu_timer(mgen_ctx *ctx, const mgen__tune_problem *p, double *us);
int mgen__gpu_capturing(mgen_ctx *ctx, void *stream, cudaError_t *err);
/* The timer's data: `bytes` at d from a pattern of MGEN__FILL_PATTERN_BYTES made on the host
 * (in `pattern`, that many bytes) -- values of type `act` with magnitudes 2^-5..1, or random
 * bytes when act is neither F16 nor BF16 -- then doubled by device copies on stream s. */
#define MGEN__FILL_PATTERN_BYTES (64 * 1024)
cudaError_t mgen__fill_random(void *d, size_t bytes, int act, uint64_t seed, cudaStream_t s,
                              uint16_t *pattern);

#endif /* MGEN_TUNE_H */
