/* tune_fixture.h -- contexts built by hand for the tuning and cache tests: the fake table, a
 * fixed workspace, no GPU, and a fake timer (per-kernel times from a table) and fake capture
 * query, so that kernel choice is deterministic. */
#ifndef MGEN_TEST_TUNE_FIXTURE_H
#define MGEN_TEST_TUNE_FIXTURE_H

#include "fake_table.h"
#include "context/internal.h"

/* The fake timer's answer for each table index, microseconds (< 0: cannot run); from call
 * number fixture_us2_from on (1-based; 0: never) it answers from fixture_us2 instead (a
 * runoff that disagrees with round 1). */
extern double fixture_us[FAKE_COUNT], fixture_us2[FAKE_COUNT];
extern int fixture_us2_from;
extern int fixture_timer_calls;       /* problems timed (tuning rounds, runoffs included) */
extern mgen__tune_problem fixture_first_problem, fixture_last_problem; /* since the reset */
extern int fixture_first_candidates[64], fixture_last_candidates[64];
extern mgen_status fixture_timer_result; /* what the fake timer returns */
extern int fixture_capturing;            /* what the fake capture query returns */
extern int fixture_timer_sleep_us;       /* the fake timer sleeps this long (thread tests) */

/* Log callback that counts and keeps the last warning. */
extern int fixture_infos, fixture_warns;
extern char fixture_last_warn[1024];
void fixture_log(void *user, mgen_log_level level, const char *message);

/* A context on the fake table: sm_80 (or `sm`), 132 SMs, device "Fake GPU", CUDA 12080 /
 * 12080, the fake hooks, the log above. Free with mgen_ctx_destroy. */
mgen_ctx *fixture_ctx(int sm);

/* u4b8 weights of (act, group, n, k) over static 16-byte-aligned dummy buffers. */
mgen_weights fixture_weights(int act, int group, int n, int k);
extern char fixture_a[64], fixture_c[64];

/* Resets the timer table (every kernel 100 us) and the counters. */
void fixture_reset(void);

#endif /* MGEN_TEST_TUNE_FIXTURE_H */
