/* test_moe_gpu.c -- the MoE calls on the GPU (mgen.h "Mixture of experts"): the route against
 * its CPU reference (tests/common/moe_ref.c) entry for entry; every MGEN_OP_MOE kernel of the
 * table on vLLM's fused-MoE cases (m, n, k, experts, topk), with and without a 4-way expert
 * map, A per token (gate_up) and per pair (down), against an FP64 reference per expert
 * (ref_gemm.cu, with the weights of every format's row of gemm_formats.c), C poisoned first
 * (rows of pairs routed elsewhere stay poisoned), router weights on and off, two runs bit
 * for bit; the sum over top-k against its CPU reference bit for bit; route + GEMM + sum
 * captured in a CUDA graph and replayed, bit for bit the direct run; and a slab of expert -1
 * skipped whole (split columns included). Each kernel also runs twice on a context over 2 SMs
 * (mgen_ctx_opts.max_sms), against the reference and bit for bit between the two: both
 * families split tiles by the SM count (the mma kernels' columns, the wgmma kernels' stream-K
 * over the live tiles), so their sums may round otherwise than over all SMs.
 * The bias (mgen_weights.d_bias, local_experts rows of n: gemm_make_bias's, as large as the
 * outputs): on one A mode of each case, per token on even cases and per pair on odd ones (so
 * both, and the expert-map case, over the table), every run of that mode has it: a pair's row
 * against its expert's reference plus its expert's bias row, (acc + b_e) x w with router
 * weights (check_weighted: a bias added after the weight misses by b_e (1 - w)), over 2 SMs
 * (split sums: a bias added by each piece is doubled), rows routed elsewhere still poisoned;
 * the choice, graph and dead-slab checks run again with it, and a misaligned d_bias is
 * refused, C untouched.
 * Unsorted routes (mgen_moe_route.unsorted: no list, every pair a block of its own): every mma
 * moe kernel on decode sizes (m = 1, 3, 17; expert maps with pairs routed nowhere, ids outside
 * 0..E-1) through the same checks against the same reference, bit for bit run to run (not the
 * sorted route's bits); each wgmma moe kernel refuses one; mgen_moe_gemm's own unsorted choice
 * at M = 1, direct and replayed from a graph, on new ids too.
 * Run: ctest --test-dir build -R moe --output-on-failure  (--quick: the small cases; --routes:
 * the routes alone; --race: compute-sanitizer's racecheck of the kernels, each on one case,
 * A gathered and A sorted, the route, choice and unsorted parts left out). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "dispatch/select.h"
#include "gemm_formats.h"
#include "gpu_util.h"
#include "moe_ref.h"
#include "ref_gemm.h"
#include "rng.h"

#define GUARD_ELEMS 4096
#define POISON_ID 0x7f7f7f7f

static gemm_env env;
static mgen_ctx *few_sms;  /* a context whose GEMMs spread over 2 SMs */
static int kernels_tested, cases_run;

/* ---------------------------------------------------------------- routing */

/* How a case's tokens pick experts. */
enum { PICK_UNIFORM, PICK_ONE, PICK_EVEN, PICK_HOSTILE };

/* topk distinct experts per token (uniform); all to expert E - 1 (PICK_ONE); even experts
 * only, so that odd ones get no token (PICK_EVEN); uniform with ids outside 0..E-1 mixed in
 * (PICK_HOSTILE: the route must send them nowhere). */
static void pick_experts(rng *r, int mode, int m, int topk, int experts, int32_t *ids) {
  for (int t = 0; t < m; t++)
    for (int j = 0; j < topk; j++) {
      int32_t e;
      int fresh;
      do {
        e = mode == PICK_ONE    ? experts - 1
            : mode == PICK_EVEN ? 2 * (int32_t)rng_below(r, (uint32_t)(experts + 1) / 2)
                                : (int32_t)rng_below(r, (uint32_t)experts);
        fresh = 1;
        for (int i = 0; i < j && mode != PICK_ONE; i++) fresh &= ids[t * topk + i] != e;
        if (mode == PICK_EVEN && (experts + 1) / 2 < topk) fresh = 1; /* too few: repeats */
      } while (!fresh && topk <= experts);
      if (mode == PICK_HOSTILE && rng_below(r, 8) == 0) e = rng_below(r, 2) ? -1 - e : experts + e;
      ids[t * topk + j] = e;
    }
}

/* The expert map of rank `rank` of `ways`-way expert parallelism: experts are split into
 * contiguous ranges of E / ways; this GPU's are local 0.., the others -1. */
static int make_map(int experts, int ways, int rank, int32_t *map) {
  const int per = experts / ways, first = rank * per;
  for (int e = 0; e < experts; e++) map[e] = e >= first && e < first + per ? e - first : -1;
  return per;
}

/* A route on the device with its buffers (poisoned), and the CPU reference's lists. */
typedef struct route_case {
  mgen_moe_route r;
  int rows;                 /* capacity */
  int32_t *ids, *map;       /* host copies */
  int32_t *ref_sorted, *ref_blocks, ref_count;
} route_case;

static void route_alloc(route_case *c, int m, int topk, int experts, int local, int block_rows,
                        const int32_t *ids, const int32_t *map) {
  memset(c, 0, sizeof *c);
  mgen_moe_route *r = &c->r;
  r->m = m, r->topk = topk, r->num_experts = experts, r->local_experts = local;
  r->block_rows = block_rows;
  MGEN_CHECK(NULL, mgen_moe_route_rows(r, &c->rows));
  const size_t pairs = (size_t)m * topk;
  c->ids = malloc(sizeof *c->ids * pairs);
  memcpy(c->ids, ids, sizeof *c->ids * pairs);
  int32_t *d_ids = gpu_alloc(sizeof *d_ids * pairs);
  gpu_upload(d_ids, ids, sizeof *d_ids * pairs);
  r->d_topk_ids = d_ids;
  if (map) {
    c->map = malloc(sizeof *c->map * (size_t)experts);
    memcpy(c->map, map, sizeof *c->map * (size_t)experts);
    int32_t *d_map = gpu_alloc(sizeof *d_map * (size_t)experts);
    gpu_upload(d_map, map, sizeof *d_map * (size_t)experts);
    r->d_expert_map = d_map;
  }
  r->d_sorted_ids = gpu_alloc(sizeof(int32_t) * (size_t)c->rows);
  r->d_block_experts = gpu_alloc(sizeof(int32_t) * (size_t)(c->rows / block_rows));
  r->d_num_padded = gpu_alloc(sizeof(int32_t));
  gpu_fill(r->d_sorted_ids, 0x7f, sizeof(int32_t) * (size_t)c->rows);
  gpu_fill(r->d_block_experts, 0x7f, sizeof(int32_t) * (size_t)(c->rows / block_rows));
  gpu_fill(r->d_num_padded, 0x7f, sizeof(int32_t));
  c->ref_sorted = malloc(sizeof(int32_t) * (size_t)c->rows);
  c->ref_blocks = malloc(sizeof(int32_t) * (size_t)(c->rows / block_rows));
  CHECK(moe_ref_route(ids, map, (int)pairs, experts, local, block_rows, c->rows, c->ref_sorted,
                      c->ref_blocks, &c->ref_count) == 0, "the reference overflows the capacity");
}

static void route_free(route_case *c) {
  CUDA_CHECK(cudaFree((void *)c->r.d_topk_ids));
  CUDA_CHECK(cudaFree((void *)c->r.d_expert_map));
  CUDA_CHECK(cudaFree(c->r.d_sorted_ids));
  CUDA_CHECK(cudaFree(c->r.d_block_experts));
  CUDA_CHECK(cudaFree(c->r.d_num_padded));
  free(c->ids), free(c->map), free(c->ref_sorted), free(c->ref_blocks);
}

