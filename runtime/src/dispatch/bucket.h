/* bucket.h -- the M buckets of the kernel-choice key: calls whose M falls in one bucket share
 * one cache record (one tuning, one default). Pure C.
 *
 * Upper bounds: 1, 2, 4, 8, 16, 32, then 48, 64, 96, 128, ... (2^j and 1.5 * 2^j) up to 16384,
 * then one open bucket (16385 and up): 25 buckets. Why (measured on an H200: every kernel of
 * the table at 39 values of M on 4 shapes; bench/notes/tuner.md, "M buckets"):
 * - the fastest kernel changes where a contender's block count ceil(M / tile_m) steps: at 16
 *   (16 -> 32 rows on the large shape), 48 (16 -> 32 on 11008x4096), 96 (32 -> 64 on
 *   4096x12288) and 192 (32 -> 64 on 4096x4096); each is a bucket edge. Inside a bucket the
 *   winner flips only between kernels within 1-7% of each other (ties, at noise level);
 * - from 256 on the 64-row tile wins everywhere by 3-40%, and a 1.5x-wide bucket changes the
 *   padding of a 64-row (or any future 128/256-row) tile by at most one block row in ~5;
 * - 1..16 share one winner on every measured shape (by 5-37%), but decode batch sizes are most
 *   of the traffic and a bucket there costs ~1 ms of tuning, so 1, 2, 3-4, 5-8 and 9-16 stay
 *   apart (room for M=1-only kernels); every benchmark M (1, 2, 4, ..., 4096) is the upper
 *   bound of its own bucket and is tuned exactly.
 */
#ifndef MGEN_BUCKET_H
#define MGEN_BUCKET_H

#include "base/tools_api.h"

#define MGEN__BUCKET_COUNT 25
/* The open bucket's stand-in M for tuning and the default (see mgen__bucket_rep). */
#define MGEN__BUCKET_OPEN_REP 16384

/* Index of the bucket holding m (m >= 1; m < 1 gives 0). */
MGEN__TOOLS_API int mgen__bucket_of(int m);

/* Range [*lo, *hi] of bucket b (0 <= b < MGEN__BUCKET_COUNT; *hi is INT_MAX for the last).
 * Returns 0, or -1 for b out of range (outputs untouched). */
int mgen__bucket_range(int b, int *lo, int *hi);

/* Index of the bucket that is exactly [lo, hi], or -1 (cache files name buckets by range). */
int mgen__bucket_find(int lo, int hi);

/* The M at which bucket b is tuned and its default predicted: its upper bound (the open
 * bucket: MGEN__BUCKET_OPEN_REP), lowered so that M * max(n, k) fits an int; at least 1. */
int mgen__bucket_rep(int b, int n, int k);

#endif /* MGEN_BUCKET_H */
