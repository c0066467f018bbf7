/* select.c -- kernel selection as data: functional key -> candidates -> can_implement ->
 * default by the cost model. No kernel is known by name here; every decision reads
 * mgen_kernel_desc fields, so adding a kernel to the spec needs no change in this file.
 */
#include "dispatch/select.h"

#include <string.h>

#include "base/text.h"
#include "families/family.h"
#include "formats/layout.h"
#include "formats/op.h"

void mgen__key_str(const mgen__key *key, char *buf, size_t size) {
  if (buf == NULL || size == 0) return;
  buf[0] = '\0';
  if (key->op != MGEN_OP_DENSE) mgen__appendf(buf, size, "%s/", mgen__op_name(key->op));
  const size_t used = strnlen(buf, size);
  mgen__format_text(key->act, key->wfmt, key->scheme, key->group, buf + used, size - used);
  /* the format's default layout goes without saying */
  if (mgen__wfmt_valid(key->wfmt) && key->layout != mgen__wfmt_default_layout(key->wfmt))
    mgen__appendf(buf, size, " in the %s layout", mgen__layout_name(key->layout));
}

mgen__key mgen__desc_key(const mgen_kernel_desc *d) {
  mgen__key key = {d->act, d->wfmt, d->scheme, d->group, d->layout, d->op};
  return key;
}

int mgen__key_matches(const mgen_kernel_desc *d, const mgen__key *key) {
  return d->act == key->act && d->wfmt == key->wfmt && d->scheme == key->scheme &&
         d->group == key->group && d->layout == key->layout && d->op == key->op;
}

/* ---------------------------------------------------------------- can_implement */

/* The constraints a kernel puts on a shape, in the order they are checked. A failure is
 * (kind, value, divisor): "value is not a multiple of divisor (what)"; FAIL_TILE_K, a kernel
 * that can read no packed weights (its tile_k neither divides the layout's K padding nor is a
 * multiple of it), is "tile_k=value does not divide divisor, ..."; FAIL_DEEP_TILE, a k the
 * group allows that a tile deeper than the padding does not cover. */
enum { FAIL_NONE, FAIL_NOT_POSITIVE, FAIL_TILE_N, FAIL_N_STEP, FAIL_N_MIN, FAIL_TILE_K, FAIL_GROUP,
       FAIL_CHANNEL, FAIL_DEEP_TILE };

/* Whether the layout's K padding covers tile_k's tiles for any k (tile_k divides the padding),
 * or only for k a multiple of tile_k (tile_k a multiple of the padding: such k are not padded);
 * neither: the kernel can read no packed weights. */
static int tile_k_shallow(int tile_k) { return tile_k >= 1 && MGEN_LAYOUT_K_PAD % tile_k == 0; }
static int tile_k_deep(int tile_k) {
  return tile_k > MGEN_LAYOUT_K_PAD && tile_k % MGEN_LAYOUT_K_PAD == 0;
}

int mgen__n_multiple(const mgen_kernel_desc *d) {
  const mgen__family *f = mgen__family_of(d->family);
  const int step = f != NULL && f->n_multiple != NULL ? f->n_multiple(d) : d->tile_n;
  return step > 0 ? step : 0;
}

int mgen__n_min(const mgen_kernel_desc *d) {
  const mgen__family *f = mgen__family_of(d->family);
  const int least = f != NULL && f->n_min != NULL ? f->n_min(d) : 1;
  return least > 1 ? least : 1;
}

int mgen__k_multiple(const mgen_kernel_desc *d) {
  if (d->group != MGEN_GROUP_CHANNEL && d->group < 1) return 0;
  const int step = mgen__layout_k_step(d->group);
  if (tile_k_shallow(d->tile_k)) return step;
  /* a deep tile: tile_k itself, a multiple of the padding and so of every group's step
   * (test_shape_rules checks that steps divide the padding) */
  return tile_k_deep(d->tile_k) && d->tile_k % step == 0 ? d->tile_k : 0;
}

typedef struct failure {
  int kind;
  char dim;    /* 'm', 'n' or 'k' */
  int value;   /* the caller's m, n or k; FAIL_TILE_K: the kernel's tile_k */
  int divisor; /* the kernel's tile or group */
} failure;

