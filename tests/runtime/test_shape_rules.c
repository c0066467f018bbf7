/* test_shape_rules.c -- the shape rule (runtime/src/dispatch/shape_rule.h) over the builtin
 * table: every kernel reads the packed layout's K padding (its tile_k divides it, as does every
 * group), the rule is exact (a shape passes iff some kernel of the key that runs there can
 * implement it), minimal, keeps issue #14's contract (n any multiple of 64, k any multiple of
 * the group, of 64 per channel), is the one every entry point checks (mgen_weights_bytes for
 * every architecture, quantize/pack/import/GEMM through mgen__check_desc for the context's),
 * and README's table of rules is the derived one. Then the weights of real models and their
 * tensor-parallel splits: each is accepted by the check and by a kernel, or refused with a
 * message naming the rule; the refused ones are printed (n not a multiple of 64: making them
 * run needs narrower kernels).
 *
 * Run: build/tests/test_shape_rules [--readme]  (--readme prints the table README should hold)
 */
#include <stdlib.h>
#include <string.h>

#include "base/text.h"
#include "check.h"
#include "context/internal.h"
#include "dispatch/shape_rule.h"
#include "families/family.h"
#include "formats/layout.h"

static const mgen_table *table;

/* ---------------------------------------------------------------- keys and architectures */

#define MAX_KEYS 64
static mgen__key keys[MAX_KEYS];
static int key_count;

static void collect_keys(void) {
  for (size_t i = 0; i < table->count; i++) {
    const mgen__key key = mgen__desc_key(&table->kernels[i]);
    int seen = 0;
    for (int j = 0; j < key_count && !seen; j++) seen = memcmp(&keys[j], &key, sizeof key) == 0;
    if (!seen && key_count < MAX_KEYS) keys[key_count++] = key;
  }
}

/* The architectures where the set of runnable kernels can change: every sm_min and sm_max + 1
 * of the table, ascending. Each class [arch[i], arch[i+1]) runs the same kernels. */
#define MAX_ARCHS 16
static int archs[MAX_ARCHS];
static int arch_count;

static void add_arch(int sm) {
  for (int i = 0; i < arch_count; i++)
    if (archs[i] == sm) return;
  if (arch_count == MAX_ARCHS) return;
  int pos = arch_count++;
  for (; pos > 0 && archs[pos - 1] > sm; pos--) archs[pos] = archs[pos - 1];
  archs[pos] = sm;
}

static void collect_archs(void) {
  for (size_t i = 0; i < table->count; i++) {
    add_arch(table->kernels[i].sm_min);
    if (table->kernels[i].sm_max != MGEN_SM_NO_MAX) add_arch(table->kernels[i].sm_max + 1);
  }
}

static void arch_name(int i, char *buf, size_t size) {
  if (i + 1 == arch_count)
    snprintf(buf, size, "sm_%d and later", archs[i]);
  else if (archs[i + 1] == archs[i] + 1)
    snprintf(buf, size, "sm_%d", archs[i]);
  else
    snprintf(buf, size, "sm_%d to sm_%d", archs[i], archs[i + 1] - 1);
}

/* The kernels of `key` running on `sm` (MGEN__SM_ANY: anywhere), in table order. */
#define MAX_SET 512
typedef struct kernel_set {
  const mgen_kernel_desc *d[MAX_SET];
  int count;
} kernel_set;

static void kernels_of(const mgen__key *key, int sm, kernel_set *set) {
  set->count = 0;
  for (size_t i = 0; i < table->count && set->count < MAX_SET; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (!mgen__key_matches(d, key)) continue;
    if (sm == MGEN__SM_ANY ? mgen__family_of(d->family) == NULL : !mgen__kernel_runs(d, sm))
      continue;
    set->d[set->count++] = d;
  }
}

/* Whether some kernel of the set can implement (n, k). */
static int set_implements(const kernel_set *set, int n, int k) {
  for (int i = 0; i < set->count; i++)
    if (mgen__can_implement(set->d[i], 1, n, k, NULL, 0)) return 1;
  return 0;
}

