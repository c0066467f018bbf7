/* test_tune.c -- kernel choice with a fake table and a fake timer (no GPU): M buckets, the
 * cost model against the H200 measurements it was calibrated on, the tuning policies, ties,
 * stream capture, timer failures, mgen_tune, and one context hammered from several threads. */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "dispatch/bucket.h"
#include "check.h"
#include "tune_fixture.h"

static int launched(mgen_ctx *ctx, int act, int m, const mgen_weights *w) {
  fake_last_kernel = -1;
  mgen_status st = mgen_gemm(ctx, (mgen_act)act, m, fixture_a, w, fixture_c, NULL);
  CHECK(st == MGEN_OK, "mgen_gemm m=%d: %s: %s", m, mgen_status_str(st), mgen_ctx_last_error(ctx));
  return fake_last_kernel;
}

static void test_buckets(void) {
  int lo, hi, prev_hi = 0;
  for (int b = 0; b < MGEN__BUCKET_COUNT; b++) {
    CHECK(mgen__bucket_range(b, &lo, &hi) == 0, "bucket %d", b);
    CHECK(lo == prev_hi + 1 && hi >= lo, "bucket %d = %d..%d follows %d", b, lo, hi, prev_hi);
    CHECK(mgen__bucket_of(lo) == b && mgen__bucket_of(hi) == b, "bucket %d ends", b);
    CHECK(mgen__bucket_find(lo, hi) == b, "find %d..%d", lo, hi);
    CHECK(hi == INT_MAX || hi <= 2 * lo + 1 || lo == 17, "bucket %d..%d at most ~1.5x wide", lo, hi);
    prev_hi = hi;
  }
  CHECK(prev_hi == INT_MAX, "the last bucket is open");
  CHECK(mgen__bucket_range(MGEN__BUCKET_COUNT, &lo, &hi) == -1, "out of range");
  CHECK(mgen__bucket_find(3, 3) == -1 && mgen__bucket_find(0, 1) == -1 &&
            mgen__bucket_find(17, 31) == -1, "only exact ranges");
  /* Every benchmark M is a bucket's upper bound, so marlin-tune times it exactly. */
  static const int bench_m[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
  for (size_t i = 0; i < sizeof bench_m / sizeof bench_m[0]; i++) {
    mgen__bucket_range(mgen__bucket_of(bench_m[i]), &lo, &hi);
    CHECK(hi == bench_m[i], "M=%d is the top of %d..%d", bench_m[i], lo, hi);
    CHECK(mgen__bucket_rep(mgen__bucket_of(bench_m[i]), 4096, 4096) == bench_m[i], "rep %d", bench_m[i]);
  }
  /* Edges where a tile's block count changes: 16, 32, 48 (16 rows), 64, 96 (32), 128, 192 (64). */
  static const int edges[] = {16, 32, 48, 64, 96, 128, 192};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
    CHECK(mgen__bucket_of(edges[i]) != mgen__bucket_of(edges[i] + 1), "edge at %d", edges[i]);
  CHECK(mgen__bucket_rep(MGEN__BUCKET_COUNT - 1, 4096, 4096) == MGEN__BUCKET_OPEN_REP, "open rep");
  CHECK(mgen__bucket_rep(MGEN__BUCKET_COUNT - 1, 4096, 1 << 20) == INT_MAX / (1 << 20),
        "rep fits an int");
  CHECK(mgen__bucket_of(0) == 0 && mgen__bucket_of(INT_MAX) == MGEN__BUCKET_COUNT - 1, "extremes");
}

/* The real table's three f16/u4b8/g128 tiles, and an H200 as the model sees it. */
static const mgen_kernel_desc kReal[3] = {
    {.name = "t16", .act = 1, .wfmt = 1, .group = 128, .layout = MGEN_LAYOUT_MMA, .tile_m = 16,
     .tile_n = 128, .tile_k = 128, .family = MGEN_FAMILY_MMA, .sm_min = 80, .params = {4, 8},
     .blocks_per_sm = 2},
    {.name = "t32", .act = 1, .wfmt = 1, .group = 128, .layout = MGEN_LAYOUT_MMA, .tile_m = 32,
     .tile_n = 256, .tile_k = 64, .family = MGEN_FAMILY_MMA, .sm_min = 80, .params = {4, 8},
     .blocks_per_sm = 1},
    {.name = "t64", .act = 1, .wfmt = 1, .group = 128, .layout = MGEN_LAYOUT_MMA, .tile_m = 64,
     .tile_n = 256, .tile_k = 64, .family = MGEN_FAMILY_MMA, .sm_min = 80, .params = {4, 8},
     .blocks_per_sm = 1},
};

/* Choices the model must make, each the fastest kernel measured on an H200 (bench/notes/tuner.md,
 * "Cost model"; margins to the second in parentheses). */
static void test_cost_calibration(void) {
  static const mgen_table real = {kReal, 3, 0, "real tiles"};
  static const mgen__device h200 = {90, 132, 1.98e9, 4.26e12, 60e6};
  static const mgen__key g128 = {MGEN_ACT_F16, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128, MGEN_LAYOUT_MMA,
                          MGEN_OP_DENSE};
  static const struct {
    int m, k, n, expect;
  } cases[] = {
      {1, 4096, 4096, 0},    {1, 4096, 12288, 0},   {1, 11008, 4096, 0},  {1, 8192, 57344, 0},
      {16, 8192, 57344, 0},  /* 16 rows (1.35x) */
      {32, 4096, 4096, 0},   /* two 16-row blocks beat one 32-row block here (1.29x) */
      {32, 8192, 57344, 1},  /* and lose on the big shape (1.35x) */
      {64, 8192, 57344, 2},  {128, 8192, 57344, 2}, /* 1.24x, 1.27x */
      {256, 4096, 12288, 2}, {4096, 4096, 4096, 2},  {4096, 11008, 4096, 2}, /* 1.16-1.33x */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int got = -1;
    mgen_status st = mgen__select(&real, &h200, &g128, cases[i].m, cases[i].n, cases[i].k, &got,
                                  NULL, 0);
    CHECK(st == MGEN_OK && got == cases[i].expect, "M=%d K=%d N=%d: model picks %s, measured best %s",
          cases[i].m, cases[i].k, cases[i].n, got >= 0 ? kReal[got].name : "none",
          kReal[cases[i].expect].name);
  }
  /* Predictions are positive, finite and grow with M. */
  double prev = 0;
  for (int m = 1; m <= 4096; m *= 2) {
    double ns = mgen__cost_ns(&kReal[2], m, 8192, 8192, &h200);
    CHECK(ns > 0 && ns < 1e9 && ns >= prev, "t64 M=%d: %.0f ns after %.0f", m, ns, prev);
    prev = ns;
  }
  /* A zeroed device takes the architecture's defaults and still ranks. */
  mgen__device bare = {90, 0, 0, 0, 0};
  CHECK(mgen__cost_ns(&kReal[0], 1, 4096, 4096, &bare) > 0, "defaults");
}

static void test_policy_never(void) {
  fixture_reset();
  mgen_ctx *ctx = fixture_ctx(80);
  mgen_weights w = fixture_weights(MGEN_ACT_F16, 128, 4096, 4096);
  fixture_us[FAKE_G128_64] = 1.0; /* would win a timing */
  CHECK(launched(ctx, MGEN_ACT_F16, 5, &w) == FAKE_G128_16_R0, "M=5: the default");
  CHECK(launched(ctx, MGEN_ACT_F16, 5, &w) == FAKE_G128_16_R0, "again, remembered");
  CHECK(fixture_timer_calls == 0 && mgen_cache_count(ctx) == 0, "never timed");
  CHECK(mgen_ctx_set_tune(ctx, (mgen_tune_policy)7, 0) == MGEN_ERR_INVALID_ARG, "bad policy");
  CHECK(mgen_ctx_set_tune(ctx, MGEN_TUNE_ON_MISS, -1) == MGEN_ERR_INVALID_ARG, "bad reps");
  CHECK(mgen_ctx_set_tune(NULL, MGEN_TUNE_NEVER, 0) == MGEN_ERR_NULL_POINTER, "NULL ctx");
  mgen_ctx_destroy(ctx);
}

static void test_on_miss(void) {
  fixture_reset();
  mgen_ctx *ctx = fixture_ctx(80);
  CHECK(mgen_ctx_set_tune(ctx, MGEN_TUNE_ON_MISS, 7) == MGEN_OK, "policy");
  mgen_weights w = fixture_weights(MGEN_ACT_F16, 128, 4096, 4096);
  fixture_us[FAKE_G128_64] = 10.0; /* the fastest by the fake clock */
  fixture_us[FAKE_G128_32] = 20.0;

  CHECK(launched(ctx, MGEN_ACT_F16, 5, &w) == FAKE_G128_64, "M=5 tuned: the measured winner");
  /* Round 1 over every candidate, then the runoff (the winner is not the default). */
  CHECK(fixture_timer_calls == 2, "timed twice (%d)", fixture_timer_calls);
  const mgen__tune_problem *p = &fixture_first_problem;
  CHECK(p->m == 8 && p->ck.n == 4096 && p->ck.k == 4096 && p->ck.key.group == 128,
        "timed at the bucket's top, M=%d", p->m);
  CHECK(p->count == 6 && p->reps == 7 && p->warmup == MGEN__TUNE_WARMUP, "6 candidates, reps %d",
        p->reps);
  /* Each timed launch primed by one of the same kernel, in shuffled rounds (bench/notes/v31.md:
   * a kernel after other kernels timed up to 13% slow, its cold start). */
  CHECK(p->prime == 1 && p->order == MGEN__TUNE_SHUFFLE, "round 1: prime %d, order %d", p->prime,
        p->order);
  CHECK(fixture_last_problem.prime == 1 && fixture_last_problem.order == MGEN__TUNE_SHUFFLE,
        "runoff: prime %d, order %d", fixture_last_problem.prime, fixture_last_problem.order);
  int def = -1;
  const mgen__key g128 = {MGEN_ACT_F16, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128, MGEN_LAYOUT_MMA,
                          MGEN_OP_DENSE};
  mgen__select(&fake_table, &ctx->model, &g128, 8, 4096, 4096, &def, NULL, 0);
  CHECK(fixture_first_candidates[0] == def, "candidate 0 is the default");
  CHECK(fixture_last_problem.count == 2 && fixture_last_candidates[0] == def &&
            fixture_last_candidates[1] == FAKE_G128_64 && fixture_last_problem.reps == 7,
        "runoff: the default and the winner (nobody else within 5%%): %d finalists",
        fixture_last_problem.count);
  CHECK(launched(ctx, MGEN_ACT_F16, 8, &w) == FAKE_G128_64, "M=8: same bucket, a hit");
  CHECK(launched(ctx, MGEN_ACT_F16, 6, &w) == FAKE_G128_64, "M=6: a hit");
  CHECK(fixture_timer_calls == 2, "no more timing (%d)", fixture_timer_calls);
  fixture_us[FAKE_G128_64] = 100.0;
  fixture_us[FAKE_G128_128] = 5.0;
  CHECK(launched(ctx, MGEN_ACT_F16, 9, &w) == FAKE_G128_128, "M=9: a new bucket, tuned anew");
  CHECK(fixture_timer_calls == 4 && mgen_cache_count(ctx) == 2, "two records");
  const char *name = NULL;
  CHECK(mgen_gemm_choice(ctx, MGEN_ACT_F16, 16, &w, &name) == MGEN_OK &&
            strcmp(name, "fake_g128_128") == 0, "the choice reads the cache: %s", name);
  CHECK(mgen_gemm_choice(ctx, MGEN_ACT_F16, 17, &w, &name) == MGEN_OK && fixture_timer_calls == 4,
        "mgen_gemm_choice never tunes");
  /* Another shape is another key. */
  mgen_weights w2 = fixture_weights(MGEN_ACT_F16, 128, 8192, 4096);
  launched(ctx, MGEN_ACT_F16, 9, &w2);
  CHECK(fixture_timer_calls == 6 && mgen_cache_count(ctx) == 3, "n=8192 tuned too");
  /* Ties go to the default, and a default that wins round 1 needs no runoff. */
  for (int i = 0; i < FAKE_COUNT; i++) fixture_us[i] = 50.0;
  mgen_weights w3 = fixture_weights(MGEN_ACT_F16, 128, 4096, 8192);
  CHECK(launched(ctx, MGEN_ACT_F16, 1, &w3) == FAKE_G128_16_R0, "a tie keeps the default");
  CHECK(fixture_timer_calls == 7, "one round (%d)", fixture_timer_calls);
  /* Errors are still errors, and tune nothing. */
  mgen_weights bad = fixture_weights(MGEN_ACT_F16, 128, 1000, 4096);
  CHECK(mgen_gemm(ctx, MGEN_ACT_F16, 1, fixture_a, &bad, fixture_c, NULL) ==
            MGEN_ERR_UNSUPPORTED_SHAPE && fixture_timer_calls == 7, "n=1000");
  CHECK(mgen_cache_clear(ctx) == MGEN_OK && mgen_cache_count(ctx) == 0, "clear");
  CHECK(mgen_cache_clear(NULL) == MGEN_ERR_NULL_POINTER && mgen_cache_count(NULL) == 0, "NULL");
  mgen_ctx_destroy(ctx);
}

/* The runoff: round 1's winner (not the default) and everyone within 5% of it are timed again
 * with the default, and round 2 decides; a tie there keeps the default. */
static void test_runoff(void) {
  fixture_reset();
  mgen_ctx *ctx = fixture_ctx(80);
  mgen_ctx_set_tune(ctx, MGEN_TUNE_ON_MISS, 0);
  mgen_weights w = fixture_weights(MGEN_ACT_F16, 128, 4096, 4096);
  int def = -1;
  const mgen__key g128 = {MGEN_ACT_F16, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128, MGEN_LAYOUT_MMA,
                          MGEN_OP_DENSE};
  mgen__select(&fake_table, &ctx->model, &g128, 8, 4096, 4096, &def, NULL, 0);
  CHECK(def != FAKE_G128_64 && def != FAKE_G128_32 && def != FAKE_G128_128, "default %d", def);
  fixture_us[FAKE_G128_64] = 10.0;   /* round 1's winner: a lucky draw */
  fixture_us[FAKE_G128_32] = 10.4;   /* within 5%: a finalist */
  fixture_us[FAKE_G128_128] = 10.6;  /* not */
  fixture_us2[def] = 9.0;            /* round 2: the default is the fastest after all */
  fixture_us2[FAKE_G128_64] = 11.0;
  fixture_us2[FAKE_G128_32] = 10.0;
  fixture_us2_from = 2;
  CHECK(launched(ctx, MGEN_ACT_F16, 5, &w) == def, "round 2 keeps the default");
  CHECK(fixture_timer_calls == 2 && fixture_last_problem.count == 3 &&
            fixture_last_candidates[0] == def && fixture_last_candidates[1] == FAKE_G128_64 &&
            fixture_last_candidates[2] == FAKE_G128_32,
        "finalists: the default, the winner, the one within 5%% (%d)", fixture_last_problem.count);
  mgen_tune_result r;
  fixture_us2[def] = 10.0, fixture_us2[FAKE_G128_32] = 9.5;
  CHECK(mgen_tune(ctx, 13, &w, NULL, &r) == MGEN_OK && strcmp(r.kernel, "fake_g128_32") == 0 &&
            r.us == 9.5 && r.default_us == 10.0, "round 2's winner and times: %s %.1f / %.1f",
        r.kernel, r.us, r.default_us);
  /* A tie with the default in round 2 (M=1's default is a 16-row tile, not among the others). */
  int def1 = -1;
  mgen__select(&fake_table, &ctx->model, &g128, 1, 4096, 4096, &def1, NULL, 0);
  fixture_us2[def1] = fixture_us2[FAKE_G128_32] = 10.0;
  CHECK(mgen_tune(ctx, 1, &w, NULL, &r) == MGEN_OK && strcmp(r.kernel, r.default_kernel) == 0 &&
            strcmp(r.kernel, fake_table.kernels[def1].name) == 0,
        "a round-2 tie keeps the default: %s", r.kernel);
  mgen_ctx_destroy(ctx);
}

/* Ties keep the default, in both rounds (tune.c: round 1's strict "faster than", the default
 * first among the finalists and round 2's strict "faster than"); each case makes the outcome
 * depend on that rule alone, by a round 2 that would pick the other kernel. tune_tie times
 * the default and X (the others are slower) in round 1 and, if there is one, the runoff; it
 * gives the winner: 'D' the default, 'X', '?' another; *rounds: the rounds timed. */
enum { X = FAKE_G128_64 };
static char tune_tie(double def_us1, double x_us1, double def_us2, double x_us2, int *rounds) {
  fixture_reset();
  mgen_ctx *ctx = fixture_ctx(80);
  mgen_weights w = fixture_weights(MGEN_ACT_F16, 128, 4096, 4096);
  int def = -1;
  const mgen__key g128 = {MGEN_ACT_F16, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128, MGEN_LAYOUT_MMA,
                          MGEN_OP_DENSE};
  mgen__select(&fake_table, &ctx->model, &g128, 8, 4096, 4096, &def, NULL, 0);
  CHECK(def >= 0 && def != X, "the default at M=8 is %d", def);
  fixture_us[def] = def_us1, fixture_us[X] = x_us1; /* the others: 100 us */
  fixture_us2[def] = def_us2, fixture_us2[X] = x_us2;
  fixture_us2_from = 2; /* the runoff, if any, times from fixture_us2 */
  mgen_tune_result r;
  memset(&r, 0, sizeof r);
  CHECK(mgen_tune(ctx, 8, &w, NULL, &r) == MGEN_OK, "%s", mgen_ctx_last_error(ctx));
  CHECK(r.default_kernel != NULL && strcmp(r.default_kernel, fake_table.kernels[def].name) == 0,
        "default %s", r.default_kernel);
  const char *choice = NULL;
  CHECK(mgen_gemm_choice(ctx, MGEN_ACT_F16, 8, &w, &choice) == MGEN_OK && choice != NULL &&
            r.kernel != NULL && strcmp(choice, r.kernel) == 0,
        "the cache holds the result %s (%s)", r.kernel, choice);
  const int won = r.kernel != NULL ? mgen_table_find(&fake_table, r.kernel) : -1;
  *rounds = fixture_timer_calls;
  mgen_ctx_destroy(ctx);
  return won == def ? 'D' : won == X ? 'X' : '?';
}

static void test_ties(void) {
  int rounds = 0;
  char k;
  /* Round 1 ties the default with X: the default, and no runoff (one would pick X). */
  k = tune_tie(10.0, 10.0, 10.0, 9.0, &rounds);
  CHECK(k == 'D' && rounds == 1, "a round-1 tie: %c, %d rounds", k, rounds);
  /* X wins round 1, and round 2 ties it with the default: the default. */
  k = tune_tie(10.0, 9.0, 10.0, 10.0, &rounds);
  CHECK(k == 'D' && rounds == 2, "a round-2 tie: %c, %d rounds", k, rounds);
  /* The controls: X a hair faster wins each round, so the cases above hang on the ties alone. */
  k = tune_tie(10.0, 9.99, 10.0, 9.0, &rounds);
  CHECK(k == 'X' && rounds == 2, "round 1 won by a hair: %c, %d rounds", k, rounds);
  k = tune_tie(10.0, 9.0, 10.0, 9.99, &rounds);
  CHECK(k == 'X' && rounds == 2, "round 2 won by a hair: %c, %d rounds", k, rounds);
}

static void test_capture_and_failure(void) {
  fixture_reset();
  mgen_ctx *ctx = fixture_ctx(80);
  mgen_ctx_set_tune(ctx, MGEN_TUNE_ON_MISS, 0);
  mgen_weights w = fixture_weights(MGEN_ACT_F16, 128, 4096, 4096);
  fixture_us[FAKE_G128_64] = 1.0;
  fixture_capturing = 1;
  CHECK(launched(ctx, MGEN_ACT_F16, 1, &w) == FAKE_G128_16_R0, "capturing: the default");
  CHECK(fixture_timer_calls == 0 && fixture_warns == 1, "not timed, one warning (%d)", fixture_warns);
  CHECK(strstr(fixture_last_warn, "captured into a CUDA graph") != NULL &&
            strstr(fixture_last_warn, "fake_g128_16_r0") != NULL, "says so: %s", fixture_last_warn);
  launched(ctx, MGEN_ACT_F16, 1, &w);
  CHECK(fixture_warns == 1, "said once per key");
  mgen_tune_result r;
  CHECK(mgen_tune(ctx, 1, &w, NULL, &r) == MGEN_ERR_STREAM_CAPTURING, "mgen_tune refuses");
  CHECK(strstr(mgen_ctx_last_error(ctx), "captured") != NULL, "%s", mgen_ctx_last_error(ctx));
  /* A stream that cannot be queried (after a fault, a sticky error): ERR_CUDA naming it. */
  fixture_capturing = -1;
  CHECK(mgen_tune(ctx, 1, &w, NULL, &r) == MGEN_ERR_CUDA, "mgen_tune on an unqueryable stream");
  CHECK(strstr(mgen_ctx_last_error(ctx), "cudaErrorIllegalAddress") != NULL, "%s",
        mgen_ctx_last_error(ctx));
  fixture_capturing = 0;
  CHECK(launched(ctx, MGEN_ACT_F16, 1, &w) == FAKE_G128_64 && fixture_timer_calls == 2,
        "capture over: tuned (round 1 and the runoff)");

  /* A failing timer: the call still runs the default, says so once, and does not retry. */
  fixture_timer_result = MGEN_ERR_CUDA;
  int warns = fixture_warns;
  CHECK(launched(ctx, MGEN_ACT_F16, 2, &w) == FAKE_G128_16_R0, "timer failed: the default");
  CHECK(fixture_warns == warns + 1 && strstr(fixture_last_warn, "tuning") != NULL, "%s",
        fixture_last_warn);
  launched(ctx, MGEN_ACT_F16, 2, &w);
  CHECK(fixture_timer_calls == 3, "not retried (%d)", fixture_timer_calls);
  /* No candidate ran. */
  fixture_timer_result = MGEN_OK;
  for (int i = 0; i < FAKE_COUNT; i++) fixture_us[i] = -1;
  CHECK(mgen_tune(ctx, 4, &w, NULL, NULL) == MGEN_ERR_CUDA, "nothing ran");
  CHECK(strstr(mgen_ctx_last_error(ctx), "no candidate ran") != NULL, "%s", mgen_ctx_last_error(ctx));
  mgen_ctx_destroy(ctx);
}

static void test_explicit_tune(void) {
  fixture_reset();
  mgen_ctx *ctx = fixture_ctx(90); /* sm_90: the 256-row tile joins */
  mgen_weights w = fixture_weights(MGEN_ACT_F16, 128, 4096, 4096);
  w.d_q = w.d_scales = NULL; /* only the description is read */
  fixture_us[FAKE_G128_32] = 40.0;
  fixture_us[FAKE_G128_256_SM90] = 90.0;
  mgen_tune_result r;
  memset(&r, 0, sizeof r);
  CHECK(mgen_tune(ctx, 300, &w, NULL, &r) == MGEN_OK, "%s", mgen_ctx_last_error(ctx));
  CHECK(r.m_lo == 257 && r.m_hi == 384 && r.m_timed == 384 && r.candidates == 7, "bucket %d..%d at "
        "%d, %d candidates", r.m_lo, r.m_hi, r.m_timed, r.candidates);
  CHECK(strcmp(r.kernel, "fake_g128_32") == 0 && r.us == 40.0, "winner %s %.1f", r.kernel, r.us);
  CHECK(r.default_kernel != NULL && r.default_us == fixture_us[mgen_table_find(&fake_table,
        r.default_kernel)], "default %s %.1f", r.default_kernel, r.default_us);
  CHECK(fixture_infos > 0, "logged the result");
  /* mgen_tune re-times and replaces, even with a slower winner. */
  fixture_us[FAKE_G128_32] = 200.0;
  CHECK(mgen_tune(ctx, 257, &w, NULL, &r) == MGEN_OK && strcmp(r.kernel, "fake_g128_32") != 0,
        "re-tuned: %s", r.kernel);
  const char *name;
  mgen_gemm_choice(ctx, MGEN_ACT_F16, 384, &w, &name);
  CHECK(strcmp(name, r.kernel) == 0, "the cache holds the new winner %s (%s)", r.kernel, name);
  CHECK(mgen_cache_count(ctx) == 1, "one record");

  CHECK(mgen_tune(NULL, 1, &w, NULL, NULL) == MGEN_ERR_NULL_POINTER, "NULL ctx");
  CHECK(mgen_tune(ctx, 1, NULL, NULL, NULL) == MGEN_ERR_NULL_POINTER, "NULL w");
  CHECK(mgen_tune(ctx, 0, &w, NULL, NULL) == MGEN_ERR_INVALID_ARG, "m=0");
  CHECK(mgen_tune(ctx, INT_MAX, &w, NULL, NULL) == MGEN_ERR_UNSUPPORTED_SHAPE, "overflow");
  mgen_weights bad = w;
  bad.act = (mgen_act)9;
  CHECK(mgen_tune(ctx, 1, &bad, NULL, NULL) == MGEN_ERR_INVALID_ARG, "act=9");
  bad = w, bad.group = 32;
  CHECK(mgen_tune(ctx, 1, &bad, NULL, NULL) == MGEN_ERR_UNSUPPORTED_FORMAT, "g32");
  bad = w, bad.n = 1000;
  CHECK(mgen_tune(ctx, 1, &bad, NULL, NULL) == MGEN_ERR_UNSUPPORTED_SHAPE, "n=1000");
  CHECK(strstr(mgen_ctx_last_error(ctx), "n=1000") != NULL, "%s", mgen_ctx_last_error(ctx));
  mgen_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------- threads */

/* The fake table again, with launchers that note the kernel per thread (no shared writes). */
static _Thread_local int tl_kernel = -1;
static atomic_int launches;
#define COUNTING(i)                                                       \
  static int counting_##i(const mgen_launch_args *a, void *s) {           \
    (void)a, (void)s;                                                     \
    tl_kernel = i;                                                        \
    atomic_fetch_add(&launches, 1);                                       \
    return 0;                                                             \
  }
COUNTING(0) COUNTING(1) COUNTING(2) COUNTING(3) COUNTING(4) COUNTING(5) COUNTING(6) COUNTING(7)
COUNTING(8) COUNTING(9) COUNTING(10)
static mgen_launch_fn counting[FAKE_COUNT] = {counting_0, counting_1, counting_2, counting_3,
                                              counting_4, counting_5, counting_6, counting_7,
                                              counting_8, counting_9, counting_10};
static mgen_kernel_desc thread_kernels[FAKE_COUNT];
static mgen_table thread_table;

enum { THREADS = 8, CALLS = 300, SHAPES = 3 };
static const int kMs[] = {1, 3, 8, 24, 100, 700};
static mgen_ctx *shared_ctx;
static atomic_int bad_calls, wrong_kernel;
static int key_rounds[SHAPES][6]; /* timer calls per key: round 1, and the runoff if any */
static pthread_barrier_t barrier;

static int winner_for(int n) { return n == 4096 ? FAKE_G128_64 : n == 8192 ? FAKE_G128_32 : FAKE_G128_128; }

static void *hammer(void *arg) {
  int id = (int)(size_t)arg;
  for (int phase = 0; phase < 2; phase++) {
    for (int i = 0; i < CALLS; i++) {
      int n = 4096 * (1 + (i + id) % SHAPES), m = kMs[(i * 7 + id) % 6];
      mgen_weights w = fixture_weights(MGEN_ACT_F16, 128, n, 4096);
      if (mgen_gemm(shared_ctx, MGEN_ACT_F16, m, fixture_a, &w, fixture_c, NULL) != MGEN_OK)
        atomic_fetch_add(&bad_calls, 1);
      /* Phase 1: everything is tuned; every call must run the measured winner. */
      if (phase == 1 && tl_kernel != winner_for(n)) atomic_fetch_add(&wrong_kernel, 1);
    }
    pthread_barrier_wait(&barrier);
    if (phase == 0 && id == 0) {
      /* Whatever a thread skipped while another tuned gets tuned now (one thread). */
      for (int s = 0; s < SHAPES; s++)
        for (int j = 0; j < 6; j++) {
          mgen_weights w = fixture_weights(MGEN_ACT_F16, 128, 4096 * (1 + s), 4096);
          mgen_gemm(shared_ctx, MGEN_ACT_F16, kMs[j], fixture_a, &w, fixture_c, NULL);
        }
    }
    pthread_barrier_wait(&barrier);
  }
  return NULL;
}

/* The fake timer's answer depends on the shape: each shape has its own winner. */
static mgen_status shape_timer(mgen_ctx *ctx, const mgen__tune_problem *p, double *us) {
  (void)ctx;
  usleep(2000); /* long enough for other threads to miss meanwhile */
  __atomic_fetch_add(&fixture_timer_calls, 1, __ATOMIC_SEQ_CST);
  static const int reps_m[6] = {1, 4, 8, 32, 128, 768}; /* the buckets' timed M */
  for (int j = 0; j < 6; j++)
    if (p->m == reps_m[j]) __atomic_fetch_add(&key_rounds[p->ck.n / 4096 - 1][j], 1, __ATOMIC_SEQ_CST);
  for (int i = 0; i < p->count; i++) us[i] = p->candidates[i] == winner_for(p->ck.n) ? 1.0 : 9.0;
  return MGEN_OK;
}

static void test_threads(void) {
  fixture_reset();
  for (int i = 0; i < FAKE_COUNT; i++) {
    thread_kernels[i] = fake_table.kernels[i];
    thread_kernels[i].launch = counting[i];
  }
  thread_table = (mgen_table){thread_kernels, FAKE_COUNT, 0x77, "thread table"};
  shared_ctx = fixture_ctx(80);
  shared_ctx->table = &thread_table;
  shared_ctx->timer = shape_timer;
  mgen_ctx_set_tune(shared_ctx, MGEN_TUNE_ON_MISS, 0);
  pthread_barrier_init(&barrier, NULL, THREADS);
  pthread_t t[THREADS];
  for (int i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, hammer, (void *)(size_t)i);
  for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&barrier);
  /* kMs span buckets 1, 3-4, 5-8, 17-32, 97-128, 513-768: 6 buckets x 3 shapes. */
  CHECK(bad_calls == 0, "%d failing calls", bad_calls);
  CHECK(atomic_load(&launches) == 2 * THREADS * CALLS + SHAPES * 6, "launches %d", launches);
  CHECK(mgen_cache_count(shared_ctx) == SHAPES * 6, "records %zu", mgen_cache_count(shared_ctx));
  /* Each key tuned once: round 1, plus a runoff when its winner is not the default. */
  int rounds = 0;
  for (int s = 0; s < SHAPES; s++)
    for (int j = 0; j < 6; j++) {
      CHECK(key_rounds[s][j] == 1 || key_rounds[s][j] == 2, "key n=%d #%d timed %d times",
            4096 * (s + 1), j, key_rounds[s][j]);
      rounds += key_rounds[s][j];
    }
  CHECK(fixture_timer_calls == rounds, "%d timer calls, %d counted", fixture_timer_calls, rounds);
  CHECK(wrong_kernel == 0, "%d calls after tuning ran another kernel", wrong_kernel);
  mgen_ctx_destroy(shared_ctx);
}