/* The device route equals the reference in every entry of the capacity. */
static void check_route(const route_case *c, const char *what) {
  const int blocks = c->rows / c->r.block_rows;
  int32_t *s = malloc(sizeof *s * (size_t)c->rows), *b = malloc(sizeof *b * (size_t)blocks), n;
  CUDA_CHECK(cudaMemcpy(s, c->r.d_sorted_ids, sizeof *s * (size_t)c->rows, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(b, c->r.d_block_experts, sizeof *b * (size_t)blocks, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&n, c->r.d_num_padded, sizeof n, cudaMemcpyDeviceToHost));
  CHECK(n == c->ref_count, "%s: num_padded %d, reference %d", what, n, c->ref_count);
  int bad = 0;
  for (int i = 0; i < c->rows && bad < 3; i++)
    if (s[i] != c->ref_sorted[i]) {
      CHECK(0, "%s: sorted_ids[%d] = %d, reference %d", what, i, s[i], c->ref_sorted[i]);
      bad++;
    }
  for (int i = 0; i < blocks && bad < 3; i++)
    if (b[i] != c->ref_blocks[i]) {
      CHECK(0, "%s: block_experts[%d] = %d, reference %d", what, i, b[i], c->ref_blocks[i]);
      bad++;
    }
  free(s), free(b);
}

static void test_route(rng *r) {
  static const struct { int m, topk, experts, ways, pick; } cases[] = {
    {1, 2, 5, 1, PICK_UNIFORM},       {133, 3, 12, 1, PICK_UNIFORM},
    {4096, 8, 256, 1, PICK_UNIFORM},  {64, 3, 12, 4, PICK_UNIFORM},
    {4096, 2, 128, 4, PICK_UNIFORM},  {512, 1, 8, 1, PICK_ONE},
    {4096, 4, 16, 1, PICK_ONE},       {16, 2, 64, 1, PICK_EVEN},
    {300, 4, 32, 2, PICK_HOSTILE},    {1, 1, 1, 1, PICK_UNIFORM},
    {2000, 6, 4096, 1, PICK_UNIFORM}, {256, 8, 512, 1, PICK_UNIFORM},
    {100, 8, 1024, 1, PICK_UNIFORM},
    /* several blocks (one per 2048 pairs): 2049 pairs, the first two; odd slices; hostile ids
     * and a map over 8 blocks */
    {683, 3, 7, 1, PICK_UNIFORM},     {3001, 3, 64, 1, PICK_UNIFORM},
    {4096, 4, 32, 2, PICK_HOSTILE},
  };
  static const int block_rows[] = {16, 64, 8, 1, 128};
  int routes = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (size_t b = 0; b < sizeof block_rows / sizeof block_rows[0]; b++) {
      const int m = cases[i].m, topk = cases[i].topk, e = cases[i].experts;
      int32_t *ids = malloc(sizeof *ids * (size_t)m * topk), *map = malloc(sizeof *map * (size_t)e);
      pick_experts(r, cases[i].pick, m, topk, e, ids);
      const int local = cases[i].ways > 1 ? make_map(e, cases[i].ways, 1, map) : e;
      route_case c;
      route_alloc(&c, m, topk, e, local, block_rows[b], ids, cases[i].ways > 1 ? map : NULL);
      char what[128];
      snprintf(what, sizeof what, "route m=%d topk=%d E=%d ways=%d pick=%d block_rows=%d", m, topk,
               e, cases[i].ways, cases[i].pick, block_rows[b]);
      MGEN_CHECK(env.ctx, mgen_moe_route_tokens(env.ctx, &c.r, env.stream));
      gpu_sync(env.stream, what);
      check_route(&c, what);
      route_free(&c);
      free(ids), free(map);
      routes++;
    }
  printf("test_moe_gpu: %d routes equal their CPU reference\n", routes);
}

/* ---------------------------------------------------------------- the grouped GEMM */

/* vLLM's fused-MoE test matrix (m, n, k, experts, topk) and expert-parallel ways. */
typedef struct moe_case {
  int m, n, k, experts, topk, ways, pick;
} moe_case;

static const moe_case full_cases[] = {
  {1, 128, 256, 5, 2, 1, PICK_UNIFORM},     {1, 1024, 2048, 5, 2, 1, PICK_UNIFORM},
  {133, 256, 256, 5, 2, 1, PICK_UNIFORM},   {133, 1024, 2048, 12, 3, 1, PICK_UNIFORM},
  {128, 256, 256, 5, 2, 1, PICK_UNIFORM},   {64, 1024, 2048, 12, 3, 4, PICK_UNIFORM},
  {4096, 256, 256, 8, 2, 1, PICK_UNIFORM},  {200, 256, 384, 8, 2, 1, PICK_ONE},
  {133, 320, 256, 5, 2, 1, PICK_UNIFORM},   {33, 2880, 128, 2, 2, 1, PICK_UNIFORM},
  /* one expert: every slab of the list live up to its capacity, so the wgmma kernels' last
   * band of slabs (mgen_wgmma_body.cuh Schedule::slab: 18 slabs of 64 rows, 9 of 128) holds live
   * rows, over several column tiles */
  {1100, 1024, 256, 1, 1, 1, PICK_UNIFORM},
};
/* --race: racecheck instruments every shared-memory access, so one case whose 266 pairs over
 * 5 experts give each block of the 2-SM runs several tiles (the wgmma rings wrap across them). */
static const moe_case race_cases[] = {{133, 256, 256, 5, 2, 1, PICK_UNIFORM}};
static const moe_case quick_cases[] = {
  {1, 128, 256, 5, 2, 1, PICK_UNIFORM}, {133, 256, 256, 5, 2, 1, PICK_UNIFORM},
  {64, 256, 256, 12, 3, 4, PICK_UNIFORM}, {133, 320, 256, 5, 2, 1, PICK_UNIFORM},
};

/* A case's data: route, A, weights of the local experts, their exact values and the
 * reference rows (pairs of local experts, grouped by expert in id order). */
typedef struct moe_data {
  const moe_case *mc;
  int act, local, pairs, a_rows;
  int32_t *ids, *map;
  uint16_t *a, *d_a;        /* a_rows x k: rows 0..m-1 per token, 0..pairs-1 per pair */
  mgen_weights w;           /* expert 0's description; buffers of all local experts */
  size_t qbytes, sbytes;
  double *d_w, *d_slack;    /* local x n x k */
  float *topk_w, *d_topk_w; /* router weights [pairs] */
  uint16_t *bias, *d_bias;  /* local x n: the experts' biases, for the runs with one */
  gemm_bound bound;
} moe_data;

static void data_free(moe_data *d) {
  CUDA_CHECK(cudaFree(d->d_a));
  CUDA_CHECK(cudaFree(d->w.d_q));
  CUDA_CHECK(cudaFree(d->w.d_scales));
  CUDA_CHECK(cudaFree(d->d_w));
  CUDA_CHECK(cudaFree(d->d_slack));
  CUDA_CHECK(cudaFree(d->d_topk_w));
  CUDA_CHECK(cudaFree(d->d_bias));
  free(d->ids), free(d->map), free(d->a), free(d->topk_w), free(d->bias);
}

/* Prepares every local expert's weights through row f's library path, into one allocation. */
static void data_make(rng *r, moe_data *d, const moe_case *mc, const gemm_format *f, int group) {
  memset(d, 0, sizeof *d);
  d->mc = mc, d->act = f->act, d->pairs = mc->m * mc->topk;
  d->a_rows = d->pairs;
  d->ids = malloc(sizeof *d->ids * (size_t)d->pairs);
  d->map = malloc(sizeof *d->map * (size_t)mc->experts);
  pick_experts(r, mc->pick, mc->m, mc->topk, mc->experts, d->ids);
  d->local = mc->ways > 1 ? make_map(mc->experts, mc->ways, 1, d->map) : mc->experts;
  const size_t a_elems = (size_t)d->a_rows * mc->k;
  d->a = malloc(sizeof *d->a * a_elems);
  for (size_t i = 0; i < a_elems; i++) d->a[i] = act_from_double(d->act, rng_uniform(r, -1.0, 1.0));
  d->d_a = gpu_alloc(sizeof *d->a * a_elems);
  gpu_upload(d->d_a, d->a, sizeof *d->a * a_elems);
  d->topk_w = malloc(sizeof *d->topk_w * (size_t)d->pairs);
  for (int i = 0; i < d->pairs; i++) d->topk_w[i] = (float)rng_uniform(r, 0.05, 1.0);
  d->d_topk_w = gpu_alloc(sizeof *d->topk_w * (size_t)d->pairs);
  gpu_upload(d->d_topk_w, d->topk_w, sizeof *d->topk_w * (size_t)d->pairs);

  d->w = (mgen_weights){.wfmt = (mgen_wfmt)f->wfmt, .act = (mgen_act)f->act,
                        .scheme = (mgen_scheme)f->scheme, .group = group, .n = mc->n, .k = mc->k};
  MGEN_CHECK(NULL, mgen_weights_bytes(&d->w, &d->qbytes, &d->sbytes));
  char *q = gpu_alloc(d->qbytes * (size_t)d->local), *s = gpu_alloc(d->sbytes * (size_t)d->local);
  gpu_fill(q, 0xAB, d->qbytes * (size_t)d->local);
  gpu_fill(s, 0xAB, d->sbytes * (size_t)d->local);
  const size_t nk = (size_t)mc->n * mc->k;
  d->d_w = gpu_alloc(sizeof(double) * nk * (size_t)d->local);
  d->d_slack = gpu_alloc(sizeof(double) * nk * (size_t)d->local);
  for (int e = 0; e < d->local; e++) {
    mgen_weights we = d->w;
    we.d_q = q + (size_t)e * d->qbytes;
    we.d_scales = s + (size_t)e * d->sbytes;
    f->prepare(&env, r, &we, d->d_w + (size_t)e * nk, d->d_slack + (size_t)e * nk);
  }
  d->w.d_q = q, d->w.d_scales = s;
  f->bound(f->act, mc->k, &d->bound);
  /* The biases, sized by expert 0's outputs of A's row 0. */
  const size_t n8 = sizeof(double) * (size_t)mc->n;
  const gemm_ref one = {gpu_alloc(n8), gpu_alloc(n8), gpu_alloc(n8), gpu_alloc(n8)};
  CUDA_CHECK((cudaError_t)gpu_ref_gemm(d->act, 1, mc->n, mc->k, d->d_a, d->d_w, d->d_slack, &one,
                                       env.stream));
  gpu_sync(env.stream, "the biases' reference row");
  d->bias = malloc(sizeof *d->bias * (size_t)d->local * mc->n);
  d->d_bias = gpu_alloc(sizeof *d->bias * (size_t)d->local * mc->n);
  gemm_make_bias(r, d->act, one.ref, mc->n, d->local, d->bias, d->d_bias);
  CUDA_CHECK(cudaFree(one.ref));
  CUDA_CHECK(cudaFree(one.abs_sum));
  CUDA_CHECK(cudaFree(one.werr));
  CUDA_CHECK(cudaFree(one.sq_sum));
}

typedef struct moe_ref_rows {
  int rows;            /* pairs of local experts */
  int32_t *pair;       /* [rows]: their ids, by expert then id (the reference's row order) */
  gemm_ref ref;        /* rows x n each */
} moe_ref_rows;

/* The FP64 reference of every local pair: per expert, A's rows of its pairs times its weights. */
static void reference(const moe_data *d, const route_case *rc, int a_per_pair, moe_ref_rows *out) {
  const moe_case *mc = d->mc;
  const int n = mc->n, k = mc->k;
  out->pair = malloc(sizeof *out->pair * (size_t)d->pairs);
  out->rows = 0;
  for (int i = 0; i < rc->ref_count; i++)
    if (rc->ref_sorted[i] < d->pairs) out->pair[out->rows++] = rc->ref_sorted[i];
  const size_t rn = (size_t)(out->rows > 0 ? out->rows : 1) * n;
  out->ref.ref = gpu_alloc(sizeof(double) * rn);
  out->ref.abs_sum = gpu_alloc(sizeof(double) * rn);
  out->ref.werr = gpu_alloc(sizeof(double) * rn);
  out->ref.sq_sum = gpu_alloc(sizeof(double) * rn);
  uint16_t *a_e = malloc(sizeof *a_e * (size_t)(out->rows > 0 ? out->rows : 1) * k);
  uint16_t *d_ae = gpu_alloc(sizeof *a_e * (size_t)(out->rows > 0 ? out->rows : 1) * k);
  int at = 0;
  for (int e = 0; e < d->local; e++) {
    const int first = at;
    while (at < out->rows &&
           moe_ref_local(d->ids, mc->ways > 1 ? d->map : NULL, mc->experts, d->local,
                         out->pair[at]) == e) {
      const int row = a_per_pair ? out->pair[at] : out->pair[at] / mc->topk;
      memcpy(a_e + (size_t)at * k, d->a + (size_t)row * k, sizeof *a_e * (size_t)k);
      at++;
    }
    if (at == first) continue;
    gpu_upload(d_ae + (size_t)first * k, a_e + (size_t)first * k, sizeof *a_e * (size_t)(at - first) * k);
    const gemm_ref slice = {out->ref.ref + (size_t)first * n, out->ref.abs_sum + (size_t)first * n,
                            out->ref.werr + (size_t)first * n, out->ref.sq_sum + (size_t)first * n};
    const size_t nk = (size_t)n * k;
    CUDA_CHECK((cudaError_t)gpu_ref_gemm(d->act, at - first, n, k, d_ae + (size_t)first * k,
                                         d->d_w + (size_t)e * nk, d->d_slack + (size_t)e * nk,
                                         &slice, env.stream));
  }
  CHECK(at == out->rows, "the reference's rows are not grouped by expert (%d of %d)", at, out->rows);
  gpu_sync(env.stream, "the per-expert reference");
  CUDA_CHECK(cudaFree(d_ae));
  free(a_e);
}

static void ref_free(moe_ref_rows *r) {
  CUDA_CHECK(cudaFree(r->ref.ref));
  CUDA_CHECK(cudaFree(r->ref.abs_sum));
  CUDA_CHECK(cudaFree(r->ref.werr));
  CUDA_CHECK(cudaFree(r->ref.sq_sum));
  free(r->pair);
}

static double ratio_of(unsigned long long bits) {
  double x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

/* C (host copy, pairs x n) against the reference: the local pairs' rows gathered in reference
 * order and checked under the format's bound (with `biased`, against the reference plus each
 * pair's expert's bias row, gathered alike), every other row still the 0xFFFF poison. */
static double check_c(const moe_data *d, const moe_ref_rows *ref, const uint16_t *c, int biased,
                      const char *what) {
  const int n = d->mc->n;
  const size_t cap = (size_t)ref->rows * n + GUARD_ELEMS;
  uint16_t *g = malloc(sizeof *g * cap), *gb = biased ? malloc(sizeof *gb * cap) : NULL;
  memset(g, 0xFF, sizeof *g * cap);
  char *local = calloc((size_t)d->pairs, 1);
  for (int i = 0; i < ref->rows; i++) {
    memcpy(g + (size_t)i * n, c + (size_t)ref->pair[i] * n, sizeof *g * (size_t)n);
    if (gb != NULL) { /* its expert's bias row */
      const int e = moe_ref_local(d->ids, d->mc->ways > 1 ? d->map : NULL, d->mc->experts,
                                  d->local, ref->pair[i]);
      memcpy(gb + (size_t)i * n, d->bias + (size_t)e * n, sizeof *gb * (size_t)n);
    }
    local[ref->pair[i]] = 1;
  }
  size_t touched = 0;
  for (int p = 0; p < d->pairs; p++)
    if (!local[p])
      for (int j = 0; j < n; j++) touched += c[(size_t)p * n + j] != 0xFFFF;
  CHECK(touched == 0, "%s: %zu elements written in rows of pairs routed elsewhere", what, touched);
  uint16_t *d_g = gpu_alloc(sizeof *g * cap), *d_gb = NULL;
  gpu_upload(d_g, g, sizeof *g * cap);
  if (gb != NULL) {
    d_gb = gpu_alloc(sizeof *gb * cap);
    gpu_upload(d_gb, gb, sizeof *gb * cap);
  }
  gemm_check init = {0, 0, 0, 0, ~0ull, 0, 0.0, 0.0, 0.0}, res;
  gemm_check *d_check = gpu_alloc(sizeof init);
  CUDA_CHECK(cudaMemcpyAsync(d_check, &init, sizeof init, cudaMemcpyHostToDevice, env.stream));
  if (ref->rows > 0)
    CUDA_CHECK((cudaError_t)gpu_check_gemm(d->act, ref->rows, n, &d->bound, d_g, cap, &ref->ref,
                                           d_gb, (size_t)n, d_check, env.stream));
  CUDA_CHECK(cudaMemcpyAsync(&res, d_check, sizeof res, cudaMemcpyDeviceToHost, env.stream));
  gpu_sync(env.stream, what);
  const double ratio = ratio_of(res.max_ratio_bits);
  CHECK(res.bad == 0 && res.nonfinite == 0 && res.unwritten == 0,
        "%s: %llu over the bound (max ratio %.3g; first at reference row %llu, pair %d), %llu "
        "NaN/inf, %llu unwritten", what, res.bad, ratio,
        res.first_bad == ~0ull ? 0ull : res.first_bad / (unsigned long long)n,
        res.first_bad == ~0ull ? -1 : ref->pair[res.first_bad / (unsigned long long)n],
        res.nonfinite, res.unwritten);
  CUDA_CHECK(cudaFree(d_g));
  CUDA_CHECK(cudaFree(d_gb));
  CUDA_CHECK(cudaFree(d_check));
  free(g), free(gb), free(local);
  return ratio;
}

static void download(uint16_t *h, const void *d, size_t elems) {
  CUDA_CHECK(cudaMemcpy(h, d, sizeof *h * elems, cudaMemcpyDeviceToHost));
}

/* The router weights' rows: C_w = act(x w) against C = act(x), each rounded once from the
 * same FP32 x (with a bias, x = acc + b: the weight scales the biased sum):
 * |C_w - w C| <= 2.5 u |w C| + 2^-23 (subnormal steps). */
static void check_weighted(const moe_data *d, const moe_ref_rows *ref, const uint16_t *c,
                           const uint16_t *cw, const char *what) {
  const int n = d->mc->n;
  const double u = act_unit_roundoff(d->act);
  int bad = 0;
  for (int i = 0; i < ref->rows && bad < 3; i++) {
    const int p = ref->pair[i];
    for (int j = 0; j < n && bad < 3; j++) {
      const double x = act_to_double(d->act, c[(size_t)p * n + j]) * d->topk_w[p];
      const double y = act_to_double(d->act, cw[(size_t)p * n + j]);
      if (!(fabs(y - x) <= 2.5 * u * fabs(x) + 0x1p-23)) {
        CHECK(0, "%s: pair %d col %d: %.6g with router weight %.6g, %.6g x it without", what, p,
              j, y, d->topk_w[p], x);
        bad++;
      }
    }
  }
}

/* out[t] = sum of C's local rows of t, in k order, FP32, rounded once: the GPU's bit for bit. */
static void check_sum(const moe_data *d, const uint16_t *c, const uint16_t *out, const char *what) {
  const int n = d->mc->n, topk = d->mc->topk;
  int bad = 0;
  for (int t = 0; t < d->mc->m && bad < 3; t++)
    for (int j = 0; j < n && bad < 3; j++) {
      float s = 0.f;
      for (int q = 0; q < topk; q++) {
        const int p = t * topk + q;
        if (moe_ref_local(d->ids, d->mc->ways > 1 ? d->map : NULL, d->mc->experts, d->local, p) >= 0)
          s += act_to_float(d->act, c[(size_t)p * n + j]);
      }
      const uint16_t want = act_from_float(d->act, s);
      if (out[(size_t)t * n + j] != want) {
        CHECK(0, "%s: out[%d][%d] = 0x%04x, the sum in k order is 0x%04x", what, t, j,
              out[(size_t)t * n + j], want);
        bad++;
      }
    }
}

/* A in the route's order (mgen_moe_permute from A per token, or per pair): every row below
 * *num_padded as the reference says (bit for bit; padding zeros). The rows past it keep their
 * poison (0xFFFF: NaN), which a GEMM that read them would carry into C. */
static uint16_t *permuted(const moe_data *d, const route_case *rc, int a_per_pair, const char *what) {
  const int k = d->mc->k;
  const size_t elems = (size_t)rc->rows * k;
  uint16_t *d_s = gpu_alloc(sizeof *d_s * elems), *h_s = malloc(sizeof *h_s * elems);
  CUDA_CHECK(cudaMemsetAsync(d_s, 0xFF, sizeof *d_s * elems, env.stream));
  MGEN_CHECK(env.ctx, mgen_moe_permute(env.ctx, &rc->r, a_per_pair, k, d->d_a, d_s, env.stream));
  gpu_sync(env.stream, what);
  download(h_s, d_s, elems);
  size_t bad = 0;
  for (int i = 0; i < rc->rows; i++) {
    const int id = i < rc->ref_count ? rc->ref_sorted[i] : -1;
    for (int j = 0; j < k; j++) {
      const uint16_t want = id < 0 ? 0xFFFF : id >= d->pairs ? 0 :
                            d->a[(size_t)(a_per_pair ? id : id / d->mc->topk) * k + j];
      bad += h_s[(size_t)i * k + j] != want;
    }
  }
  CHECK(bad == 0, "%s: mgen_moe_permute: %zu elements differ from A's rows in the route's order", what, bad);
  free(h_s);
  return d_s;
}

/* One kernel on one case and A mode (0: per token, 1: per pair, 2: per pair or token as
 * `sorted_from` says, permuted into the route's order), every run with the experts' biases
 * where `biased`, over the sorted route or an unsorted one (`unsorted`: no list, its buffers
 * NULL; the reference is the same): correct, router weights, run to run, the sum; or, where its
 * tile_k is deeper than the K padding and k no multiple of it, refused with
 * ERR_UNSUPPORTED_SHAPE (C untouched). */
static void run_kernel(const moe_data *d, const mgen_kernel_desc *kd, int a_mode, int sorted_from,
                       int biased, int unsorted) {
  const int a_per_pair = a_mode == MGEN_MOE_A_SORTED ? sorted_from : a_mode;
  const char *name = kd->name;
  const int tile_m = kd->tile_m;
  const moe_case *mc = d->mc;
  const int n = mc->n;
  route_case rc;
  route_alloc(&rc, mc->m, mc->topk, mc->experts, d->local, tile_m, d->ids,
              mc->ways > 1 ? d->map : NULL);
  /* the route of the calls: rc's, or unsorted with no list (a read of one would fault) */
  mgen_moe_route route = rc.r;
  if (unsorted) {
    route.unsorted = 1;
    route.d_sorted_ids = route.d_block_experts = route.d_num_padded = NULL;
  }
  char what[256];
  snprintf(what, sizeof what, "%s m=%d n=%d k=%d E=%d topk=%d ways=%d pick=%d %s%s%s", name, mc->m,
           n, mc->k, mc->experts, mc->topk, mc->ways, mc->pick,
           a_mode == MGEN_MOE_A_SORTED ? (a_per_pair ? "down, A sorted" : "gate_up, A sorted")
                                       : a_per_pair ? "down" : "gate_up",
           biased ? ", bias" : "", unsorted ? ", unsorted" : "");
  mgen_weights w = d->w; /* every run's */
  w.d_bias = biased ? d->d_bias : NULL;
  MGEN_CHECK(env.ctx, mgen_moe_route_tokens(env.ctx, &route, env.stream));
  uint16_t *d_sorted = a_mode == MGEN_MOE_A_SORTED ? permuted(d, &rc, a_per_pair, what) : NULL;
  const void *d_a = d_sorted ? d_sorted : d->d_a;
  const size_t c_elems = (size_t)d->pairs * n;
  /* C of each run: 0, 1 plain, twice; 2 with router weights; 3, 4 plain over 2 SMs, twice. */
  enum { RUNS = 5, FEW = 3 };
  uint16_t *d_c[RUNS], *h_c[RUNS], *d_out = gpu_alloc(sizeof(uint16_t) * (size_t)mc->m * n);
  uint16_t *h_out = malloc(sizeof *h_out * (size_t)mc->m * n);
  for (int i = 0; i < RUNS; i++) {
    d_c[i] = gpu_alloc(sizeof(uint16_t) * c_elems);
    h_c[i] = malloc(sizeof(uint16_t) * c_elems);
    CUDA_CHECK(cudaMemsetAsync(d_c[i], 0xFF, sizeof(uint16_t) * c_elems, env.stream));
  }
  if (mc->k % mgen__k_multiple(kd) != 0) {
    const mgen_status st = mgen_moe_gemm_kernel(env.ctx, name, (mgen_act)d->act, &route, a_mode,
                                                d_a, &w, NULL, d_c[0], env.stream);
    CHECK(st == MGEN_ERR_UNSUPPORTED_SHAPE, "%s: %s, expected a refusal (tile_k %d)", what,
          mgen_status_str(st), kd->tile_k);
    gpu_sync(env.stream, what);
    download(h_c[0], d_c[0], c_elems);
    size_t touched = 0;
    for (size_t e = 0; e < c_elems; e++) touched += h_c[0][e] != 0xFFFF;
    CHECK(touched == 0, "%s: refused, yet %zu elements of C written", what, touched);
    goto out;
  }
  /* Over 2 SMs the wgmma kernels' stream-K spreads the live tiles' stages over 2 blocks, most
   * tiles shared. */
  for (int i = 0; i < RUNS; i++) {
    mgen_ctx *ctx = i >= FEW ? few_sms : env.ctx;
    const mgen_status st = mgen_moe_gemm_kernel(ctx, name, (mgen_act)d->act, &route, a_mode,
                                                d_a, &w, i == 2 ? d->d_topk_w : NULL, d_c[i],
                                                env.stream);
    CHECK(st == MGEN_OK, "%s: %s: %s", what, mgen_status_str(st), mgen_ctx_last_error(ctx));
    if (st != MGEN_OK) goto out;
  }
  MGEN_CHECK(env.ctx, mgen_moe_sum(env.ctx, (mgen_act)d->act, &route, n, d_c[0], d_out, env.stream));
  gpu_sync(env.stream, what);
  if (!unsorted) check_route(&rc, what);
  for (int i = 0; i < RUNS; i++) download(h_c[i], d_c[i], c_elems);
  download(h_out, d_out, (size_t)mc->m * n);
  moe_ref_rows ref;
  reference(d, &rc, a_per_pair, &ref);
  const double ratio = check_c(d, &ref, h_c[0], biased, what);
  CHECK(memcmp(h_c[0], h_c[1], sizeof(uint16_t) * c_elems) == 0, "%s: two runs differ", what);
  char what_few[300];
  snprintf(what_few, sizeof what_few, "%s over 2 SMs", what);
  check_c(d, &ref, h_c[FEW], biased, what_few);
  CHECK(memcmp(h_c[FEW], h_c[FEW + 1], sizeof(uint16_t) * c_elems) == 0, "%s: two runs differ", what_few);
  check_weighted(d, &ref, h_c[0], h_c[2], what);
  check_sum(d, h_c[0], h_out, what);
  ref_free(&ref);
  if (getenv("MGEN_TEST_VERBOSE")) printf("  %s: max err/bound %.3f\n", what, ratio);
  cases_run++;
out:
  for (int i = 0; i < RUNS; i++) {
    CUDA_CHECK(cudaFree(d_c[i]));
    free(h_c[i]);
  }
  CUDA_CHECK(cudaFree(d_out));
  CUDA_CHECK(cudaFree(d_sorted));
  free(h_out);
  route_free(&rc);
}

static int runs_here(const mgen_kernel_desc *k) {
  return k->op == MGEN_OP_MOE && mgen_kernel_runs_on(k, mgen_ctx_sm(env.ctx)) &&
         gpu_kernel_selected(k->name);
}

/* Whether kernel k runs n (64-column steps from one whole tile up: where tile_n does not divide
 * n the last column tile is shifted to end at n, and its weights are the last expert's at the
 * end of the allocation in some cases). */
static int takes_n(const mgen_kernel_desc *k, int n) {
  return n % mgen__n_multiple(k) == 0 && n >= mgen__n_min(k);
}

/* The kernels a case and format row test: moe kernels that run here of the row's scheme (and
 * group, where the row names one) that take the case's n (gpu_table_groups' filter; the row
 * and case in these two). */
static const gemm_format *case_format;
static int case_n;
static int runs_case(const mgen_kernel_desc *k) {
  const gemm_format *f = case_format;
  return runs_here(k) && k->scheme == f->scheme &&
         (f->group == GEMM_TABLE_GROUPS || f->group == k->group) && takes_n(k, case_n);
}

/* The groups (groups[], the count returned) of the kernels format row f runs on cases n wide:
 * runs_case's kernels, one set of weights each (the default table has one per format; a
 * `--space full` build several). */
#define MOE_MAX_GROUPS 8
static int case_groups(const gemm_format *f, int n, int groups[MOE_MAX_GROUPS]) {
  case_format = f, case_n = n;
  const int count = gpu_table_groups(f->act, f->wfmt, runs_case, groups, MOE_MAX_GROUPS);
  CHECK(count < MOE_MAX_GROUPS, "%s act %d: %d groups or more", f->name, f->act, MOE_MAX_GROUPS);
  return count < MOE_MAX_GROUPS ? count : MOE_MAX_GROUPS;
}

/* Every moe kernel of the table on every case whose n it takes, with the weights of the first
 * row of gemm_formats.c (not CPU-bound) that describes it: one set of weights per group
 * (case_groups). */
static void test_kernels(rng *r, const moe_case *cases, size_t n_cases, int race) {
  const mgen_table *t = mgen_builtin_table();
  int *tested = calloc(t->count, sizeof *tested);
  for (size_t ci = 0; ci < n_cases; ci++)
    for (size_t fi = 0; fi < gemm_format_count; fi++) {
      const gemm_format *f = &gemm_formats[fi];
      if (f->small_only) continue;
      int groups[MOE_MAX_GROUPS];
      const int n_groups = case_groups(f, cases[ci].n, groups);
      for (int g = 0; g < n_groups; g++) {
        moe_data d;
        data_make(r, &d, &cases[ci], f, groups[g]);
        for (size_t i = 0; i < t->count; i++) {
          const mgen_kernel_desc *k = &t->kernels[i];
          if (!runs_case(k) || k->act != f->act || k->wfmt != f->wfmt || k->group != groups[g]) continue;
          /* sorted: from either, by case; the bias on mode 0 of even cases, 1 of odd ones.
           * --race: gathered (cp.async) and sorted (TMA) A, the two ways A reaches shared
           * memory (per pair is per token's path with other rows). */
          for (int a_mode = 0; a_mode <= MGEN_MOE_A_SORTED; a_mode += race ? MGEN_MOE_A_SORTED : 1)
            run_kernel(&d, k, a_mode, (int)(ci % 2), a_mode == (int)(ci % 2), 0);
          tested[i] = 1;
        }
        data_free(&d);
      }
    }
  int unselected = 0;
  for (size_t i = 0; i < t->count; i++) {
    if (t->kernels[i].op != MGEN_OP_MOE) continue;
    if (!gpu_kernel_selected(t->kernels[i].name)) unselected++;
    else if (mgen_kernel_runs_on(&t->kernels[i], mgen_ctx_sm(env.ctx)))
      CHECK(tested[i], "%s: no case and format row tested it", t->kernels[i].name);
    kernels_tested += tested[i];
  }
  CHECK(kernels_tested > 0 || unselected > 0, "the table has no moe kernel that runs here");
  free(tested);
}

/* ---------------------------------------------------------------- unsorted routes */

/* Decode sizes for the unsorted sweep: one token; 3 tokens on 4 of 8 experts (a 2-way map)
 * with two ids outside 0..E-1; 17 tokens on 2 of 8 (4 ways), ids outside mixed in
 * (PICK_HOSTILE, and one forced) and a map entry outside 0..local-1. Every pair outside the
 * local experts must leave its C row poisoned (check_c). */
static const moe_case unsorted_cases[] = {
  {1, 256, 256, 8, 3, 1, PICK_UNIFORM},
  {3, 256, 256, 8, 3, 2, PICK_UNIFORM},
  {17, 256, 256, 8, 3, 4, PICK_HOSTILE},
};

/* The unsorted case ci's ids and map after data_make: the forced strays above. */
static void unsorted_strays(moe_data *d, size_t ci) {
  const int e = d->mc->experts;
  if (ci == 1) d->ids[2] = e, d->ids[4] = -3;
  if (ci == 2) {
    d->ids[0] = e + 5;
    d->map[0] = d->local + 3; /* expert 0 (another rank's) mapped past the local ones */
  }
}

/* A wgmma kernel named for an unsorted route (its blocks plan over the list's tiles): refused
 * with ERR_INVALID_ARG, C untouched. */
static void refuse_unsorted(const moe_data *d, const mgen_kernel_desc *kd) {
  const moe_case *mc = d->mc;
  route_case rc;
  route_alloc(&rc, mc->m, mc->topk, mc->experts, d->local, kd->tile_m, d->ids,
              mc->ways > 1 ? d->map : NULL);
  mgen_moe_route u = rc.r;
  u.unsorted = 1;
  u.d_sorted_ids = u.d_block_experts = u.d_num_padded = NULL;
  const size_t bytes = sizeof(uint16_t) * (size_t)d->pairs * mc->n;
  void *d_c = gpu_alloc(bytes);
  gpu_fill(d_c, 0xFF, bytes);
  char what[200];
  snprintf(what, sizeof what, "%s on an unsorted route (m=%d)", kd->name, mc->m);
  gpu_expect_refused(env.ctx, mgen_moe_gemm_kernel(env.ctx, kd->name, (mgen_act)d->act, &u, 0,
                                                   d->d_a, &d->w, NULL, d_c, env.stream),
                     MGEN_ERR_INVALID_ARG, "needs a sorted route", what, d_c, bytes, 0xFF);
  CUDA_CHECK(cudaFree(d_c));
  route_free(&rc);
}

/* Every mma moe kernel of the table on unsorted routes (mgen_moe_route.unsorted: every pair a
 * block of its own, its expert read from the ids through the map), one shape at m = 1, 3 and
 * 17 (--quick: 17), with run_kernel's checks against the sorted route's FP64 reference: A
 * per token and per pair (the bias on one of them), router weights, two runs bit for bit
 * (not the sorted route's bits: its blocks are other, so the columns' splits may sum
 * otherwise), over 2 SMs, the sum. Each wgmma moe kernel refuses an unsorted route. */
static void test_unsorted(rng *r, int quick) {
  const mgen_table *t = mgen_builtin_table();
  int *tested = calloc(t->count, sizeof *tested);
  int runs = 0, refused = 0;
  for (size_t ci = quick ? 2 : 0; ci < sizeof unsorted_cases / sizeof unsorted_cases[0]; ci++)
    for (size_t fi = 0; fi < gemm_format_count; fi++) {
      const gemm_format *f = &gemm_formats[fi];
      if (f->small_only) continue;
      int groups[MOE_MAX_GROUPS];
      const int n_groups = case_groups(f, unsorted_cases[ci].n, groups);
      for (int g = 0; g < n_groups; g++) {
        moe_data d;
        data_make(r, &d, &unsorted_cases[ci], f, groups[g]);
        unsorted_strays(&d, ci);
        for (size_t i = 0; i < t->count; i++) {
          const mgen_kernel_desc *k = &t->kernels[i];
          if (!runs_case(k) || k->act != f->act || k->wfmt != f->wfmt || k->group != groups[g] ||
              tested[i] > (int)ci) /* a kernel on the first format row that describes it */
            continue;
          if (k->family != MGEN_FAMILY_MMA) {
            if (!tested[i]) {
              refuse_unsorted(&d, k);
              refused++;
            }
          } else {
            for (int a_mode = MGEN_MOE_A_TOKENS; a_mode <= MGEN_MOE_A_PAIRS; a_mode++) {
              run_kernel(&d, k, a_mode, 0, a_mode == (int)(ci % 2), 1);
              runs++;
            }
          }
          tested[i] = (int)ci + 1;
        }
        data_free(&d);
      }
    }
  for (size_t i = 0; i < t->count; i++) {
    const mgen_kernel_desc *k = &t->kernels[i];
    if (k->op == MGEN_OP_MOE && mgen_kernel_runs_on(k, mgen_ctx_sm(env.ctx)) &&
        gpu_kernel_selected(k->name))
      CHECK(tested[i], "%s: no unsorted case and format row tested it", k->name);
  }
  printf("test_moe_gpu: %d unsorted runs of the mma moe kernels, %d wgmma kernels refuse an "
         "unsorted route\n", runs, refused);
  free(tested);
}

/* ---------------------------------------------------------------- the default choice, graphs */

/* mgen_moe_gemm's own choice (route with its block_rows), then route + GEMM + sum captured into
 * a graph and replayed twice, outputs poisoned before each: bit for bit the direct run; every
 * GEMM with the experts' biases where `biased`, and then a misaligned one refused first. */
static void test_choice_and_graph(rng *r, int biased) {
  const moe_case mc = {133, 256, 256, 5, 2, 1, PICK_UNIFORM};
  const gemm_format *f = NULL;
  for (size_t fi = 0; fi < gemm_format_count && !f; fi++)
    if (gemm_formats[fi].act == MGEN_ACT_F16 && gemm_formats[fi].wfmt == MGEN_WFMT_U4B8) f = &gemm_formats[fi];
  moe_data d;
  data_make(r, &d, &mc, f, 128);
  if (biased) d.w.d_bias = d.d_bias;
  const char *with = biased ? ", with a bias" : "";
  route_case rc;
  const char *name = NULL;
  int block_rows = 0;
  {
    mgen_moe_route probe = {.m = mc.m, .topk = mc.topk, .num_experts = mc.experts,
                            .local_experts = d.local};
    const mgen_status st = mgen_moe_gemm_choice(env.ctx, MGEN_ACT_F16, &probe, &d.w, &name, &block_rows);
    if (st == MGEN_ERR_UNSUPPORTED_FORMAT || st == MGEN_ERR_NO_KERNEL) { /* an MGEN_KERNELS build */
      printf("test_moe_gpu: no f16 u4b8 g128 moe kernel runs here: choice and graph not tested%s\n",
             with);
      data_free(&d);
      return;
    }
    MGEN_CHECK(env.ctx, st);
  }
  route_alloc(&rc, mc.m, mc.topk, mc.experts, d.local, block_rows, d.ids, NULL);
  const size_t c_elems = (size_t)d.pairs * mc.n, o_elems = (size_t)mc.m * mc.n;
  uint16_t *d_c = gpu_alloc(2 * c_elems), *d_o = gpu_alloc(2 * o_elems);
  uint16_t *c0 = malloc(2 * c_elems), *o0 = malloc(2 * o_elems), *c1 = malloc(2 * c_elems),
           *o1 = malloc(2 * o_elems);
  MGEN_CHECK(env.ctx, mgen_moe_route_tokens(env.ctx, &rc.r, env.stream));
  if (biased) { /* a bias one element off 16 bytes: refused, C untouched */
    mgen_weights off = d.w;
    off.d_bias = d.d_bias + 1;
    gpu_sync(env.stream, "the route");
    gpu_fill(d_c, 0xFF, 2 * c_elems);
    gpu_expect_refused(env.ctx, mgen_moe_gemm(env.ctx, MGEN_ACT_F16, &rc.r, 0, d.d_a, &off,
                                              d.d_topk_w, d_c, env.stream),
                       MGEN_ERR_MISALIGNED, "w->d_bias", "mgen_moe_gemm, d_bias 2 bytes off 16",
                       d_c, 2 * c_elems, 0xFF);
    gpu_expect_refused(env.ctx, mgen_moe_gemm_kernel(env.ctx, name, MGEN_ACT_F16, &rc.r, 0, d.d_a,
                                                     &off, NULL, d_c, env.stream),
                       MGEN_ERR_MISALIGNED, "w->d_bias",
                       "mgen_moe_gemm_kernel, d_bias 2 bytes off 16", d_c, 2 * c_elems, 0xFF);
  }
  CUDA_CHECK(cudaMemsetAsync(d_c, 0xFF, 2 * c_elems, env.stream));
  MGEN_CHECK(env.ctx, mgen_moe_gemm(env.ctx, MGEN_ACT_F16, &rc.r, 0, d.d_a, &d.w, d.d_topk_w, d_c, env.stream));
  MGEN_CHECK(env.ctx, mgen_moe_sum(env.ctx, MGEN_ACT_F16, &rc.r, mc.n, d_c, d_o, env.stream));
  gpu_sync(env.stream, name);
  download(c0, d_c, c_elems), download(o0, d_o, o_elems);
  /* The choice computes what its kernel by name does. */
  moe_ref_rows ref;
  CUDA_CHECK(cudaMemsetAsync(d_c, 0xFF, 2 * c_elems, env.stream));
  MGEN_CHECK(env.ctx, mgen_moe_gemm_kernel(env.ctx, name, MGEN_ACT_F16, &rc.r, 0, d.d_a, &d.w, NULL, d_c, env.stream));
  gpu_sync(env.stream, name);
  download(c1, d_c, c_elems);
  reference(&d, &rc, 0, &ref);
  char what[64];
  snprintf(what, sizeof what, "mgen_moe_gemm's choice%s", with);
  check_c(&d, &ref, c1, biased, what);
  check_weighted(&d, &ref, c1, c0, what);
  ref_free(&ref);
  /* A route made for other block rows is refused. */
  mgen_moe_route other = rc.r;
  other.block_rows = block_rows == 16 ? 64 : 16;
  CHECK(mgen_moe_gemm(env.ctx, MGEN_ACT_F16, &other, 0, d.d_a, &d.w, NULL, d_c, env.stream) ==
            MGEN_ERR_INVALID_ARG, "a route of block_rows %d for %s (tile_m %d) accepted",
        other.block_rows, name, block_rows);

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(env.stream, cudaStreamCaptureModeThreadLocal));
  MGEN_CHECK(env.ctx, mgen_moe_route_tokens(env.ctx, &rc.r, env.stream));
  MGEN_CHECK(env.ctx, mgen_moe_gemm(env.ctx, MGEN_ACT_F16, &rc.r, 0, d.d_a, &d.w, d.d_topk_w, d_c, env.stream));
  MGEN_CHECK(env.ctx, mgen_moe_sum(env.ctx, MGEN_ACT_F16, &rc.r, mc.n, d_c, d_o, env.stream));
  CUDA_CHECK(cudaStreamEndCapture(env.stream, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; replay++) {
    CUDA_CHECK(cudaMemsetAsync(d_c, 0xFF, 2 * c_elems, env.stream));
    CUDA_CHECK(cudaMemsetAsync(d_o, 0xFF, 2 * o_elems, env.stream));
    CUDA_CHECK(cudaMemsetAsync(rc.r.d_sorted_ids, 0x7f, sizeof(int32_t) * (size_t)rc.rows, env.stream));
    CUDA_CHECK(cudaMemsetAsync(rc.r.d_num_padded, 0x7f, sizeof(int32_t), env.stream));
    CUDA_CHECK(cudaGraphLaunch(exec, env.stream));
    gpu_sync(env.stream, "graph replay");
    download(c1, d_c, c_elems), download(o1, d_o, o_elems);
    CHECK(memcmp(c0, c1, 2 * c_elems) == 0, "replay %d%s: C differs from the direct run", replay,
          with);
    CHECK(memcmp(o0, o1, 2 * o_elems) == 0, "replay %d%s: the sum differs from the direct run",
          replay, with);
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));

  /* A slab of expert -1 (a route not of mgen_moe_route_tokens) is skipped whole: its pairs'
   * rows stay poisoned, every other row is the direct run's, and the columns' split sums (on
   * an H200 this shape splits every column over two blocks) leave the counters ready: the
   * next run, the slab restored, is the direct run again. */
  int32_t first[64], dead = -1;
  CHECK(block_rows <= 64, "block_rows %d", block_rows);
  CUDA_CHECK(cudaMemcpy(first, rc.r.d_sorted_ids, sizeof(int32_t) * (size_t)block_rows, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(rc.r.d_block_experts, &dead, sizeof dead, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemsetAsync(d_c, 0xFF, 2 * c_elems, env.stream));
  MGEN_CHECK(env.ctx, mgen_moe_gemm(env.ctx, MGEN_ACT_F16, &rc.r, 0, d.d_a, &d.w, d.d_topk_w, d_c, env.stream));
  gpu_sync(env.stream, "a dead slab");
  download(c1, d_c, c_elems);
  size_t wrong = 0;
  for (int p = 0; p < d.pairs; p++) {
    int in_dead = 0;
    for (int i = 0; i < block_rows; i++) in_dead |= first[i] == p;
    for (int j = 0; j < mc.n; j++) {
      const size_t at = (size_t)p * mc.n + j;
      wrong += in_dead ? c1[at] != 0xFFFF : c1[at] != c0[at];
    }
  }
  CHECK(wrong == 0, "a slab of expert -1%s: %zu elements not as expected (its rows poisoned, the "
        "others the direct run's)", with, wrong);
  MGEN_CHECK(env.ctx, mgen_moe_route_tokens(env.ctx, &rc.r, env.stream));
  CUDA_CHECK(cudaMemsetAsync(d_c, 0xFF, 2 * c_elems, env.stream));
  MGEN_CHECK(env.ctx, mgen_moe_gemm(env.ctx, MGEN_ACT_F16, &rc.r, 0, d.d_a, &d.w, d.d_topk_w, d_c, env.stream));
  gpu_sync(env.stream, "after a dead slab");
  download(c1, d_c, c_elems);
  CHECK(memcmp(c0, c1, 2 * c_elems) == 0, "the run after a dead slab differs from the direct run%s",
        with);
  printf("test_moe_gpu: %s (block_rows %d): the choice, and route + GEMM + sum replayed from a "
         "graph%s\n", name, block_rows, with);
  CUDA_CHECK(cudaFree(d_c));
  CUDA_CHECK(cudaFree(d_o));
  free(c0), free(o0), free(c1), free(o1);
  route_free(&rc);
  data_free(&d);
}

/* mgen_moe_gemm's own choice on an unsorted route at M = 1 (where mgen_moe_unsorted_pays says
 * it pays, with its block_rows): against the reference, router weights applied; then the
 * route call (nothing to launch), the GEMM and the sum captured in a CUDA graph and replayed:
 * bit for bit the direct run, and, with new ids written into the same buffer, the new ids'
 * reference (the graph reads the ids on the device: the GEMM's rows follow them). */
static void test_unsorted_choice(rng *r) {
  const moe_case mc = {1, 256, 256, 8, 3, 1, PICK_UNIFORM};
  const gemm_format *f = NULL;
  for (size_t fi = 0; fi < gemm_format_count && !f; fi++)
    if (gemm_formats[fi].act == MGEN_ACT_F16 && gemm_formats[fi].wfmt == MGEN_WFMT_U4B8) f = &gemm_formats[fi];
  moe_data d;
  data_make(r, &d, &mc, f, 128);
  int pays = 0, block_rows = 0;
  mgen_moe_route probe = {.m = mc.m, .topk = mc.topk, .num_experts = mc.experts,
                          .local_experts = d.local};
  const mgen_status st = mgen_moe_unsorted_pays(env.ctx, MGEN_ACT_F16, &probe, &d.w, &pays, &block_rows);
  if (st == MGEN_ERR_UNSUPPORTED_FORMAT || st == MGEN_ERR_NO_KERNEL) { /* an MGEN_KERNELS build */
    printf("test_moe_gpu: no f16 u4b8 g128 moe kernel runs here: the unsorted choice not tested\n");
    data_free(&d);
    return;
  }
  MGEN_CHECK(env.ctx, st);
  const char *name = NULL;
  int choice_rows = 0;
  probe.unsorted = 1;
  MGEN_CHECK(env.ctx, mgen_moe_gemm_choice(env.ctx, MGEN_ACT_F16, &probe, &d.w, &name, &choice_rows));
  CHECK(choice_rows == block_rows, "mgen_moe_unsorted_pays's block_rows %d, the unsorted choice's "
        "(%s) %d", block_rows, name, choice_rows);
  if (!pays) { /* a table whose unsorted choice is not of the mma family (a subset build) */
    const mgen_kernel_desc *k = NULL;
    for (size_t i = 0; i < mgen_builtin_table()->count; i++)
      if (!strcmp(mgen_builtin_table()->kernels[i].name, name)) k = &mgen_builtin_table()->kernels[i];
    CHECK(k != NULL && k->family != MGEN_FAMILY_MMA, "M = 1 on %s: unsorted does not pay", name);
    printf("test_moe_gpu: the unsorted choice at M = 1 is %s (not mma): not tested\n", name);
    data_free(&d);
    return;
  }
  route_case rc;
  route_alloc(&rc, mc.m, mc.topk, mc.experts, d.local, block_rows, d.ids, NULL);
  mgen_moe_route u = rc.r;
  u.unsorted = 1;
  u.d_sorted_ids = u.d_block_experts = u.d_num_padded = NULL;
  const size_t c_elems = (size_t)d.pairs * mc.n, o_elems = (size_t)mc.m * mc.n;
  uint16_t *d_c = gpu_alloc(2 * c_elems), *d_o = gpu_alloc(2 * o_elems);
  uint16_t *c0 = malloc(2 * c_elems), *cw = malloc(2 * c_elems), *c1 = malloc(2 * c_elems),
           *o0 = malloc(2 * o_elems), *o1 = malloc(2 * o_elems);
  /* direct: without router weights against the reference, with them against that */
  CUDA_CHECK(cudaMemsetAsync(d_c, 0xFF, 2 * c_elems, env.stream));
  MGEN_CHECK(env.ctx, mgen_moe_gemm(env.ctx, MGEN_ACT_F16, &u, 0, d.d_a, &d.w, NULL, d_c, env.stream));
  gpu_sync(env.stream, name);
  download(c0, d_c, c_elems);
  CUDA_CHECK(cudaMemsetAsync(d_c, 0xFF, 2 * c_elems, env.stream));
  MGEN_CHECK(env.ctx, mgen_moe_gemm(env.ctx, MGEN_ACT_F16, &u, 0, d.d_a, &d.w, d.d_topk_w, d_c, env.stream));
  MGEN_CHECK(env.ctx, mgen_moe_sum(env.ctx, MGEN_ACT_F16, &u, mc.n, d_c, d_o, env.stream));
  gpu_sync(env.stream, name);
  download(cw, d_c, c_elems), download(o0, d_o, o_elems);
  moe_ref_rows ref;
  reference(&d, &rc, 0, &ref);
  check_c(&d, &ref, c0, 0, "mgen_moe_gemm's unsorted choice, M = 1");
  check_weighted(&d, &ref, c0, cw, "mgen_moe_gemm's unsorted choice, M = 1");
  ref_free(&ref);

  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(env.stream, cudaStreamCaptureModeThreadLocal));
  MGEN_CHECK(env.ctx, mgen_moe_route_tokens(env.ctx, &u, env.stream));
  MGEN_CHECK(env.ctx, mgen_moe_gemm(env.ctx, MGEN_ACT_F16, &u, 0, d.d_a, &d.w, d.d_topk_w, d_c, env.stream));
  MGEN_CHECK(env.ctx, mgen_moe_sum(env.ctx, MGEN_ACT_F16, &u, mc.n, d_c, d_o, env.stream));
  CUDA_CHECK(cudaStreamEndCapture(env.stream, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; replay++) {
    if (replay == 1) { /* other experts for the same token, into the captured ids */
      for (int i = 0; i < d.pairs; i++) d.ids[i] = (d.ids[i] + 1 + i) % mc.experts;
      gpu_upload((void *)u.d_topk_ids, d.ids, sizeof *d.ids * (size_t)d.pairs);
      CHECK(moe_ref_route(d.ids, NULL, d.pairs, mc.experts, d.local, block_rows, rc.rows,
                          rc.ref_sorted, rc.ref_blocks, &rc.ref_count) == 0, "the new ids' reference");
    }
    CUDA_CHECK(cudaMemsetAsync(d_c, 0xFF, 2 * c_elems, env.stream));
    CUDA_CHECK(cudaMemsetAsync(d_o, 0xFF, 2 * o_elems, env.stream));
    CUDA_CHECK(cudaGraphLaunch(exec, env.stream));
    gpu_sync(env.stream, "unsorted graph replay");
    download(c1, d_c, c_elems), download(o1, d_o, o_elems);
    if (replay == 0) {
      CHECK(memcmp(cw, c1, 2 * c_elems) == 0, "unsorted replay: C differs from the direct run");
      CHECK(memcmp(o0, o1, 2 * o_elems) == 0, "unsorted replay: the sum differs from the direct run");
    } else { /* router-weighted C of the new ids: within the reference's bound scaled by w */
      reference(&d, &rc, 0, &ref);
      CUDA_CHECK(cudaMemsetAsync(d_c, 0xFF, 2 * c_elems, env.stream));
      MGEN_CHECK(env.ctx, mgen_moe_gemm(env.ctx, MGEN_ACT_F16, &u, 0, d.d_a, &d.w, NULL, d_c, env.stream));
      gpu_sync(env.stream, "the new ids, direct");
      download(c0, d_c, c_elems);
      check_c(&d, &ref, c0, 0, "unsorted, new ids, direct");
      check_weighted(&d, &ref, c0, c1, "unsorted graph replayed on new ids");
      check_sum(&d, c1, o1, "unsorted graph replayed on new ids");
      ref_free(&ref);
    }
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  printf("test_moe_gpu: %s (block_rows %d): the unsorted choice at M = 1, and a graph of it "
         "replayed on new ids\n", name, block_rows);
  CUDA_CHECK(cudaFree(d_c));
  CUDA_CHECK(cudaFree(d_o));
  free(c0), free(cw), free(c1), free(o0), free(o1);
  route_free(&rc);
  data_free(&d);
}

/* Whether `flag` is among the arguments: --routes (the routes alone: compute-sanitizer's
 * racecheck and synccheck of the route kernel), --race (race_cases). */
static int has_flag(int argc, char **argv, const char *flag) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], flag) == 0) return 1;
  return 0;
}

