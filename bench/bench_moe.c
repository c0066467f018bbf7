/* bench_moe.c -- libmgen's grouped MoE GEMM (mgen.h "Mixture of experts") on the issue #49
 * scenarios: the route, the gate_up and down GEMMs, the sum over top-k and the four in a row
 * (no activation function between the GEMMs), timed by CUDA events (median; bench_util.h).
 * Not yet beside vLLM's Marlin MoE or cuBLAS in the same run (issue #49's anchors): a first
 * look at where the op stands.
 *
 *   bench_moe [--scenario deepseek,mixtral,gptoss,qwen3,deepseek-nvfp4]
 *             [--m 1,4,16,64,256,1024,4096] [--skew-m 1024] [--reps 20] [--warmup 3]
 *
 * Scenarios (experts, top-k, hidden, expert intermediate, format): deepseek 256, 8, 7168, 2048,
 * f16 u4b8 g128; mixtral 8, 2, 4096, 14336, f16 u4b8 g128; gptoss 128, 4, 2880, 2880, bf16
 * fe2m1 MXFP4; qwen3 128, 8, 2048, 768, f16 u4b8 g128; deepseek-nvfp4 as deepseek, f16 fe2m1
 * NVFP4; and only when named (for the cover's sweep) deepseek-bf16 (bf16 u4b8 g128),
 * gptoss-f16 (f16 MXFP4), deepseek-nvfp4-bf16 (bf16 NVFP4). Routing uniform (top-k distinct
 * experts per token, fixed seed), and at --skew-m tokens
 * (0: none) skewed as the anchor's skew4 (rows named SCENARIO+skew4): with probability 0.9 a
 * token's first min(topk, 4) experts are the hot ones 0..3, the rest uniform. Weights: every code byte 0x5a and the format's safe scale byte
 * (templates/formats.lua), which time as random weights do (no data-dependent path). The
 * weights rotate past the L2 (60 MB on an H200) as the anchor's harness rotates them
 * (../shared/anchors/vllm-marlin-moe): run i reads copy i % copies of every expert, with
 * copies = floor(200 MB / (topk x one expert's bytes)) + 1, so even at M = 1, where only top-k
 * experts are read, consecutive runs read 200 MB apart. One CSV row per (scenario, m, part):
 * the median event time, the median time per launch under graph replay (20 launches a graph)
 * and the active experts' weight bytes over the event time as GB/s for the GEMMs; the last
 * columns say the scenario's experts and top-k and the part's GEMM n and k (0: no GEMM).
 * --kernels GLOBS (a sweep for the moe op's cover, issue #49): after each point's rows, gate_up
 * and down again by every moe kernel of the scenario's key in the table that matches a glob,
 * runs here and fits the GEMM's shape (a kernel that does not is named on stderr), each on a
 * route of its own tile_m (mgen_moe_gemm_kernel), the kernel named
 * in the row, timed by events only (graph_us "-": the graph's 20 launches a sample would
 * make a sweep of many kernels take minutes per point). --a-sorted: each GEMM permutes its A
 * into the route's order first (mgen_moe_permute, timed within the GEMM's part) and reads it
 * as MGEN_MOE_A_SORTED; rows named SCENARIO+sorted. --a-rule: the GEMMs of the choice do so
 * where mgen_moe_gemm_a_sorted says it pays (what marlin_gen.torch.fused_moe runs), the
 * --kernels rows gather; rows named SCENARIO+rule. --parts LIST: only these of the choice's
 * rows (route, gate_up, down, sum, layer; default all), e.g. route alone for a route A/B.
 * --unsorted: the choice's GEMMs run unsorted routes (mgen_moe_route.unsorted: no route kernel,
 * every pair a block of its own; the route row times the call that launches nothing), at every
 * M whether mgen_moe_unsorted_pays says so or not, its verdict in the kernel column
 * ("KERNEL+pays" / "KERNEL+loses"); rows named SCENARIO+unsorted, beside the default rows of
 * another run for the A/B that rule needs (not with --a-sorted; --a-rule keeps them gathered).
 * Exit status 0; 1 on a CUDA or library
 * error; 2 on a usage error. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "bench_util.h"
#include "cli.h"

typedef struct scenario {
  const char *name;
  int experts, topk, hidden, inter;
  mgen_act act;
  mgen_wfmt wfmt;
  mgen_scheme scheme;
  int group;
} scenario;

static const scenario kScenarios[] = {
  {"deepseek", 256, 8, 7168, 2048, MGEN_ACT_F16, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128},
  {"mixtral", 8, 2, 4096, 14336, MGEN_ACT_F16, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128},
  {"gptoss", 128, 4, 2880, 2880, MGEN_ACT_BF16, MGEN_WFMT_FE2M1, MGEN_SCHEME_MXFP4, 32},
  {"qwen3", 128, 8, 2048, 768, MGEN_ACT_F16, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128},
  {"deepseek-nvfp4", 256, 8, 7168, 2048, MGEN_ACT_F16, MGEN_WFMT_FE2M1, MGEN_SCHEME_NVFP4, 16},
  /* only when named (no anchor runs them): the other activation type of a format, for the
   * moe cover's sweep of every key the default set has */
  {"deepseek-bf16", 256, 8, 7168, 2048, MGEN_ACT_BF16, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128},
  {"gptoss-f16", 128, 4, 2880, 2880, MGEN_ACT_F16, MGEN_WFMT_FE2M1, MGEN_SCHEME_MXFP4, 32},
  {"deepseek-nvfp4-bf16", 256, 8, 7168, 2048, MGEN_ACT_BF16, MGEN_WFMT_FE2M1, MGEN_SCHEME_NVFP4, 16},
};
static const char kScenarioNames[] =
    "deepseek,mixtral,gptoss,qwen3,deepseek-nvfp4,deepseek-bf16,gptoss-f16,deepseek-nvfp4-bf16";
