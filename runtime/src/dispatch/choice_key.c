/* choice_key.c -- mgen__choice_key_of (select.h): the choice key of a call, its functional key
 * with the layout resolved, its shape and the bucket of its M.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "dispatch/bucket.h"
#include "dispatch/select.h"
#include "families/family.h"
#include "formats/format.h"
#include "formats/formats.h"

mgen__choice_key mgen__choice_key_of(const mgen_weights *w, int m) {
  mgen__choice_key ck;
  memset(&ck, 0, sizeof ck);
  ck.key.act = (int)w->act;
  ck.key.wfmt = (int)w->wfmt;
  ck.key.scheme = (int)w->scheme;
  ck.key.group = w->group;
  ck.key.layout = mgen__layout_resolve((int)w->wfmt, (int)w->layout);
  ck.key.op = MGEN_OP_DENSE; /* mgen_gemm and mgen_tune compute the plain GEMM */
  ck.n = w->n;
  ck.k = w->k;
  ck.bucket = mgen__bucket_of(m);
  ck.slabs = 1;
  return ck;
}

/* x on the ladder 1, 2, 3, 4, 6, 8, 12, 16 ... (2^i, and 1.5 x 2^i from 3 on), the nearest by
 * ratio. */
static double ladder(double x) {
  if (!(x > 1.0)) return 1.0;
  const double below = exp2(floor(log2(x))); /* 2^i <= x */
  const double mid = below >= 2.0 ? 1.5 * below : 2.0 * below, above = 2.0 * below;
  return x < sqrt(below * mid) ? below : x < sqrt(mid * above) ? mid : above;
}

mgen__choice_key mgen__moe_choice_key_of(const mgen_weights *w, long long pairs, int num_experts,
                                         int local_experts) {
  const double l = local_experts > 0 ? local_experts : 1;
  const double p = pairs > 0 && num_experts > 0 ? (double)pairs * l / num_experts : 1.0;
  /* 1 - (1 - 1/L)^P without the cancellation at large L */
  const double hit = l > 1 ? -expm1(p * log1p(-1.0 / l)) : 1.0;
  const double slabs = fmin(ladder(l * hit), l);
  /* the bucket of an expert's mean rows P / slabs; the cost takes their spread about it
   * (cost.c mgen__cost_slabs_ns: the expected slabs of each kernel's tile) */
  const double mean = p / slabs;
  const double rows = fmax(1.0, floor(mean + 0.5));
  mgen__choice_key ck = mgen__choice_key_of(w, rows < INT_MAX ? (int)rows : INT_MAX);
  ck.key.op = MGEN_OP_MOE;
  ck.slabs = (int)slabs;
  return ck;
}

/* P pairs here, a slab each. */
mgen__choice_key mgen__moe_unsorted_key_of(const mgen_weights *w, long long pairs, int num_experts,
                                           int local_experts) {
  const double l = local_experts > 0 ? local_experts : 1;
  const double p = pairs > 0 && num_experts > 0 ? (double)pairs * l / num_experts : 1.0;
  const double slabs = ladder(p);
  mgen__choice_key ck = mgen__choice_key_of(w, 1);
  ck.key.op = MGEN_OP_MOE;
  ck.slabs = slabs < INT_MAX ? (int)slabs : INT_MAX;
  return ck;
}

/* Where the route is not worth its launch. Unsorted, the P = m topk L / E pairs of this GPU's
 * L of E experts read P experts' weights; routed, the slabs read the A experts the pairs hit:
 * a token's top-k are k distinct of E, so it misses a given expert with probability 1 - k / E
 * and A = L (1 - (1 - k / E)^m) under uniform routing (at m = 1, A = P: nothing read twice).
 * The P - A experts read twice cost their bytes (an expert's n x k in the kernel's format as
 * the cost model counts them, mgen__format_cost_bytes); the route costs its time, 4.7-5.4 us
 * under graph replay at M <= 16 (H200, bench/notes/v54.md), in which a decode GEMM streams ~14 MB
 * (~3 TB/s). A layer's two GEMMs share the route, so each is charged half of it: unsorted pays
 * where its expected extra bytes are at most 7 MB. On v55's A/B (four models, M 1-16, the
 * layer under graph replay) it takes DeepSeek-V3 M <= 2, Qwen3 and gpt-oss M <= 4 and Mixtral
 * M = 1 (1.06-1.28x faster there) and leaves M = 16 (0.77-0.84x) and Mixtral M = 4 (0.84x);
 * also Mixtral M = 2 (1.055x) and DeepSeek M = 4 (1.033x), whose draws read no expert twice
 * where 0.5 and 1.5 were expected. (A bound on P / A alone took DeepSeek to M = 7, where the
 * 5 experts read twice cost ~40 us for the route's ~5.) */
#define MOE_UNSORTED_GEMM_BYTES 7.0e6

int mgen__moe_unsorted_pays(const mgen_kernel_desc *d, int m, int topk, int num_experts,
                            int local_experts, int n, int k) {
  const mgen__family *f = mgen__family_of(d->family);
  if (f == NULL || !f->moe_unsorted || num_experts < 1 || local_experts < 1 || m < 1 || topk < 1 ||
      n < 1 || k < 1)
    return 0;
  const double expert_bytes = mgen__format_cost_bytes(d->wfmt, n, k, d->group);
  const double e = num_experts, l = local_experts, pairs = (double)m * topk * l / e;
  /* (a top-k of every expert hits them all) */
  const double hit = topk >= num_experts ? l : -l * expm1(m * log1p(-(double)topk / e));
  return (pairs - hit) * expert_bytes <= MOE_UNSORTED_GEMM_BYTES;
}

/* Where A in the route's order pays for its permutation (bench/notes/v51.md, H200): the
 * chosen kernel reads it by boxes (its family's moe_a_boxed), an active expert gets this many
 * rows on average (the choice key's mean: the pairs over the experts they hit; below it the
 * gather's share of a tile's time is small), and n is this wide (the permutation's copy of A
 * is a share of the GEMM's time that falls as 1 / n: at n 1536-2880 it cost more than the
 * gather). On v51's A/B (32 GEMMs of 4 scenarios at M 64-4096) every GEMM this rule sends to
 * the permutation ran 1.03-1.24x faster with it, every other one 0.82-1.05x (the one above
 * 1.02: gpt-oss M = 1024 gate_up, 1.049, 32 rows per expert); runtime.test_moe_sorted holds
 * the rule to that A/B. */
#define MOE_SORTED_MIN_MEAN_ROWS 64
#define MOE_SORTED_MIN_N 4096

int mgen__moe_a_sorted_pays(const mgen_kernel_desc *d, long long pairs, int num_experts,
                            int local_experts, int n) {
  const mgen__family *f = mgen__family_of(d->family);
  if (f == NULL || !f->moe_a_boxed || n < MOE_SORTED_MIN_N || num_experts < 1 || local_experts < 1)
    return 0;
  const double here = (double)pairs * local_experts / num_experts, l = local_experts;
  const double hit = l * (1.0 - pow(1.0 - 1.0 / l, here)); /* as mgen__moe_choice_key_of */
  return hit > 0 && here / hit >= MOE_SORTED_MIN_MEAN_ROWS;
}