int main(int argc, char **argv) {
  gpu_require_device("test_moe_gpu");
  const int quick = gpu_quick_mode(argc, argv);
  rng r;
  rng_seed(&r, rng_test_seed("test_moe_gpu"));
  MGEN_CHECK(env.ctx, mgen_ctx_create(&env.ctx, mgen_builtin_table(), NULL));
  const mgen_ctx_opts two_sms = {.device = -1, .max_sms = 2};
  MGEN_CHECK(few_sms, mgen_ctx_create(&few_sms, mgen_builtin_table(), &two_sms));
  CUDA_CHECK(cudaStreamCreateWithFlags(&env.stream, cudaStreamNonBlocking));
  const double t0 = gpu_seconds();
  const int race = has_flag(argc, argv, "--race"), routes = has_flag(argc, argv, "--routes");
  if (race)
    test_kernels(&r, race_cases, sizeof race_cases / sizeof race_cases[0], 1);
  else
    test_route(&r);
  if (!routes && !race) {
    if (quick)
      test_kernels(&r, quick_cases, sizeof quick_cases / sizeof quick_cases[0], 0);
    else
      test_kernels(&r, full_cases, sizeof full_cases / sizeof full_cases[0], 0);
    test_unsorted(&r, quick);
    test_choice_and_graph(&r, 0);
    test_choice_and_graph(&r, 1);
    test_unsorted_choice(&r);
  }
  printf("test_moe_gpu: %d kernels tested, %d cases (%.1f s)\n", kernels_tested, cases_run,
         gpu_seconds() - t0);
  CUDA_CHECK(cudaStreamDestroy(env.stream));
  mgen_ctx_destroy(few_sms);
  mgen_ctx_destroy(env.ctx);
  return check_exit("test_moe_gpu");
}