enum { SCENARIOS = sizeof kScenarios / sizeof kScenarios[0] };

/* One GEMM's weights: `copies` copies of every expert's, each copy one run's (one allocation
 * per part: copy c's experts at q + c * experts * qbytes). */
typedef struct experts_w {
  mgen_weights w; /* copy 0 */
  size_t qbytes, sbytes;
  int experts, copies;
} experts_w;

enum { ROTATE_MB = 200, GRAPH_LAUNCHES = 20 };

static void weights_make(const scenario *s, int n, int k, experts_w *e) {
  memset(e, 0, sizeof *e);
  e->w = (mgen_weights){.wfmt = s->wfmt, .act = s->act, .scheme = s->scheme, .group = s->group,
                        .n = n, .k = k};
  MGEN_CHECK(NULL, mgen_weights_bytes(&e->w, &e->qbytes, &e->sbytes));
  e->experts = s->experts;
  e->copies = (int)(((size_t)ROTATE_MB << 20) / ((size_t)s->topk * (e->qbytes + e->sbytes))) + 1;
  const size_t all = (size_t)s->experts * (size_t)e->copies;
  e->w.d_q = bench_dmalloc(e->qbytes * all);
  e->w.d_scales = bench_dmalloc(e->sbytes * all);
  CUDA_CHECK(cudaMemset(e->w.d_q, 0x5a, e->qbytes * all));
  CUDA_CHECK(cudaMemset(e->w.d_scales, 0x3c, e->sbytes * all)); /* safe_scale_byte */
}

/* Run i's copy of the weights. */
static mgen_weights weights_copy(const experts_w *e, int i) {
  mgen_weights w = e->w;
  const size_t c = (size_t)(i % e->copies) * (size_t)e->experts;
  w.d_q = (char *)w.d_q + c * e->qbytes;
  w.d_scales = (char *)w.d_scales + c * e->sbytes;
  return w;
}

static void weights_free(experts_w *e) {
  CUDA_CHECK(cudaFree(e->w.d_q));
  CUDA_CHECK(cudaFree(e->w.d_scales));
}

/* What one timed part runs. */
typedef struct job {
  mgen_ctx *ctx;
  cudaStream_t stream;
  const scenario *s;
  int part; /* PART_* */
  mgen_moe_route *route_up, *route_down;
  const experts_w *up, *down;
  void *a, *c_up, *a_down, *c_down, *out;
  const float *topk_w;
  const char *kernel; /* NULL: the GEMMs' own choice; else this kernel (--kernels) */
  int a_sorted[2];    /* gate_up's, down's A permuted into sorted[0], sorted[1] first */
  void *sorted[2];
} job;

