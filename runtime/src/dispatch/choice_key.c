/* choice_key.c -- mgen__choice_key_of (select.h): the choice key of a call, its functional key
 * with the layout resolved, its shape and the bucket of its M.
 */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "dispatch/bucket.h"
#include "dispatch/select.h"
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