/* Whether some kernel of `key` running on `sm` (MGEN__SM_ANY: anywhere) can implement (n, k). */
static int some_kernel(const mgen__key *key, int sm, int n, int k) {
  kernel_set set;
  kernels_of(key, sm, &set);
  return set_implements(&set, n, k);
}

/* test_exact's grid of shapes, and which of them some kernel of a set implements. Computing it
 * is nearly all of this test's time (scanning the whole table per shape took most of a minute
 * on a busy 2-core runner), and a key's architectures mostly run the same kernels (sm_80's and
 * sm_100's; sm_90's and "any"): one grid per distinct set, checked against every rule. */
#define GRID_N 256 /* n = 16, 32, ..., 4096 */
#define GRID_K 512 /* k = 16, 32, ..., 8192 */
#define MAX_GRIDS (2 * (MAX_ARCHS + 1)) /* test_exact asks 2 per class and 2 for "any" */
typedef struct grid {
  kernel_set set;
  unsigned char runs[GRID_N][GRID_K];
} grid;
static grid grids[MAX_GRIDS];
static int grid_count;

static const grid *grid_of(const mgen__key *key, int sm) {
  static kernel_set set;
  kernels_of(key, sm, &set);
  for (int g = 0; g < grid_count; g++)
    if (grids[g].set.count == set.count &&
        memcmp(grids[g].set.d, set.d, sizeof set.d[0] * (size_t)set.count) == 0)
      return &grids[g];
  grid *g = &grids[grid_count++];
  g->set = set;
  for (int ni = 0; ni < GRID_N; ni++)
    for (int ki = 0; ki < GRID_K; ki++)
      g->runs[ni][ki] = (unsigned char)set_implements(&set, 16 * (ni + 1), 16 * (ki + 1));
  return g;
}

static int kernels_at(const mgen__key *key, int sm) {
  mgen__shape_rule rule;
  mgen__shape_rule_of(table, key, sm, &rule);
  return rule.count;
}

static mgen_weights weights_of(const mgen__key *key, int n, int k) {
  mgen_weights w = {.wfmt = (mgen_wfmt)key->wfmt, .act = (mgen_act)key->act,
                    .scheme = (mgen_scheme)key->scheme, .group = key->group, .n = n, .k = k,
                    .layout = (mgen_layout)key->layout};
  return w;
}

/* Whether this build's table is an MGEN_KERNELS subset (which may lack a key's narrow kernels). */
static int subset_table(void) {
  const char *mode = getenv("MGEN_README_TABLE");
  return mode != NULL && strcmp(mode, "subset") == 0;
}

/* ---------------------------------------------------------------- the packed K padding */

/* Every kernel runs the K tiles of the padded layout: its tile_k divides MGEN_LAYOUT_K_PAD, or
 * is a multiple of it (a kernel of neither could run nothing: mgen__k_multiple 0); every
 * group of the
 * format table (the padding is whole scale rows) and the per-channel k step. */
static void test_k_padding(void) {
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    const int shallow = d->tile_k > 0 && MGEN_LAYOUT_K_PAD % d->tile_k == 0;
    const int deep = d->tile_k > MGEN_LAYOUT_K_PAD && d->tile_k % MGEN_LAYOUT_K_PAD == 0;
    CHECK(shallow || deep, "%s: tile_k %d neither divides the packed layout's K padding %d nor "
          "is a multiple of it", d->name, d->tile_k, MGEN_LAYOUT_K_PAD);
    /* deep tiles (--space full only) run the k that are multiples of tile_k (every k step
     * divides the padding, so tile_k is their lcm) */
    CHECK(mgen__k_multiple(d) == (shallow ? mgen__layout_k_step(d->group) : d->tile_k),
          "%s: k step", d->name);
  }
  for (int i = 0, wfmt, scheme, group; mgen__format_at(i, &wfmt, &scheme, &group); i++)
    CHECK(MGEN_LAYOUT_K_PAD % mgen__layout_k_step(group) == 0 &&
              mgen__layout_k_step(group) % MGEN_LAYOUT_K_TILE == 0,
          "group %d: its k step %d is not whole tiles inside the padding", group,
          mgen__layout_k_step(group));
}

/* ---------------------------------------------------------------- the rule is exact */