/* mgen__tune_candidate_at: every round of every order runs each candidate once; fixed keeps
 * the list's order, alternate reverses odd rounds, rotate starts round r at r mod count, and
 * shuffle gives every candidate the first slot in some round, the same rounds every call. */
static void test_candidate_order(void) {
  const int orders[4] = {MGEN__TUNE_FIXED, MGEN__TUNE_ALTERNATE, MGEN__TUNE_ROTATE,
                         MGEN__TUNE_SHUFFLE};
  for (int o = 0; o < 4; o++)
    for (int count = 1; count <= 64; count += count < 4 ? 1 : 7) {
      mgen__tune_problem p;
      memset(&p, 0, sizeof p);
      p.count = count, p.order = orders[o];
      int perm[64], again[64], first[64] = {0}, seen[64];
      const int rounds = 8 * count;
      for (int r = 0; r < rounds; r++) {
        memset(seen, 0, sizeof seen);
        for (int step = 0; step < count; step++) {
          const int i = mgen__tune_candidate_at(&p, r, step, perm);
          const int j = mgen__tune_candidate_at(&p, r, step, again); /* a second caller */
          if (i < 0 || i >= count) {
            CHECK(0, "order %d count %d round %d: candidate %d", o, count, r, i);
            return;
          }
          CHECK(i == j, "order %d count %d round %d step %d: %d, then %d", o, count, r, step, i,
                j);
          seen[i]++;
          if (step == 0) first[i]++;
          int want = -1;
          if (orders[o] == MGEN__TUNE_FIXED) want = step;
          if (orders[o] == MGEN__TUNE_ALTERNATE) want = r % 2 ? count - 1 - step : step;
          if (orders[o] == MGEN__TUNE_ROTATE) want = (step + r) % count;
          if (want >= 0)
            CHECK(i == want, "order %d count %d round %d step %d: %d, not %d", o, count, r, step,
                  i, want);
        }
        for (int i = 0; i < count; i++)
          CHECK(seen[i] == 1, "order %d count %d round %d: candidate %d ran %d times", o, count,
                r, i, seen[i]);
      }
      if (orders[o] == MGEN__TUNE_SHUFFLE)
        for (int i = 0; i < count; i++)
          CHECK(first[i] > 0, "shuffle, count %d: candidate %d never first in %d rounds", count,
                i, rounds);
    }
}

int main(void) {
  test_buckets();
  test_candidate_order();
  test_cost_calibration();
  test_policy_never();
  test_on_miss();
  test_runoff();
  test_ties();
  test_capture_and_failure();
  test_explicit_tune();
  test_threads();
  return check_exit("test_tune");
}