enum { PART_ROUTE, PART_GATE_UP, PART_DOWN, PART_SUM, PART_LAYER, PARTS };
static const char *const kPartNames[PARTS] = {"route", "gate_up", "down", "sum", "layer"};

/* The gate_up (down 0) or down GEMM: A as it comes (per token, per pair), or with --a-sorted
 * permuted into the route's order first; by the GEMM's choice or the job's kernel. */
static mgen_status gemm(const job *j, int down, const mgen_weights *w) {
  const mgen_moe_route *r = down ? j->route_down : j->route_up;
  const void *a = down ? j->a_down : j->a;
  const float *topk_w = down ? j->topk_w : NULL;
  void *c = down ? j->c_down : j->c_up;
  int a_rows = down ? MGEN_MOE_A_PAIRS : MGEN_MOE_A_TOKENS;
  if (j->a_sorted[down]) {
    const mgen_status st = mgen_moe_permute(j->ctx, r, a_rows, down ? j->s->inter : j->s->hidden,
                                            a, j->sorted[down], j->stream);
    if (st != MGEN_OK) return st;
    a = j->sorted[down], a_rows = MGEN_MOE_A_SORTED;
  }
  if (j->kernel != NULL)
    return mgen_moe_gemm_kernel(j->ctx, j->kernel, j->s->act, r, a_rows, a, w, topk_w, c, j->stream);
  return mgen_moe_gemm(j->ctx, j->s->act, r, a_rows, a, w, topk_w, c, j->stream);
}

static int run(void *self, int i) {
  const job *j = self;
  const int p = j->part;
  const mgen_weights up = weights_copy(j->up, i), down = weights_copy(j->down, i);
  if (p == PART_ROUTE || p == PART_LAYER) {
    MGEN_CHECK(j->ctx, mgen_moe_route_tokens(j->ctx, j->route_up, j->stream));
    if (j->route_down != j->route_up)
      MGEN_CHECK(j->ctx, mgen_moe_route_tokens(j->ctx, j->route_down, j->stream));
  }
  if (p == PART_GATE_UP || (p == PART_LAYER && j->kernel == NULL))
    MGEN_CHECK(j->ctx, gemm(j, 0, &up));
  if (p == PART_DOWN || (p == PART_LAYER && j->kernel == NULL))
    MGEN_CHECK(j->ctx, gemm(j, 1, &down));
  if (p == PART_SUM || p == PART_LAYER)
    MGEN_CHECK(j->ctx, mgen_moe_sum(j->ctx, j->s->act, j->route_down, j->s->hidden, j->c_down,
                                    j->out, j->stream));
  return 0;
}

/* The part's GEMM shape (0 for the parts that are no GEMM): gate_up [2 inter, hidden],
 * down [hidden, inter]. */
static int gemm_n(const scenario *s, int part) {
  return part == PART_GATE_UP ? 2 * s->inter : part == PART_DOWN ? s->hidden : 0;
}
static int gemm_k(const scenario *s, int part) {
  return part == PART_GATE_UP ? s->hidden : part == PART_DOWN ? s->inter : 0;
}

/* A route for m tokens' ids with the block rows of the kernel that `w`'s GEMM chooses
 * (w not NULL; *kernel set to it), else of `block_rows`; unsorted: no list (no buffers). */
static void route_make(mgen_ctx *ctx, const scenario *s, int m, const int32_t *d_ids,
                       const experts_w *w, int block_rows, int unsorted, mgen_moe_route *r,
                       const char **kernel) {
  memset(r, 0, sizeof *r);
  r->m = m, r->topk = s->topk, r->num_experts = r->local_experts = s->experts;
  r->block_rows = block_rows;
  r->unsorted = unsorted;
  if (w != NULL)
    MGEN_CHECK(ctx, mgen_moe_gemm_choice(ctx, s->act, r, &w->w, kernel, &r->block_rows));
  r->d_topk_ids = d_ids;
  if (unsorted) return;
  int rows = 0;
  MGEN_CHECK(ctx, mgen_moe_route_rows(r, &rows));
  r->d_sorted_ids = bench_dmalloc(sizeof(int32_t) * (size_t)rows);
  r->d_block_experts = bench_dmalloc(sizeof(int32_t) * (size_t)(rows / r->block_rows));
  r->d_num_padded = bench_dmalloc(sizeof(int32_t));
}