static failure first_failure(const mgen_kernel_desc *d, int m, int n, int k) {
  failure f = {FAIL_NONE, 0, 0, 0};
  if (m < 1) f = (failure){FAIL_NOT_POSITIVE, 'm', m, 0};
  else if (n < 1) f = (failure){FAIL_NOT_POSITIVE, 'n', n, 0};
  else if (k < 1) f = (failure){FAIL_NOT_POSITIVE, 'k', k, 0};
  else if (mgen__n_multiple(d) < 1 || n % mgen__n_multiple(d) != 0)
    f = (failure){mgen__n_multiple(d) == d->tile_n && mgen__n_min(d) <= 1 ? FAIL_TILE_N : FAIL_N_STEP,
                  'n', n, mgen__n_multiple(d)};
  else if (n < mgen__n_min(d))
    f = (failure){FAIL_N_MIN, 'n', n, mgen__n_min(d)};
  else if (!tile_k_shallow(d->tile_k) && !tile_k_deep(d->tile_k))
    f = (failure){FAIL_TILE_K, 'k', d->tile_k, MGEN_LAYOUT_K_PAD};
  else if (mgen__k_multiple(d) < 1 || k % mgen__layout_k_step(d->group) != 0)
    f = (failure){d->group == MGEN_GROUP_CHANNEL ? FAIL_CHANNEL : FAIL_GROUP, 'k', k,
                  d->group == MGEN_GROUP_CHANNEL ? mgen__layout_k_step(d->group) : d->group};
  else if (k % mgen__k_multiple(d) != 0)
    f = (failure){FAIL_DEEP_TILE, 'k', k, mgen__k_multiple(d)};
  return f;
}

static const char *failure_what(int kind) {
  return kind == FAIL_TILE_N ? "tile_n" : kind == FAIL_N_STEP ? "n step"
         : kind == FAIL_N_MIN ? "tile_n" : kind == FAIL_TILE_K ? "tile_k"
         : kind == FAIL_DEEP_TILE ? "tile_k deeper than the packed layout's K padding"
         : kind == FAIL_GROUP ? "group" : "per-channel k step";
}

static void append_failure(char *buf, size_t size, const failure *f) {
  if (f->kind == FAIL_NOT_POSITIVE)
    mgen__appendf(buf, size, "%c=%d is not positive", f->dim, f->value);
  else if (f->kind == FAIL_N_MIN)
    mgen__appendf(buf, size, "%c=%d is below %d", f->dim, f->value, f->divisor);
  else if (f->kind == FAIL_TILE_K)
    mgen__appendf(buf, size, "tile_k=%d does not divide %d, the packed layout's K padding",
                  f->value, f->divisor);
  else
    mgen__appendf(buf, size, "%c=%d is not a multiple of %d", f->dim, f->value, f->divisor);
}

int mgen__can_implement(const mgen_kernel_desc *d, int m, int n, int k, char *why,
                        size_t why_size) {
  failure f = first_failure(d, m, n, k);
  if (f.kind == FAIL_NONE) return 1;
  if (why != NULL && why_size > 0) {
    why[0] = '\0';
    append_failure(why, why_size, &f);
    if (f.kind != FAIL_NOT_POSITIVE) mgen__appendf(why, why_size, " (%s)", failure_what(f.kind));
  }
  return 0;
}

/* ---------------------------------------------------------------- default choice */

/* The default as a sort key, lower is better, compared field by field: the cost model's
 * predicted time (cost.c), then the spec's default_rank among kernels of equal cost, then
 * table order. */
typedef struct rank_key {
  double ns;
  int rank;
  size_t index;
} rank_key;

static rank_key rank_of(const mgen_kernel_desc *d, size_t index, int m, int n, int k, int slabs,
                        const mgen__device *dev) {
  rank_key r = {mgen__cost_slabs_ns(d, m, n, k, slabs, dev), d->default_rank, index};
  return r;
}

static int rank_less(const rank_key *a, const rank_key *b) {
  if (a->ns != b->ns) return a->ns < b->ns;
  if (a->rank != b->rank) return a->rank < b->rank;
  return a->index < b->index;
}

/* ---------------------------------------------------------------- messages */

/* "the table has f16/u4b8/gc, f16/u4b8/g32, ..." (distinct keys, table order). */
static void append_keys(char *buf, size_t size, const mgen_table *table) {
  if (table->count == 0) {
    mgen__appendf(buf, size, "the table is empty");
    return;
  }
  mgen__appendf(buf, size, "the table has");
  for (size_t i = 0; i < table->count; i++) {
    mgen__key key = mgen__desc_key(&table->kernels[i]);
    int seen = 0;
    for (size_t j = 0; j < i && !seen; j++) seen = mgen__key_matches(&table->kernels[j], &key);
    if (seen) continue;
    char text[48];
    mgen__key_str(&key, text, sizeof text);
    mgen__appendf(buf, size, "%s %s", i == 0 ? "" : ",", text);
  }
}

/* Names the shape constraint(s) that rejected every candidate: one clause per distinct
 * (constraint, divisor), "n=1000 is not a multiple of 128 (tile_n of every f16/u4b8/g128
 * kernel)" when all candidates agree. */
