/* test_graphs_gpu.c -- GEMMs captured into CUDA graphs, and the workspaces they reduce in
 * (mgen.h, "Workspaces and streams").
 *   1. Parallel branches: one graph runs two GEMMs of one context at the same time, one
 *      captured on the capturing stream and one on a stream forked from it. Both split K over
 *      many blocks (n = 256 is two to four column tiles; the context counts 16 SMs, so each
 *      GEMM's grid leaves the GPU room for the other's) and so reduce in a workspace: each
 *      capturing stream has its own, and every replay gives the eager GEMMs' outputs bit for
 *      bit. Sharing one workspace, the two GEMMs' cross-block sums and counters meet.
 *   2. Two host threads capture on cudaStreamPerThread (one handle, two streams): each
 *      thread's stream gets its own workspace, so the two graphs may run at the same time;
 *      replayed side by side on two streams, both give the eager outputs bit for bit.
 *   3. Past max_workspaces capturing streams: with max_workspaces = 1, a second stream's
 *      capture shares the first's graph workspace, the log callback warns once, and graphs
 *      replayed one after the other still give the eager outputs.
 * Run: build/tests/test_graphs_gpu */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu_util.h"
#include "half.h"
#include "rng.h"

enum {
  M = 17, N = 256, K = 11008, /* K long, n narrow: every GEMM splits K across blocks */
  SMS = 16,                   /* the contexts' max_sms: two GEMMs fit on the GPU side by side */
  CHAIN = 4,                  /* GEMMs per branch, back to back: the branches overlap longer */
  REPLAYS = 40,
};

static int log_warns;

static void log_fn(void *user, mgen_log_level level, const char *message) {
  (void)user;
  if (level == MGEN_LOG_WARN) {
    log_warns++;
    printf("test_graphs_gpu: log: %s\n", message);
  }
}

typedef struct problem {
  mgen_weights w;
  void *d_a, *d_c;
  uint16_t *want; /* the eager GEMM's C */
} problem;

static mgen_ctx *new_ctx(int max_workspaces) {
  mgen_ctx *c = NULL;
  mgen_ctx_opts opts = {.device = -1, .max_workspaces = max_workspaces, .max_sms = SMS,
                        .log = log_fn};
  MGEN_CHECK(c, mgen_ctx_create(&c, mgen_builtin_table(), &opts));
  return c;
}

/* Random weights (quantized on the GPU by `c`) and activations, and a poisoned C. */
static void problem_init(problem *p, mgen_ctx *c, const char *seed) {
  rng r;
  rng_seed(&r, rng_test_seed(seed));
  uint16_t *h_w = malloc((size_t)N * K * 2), *h_a = malloc((size_t)M * K * 2);
  CHECK(h_w != NULL && h_a != NULL, "host memory");
  for (size_t i = 0; i < (size_t)N * K; i++) h_w[i] = half_from_double(rng_uniform(&r, -1, 1));
  for (size_t i = 0; i < (size_t)M * K; i++) h_a[i] = half_from_double(rng_uniform(&r, -1, 1));
  p->w = (mgen_weights){.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16,
                        .scheme = MGEN_SCHEME_GROUP, .group = 128, .n = N, .k = K};
  gpu_quantize(c, &p->w, h_w);
  p->d_a = gpu_alloc((size_t)M * K * 2);
  p->d_c = gpu_alloc((size_t)M * N * 2);
  gpu_upload(p->d_a, h_a, (size_t)M * K * 2);
  gpu_fill(p->d_c, 0xFF, (size_t)M * N * 2);
  p->want = malloc((size_t)M * N * 2);
  free(h_w);
  free(h_a);
}

static void problem_free(problem *p) {
  CUDA_CHECK(cudaFree(p->w.d_q));
  CUDA_CHECK(cudaFree(p->w.d_scales));
  CUDA_CHECK(cudaFree(p->d_a));
  CUDA_CHECK(cudaFree(p->d_c));
  free(p->want);
}