/* "KERNEL+pays" or "KERNEL+loses": an unsorted GEMM's kernel and mgen_moe_unsorted_pays's
 * verdict for it (static storage per GEMM: down 0 or 1). */
static const char *unsorted_tag(mgen_ctx *ctx, const scenario *s, const mgen_moe_route *r,
                                const experts_w *w, const char *kernel, int down) {
  static char tags[2][160];
  int pays = 0, block_rows = 0;
  MGEN_CHECK(ctx, mgen_moe_unsorted_pays(ctx, s->act, r, &w->w, &pays, &block_rows));
  snprintf(tags[down], sizeof tags[down], "%s+%s", kernel, pays ? "pays" : "loses");
  return tags[down];
}

static void route_free(mgen_moe_route *r) {
  CUDA_CHECK(cudaFree(r->d_sorted_ids));
  CUDA_CHECK(cudaFree(r->d_block_experts));
  CUDA_CHECK(cudaFree(r->d_num_padded));
}

/* Token t's top-k distinct experts at ids[t * topk ..] (uniform, or skew4 as above); marks
 * the experts used in `active`. Deterministic for (m, skew). */
static void route_ids(const scenario *s, int m, int skew, int32_t *ids, char *active) {
  uint64_t x = 0x9e3779b97f4a7c15ull ^ (uint64_t)m ^ ((uint64_t)skew << 40);
  const int hot = s->topk < 4 ? s->topk : 4;
  for (int tok = 0; tok < m; tok++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const int skewed = skew && x % 10 != 0;
    for (int q = 0; q < s->topk; q++) {
      int e, fresh;
      do {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        e = skewed && q < hot ? q : (int)(x % (uint64_t)s->experts);
        fresh = 1;
        for (int r = 0; r < q; r++) fresh &= ids[tok * s->topk + r] != e;
      } while (!fresh);
      ids[tok * s->topk + q] = e;
      active[e] = 1;
    }
  }
}

/* Whether the table's kernel d is a moe kernel of s's key that runs on sm and matches one of
 * the comma-separated globs. */
static int kernel_matches(const mgen_kernel_desc *d, const scenario *s, int sm,
                          const char *globs) {
  if (d->op != MGEN_OP_MOE || d->act != (int)s->act || d->wfmt != (int)s->wfmt ||
      d->group != s->group || d->scheme != (int)s->scheme || !mgen_kernel_runs_on(d, sm))
    return 0;
  char glob[256];
  for (const char *p = globs; *p != '\0';) {
    const size_t len = strcspn(p, ",");
    snprintf(glob, sizeof glob, "%.*s", (int)len, p);
    if (fnmatch(glob, d->name, 0) == 0) return 1;
    p += len + (p[len] == ',');
  }
  return 0;
}

static const char kUsage[] =
    "usage: bench_moe [--scenario LIST] [--m LIST] [--skew-m M] [--kernels GLOBS] [--a-sorted]\n"
    "                 [--a-rule] [--unsorted] [--parts LIST] [--reps N] [--warmup N]\n"
    "libmgen's grouped MoE GEMM on deepseek, mixtral, gptoss, qwen3, deepseek-nvfp4 (default\n"
    "these five; deepseek-bf16, gptoss-f16, deepseek-nvfp4-bf16 when named) at M tokens\n"
    "(default 1,4,16,64,256,1024,4096; and skewed routing at --skew-m,\n"
    "default 1024, 0 none): route, gate_up, down, sum and the layer, CSV rows. --kernels: also\n"
    "gate_up and down by each moe kernel of the key matching a glob (a sweep; build the table\n"
    "with them, e.g. marlin-gen --space full). --a-sorted: each GEMM permutes A into the route's\n"
    "order first and reads it so (rows SCENARIO+sorted); --a-rule: where mgen_moe_gemm_a_sorted\n"
    "says it pays (rows SCENARIO+rule). --unsorted: the choice's GEMMs on unsorted routes (no\n"
    "route kernel; rows SCENARIO+unsorted, the kernel column says whether\n"
    "mgen_moe_unsorted_pays would). --parts: only these rows of the choice (route, gate_up,\n"
    "down, sum, layer; default all).\n"
    "Exit status: 0; 1 CUDA or library error; 2 usage error.\n";