static void explain_shape(char *buf, size_t size, const mgen_table *table, int sm,
                          const mgen__key *key, int m, int n, int k, int candidates) {
  char key_text[64];
  mgen__key_str(key, key_text, sizeof key_text);
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (!mgen__key_matches(d, key) || !mgen__kernel_runs(d, sm)) continue;
    failure f = first_failure(d, m, n, k);
    int seen = 0, count = 0;
    for (size_t j = 0; j < table->count; j++) {
      const mgen_kernel_desc *e = &table->kernels[j];
      if (!mgen__key_matches(e, key) || !mgen__kernel_runs(e, sm)) continue;
      failure g = first_failure(e, m, n, k);
      if (g.kind != f.kind || g.dim != f.dim || g.divisor != f.divisor) continue;
      if (j < i) seen = 1;
      count++;
    }
    if (seen) continue;
    if (buf[0] != '\0') mgen__appendf(buf, size, "; ");
    append_failure(buf, size, &f);
    if (f.kind == FAIL_NOT_POSITIVE) continue;
    if (count == candidates)
      mgen__appendf(buf, size, " (%s of every %s kernel)", failure_what(f.kind), key_text);
    else if (count == 1)
      mgen__appendf(buf, size, " (%s of %s)", failure_what(f.kind), d->name);
    else
      mgen__appendf(buf, size, " (%s of %d %s kernels)", failure_what(f.kind), count, key_text);
  }
}

/* ---------------------------------------------------------------- selection */

mgen_status mgen__select(const mgen_table *table, const mgen__device *dev, const mgen__key *key,
                         int m, int n, int k, int *index, char *why, size_t why_size) {
  return mgen__select_slabs(table, dev, key, m, n, k, 1, index, why, why_size);
}

mgen_status mgen__select_slabs(const mgen_table *table, const mgen__device *dev,
                               const mgen__key *key, int m, int n, int k, int slabs, int *index,
                               char *why, size_t why_size) {
  if (why != NULL && why_size > 0) why[0] = '\0';
  if (table == NULL || dev == NULL || key == NULL || index == NULL) return MGEN_ERR_NULL_POINTER;
  int best = -1;
  if (mgen__candidates_slabs(table, dev, key, m, n, k, slabs, &best, 1) > 0) {
    *index = best;
    return MGEN_OK;
  }

  /* No kernel can run the call: find out why. */
  int matching = 0, candidates = 0;
  char ranges[160] = "";
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    char range[48];
    if (!mgen__key_matches(d, key)) continue;         /* functional key */
    matching++;
    if (mgen__kernel_runs(d, dev->sm)) candidates++;  /* runs on this device */
    mgen__arch_range(d, range, sizeof range);         /* each distinct range once */
    if (strstr(ranges, range) == NULL)
      mgen__appendf(ranges, sizeof ranges, "%s%s", ranges[0] ? ", " : "", range);
  }

  char key_text[64];
  mgen__key_str(key, key_text, sizeof key_text);
  if (matching == 0) {
    mgen__appendf(why, why_size, "no kernel for %s (", key_text);
    append_keys(why, why_size, table);
    mgen__appendf(why, why_size, ")");
    return MGEN_ERR_UNSUPPORTED_FORMAT;
  }
  if (candidates == 0) {
    mgen__appendf(why, why_size, "the %d %s kernel(s) run on %s; the device is sm_%d",
                  matching, key_text, ranges, dev->sm);
    return MGEN_ERR_NO_KERNEL;
  }
  explain_shape(why, why_size, table, dev->sm, key, m, n, k, candidates);
  return MGEN_ERR_UNSUPPORTED_SHAPE;
}

int mgen__candidates(const mgen_table *table, const mgen__device *dev, const mgen__key *key,
                     int m, int n, int k, int *out, int cap) {
  return mgen__candidates_slabs(table, dev, key, m, n, k, 1, out, cap);
}

int mgen__candidates_slabs(const mgen_table *table, const mgen__device *dev, const mgen__key *key,
                           int m, int n, int k, int slabs, int *out, int cap) {
  if (table == NULL || dev == NULL || key == NULL) return 0;
  int total = 0, kept = 0;
  rank_key ranks[64]; /* insertion-sorted best-first; cap is clamped to its size */
  if (cap > (int)(sizeof ranks / sizeof ranks[0])) cap = (int)(sizeof ranks / sizeof ranks[0]);
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (!mgen__key_matches(d, key) || !mgen__kernel_runs(d, dev->sm)) continue;
    if (!mgen__can_implement(d, m, n, k, NULL, 0)) continue;
    total++;
    rank_key r = rank_of(d, i, m, n, k, slabs, dev);
    int pos = kept;
    while (pos > 0 && rank_less(&r, &ranks[pos - 1])) pos--;
    if (pos >= cap) continue;
    if (kept < cap) kept++;
    for (int j = kept - 1; j > pos; j--) ranks[j] = ranks[j - 1];
    ranks[pos] = r;
  }
  for (int j = 0; j < kept && out != NULL; j++) out[j] = (int)ranks[j].index;
  return total;
}

int mgen_table_find(const mgen_table *table, const char *name) {
  if (table == NULL || name == NULL) return -1;
  for (size_t i = 0; i < table->count; i++)
    if (table->kernels[i].name != NULL && strcmp(table->kernels[i].name, name) == 0)
      return (int)i;
  return -1;
}