static void test_exact(void) {
  for (int ki = 0; ki < key_count; ki++) {
    grid_count = 0; /* grids are per key */
    char key_text[48];
    mgen__key_str(&keys[ki], key_text, sizeof key_text);
    for (int ai = -1; ai < arch_count; ai++) {
      /* every class's first and last architecture, and "any" */
      const int sms[2] = {ai < 0 ? MGEN__SM_ANY : archs[ai],
                          ai < 0 || ai + 1 == arch_count ? (ai < 0 ? MGEN__SM_ANY : archs[ai] + 40)
                                                         : archs[ai + 1] - 1};
      for (int si = 0; si < 2; si++) {
        const int sm = sms[si];
        mgen__shape_rule rule;
        mgen__shape_rule_of(table, &keys[ki], sm, &rule);
        CHECK(!rule.overflow, "%s sm %d: overflow", key_text, sm);
        for (int i = 0; i < rule.count; i++) {
          CHECK(rule.n[i] % MGEN_LAYOUT_DIM == 0 && rule.k[i] % mgen__layout_k_step(keys[ki].group) == 0,
                "%s sm %d: %d x %d is finer than the packed layout", key_text, sm, rule.n[i],
                rule.k[i]);
          for (int j = 0; j < rule.count; j++)
            CHECK(i == j || rule.n[j] % rule.n[i] != 0 || rule.lo[i] > rule.lo[j] ||
                      rule.k[j] % rule.k[i] != 0,
                  "%s sm %d: alternative %d implies %d (not minimal)", key_text, sm, i, j);
        }
        const grid *g = grid_of(&keys[ki], sm);
        int mismatches = 0;
        for (int ni = 0; ni < GRID_N && mismatches < 3; ni++)
          for (int kj = 0; kj < GRID_K && mismatches < 3; kj++) {
            const int n = 16 * (ni + 1), k = 16 * (kj + 1);
            const int want = g->runs[ni][kj];
            const int got = mgen__shape_rule_accepts(&rule, n, k);
            if (want != got) mismatches++;
            CHECK(want == got, "%s sm %d: n=%d k=%d rule %d, kernels %d", key_text, sm, n, k,
                  got, want);
          }
      }
    }
  }
}

/* The rule on a small fake table, by hand: the union keeps what no other alternative implies;
 * a tile_k dividing the K padding adds nothing, a multiple of it asks k to be a multiple of it,
 * and any other tile_k runs nothing; both families take n in 64-column steps, the mma family
 * at least one whole tile_n. */
