/* tune_fixture.c -- see tune_fixture.h. */
#include "tune_fixture.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

double fixture_us[FAKE_COUNT], fixture_us2[FAKE_COUNT];
int fixture_us2_from;
int fixture_timer_calls;
mgen__tune_problem fixture_first_problem, fixture_last_problem;
int fixture_first_candidates[64], fixture_last_candidates[64];
mgen_status fixture_timer_result;
int fixture_capturing;
int fixture_timer_sleep_us;
int fixture_infos, fixture_warns;
char fixture_last_warn[1024];
_Alignas(16) char fixture_a[64], fixture_c[64];
static _Alignas(16) char fixture_q[64], fixture_s[64], fixture_ws[64];
static pthread_mutex_t fixture_lock = PTHREAD_MUTEX_INITIALIZER;

void fixture_log(void *user, mgen_log_level level, const char *message) {
  (void)user;
  pthread_mutex_lock(&fixture_lock);
  if (level == MGEN_LOG_WARN) {
    fixture_warns++;
    snprintf(fixture_last_warn, sizeof fixture_last_warn, "%s", message);
  } else {
    fixture_infos++;
  }
  if (getenv("MGEN_TEST_VERBOSE")) fprintf(stderr, "log: %s\n", message);
  pthread_mutex_unlock(&fixture_lock);
}

static mgen_status fake_timer(mgen_ctx *ctx, const mgen__tune_problem *p, double *us) {
  (void)ctx;
  if (fixture_timer_sleep_us > 0) usleep((useconds_t)fixture_timer_sleep_us);
  pthread_mutex_lock(&fixture_lock);
  fixture_timer_calls++;
  const double *table = fixture_us2_from && fixture_timer_calls >= fixture_us2_from ? fixture_us2
                                                                                    : fixture_us;
  fixture_last_problem = *p;
  if (fixture_timer_calls == 1) fixture_first_problem = *p;
  for (int i = 0; i < p->count && i < 64; i++) {
    fixture_last_candidates[i] = p->candidates[i];
    if (fixture_timer_calls == 1) fixture_first_candidates[i] = p->candidates[i];
    us[i] = table[p->candidates[i]];
  }
  mgen_status st = fixture_timer_result;
  pthread_mutex_unlock(&fixture_lock);
  return st;
}

static int fake_capturing(mgen_ctx *ctx, void *stream, cudaError_t *err) {
  (void)ctx;
  (void)stream;
  *err = fixture_capturing < 0 ? cudaErrorIllegalAddress : cudaSuccess;
  return fixture_capturing;
}

void fixture_reset(void) {
  for (int i = 0; i < FAKE_COUNT; i++) fixture_us[i] = fixture_us2[i] = 100.0;
  fixture_us2_from = 0;
  fixture_timer_calls = 0;
  fixture_timer_result = MGEN_OK;
  fixture_capturing = 0;
  fixture_timer_sleep_us = 0;
  fixture_infos = fixture_warns = 0;
  fixture_last_warn[0] = '\0';
}

mgen_ctx *fixture_ctx(int sm) {
  mgen_ctx *ctx = calloc(1, sizeof *ctx);
  if (ctx == NULL) abort();
  ctx->device = 0;
  ctx->sm = sm;
  ctx->sm_count = 132;
  ctx->table = &fake_table;
  snprintf(ctx->device_name, sizeof ctx->device_name, "Fake GPU");
  ctx->cuda_runtime = ctx->cuda_driver = 12080;
  ctx->timer = fake_timer;
  ctx->capturing = fake_capturing;
  ctx->current_device = fake_current_device;
  ctx->log = fixture_log;
  mgen__pool_fixed(&ctx->pool, (float *)fixture_ws, (int *)fixture_ws);
  if (mgen__ctx_init_host(ctx) != MGEN_OK) abort();
  return ctx;
}

mgen_weights fixture_weights(int act, int group, int n, int k) {
  mgen_weights w = {.wfmt = MGEN_WFMT_U4B8, .act = (mgen_act)act, .scheme = MGEN_SCHEME_GROUP,
                    .group = group, .n = n, .k = k, .d_q = fixture_q, .d_scales = fixture_s};
  return w;
}