/* The eager GEMM on `s`: its C becomes p->want (checked written: no NaN, the poison). */
static void eager(problem *p, mgen_ctx *c, cudaStream_t s) {
  MGEN_CHECK(c, mgen_gemm(c, MGEN_ACT_F16, M, p->d_a, &p->w, p->d_c, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  CUDA_CHECK(cudaMemcpy(p->want, p->d_c, (size_t)M * N * 2, cudaMemcpyDeviceToHost));
  int nan = 0;
  for (size_t i = 0; i < (size_t)M * N; i++)
    nan += half_to_double(p->want[i]) != half_to_double(p->want[i]);
  CHECK(nan == 0, "eager GEMM: %d of %d outputs NaN (poison left)", nan, M * N);
}

/* Poisons C on `s`, then CHAIN GEMMs of `p` (captured when `s` is capturing). */
static void chain(problem *p, mgen_ctx *c, cudaStream_t s) {
  CUDA_CHECK(cudaMemsetAsync(p->d_c, 0xFF, (size_t)M * N * 2, s));
  for (int i = 0; i < CHAIN; i++)
    MGEN_CHECK(c, mgen_gemm(c, MGEN_ACT_F16, M, p->d_a, &p->w, p->d_c, s));
}

/* Whether p's C on the device equals the eager C, bit for bit (after a synchronize). */
static int matches(const problem *p) {
  uint16_t *got = malloc((size_t)M * N * 2);
  CUDA_CHECK(cudaMemcpy(got, p->d_c, (size_t)M * N * 2, cudaMemcpyDeviceToHost));
  const int same = memcmp(got, p->want, (size_t)M * N * 2) == 0;
  free(got);
  return same;
}

static cudaGraphExec_t instantiate(cudaGraph_t g) {
  cudaGraphExec_t e;
  CUDA_CHECK(cudaGraphInstantiate(&e, g, 0));
  CUDA_CHECK(cudaGraphDestroy(g));
  return e;
}

static void test_branches(void) {
  mgen_ctx *c = new_ctx(0);
  problem a, b;
  problem_init(&a, c, "test_graphs_gpu.branch_a");
  problem_init(&b, c, "test_graphs_gpu.branch_b");
  cudaStream_t s0, s1;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  eager(&a, c, s0);
  eager(&b, c, s0);
  CHECK(memcmp(a.want, b.want, (size_t)M * N * 2) != 0, "two problems, one C");

  /* s0: a's chain; s1, forked from s0 and joined back: b's chain, on a parallel branch. */
  cudaEvent_t fork, join;
  CUDA_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CUDA_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  cudaGraph_t g;
  CUDA_CHECK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeThreadLocal));
  CUDA_CHECK(cudaEventRecord(fork, s0));
  CUDA_CHECK(cudaStreamWaitEvent(s1, fork, 0));
  chain(&a, c, s0);
  chain(&b, c, s1);
  CUDA_CHECK(cudaEventRecord(join, s1));
  CUDA_CHECK(cudaStreamWaitEvent(s0, join, 0));
  CUDA_CHECK(cudaStreamEndCapture(s0, &g));
  size_t nodes = 0;
  CUDA_CHECK(cudaGraphGetNodes(g, NULL, &nodes));
  CHECK(nodes == 2 * (CHAIN + 1), "the graph has %zu nodes, want %d", nodes, 2 * (CHAIN + 1));
  cudaGraphExec_t e = instantiate(g);

  int allocated = 0, limit = 0;
  MGEN_CHECK(c, mgen_ctx_workspaces(c, NULL, &allocated, &limit));
  CHECK(allocated == 3 && limit == 8,
        "workspaces: %d allocated (want 1 eager + 2 capturing streams), limit %d (want 8)",
        allocated, limit);

  int bad_a = 0, bad_b = 0;
  for (int r = 0; r < REPLAYS; r++) {
    CUDA_CHECK(cudaGraphLaunch(e, s0));
    CUDA_CHECK(cudaStreamSynchronize(s0));
    bad_a += !matches(&a);
    bad_b += !matches(&b);
  }
  CHECK(bad_a == 0 && bad_b == 0, "parallel branches: %d and %d of %d replays differ from the "
        "eager GEMMs", bad_a, bad_b, REPLAYS);
  CHECK(log_warns == 0, "%d warnings with a workspace per capturing stream", log_warns);
  printf("test_graphs_gpu: parallel branches, %d replays of 2 x %d GEMMs: %d and %d differ\n",
         REPLAYS, CHAIN, bad_a, bad_b);

  CUDA_CHECK(cudaGraphExecDestroy(e));
  CUDA_CHECK(cudaEventDestroy(fork));
  CUDA_CHECK(cudaEventDestroy(join));
  CUDA_CHECK(cudaStreamDestroy(s0));
  CUDA_CHECK(cudaStreamDestroy(s1));
  problem_free(&a);
  problem_free(&b);
  mgen_ctx_destroy(c);
}

static cudaGraphExec_t capture(problem *p, mgen_ctx *c, cudaStream_t s) {
  cudaGraph_t g;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  chain(p, c, s);
  CUDA_CHECK(cudaStreamEndCapture(s, &g));
  return instantiate(g);
}

typedef struct capture_job {
  problem *p;
  mgen_ctx *c;
  cudaGraphExec_t exec;
} capture_job;