static void test_union(void) {
  static const mgen_kernel_desc ks[] = {
      {.name = "a", .family = MGEN_FAMILY_MMA, .act = 1, .wfmt = 1, .group = 128, .layout = 1,
       .tile_n = 128, .tile_k = 128, .sm_min = 80},
      {.name = "b", .family = MGEN_FAMILY_MMA, .act = 1, .wfmt = 1, .group = 128, .layout = 1,
       .tile_n = 192, .tile_k = 64, .sm_min = 80}, /* implied by a (n >= 128 covers n >= 192) */
      {.name = "c", .family = MGEN_FAMILY_WGMMA, .act = 1, .wfmt = 1, .group = 0, .layout = 1,
       .tile_n = 128, .tile_k = 64, .sm_min = 90, .sm_max = 90, .params = {2}},
      /* c: two consumer warpgroups; the wgmma family runs n in their 64-column shares */
      {.name = "d", .family = MGEN_FAMILY_MMA, .act = 1, .wfmt = 1, .group = 0, .layout = 1,
       .tile_n = 192, .tile_k = 128, .sm_min = 80},
      {.name = "e", .family = MGEN_FAMILY_MMA, .act = 1, .wfmt = 1, .group = 0, .layout = 1,
       .tile_n = 384, .tile_k = 128, .sm_min = 80}, /* implied by d */
      {.name = "f", .family = MGEN_FAMILY_MMA, .act = 1, .wfmt = 1, .group = 128, .layout = 1,
       .tile_n = 64, .tile_k = 192, .sm_min = 80}, /* 192: neither divides nor fills the padding */
      {.name = "g", .family = MGEN_FAMILY_MMA, .act = 1, .wfmt = 1, .group = 128, .layout = 1,
       .tile_n = 64, .tile_k = 256, .sm_min = 80}, /* deeper than the padding: k % 256 */
  };
  const mgen_table t = {ks, sizeof ks / sizeof ks[0], 0, "fake"};
  const mgen__key g128 = {1, 1, 0, 128, 1, 0}, gc = {1, 1, 0, 0, 1, 0}, g32 = {1, 1, 0, 32, 1, 0};
  mgen__shape_rule r;
  char text[200];
  mgen__shape_rule_of(&t, &g128, 80, &r);
  mgen__shape_rule_text(&r, text, sizeof text);
  CHECK(strcmp(text, "n a multiple of 64 and k a multiple of 256, or n a multiple of 64 (at "
                     "least 128) and k a multiple of 128") == 0,
        "g128: %s", text);
  CHECK(mgen__shape_rule_accepts(&r, 256, 4224) && mgen__shape_rule_accepts(&r, 192, 4224) &&
            mgen__shape_rule_accepts(&r, 320, 4224) && !mgen__shape_rule_accepts(&r, 64, 4224) &&
            !mgen__shape_rule_accepts(&r, 96, 4224) && mgen__shape_rule_accepts(&r, 320, 4096) &&
            mgen__shape_rule_accepts(&r, 64, 4096),
        "g128: the union of n rules; kernel f's tile runs nothing, g's n 64 only where k %% 256 "
        "== 0, a's from 128 up");
  mgen__shape_rule_of(&t, &gc, 90, &r);
  mgen__shape_rule_text(&r, text, sizeof text);
  CHECK(strcmp(text, "n a multiple of 64 and k a multiple of 64") == 0, "gc sm_90: %s", text);
  CHECK(mgen__shape_rule_accepts(&r, 128, 4160) && mgen__shape_rule_accepts(&r, 192, 4160) &&
            mgen__shape_rule_accepts(&r, 320, 4160) && !mgen__shape_rule_accepts(&r, 128, 4128) &&
            !mgen__shape_rule_accepts(&r, 96, 4160),
        "gc sm_90: n in c's 64-column steps (d's 192 implied), k a multiple of 64, not of any tile_k");
  mgen__shape_rule_of(&t, &gc, 80, &r);
  CHECK(r.count == 1 && r.n[0] == 64 && r.lo[0] == 192 && r.k[0] == 64, "gc sm_80: %d", r.count);
  CHECK(!mgen__shape_rule_accepts(&r, 128, 4160) && mgen__shape_rule_accepts(&r, 320, 4160),
        "gc sm_80: n 64-column steps from d's 192 up (e's 384 implied)");
  mgen__shape_rule_of(&t, &gc, MGEN__SM_ANY, &r);
  CHECK(r.count == 1 && r.n[0] == 64, "gc any: %d", r.count);
  mgen__shape_rule_of(&t, &g32, 80, &r);
  mgen__shape_rule_text(&r, text, sizeof text);
  CHECK(r.count == 0 && !mgen__shape_rule_accepts(&r, 4096, 4096) && strcmp(text, "no kernel") == 0,
        "no kernel: %s", text);
  /* The op is part of the key (and of the rule's memo: asked right after g128's rule, op 1's
   * is its own): no kernel computes op 1. */
  mgen__key g128_op1 = g128;
  g128_op1.op = 1;
  mgen__shape_rule_of(&t, &g128, 80, &r);
  mgen__shape_rule_of(&t, &g128_op1, 80, &r);
  CHECK(r.count == 0, "op 1: %d alternatives", r.count);
}

/* ---------------------------------------------------------------- the entry points check it */

static struct mgen_ctx ctx;

/* mgen__check_desc (quantize, pack, import, GEMM) on a context at `sm`, or mgen_weights_bytes
 * for MGEN__SM_ANY: OK, or UNSUPPORTED_SHAPE with the rule in the message. */
