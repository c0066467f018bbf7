/* shape_rule.c -- the shape rule of a key, derived from the table (shape_rule.h). */
#include "dispatch/shape_rule.h"

#include <stdio.h>

#include "families/family.h"

/* Alternative (a, alo, b) implies (c, clo, d) -- every shape (c, clo, d) takes, (a, alo, b)
 * takes -- iff a | c, alo <= clo and b | d (lo is kept >= n: a multiple of c is at least c). */
static int implies(int a, int alo, int b, int c, int clo, int d) {
  return c % a == 0 && alo <= clo && d % b == 0;
}

static void add(mgen__shape_rule *r, int n, int lo, int k) {
  if (lo < n) lo = n;
  for (int i = 0; i < r->count; i++)
    if (implies(r->n[i], r->lo[i], r->k[i], n, lo, k)) return; /* already covered */
  int kept = 0;
  for (int i = 0; i < r->count; i++) /* drop the ones the new alternative covers */
    if (!implies(n, lo, k, r->n[i], r->lo[i], r->k[i]))
      r->n[kept] = r->n[i], r->lo[kept] = r->lo[i], r->k[kept] = r->k[i], kept++;
  r->count = kept;
  if (r->count == MGEN__RULE_MAX) {
    r->overflow = 1;
    return;
  }
  int pos = r->count++;
  for (; pos > 0 && (r->n[pos - 1] > n || (r->n[pos - 1] == n && (r->lo[pos - 1] > lo ||
                                                                 (r->lo[pos - 1] == lo && r->k[pos - 1] > k))));
       pos--)
    r->n[pos] = r->n[pos - 1], r->lo[pos] = r->lo[pos - 1], r->k[pos] = r->k[pos - 1];
  r->n[pos] = n, r->lo[pos] = lo, r->k[pos] = k;
}

/* The last rules this thread derived: every GEMM checks its weights' rule (prepare/weights.c),
 * and deriving it scans the whole table (~0.5 us for 173 kernels), while a model's GEMMs ask
 * for the same one or two keys over and over. Tables are constant data, so (table, key, sm)
 * names a rule for good. */
enum { MEMO = 4 };
typedef struct memo_entry {
  const mgen_table *table;
  mgen__key key;
  int sm;
  mgen__shape_rule rule;
} memo_entry;
static _Thread_local memo_entry memo[MEMO];
static _Thread_local int memo_used, memo_next;

static int same_key(const mgen__key *a, const mgen__key *b) {
  return a->act == b->act && a->wfmt == b->wfmt && a->scheme == b->scheme &&
         a->group == b->group && a->layout == b->layout && a->op == b->op;
}

static void derive(const mgen_table *table, const mgen__key *key, int sm, mgen__shape_rule *rule) {
  rule->count = 0, rule->overflow = 0;
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (!mgen__key_matches(d, key) || mgen__n_multiple(d) < 1 || mgen__k_multiple(d) < 1) continue;
    if (sm == MGEN__SM_ANY ? mgen__family_of(d->family) == NULL : !mgen__kernel_runs(d, sm))
      continue;
    add(rule, mgen__n_multiple(d), mgen__n_min(d), mgen__k_multiple(d));
  }
}

void mgen__shape_rule_of(const mgen_table *table, const mgen__key *key, int sm,
                         mgen__shape_rule *rule) {
  rule->count = 0, rule->overflow = 0;
  if (table == NULL || key == NULL) return;
  for (int i = 0; i < memo_used; i++)
    if (memo[i].table == table && memo[i].sm == sm && same_key(&memo[i].key, key)) {
      *rule = memo[i].rule;
      return;
    }
  derive(table, key, sm, rule);
  memo[memo_next] = (memo_entry){table, *key, sm, *rule};
  memo_next = (memo_next + 1) % MEMO;
  if (memo_used < MEMO) memo_used++;
}

int mgen__shape_rule_accepts(const mgen__shape_rule *rule, int n, int k) {
  if (n < 1 || k < 1) return 0;
  if (rule->overflow) return 1;
  for (int i = 0; i < rule->count; i++)
    if (n % rule->n[i] == 0 && n >= rule->lo[i] && k % rule->k[i] == 0) return 1;
  return 0;
}

void mgen__shape_rule_text(const mgen__shape_rule *rule, char *buf, size_t size) {
  if (buf == NULL || size == 0) return;
  buf[0] = '\0';
  if (rule->overflow) {
    snprintf(buf, size, "any n and k");
    return;
  }
  if (rule->count == 0) {
    snprintf(buf, size, "no kernel");
    return;
  }
  size_t used = 0;
  for (int i = 0; i < rule->count && used < size; i++) {
    char least[32] = "";
    if (rule->lo[i] > rule->n[i]) snprintf(least, sizeof least, " (at least %d)", rule->lo[i]);
    used += (size_t)snprintf(buf + used, size - used,
                             "%sn a multiple of %d%s and k a multiple of %d", i ? ", or " : "",
                             rule->n[i], least, rule->k[i]);
  }
}