static void *capture_per_thread(void *arg) {
  capture_job *job = arg;
  job->exec = capture(job->p, job->c, cudaStreamPerThread);
  return NULL;
}

static void test_per_thread(void) {
  mgen_ctx *c = new_ctx(0);
  problem a, b;
  problem_init(&a, c, "test_graphs_gpu.thread_a");
  problem_init(&b, c, "test_graphs_gpu.thread_b");
  cudaStream_t s0, s1;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  eager(&a, c, s0);
  eager(&b, c, s0);
  log_warns = 0;
  capture_job jobs[2] = {{&a, c, NULL}, {&b, c, NULL}};
  for (int i = 0; i < 2; i++) { /* one after the other: the handle alone would match */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, capture_per_thread, &jobs[i]) == 0, "pthread_create");
    CHECK(pthread_join(t, NULL) == 0, "pthread_join");
  }
  int allocated = 0, limit = 0;
  MGEN_CHECK(c, mgen_ctx_workspaces(c, NULL, &allocated, &limit));
  CHECK(allocated == 3 && log_warns == 0,
        "two threads' cudaStreamPerThread: %d workspaces (want 1 eager + 2), %d warnings",
        allocated, log_warns);
  int bad_a = 0, bad_b = 0;
  for (int r = 0; r < REPLAYS; r++) { /* side by side */
    CUDA_CHECK(cudaGraphLaunch(jobs[0].exec, s0));
    CUDA_CHECK(cudaGraphLaunch(jobs[1].exec, s1));
    CUDA_CHECK(cudaStreamSynchronize(s0));
    CUDA_CHECK(cudaStreamSynchronize(s1));
    bad_a += !matches(&a);
    bad_b += !matches(&b);
  }
  CHECK(bad_a == 0 && bad_b == 0, "graphs of two threads' cudaStreamPerThread side by side: %d "
        "and %d of %d replays differ from the eager GEMMs", bad_a, bad_b, REPLAYS);
  printf("test_graphs_gpu: per-thread streams, %d side-by-side replays: %d and %d differ\n",
         REPLAYS, bad_a, bad_b);
  CUDA_CHECK(cudaGraphExecDestroy(jobs[0].exec));
  CUDA_CHECK(cudaGraphExecDestroy(jobs[1].exec));
  CUDA_CHECK(cudaStreamDestroy(s0));
  CUDA_CHECK(cudaStreamDestroy(s1));
  problem_free(&a);
  problem_free(&b);
  mgen_ctx_destroy(c);
}

static void test_shared(void) {
  mgen_ctx *c = new_ctx(1);
  problem a, b;
  problem_init(&a, c, "test_graphs_gpu.shared_a");
  problem_init(&b, c, "test_graphs_gpu.shared_b");
  cudaStream_t s0, s1;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
  CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  eager(&a, c, s0);
  eager(&b, c, s0);
  log_warns = 0;
  cudaGraphExec_t ea = capture(&a, c, s0);
  CHECK(log_warns == 0, "the first capturing stream: %d warnings", log_warns);
  cudaGraphExec_t eb = capture(&b, c, s1);
  CHECK(log_warns == 1, "a second capturing stream past max_workspaces 1: %d warnings, want 1",
        log_warns);
  int allocated = 0, limit = 0;
  MGEN_CHECK(c, mgen_ctx_workspaces(c, NULL, &allocated, &limit));
  CHECK(allocated == 2 && limit == 2, "max_workspaces 1: %d allocated, limit %d (want 2, 2)",
        allocated, limit);
  int bad = 0;
  for (int r = 0; r < 4; r++) { /* one stream: the graphs one after the other */
    CUDA_CHECK(cudaGraphLaunch(ea, s0));
    CUDA_CHECK(cudaGraphLaunch(eb, s0));
    CUDA_CHECK(cudaStreamSynchronize(s0));
    bad += !matches(&a) + !matches(&b);
  }
  CHECK(bad == 0, "shared graph workspace, replays in turn: %d of 8 outputs differ", bad);
  CUDA_CHECK(cudaGraphExecDestroy(ea));
  CUDA_CHECK(cudaGraphExecDestroy(eb));
  CUDA_CHECK(cudaStreamDestroy(s0));
  CUDA_CHECK(cudaStreamDestroy(s1));
  problem_free(&a);
  problem_free(&b);
  mgen_ctx_destroy(c);
}

int main(void) {
  gpu_require_device("test_graphs_gpu");
  if (mgen_builtin_table()->count == 0) {
    printf("test_graphs_gpu: the built-in table is empty: nothing to capture\n");
    return SKIP_EXIT;
  }
  test_branches();
  test_per_thread();
  test_shared();
  return check_exit("test_graphs_gpu");
}