static mgen_status check_at(int sm, const mgen_weights *w, const char **message) {
  size_t qb, sb;
  *message = "";
  if (sm == MGEN__SM_ANY) return mgen_weights_bytes(w, &qb, &sb);
  ctx.sm = sm;
  const mgen_status st = mgen__check_desc(&ctx, w);
  *message = mgen_ctx_last_error(&ctx);
  return st;
}

/* One shape of one key at one architecture: accepted by the check iff some kernel runs it;
 * refused with a message naming the rule. Returns 1 if accepted. */
static int check_shape(const mgen__key *key, int sm, int n, int k) {
  const mgen_weights w = weights_of(key, n, k);
  const char *message;
  const mgen_status st = check_at(sm, &w, &message);
  mgen__shape_rule rule;
  mgen__shape_rule_of(table, key, sm, &rule);
  if (rule.count == 0) mgen__shape_rule_of(table, key, MGEN__SM_ANY, &rule);
  char key_text[48], text[400];
  mgen__key_str(key, key_text, sizeof key_text);
  mgen__shape_rule_text(&rule, text, sizeof text);
  /* Where no kernel of the key runs on sm (ERR_NO_KERNEL at GEMM time), the rule of the
   * architectures they run on. */
  const int here = kernels_at(key, sm) > 0 ? sm : MGEN__SM_ANY;
  const int runs = some_kernel(key, here, n, k);
  CHECK((st == MGEN_OK) == runs, "%s sm %d n=%d k=%d: check %s, a kernel %s", key_text, sm, n, k,
        mgen_status_str(st), runs ? "runs it" : "does not");
  if (st != MGEN_OK) {
    CHECK(st == MGEN_ERR_UNSUPPORTED_SHAPE, "%s n=%d k=%d: %s", key_text, n, k,
          mgen_status_str(st));
    CHECK(sm == MGEN__SM_ANY || strstr(message, text) != NULL,
          "%s sm %d n=%d k=%d: message '%s' lacks the rule '%s'", key_text, sm, n, k, message, text);
  }
  return st == MGEN_OK;
}

/* Issue #14's contract: n any multiple of 64 and k any multiple of the group (of 64 per
 * channel), for every key on every architecture its kernels run on and for
 * mgen_weights_bytes. An MGEN_KERNELS subset may lack a key's 64-wide kernels: not checked. */
static void test_contract(void) {
  if (subset_table()) {
    printf("issue #14's shape contract: not checked (a build of an MGEN_KERNELS subset)\n");
    return;
  }
  for (int ki = 0; ki < key_count; ki++)
    for (int ai = -1; ai < arch_count; ai++) {
      const int sm = ai < 0 ? MGEN__SM_ANY : archs[ai];
      if (kernels_at(&keys[ki], sm) == 0) continue;
      mgen__shape_rule rule;
      mgen__shape_rule_of(table, &keys[ki], sm, &rule);
      const int step = keys[ki].group > 0 ? keys[ki].group : 64;
      int refused = 0;
      for (int n = 64; n <= 8192; n += 64)
        for (int k = step; k <= 16384; k += step) refused += !mgen__shape_rule_accepts(&rule, n, k);
      char key_text[48], text[400];
      mgen__key_str(&keys[ki], key_text, sizeof key_text);
      mgen__shape_rule_text(&rule, text, sizeof text);
      CHECK(refused == 0, "%s sm %d: %d shapes of the contract refused; the rule is %s", key_text,
            sm, refused, text);
    }
}

static void test_entry_points(void) {
  static const int ns[] = {64, 128, 192, 256, 2368, 4096, 4160, 5120, 13824, 1000};
  static const int ks[] = {16, 64, 128, 192, 1376, 2752, 3696, 4096, 4128, 4160, 4224, 11008, 1000};
  for (int ki = 0; ki < key_count; ki++)
    for (int ai = -1; ai < arch_count; ai++)
      for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
        for (size_t j = 0; j < sizeof ks / sizeof ks[0]; j++)
          check_shape(&keys[ki], ai < 0 ? MGEN__SM_ANY : archs[ai], ns[i], ks[j]);
}

/* ---------------------------------------------------------------- README's table */