int main(int argc, char **argv) {
  enum { OPT_SCENARIO = CLI_OPT_FIRST_FREE, OPT_M, OPT_SKEW_M, OPT_KERNELS, OPT_A_SORTED, OPT_A_RULE,
         OPT_UNSORTED, OPT_PARTS, OPT_REPS, OPT_WARMUP };
  static const struct option opts[] = {{"scenario", required_argument, NULL, OPT_SCENARIO},
                                       {"m", required_argument, NULL, OPT_M},
                                       {"skew-m", required_argument, NULL, OPT_SKEW_M},
                                       {"kernels", required_argument, NULL, OPT_KERNELS},
                                       {"a-sorted", no_argument, NULL, OPT_A_SORTED},
                                       {"a-rule", no_argument, NULL, OPT_A_RULE},
                                       {"unsorted", no_argument, NULL, OPT_UNSORTED},
                                       {"parts", required_argument, NULL, OPT_PARTS},
                                       {"reps", required_argument, NULL, OPT_REPS},
                                       {"warmup", required_argument, NULL, OPT_WARMUP},
                                       CLI_STD_OPTIONS,
                                       {NULL, 0, NULL, 0}};
  cli_begin("bench_moe", kUsage);
  int ms[BENCH_LIST_MAX] = {1, 4, 16, 64, 256, 1024, 4096}, n_ms = 7;
  int chosen[SCENARIOS] = {1, 1, 1, 1, 1}; /* the first five: the anchor's scenarios */
  int reps = 20, warmup = 3, skew_m = 1024, unsorted = 0, c;
  enum { A_GATHERED, A_SORTED, A_RULE } a_mode = A_GATHERED;
  static const char *const kModeTags[] = {"", "+sorted", "+rule"};
  const char *kernel_globs = NULL;
  int timed[PARTS] = {1, 1, 1, 1, 1}; /* --parts */
  while ((c = cli_next(argc, argv, "h", opts)) != -1) {
    switch (c) {
    case OPT_SCENARIO: {
      memset(chosen, 0, sizeof chosen);
      cli_item items[SCENARIOS];
      const int n = cli_list("--scenario", optarg, items, SCENARIOS);
      for (int i = 0; i < n; i++)
        chosen[cli_choice("--scenario", items[i], kScenarioNames)] = 1;
      break;
    }
    case OPT_M: n_ms = cli_int_list("--m", optarg, ms, BENCH_LIST_MAX, 1, 1 << 16); break;
    case OPT_SKEW_M: skew_m = cli_int("--skew-m", optarg, 0, 1 << 16); break;
    case OPT_KERNELS: kernel_globs = optarg; break;
    case OPT_A_SORTED: a_mode = A_SORTED; break;
    case OPT_A_RULE: a_mode = A_RULE; break;
    case OPT_UNSORTED: unsorted = 1; break;
    case OPT_PARTS: {
      memset(timed, 0, sizeof timed);
      cli_item items[PARTS];
      const int n = cli_list("--parts", optarg, items, PARTS);
      for (int i = 0; i < n; i++) {
        int q = 0;
        while (q < PARTS && strcmp(items[i], kPartNames[q]) != 0) q++;
        if (q == PARTS) cli_usage_error("--parts takes route, gate_up, down, sum, layer, not", items[i]);
        timed[q] = 1;
      }
      break;
    }
    case OPT_REPS: reps = cli_int("--reps", optarg, 1, 10000); break;
    case OPT_WARMUP: warmup = cli_int("--warmup", optarg, 0, 1000); break;
    default: cli_usage_error("unexpected operand", optarg);
    }
  }
  if (unsorted && a_mode == A_SORTED)
    cli_usage_error("--unsorted has no route order to permute A into:", "--a-sorted");
  mgen_ctx *ctx = NULL;
  MGEN_CHECK(ctx, mgen_ctx_create(&ctx, mgen_builtin_table(), NULL));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  bench_timer t;
  bench_timer_init(&t, stream, reps, warmup, 64u << 20);
  const mgen_table *table = mgen_builtin_table();
  int sm = 0, device = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  sm = 10 * major + minor;
  printf("scenario,m,part,kernel,us,graph_us,active_experts,weight_GBps,copies,experts,topk,n,k\n");
  for (int si = 0; si < SCENARIOS; si++) {
    if (!chosen[si]) continue;
    const scenario *s = &kScenarios[si];
    experts_w up, down;
    weights_make(s, 2 * s->inter, s->hidden, &up);
    weights_make(s, s->hidden, s->inter, &down);
    for (int mi = 0; mi <= n_ms; mi++) { /* the M list, then the skewed point */
      const int skew = mi == n_ms;
      if (skew && skew_m == 0) break;
      const int m = skew ? skew_m : ms[mi], pairs = m * s->topk;
      int32_t *ids = malloc(sizeof *ids * (size_t)pairs);
      char *active = calloc((size_t)s->experts, 1);
      route_ids(s, m, skew, ids, active);
      int n_active = 0;
      for (int e = 0; e < s->experts; e++) n_active += active[e];
      int32_t *d_ids = bench_dmalloc(sizeof *ids * (size_t)pairs);
      CUDA_CHECK(cudaMemcpy(d_ids, ids, sizeof *ids * (size_t)pairs, cudaMemcpyHostToDevice));
      float *topk_w = malloc(sizeof *topk_w * (size_t)pairs), *d_topk_w = bench_dmalloc(sizeof *topk_w * (size_t)pairs);
      for (int i = 0; i < pairs; i++) topk_w[i] = 1.0f / (float)s->topk;
      CUDA_CHECK(cudaMemcpy(d_topk_w, topk_w, sizeof *topk_w * (size_t)pairs, cudaMemcpyHostToDevice));
      mgen_moe_route r_up, r_down;
      const char *k_up = NULL, *k_down = NULL;
      route_make(ctx, s, m, d_ids, &up, 0, unsorted, &r_up, &k_up);
      route_make(ctx, s, m, d_ids, &down, 0, unsorted, &r_down, &k_down);
      if (unsorted) {
        k_up = unsorted_tag(ctx, s, &r_up, &up, k_up, 0);
        k_down = unsorted_tag(ctx, s, &r_down, &down, k_down, 1);
      }
      const int same = r_up.block_rows == r_down.block_rows;
      job j = {.ctx = ctx, .stream = stream, .s = s, .route_up = &r_up,
               .route_down = same ? &r_up : &r_down, .up = &up, .down = &down, .topk_w = d_topk_w,
               .a_sorted = {a_mode == A_SORTED, a_mode == A_SORTED}};
      if (a_mode == A_RULE) {
        MGEN_CHECK(ctx, mgen_moe_gemm_a_sorted(ctx, s->act, &r_up, &up.w, &j.a_sorted[0]));
        MGEN_CHECK(ctx, mgen_moe_gemm_a_sorted(ctx, s->act, j.route_down, &down.w, &j.a_sorted[1]));
      }
      j.a = bench_dmalloc(2 * (size_t)m * s->hidden);
      j.c_up = bench_dmalloc(2 * (size_t)pairs * 2 * s->inter);
      j.a_down = bench_dmalloc(2 * (size_t)pairs * s->inter);
      j.c_down = bench_dmalloc(2 * (size_t)pairs * s->hidden);
      j.out = bench_dmalloc(2 * (size_t)m * s->hidden);
      if (a_mode != A_GATHERED) { /* room for every route's rows (a --kernels route's tile_m up to 256) */
        mgen_moe_route widest = r_up;
        widest.block_rows = 256;
        int rows = 0;
        MGEN_CHECK(ctx, mgen_moe_route_rows(&widest, &rows));
        j.sorted[0] = bench_dmalloc(2 * (size_t)rows * s->hidden);
        j.sorted[1] = bench_dmalloc(2 * (size_t)rows * s->inter);
      }
      bench_fill_random_act(j.a, (size_t)m * s->hidden, 1, s->act);
      bench_fill_random_act(j.a_down, (size_t)pairs * s->inter, 2, s->act);
      MGEN_CHECK(ctx, mgen_moe_route_tokens(ctx, &r_up, stream)); /* the parts after it read it */
      if (!same) MGEN_CHECK(ctx, mgen_moe_route_tokens(ctx, &r_down, stream));
      for (int p = 0; p < PARTS; p++) {
        if (!timed[p]) continue;
        j.part = p;
        const double us = bench_time_us(&t, run, &j);
        const double graph_us = bench_time_graph_us(&t, run, &j, GRAPH_LAUNCHES);
        const double bytes = p == PART_GATE_UP ? (double)n_active * (up.qbytes + up.sbytes)
                             : p == PART_DOWN  ? (double)n_active * (down.qbytes + down.sbytes)
                             : p == PART_LAYER ? (double)n_active * (up.qbytes + up.sbytes + down.qbytes + down.sbytes)
                                               : 0.0;
        const char *kernel = p == PART_GATE_UP ? k_up : p == PART_DOWN ? k_down : "-";
        printf("%s%s%s%s,%d,%s,%s,%.2f,%.2f,%d,%.0f,%d,%d,%d,%d,%d\n", s->name,
               skew ? "+skew4" : "", kModeTags[a_mode], unsorted ? "+unsorted" : "",
               m, kPartNames[p], kernel, us, graph_us, n_active,
               bytes > 0 ? bytes / us / 1e3 : 0.0, p == PART_DOWN ? down.copies : up.copies,
               s->experts, s->topk, gemm_n(s, p), gemm_k(s, p));
        fflush(stdout);
      }
      /* --kernels: each matching moe kernel of the key on both GEMMs, on its own route */
      for (size_t ki = 0; kernel_globs != NULL && ki < table->count; ki++) {
        const mgen_kernel_desc *d = &table->kernels[ki];
        if (!kernel_matches(d, s, sm, kernel_globs)) continue;
        mgen_moe_route r_k;
        route_make(ctx, s, m, d_ids, NULL, d->tile_m, 0, &r_k, NULL);
        MGEN_CHECK(ctx, mgen_moe_route_tokens(ctx, &r_k, stream));
        job jk = j;
        jk.a_sorted[0] = jk.a_sorted[1] = a_mode == A_SORTED; /* (the rule is the choice's) */
        jk.route_up = jk.route_down = &r_k;
        jk.kernel = d->name;
        for (int p = PART_GATE_UP; p <= PART_DOWN; p++) {
          jk.part = p;
          /* a kernel whose tiles do not fit this GEMM's shape (gpt-oss's k = 2880 and a
           * 256-deep tile) is no candidate for it: said on stderr, no row */
          const experts_w *e = p == PART_GATE_UP ? &up : &down;
          const mgen_status fits = gemm(&jk, p == PART_DOWN, &e->w);
          if (fits == MGEN_ERR_UNSUPPORTED_SHAPE) {
            fprintf(stderr, "bench_moe: %s, M=%d %s: %s\n", s->name, m, kPartNames[p],
                    mgen_ctx_last_error(ctx));
            continue;
          }
          MGEN_CHECK(ctx, fits);
          const double us = bench_time_us(&t, run, &jk);
          printf("%s%s%s,%d,%s,%s,%.2f,-,%d,%.0f,%d,%d,%d,%d,%d\n", s->name,
                 skew ? "+skew4" : "", kModeTags[a_mode],
                 m, kPartNames[p], d->name, us, n_active,
                 (double)n_active * (e->qbytes + e->sbytes) / us / 1e3, e->copies, s->experts,
                 s->topk, gemm_n(s, p), gemm_k(s, p));
          fflush(stdout);
        }
        route_free(&r_k);
      }
      route_free(&r_up);
      route_free(&r_down);
      CUDA_CHECK(cudaFree(j.a));
      CUDA_CHECK(cudaFree(j.c_up));
      CUDA_CHECK(cudaFree(j.a_down));
      CUDA_CHECK(cudaFree(j.c_down));
      CUDA_CHECK(cudaFree(j.out));
      CUDA_CHECK(cudaFree(j.sorted[0]));
      CUDA_CHECK(cudaFree(j.sorted[1]));
      CUDA_CHECK(cudaFree(d_ids));
      CUDA_CHECK(cudaFree(d_topk_w));
      free(ids), free(active), free(topk_w);
    }
    weights_free(&up);
    weights_free(&down);
  }
  bench_timer_free(&t);
  CUDA_CHECK(cudaStreamDestroy(stream));
  mgen_ctx_destroy(ctx);
  return 0;
}