/* The table README.md holds between its shape-rules markers, one row per key. */
static void rules_cell(const mgen__shape_rule *r, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  if (r->count == 0) snprintf(buf, size, "-");
  for (int i = 0; i < r->count && used < size; i++) {
    char least[24] = "";
    if (r->lo[i] > r->n[i]) snprintf(least, sizeof least, " (>= %d)", r->lo[i]);
    used += (size_t)snprintf(buf + used, size - used, "%s%d%s x %d", i ? " or " : "", r->n[i],
                             least, r->k[i]);
  }
}

static void readme_table(char *out, size_t size) {
  size_t used = (size_t)snprintf(out, size, "| key |");
  char name[48], cell[200];
  for (int ai = 0; ai < arch_count && used < size; ai++) {
    arch_name(ai, name, sizeof name);
    used += (size_t)snprintf(out + used, size - used, " %s |", name);
  }
  used += (size_t)snprintf(out + used, size - used, " `mgen_weights_bytes` |\n|---|");
  for (int ai = 0; ai <= arch_count && used < size; ai++)
    used += (size_t)snprintf(out + used, size - used, "---|");
  used += (size_t)snprintf(out + used, size - used, "\n");
  for (int ki = 0; ki < key_count && used < size; ki++) {
    mgen__key_str(&keys[ki], name, sizeof name);
    used += (size_t)snprintf(out + used, size - used, "| %s |", name);
    for (int ai = 0; ai <= arch_count && used < size; ai++) {
      mgen__shape_rule r;
      mgen__shape_rule_of(table, &keys[ki], ai < arch_count ? archs[ai] : MGEN__SM_ANY, &r);
      rules_cell(&r, cell, sizeof cell);
      used += (size_t)snprintf(out + used, size - used, " %s |", cell);
    }
    used += (size_t)snprintf(out + used, size - used, "\n");
  }
}

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  char *buf = malloc(1 << 20);
  size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
  fclose(f);
  if (buf) buf[n] = '\0';
  return buf;
}

static void test_readme(int print) {
  static char want[16384];
  readme_table(want, sizeof want);
  if (print) {
    fputs(want, stdout);
    return;
  }
  if (subset_table()) {
    printf("README's shape rules: not compared (a build of an MGEN_KERNELS subset)\n");
    return;
  }
  char *readme = read_file(MGEN_README);
  CHECK(readme != NULL, "cannot read %s", MGEN_README);
  if (readme == NULL) return;
  static const char begin[] = "<!-- shape-rules: begin (tests/runtime/test_shape_rules.c) -->\n",
                    end[] = "<!-- shape-rules: end -->";
  char *b = strstr(readme, begin), *e = b ? strstr(b, end) : NULL;
  CHECK(b != NULL && e != NULL, "README.md lacks the shape-rules markers");
  if (b != NULL && e != NULL) {
    b += strlen(begin);
    *e = '\0';
    CHECK(strcmp(b, want) == 0, "README.md's shape rules differ from the table's; they are:\n%s"
          "(test_shape_rules --readme prints them)", want);
  }
  free(readme);
}

/* ---------------------------------------------------------------- real models */

typedef struct model {
  const char *name;
  int hidden, intermediate, heads, kv_heads, head_dim;
} model;

static const model models[] = {
    {"Llama-2-7B", 4096, 11008, 32, 32, 128},   {"Llama-2-13B", 5120, 13824, 40, 40, 128},
    {"Llama-2-70B", 8192, 28672, 64, 8, 128},   {"Llama-3-8B", 4096, 14336, 32, 8, 128},
    {"Llama-3-70B", 8192, 28672, 64, 8, 128},   {"Mixtral-8x7B", 4096, 14336, 32, 8, 128},
    {"Qwen2.5-7B", 3584, 18944, 28, 4, 128},    {"Qwen2.5-72B", 8192, 29568, 64, 8, 128},
};

/* The linear layers of one tensor-parallel rank (column-parallel: N split; row-parallel: K
 * split; KV heads replicated when fewer than the ranks, as vLLM does). */
typedef struct layer {
  const char *name;
  int n, k;
} layer;

static int layers_of(const model *m, int tp, layer *out) {
  const int kv = m->kv_heads >= tp ? m->kv_heads / tp : 1;
  const int q = m->heads / tp, i = m->intermediate / tp;
  out[0] = (layer){"qkv_proj", (q + 2 * kv) * m->head_dim, m->hidden};
  out[1] = (layer){"o_proj", m->hidden, q * m->head_dim};
  out[2] = (layer){"gate_up_proj", 2 * i, m->hidden};
  out[3] = (layer){"gate/up_proj", i, m->hidden};
  out[4] = (layer){"down_proj", m->hidden, i};
  return 5;
}

static void test_real_models(void) {
  static const int tps[] = {1, 2, 4, 8};
  int shapes = 0, refused = 0;
  printf("Real weight shapes (N x K per rank) no kernel of a key runs (every architecture unless "
         "named; [k %% group]: k is not a multiple of the group (of 64 per channel), so no kernel "
         "could):\n");
  for (size_t mi = 0; mi < sizeof models / sizeof models[0]; mi++)
    for (size_t ti = 0; ti < sizeof tps / sizeof tps[0]; ti++) {
      const model *m = &models[mi];
      const int tp = tps[ti];
      if (m->heads % tp != 0 || m->intermediate % tp != 0) {
        printf("  %s TP%d: %d heads or %d intermediate do not split %d ways (not a TP size "
               "engines run)\n", m->name, tp, m->heads, m->intermediate, tp);
        continue;
      }
      layer ls[8];
      const int count = layers_of(m, tp, ls);
      for (int li = 0; li < count; li++) {
        char line[4096] = "";
        int keys_refused = 0;
        for (int ki = 0; ki < key_count; ki++) {
          char where[200] = "";
          int archs_refused = 0;
          for (int ai = -1; ai < arch_count; ai++) {
            shapes++;
            if (check_shape(&keys[ki], ai < 0 ? MGEN__SM_ANY : archs[ai], ls[li].n, ls[li].k))
              continue;
            refused++, archs_refused++;
            /* only what the contract leaves out: n not a multiple of 64, k not of the step */
            CHECK(subset_table() || ls[li].n % 64 != 0 ||
                      ls[li].k % (keys[ki].group > 0 ? keys[ki].group : 64) != 0,
                  "%s TP%d %s %d x %d refused", m->name, tp, ls[li].name, ls[li].n, ls[li].k);
            char name[48] = "mgen_weights_bytes";
            if (ai >= 0) arch_name(ai, name, sizeof name);
            mgen__appendf(where, sizeof where, "%s%s", where[0] ? ", " : "", name);
          }
          if (archs_refused == 0) continue;
          keys_refused++;
          char key_text[48];
          mgen__key_str(&keys[ki], key_text, sizeof key_text);
          mgen__appendf(line, sizeof line, "%s%s", line[0] ? ", " : "", key_text);
          if (archs_refused <= arch_count) /* not everywhere: say where */
            mgen__appendf(line, sizeof line, " (%s)", where);
          if (ls[li].k % (keys[ki].group > 0 ? keys[ki].group : 64) != 0) /* no kernel could */
            mgen__appendf(line, sizeof line, " [k %% group]");
        }
        if (keys_refused == key_count && ls[li].k % 128 == 0) /* every group divides k */
          snprintf(line, sizeof line, "every key");
        if (keys_refused > 0)
          printf("  %s TP%d %s %d x %d%s: %s\n", m->name, tp, ls[li].name, ls[li].n, ls[li].k,
                 ls[li].n % 64 ? " (n not a multiple of 64)" : "", line);
      }
    }
  printf("%d of %d (shape, key, architecture) refused up front\n", refused, shapes);
}

int main(int argc, char **argv) {
  table = mgen_builtin_table();
  collect_keys();
  collect_archs();
  if (argc > 1 && strcmp(argv[1], "--readme") == 0) {
    test_readme(1);
    return 0;
  }
  ctx.device = 0, ctx.sm_count = 4, ctx.table = table;
  CHECK(key_count > 0 && arch_count > 0, "the builtin table has %d keys", key_count);
  test_k_padding();
  test_union();
  test_exact();
  test_contract();
  test_entry_points();
  test_readme(0);
  test_real_models();
  return check_exit("test_shape_rules");
}
