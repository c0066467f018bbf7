/* test_moe_sorted.c -- mgen_moe_gemm_a_sorted's rule (dispatch/select.h mgen__moe_a_sorted_pays:
 * where A permuted into the route's order, MGEN_MOE_A_SORTED, pays for mgen_moe_permute) against
 * the H200 A/B it was fitted to (bench_moe and bench_moe --a-sorted over the same points, each
 * GEMM's kernel the default choice, bench/notes/v51.md). At every GEMM of the A/B the rule
 * sends to the permutation, the permutation plus the GEMM on sorted A must not be slower than
 * the gather; at every other, the gather must be within `--slack` (default 1.06) of it: the
 * rule leaves no large gain behind. A change to the rule, its thresholds or the families' flag
 * that breaks either fails here, without a GPU.
 * Beside it, mgen_moe_unsorted_pays's rule (mgen__moe_unsorted_pays) against the A/B it was
 * fitted to (UNSORTED_AB, test_unsorted_ab) and at points worked from its formula, and the
 * unsorted route's choice key (mgen__moe_unsorted_key_of).
 *
 *   test_moe_sorted MANIFEST AB.csv.xz UNSORTED_AB.csv.xz [--slack S]
 *
 * AB: bench_moe rows (scenario, m, part, kernel, us, ..., experts, topk, n, k), the sorted
 * run's scenarios named SCENARIO+sorted; a point's time is its fastest row of each mode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dispatch/bucket.h"
#include "dispatch/select.h"
#include "manifest_table.h"

enum { MAX_KERNELS = 2048, MAX_POINTS = 256, LINE = 512, NCOLS = 8 };

static mgen_kernel_desc kernels[MAX_KERNELS];
static char names[MAX_KERNELS][MANIFEST_NAME_SIZE];

typedef struct point {
  char scenario[48], part[16], kernel[MANIFEST_NAME_SIZE];
  int m, experts, topk, n;
  double us[2]; /* gathered, sorted (0: not timed) */
} point;

static point points[MAX_POINTS];
static int npoints;

static point *point_of(const char *scenario, int m, const char *part) {
  for (int i = 0; i < npoints; i++)
    if (points[i].m == m && !strcmp(points[i].scenario, scenario) && !strcmp(points[i].part, part))
      return &points[i];
  if (npoints == MAX_POINTS) return NULL;
  point *p = &points[npoints++];
  memset(p, 0, sizeof *p);
  snprintf(p->scenario, sizeof p->scenario, "%s", scenario);
  snprintf(p->part, sizeof p->part, "%s", part);
  p->m = m;
  return p;
}

/* Calls row(field, col, path, ctx) for each data row of the xz-compressed CSV at `path` until
 * it returns 0; col[i] is the index of column want[i] in the last header line (one per run: a
 * line naming want[0]). */
typedef int (*row_fn)(char **field, const int *col, const char *path, void *ctx);
static void read_csv_xz(const char *path, const char *const *want, int nwant, row_fn row, void *ctx) {
  char cmd[1024], line[LINE];
  snprintf(cmd, sizeof cmd, "xz -dc '%s'", path);
  FILE *f = popen(cmd, "r");
  CHECK(f != NULL, "%s: cannot run", cmd);
  if (f == NULL) return;
  int col[16], have = 0;
  while (fgets(line, sizeof line, f)) {
    char *field[24];
    line[strcspn(line, "\n")] = '\0';
    const int nf = split_fields(line, ',', field, 24);
    int header = 0;
    for (int i = 0; i < nf && !header; i++) header = !strcmp(field[i], want[0]);
    if (header) {
      have = find_columns(field, nf, want, nwant, col, path);
      continue;
    }
    if (have && !row(field, col, path, ctx)) break;
  }
  CHECK(pclose(f) == 0, "%s: xz failed", cmd);
}

/* A row of the A-sorted A/B into its point. */
static int ab_row(char **field, const int *col, const char *path, void *ctx) {
  (void)ctx;
  const char *part = field[col[2]];
  if (strcmp(part, "gate_up") != 0 && strcmp(part, "down") != 0) return 1;
  char scenario[48];
  snprintf(scenario, sizeof scenario, "%s", field[col[0]]);
  char *tag = strstr(scenario, "+sorted");
  const int sorted = tag != NULL;
  if (tag) *tag = '\0';
  point *p = point_of(scenario, atoi(field[col[1]]), part);
  CHECK(p != NULL, "%s: more than %d points", path, MAX_POINTS);
  if (p == NULL) return 0;
  const double us = atof(field[col[4]]);
  CHECK(us > 0, "%s: %s m=%d %s: time %s", path, scenario, p->m, part, field[col[4]]);
  if (us > 0 && (p->us[sorted] == 0 || us < p->us[sorted])) p->us[sorted] = us;
  if (!sorted) snprintf(p->kernel, sizeof p->kernel, "%s", field[col[3]]);
  p->experts = atoi(field[col[5]]), p->topk = atoi(field[col[6]]), p->n = atoi(field[col[7]]);
  return 1;
}

static void read_ab(const char *path) {
  static const char *const want[NCOLS] = {"scenario", "m", "part", "kernel", "us", "experts", "topk", "n"};
  read_csv_xz(path, want, NCOLS, ab_row, NULL);
}

/* The unsorted rule on an mma and a wgmma moe kernel: P = m topk L / E pairs here read P
 * experts' weights where routed they read the A = L (1 - (1 - topk / E)^m) they hit (a token's
 * top-k distinct); unsorted pays on the mma family where (P - A) experts' bytes (n x k in the
 * kernel's format, as the cost model counts them) are at most 7 MB. The edges below are the
 * formula's (the expected MB read twice beside each) for the four models' gate_up and down
 * (u4b8 g128; gpt-oss fe2m1 g32), so a changed threshold, A drawn with repeats, a P of all
 * experts' pairs instead of this GPU's, or the bytes left out fails. */
static void test_unsorted_rule(const mgen_kernel_desc *mma, const mgen_kernel_desc *wg) {
  mgen_kernel_desc gptq = *mma, mxfp4 = *mma, gptq_wg = *wg;
  gptq.wfmt = gptq_wg.wfmt = MGEN_WFMT_U4B8, gptq.group = gptq_wg.group = 128;
  mxfp4.wfmt = MGEN_WFMT_FE2M1, mxfp4.group = 32;
  const struct {
    const char *what;
    const mgen_kernel_desc *d;
    int m, topk, experts, local, n, k, pays;
  } points[] = {
      {"DeepSeek-like gate_up m=1 (0)", &gptq, 1, 8, 256, 256, 4096, 7168, 1},
      {"DeepSeek-like gate_up m=2 (3.8)", &gptq, 2, 8, 256, 256, 4096, 7168, 1},
      {"DeepSeek-like gate_up m=3 (11.2)", &gptq, 3, 8, 256, 256, 4096, 7168, 0},
      {"DeepSeek-like down m=3 (5.6)", &gptq, 3, 8, 256, 256, 7168, 2048, 1},
      {"DeepSeek-like down m=4 (11.1)", &gptq, 4, 8, 256, 256, 7168, 2048, 0},
      {"DeepSeek-like gate_up m=16", &gptq, 16, 8, 256, 256, 4096, 7168, 0},
      {"DeepSeek-like gate_up, 64 of 256 experts here, m=4 (5.6)", &gptq, 4, 8, 256, 64, 4096, 7168, 1},
      {"DeepSeek-like gate_up, 64 of 256 experts here, m=5 (9.2)", &gptq, 5, 8, 256, 64, 4096, 7168, 0},
      {"Qwen3-like gate_up m=4 (4.7)", &gptq, 4, 8, 128, 128, 1536, 2048, 1},
      {"Qwen3-like gate_up m=5 (7.6)", &gptq, 5, 8, 128, 128, 1536, 2048, 0},
      {"Qwen3-like down m=6 (5.6)", &gptq, 6, 8, 128, 128, 2048, 768, 1},
      {"Qwen3-like down m=7 (7.7)", &gptq, 7, 8, 128, 128, 2048, 768, 0},
      {"gpt-oss-like gate_up m=4 (6.8)", &mxfp4, 4, 4, 128, 128, 5760, 2880, 1},
      {"gpt-oss-like gate_up m=5 (11.3)", &mxfp4, 5, 4, 128, 128, 5760, 2880, 0},
      {"gpt-oss-like down m=5 (5.7)", &mxfp4, 5, 4, 128, 128, 2880, 2880, 1},
      {"gpt-oss-like down m=6 (8.4)", &mxfp4, 6, 4, 128, 128, 2880, 2880, 0},
      {"Mixtral-like gate_up m=1 (0)", &gptq, 1, 2, 8, 8, 28672, 4096, 1},
      {"Mixtral-like down m=1 (0)", &gptq, 1, 2, 8, 8, 4096, 14336, 1},
      {"Mixtral-like down m=2 (15.1)", &gptq, 2, 2, 8, 8, 4096, 14336, 0},
      /* a top-k of every expert: each token hits them all */
      {"top-2 of 2 experts, m=1 (0)", &gptq, 1, 2, 2, 2, 4096, 14336, 1},
      {"top-1 of 1 expert, m=2 (one expert read twice, 30 MB)", &gptq, 2, 1, 1, 1, 4096, 14336, 0},
      {"top-1 of 1 expert, m=2, a 1 MB expert", &gptq, 2, 1, 1, 1, 1024, 1984, 1},
      {"no columns", &gptq, 1, 8, 256, 256, 0, 7168, 0},
      {"no experts", &gptq, 1, 8, 0, 0, 4096, 7168, 0},
      {"no tokens", &gptq, 0, 8, 256, 256, 4096, 7168, 0},
  };
  for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
    const int m = points[i].m, topk = points[i].topk, e = points[i].experts, l = points[i].local;
    const int n = points[i].n, k = points[i].k;
    const int got = mgen__moe_unsorted_pays(points[i].d, m, topk, e, l, n, k);
    CHECK(got == points[i].pays, "unsorted on %s: %s, expected %s", points[i].what,
          got ? "pays" : "loses", points[i].pays ? "pays" : "loses");
    CHECK(!mgen__moe_unsorted_pays(&gptq_wg, m, topk, e, l, n, k),
          "unsorted pays on the wgmma family: %s", points[i].what);
  }
  /* The choice key: one-row blocks (M 1), one per pair here on the slabs' ladder. Mixtral-like
   * m=4: 8 pairs, 8 slabs unsorted where the route's hit 5.25 experts (6 slabs); 64 of 256
   * experts here: 32 pairs over all, 8 here. */
  mgen_weights w = {.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_GROUP,
                    .group = 128, .n = 4096, .k = 7168};
  const mgen__choice_key sorted = mgen__moe_choice_key_of(&w, 8, 8, 8);
  const mgen__choice_key ck = mgen__moe_unsorted_key_of(&w, 8, 8, 8);
  CHECK(ck.key.op == MGEN_OP_MOE && ck.bucket == mgen__bucket_of(1) && ck.n == 4096 &&
            ck.k == 7168 && ck.slabs == 8,
        "unsorted key of 8 pairs: op %d, bucket %d (M 1's %d), n %d, k %d, slabs %d", ck.key.op,
        ck.bucket, mgen__bucket_of(1), ck.n, ck.k, ck.slabs);
  CHECK(sorted.slabs == 6, "the sorted key of 8 pairs over 8 experts: %d slabs", sorted.slabs);
  const int slabs[][4] = {/* pairs, experts, local, slabs */
                          {32, 256, 64, 8}, {32, 256, 256, 32}, {5, 8, 8, 6}, {40, 256, 256, 48},
                          {1, 8, 8, 1}};
  for (size_t i = 0; i < sizeof slabs / sizeof slabs[0]; i++) {
    const mgen__choice_key k = mgen__moe_unsorted_key_of(&w, slabs[i][0], slabs[i][1], slabs[i][2]);
    CHECK(k.slabs == slabs[i][3] && k.bucket == mgen__bucket_of(1),
          "unsorted key of %d pairs over %d of %d experts: %d slabs (want %d), bucket %d",
          slabs[i][0], slabs[i][2], slabs[i][1], k.slabs, slabs[i][3], k.bucket);
  }
}

/* The unsorted rule against the H200 A/B it was fitted to (bench_moe with and without
 * --unsorted, four models at M 1, 2, 4, 16, bench/notes/v55.md item 7; UNSORTED_AB: rows of variant,
 * scenario (SCENARIO+unsorted for the unsorted run), m, part, kernel (the unsorted run's
 * KERNEL+pays / +loses), graph_us, experts, topk, n, k): where both of a layer's GEMMs pay
 * (the choice's kernel of each, from the unsorted rows), the layer under graph replay must be
 * faster unsorted; where either loses, unsorted may be at most `slack` faster (no large gain
 * left behind). A layer's time is its fastest row of each mode. */
enum { MAX_LAYERS = 64 };
typedef struct layer {
  char scenario[48];
  int m, experts, topk, n[2], k[2];
  char kernel[2][MANIFEST_NAME_SIZE]; /* gate_up, down: the unsorted run's choice */
  double us[2];                       /* sorted, unsorted */
} layer;

typedef struct layers {
  layer at[MAX_LAYERS];
  int count;
} layers;

/* A row of the unsorted A/B into its layer: the unsorted run's GEMM rows name the choice's
 * kernels and sizes, the layer rows of both runs their times. */
static int unsorted_row(char **field, const int *col, const char *path, void *ctx) {
  layers *ls = ctx;
  char scenario[48];
  snprintf(scenario, sizeof scenario, "%s", field[col[0]]);
  char *tag = strstr(scenario, "+unsorted");
  const int unsorted = tag != NULL;
  if (tag) *tag = '\0';
  const int m = atoi(field[col[1]]);
  layer *l = NULL;
  for (int i = 0; i < ls->count && l == NULL; i++)
    if (ls->at[i].m == m && !strcmp(ls->at[i].scenario, scenario)) l = &ls->at[i];
  if (l == NULL && ls->count < MAX_LAYERS) {
    l = &ls->at[ls->count++];
    memset(l, 0, sizeof *l);
    snprintf(l->scenario, sizeof l->scenario, "%s", scenario);
    l->m = m;
  }
  CHECK(l != NULL, "%s: more than %d layers", path, MAX_LAYERS);
  if (l == NULL) return 0;
  const char *part = field[col[2]];
  const int g = !strcmp(part, "gate_up") ? 0 : !strcmp(part, "down") ? 1 : -1;
  if (g >= 0 && unsorted) {
    snprintf(l->kernel[g], sizeof l->kernel[g], "%s", field[col[3]]);
    char *verdict = strchr(l->kernel[g], '+');
    if (verdict) *verdict = '\0';
    l->experts = atoi(field[col[5]]), l->topk = atoi(field[col[6]]);
    l->n[g] = atoi(field[col[7]]), l->k[g] = atoi(field[col[8]]);
  } else if (!strcmp(part, "layer")) {
    const double us = atof(field[col[4]]);
    CHECK(us > 0, "%s: %s m=%d layer: time %s", path, scenario, m, field[col[4]]);
    if (us > 0 && (l->us[unsorted] == 0 || us < l->us[unsorted])) l->us[unsorted] = us;
  }
  return 1;
}

static void test_unsorted_ab(const char *path, size_t nkernels, double slack) {
  static const char *const want[] = {"scenario", "m", "part", "kernel", "graph_us", "experts", "topk", "n", "k"};
  static layers read;
  const layer *const layers = read.at;
  int taken = 0, left = 0;
  read_csv_xz(path, want, 9, unsorted_row, &read);
  const int nlayers = read.count;
  for (int i = 0; i < nlayers; i++) {
    const layer *l = &layers[i];
    int pays = 1, found = 1;
    for (int g = 0; g < 2; g++) {
      const mgen_kernel_desc *d = NULL;
      for (size_t j = 0; j < nkernels; j++)
        if (!strcmp(names[j], l->kernel[g])) d = &kernels[j];
      CHECK(d != NULL, "%s m=%d: the unsorted %s kernel '%s' is not in the manifest", l->scenario, l->m,
            g ? "down" : "gate_up", l->kernel[g]);
      if (d == NULL) found = 0;
      else pays &= mgen__moe_unsorted_pays(d, l->m, l->topk, l->experts, l->experts, l->n[g], l->k[g]);
    }
    CHECK(l->us[0] > 0 && l->us[1] > 0, "%s m=%d: the layer not timed both ways", l->scenario, l->m);
    if (!found || !(l->us[0] > 0 && l->us[1] > 0)) continue;
    const double speedup = l->us[0] / l->us[1];
    printf("%s m=%d: the layer unsorted %.3fx, %s\n", l->scenario, l->m, speedup, pays ? "taken" : "left");
    if (pays) {
      taken++;
      CHECK(speedup >= 1.0, "%s m=%d: unsorted taken, %.3fx", l->scenario, l->m, speedup);
    } else {
      left++;
      CHECK(speedup <= slack, "%s m=%d: unsorted left, yet %.3fx faster", l->scenario, l->m, speedup);
    }
  }
  CHECK(taken >= 4 && left >= 4, "the unsorted A/B tests both sides of the rule (%d taken, %d left)", taken,
        left);
}

int main(int argc, char **argv) {
  double slack = 1.06;
  if (argc < 4) {
    fprintf(stderr, "usage: test_moe_sorted MANIFEST AB.csv.xz UNSORTED_AB.csv.xz [--slack S]\n");
    return 2;
  }
  if (argc == 6 && !strcmp(argv[4], "--slack")) slack = atof(argv[5]);
  const size_t nkernels = manifest_read(argv[1], kernels, names, MAX_KERNELS);
  test_unsorted_ab(argv[3], nkernels, slack);
  read_ab(argv[2]);
  CHECK(npoints >= 16, "%d points", npoints);
  int sent = 0, kept = 0;
  for (int i = 0; i < npoints; i++) {
    const point *p = &points[i];
    CHECK(p->us[0] > 0 && p->us[1] > 0, "%s m=%d %s: not timed both ways", p->scenario, p->m, p->part);
    const mgen_kernel_desc *d = NULL;
    for (size_t j = 0; j < nkernels; j++)
      if (!strcmp(names[j], p->kernel)) d = &kernels[j];
    CHECK(d != NULL, "%s m=%d %s: %s is not in the manifest", p->scenario, p->m, p->part, p->kernel);
    if (d == NULL || !(p->us[0] > 0 && p->us[1] > 0)) continue;
    const int pays = mgen__moe_a_sorted_pays(d, (long long)p->m * p->topk, p->experts, p->experts, p->n);
    const double speedup = p->us[0] / p->us[1];
    printf("%s m=%d %s (%s): sorted %.3fx, %s\n", p->scenario, p->m, p->part, p->kernel, speedup,
           pays ? "sent" : "gathered");
    if (pays) {
      sent++;
      CHECK(speedup >= 1.0, "%s m=%d %s: sent to the permutation, %.3fx", p->scenario, p->m, p->part, speedup);
    } else {
      kept++;
      CHECK(speedup <= slack, "%s m=%d %s: gathered, yet sorted is %.3fx", p->scenario, p->m, p->part,
            speedup);
    }
  }
  /* The rule's own edges, on a wgmma and an mma moe kernel of the manifest: 64 rows per expert
   * and n 4096 on the wgmma one; never on the mma one; not below either threshold; the experts
   * on this GPU (local of all) get pairs x local / all of the pairs; no experts, no pays. */
  const mgen_kernel_desc *wg = NULL, *mma = NULL;
  for (size_t j = 0; j < nkernels; j++) {
    if (kernels[j].op != MGEN_OP_MOE) continue;
    if (kernels[j].family == MGEN_FAMILY_WGMMA && wg == NULL) wg = &kernels[j];
    if (kernels[j].family == MGEN_FAMILY_MMA && mma == NULL) mma = &kernels[j];
  }
  CHECK(wg != NULL && mma != NULL, "a wgmma and an mma moe kernel in the manifest");
  if (wg != NULL && mma != NULL) {
    CHECK(mgen__moe_a_sorted_pays(wg, 8 * 64, 8, 8, 4096), "wgmma, 64 rows an expert, n 4096");
    CHECK(!mgen__moe_a_sorted_pays(mma, 8 * 64, 8, 8, 4096), "mma: never");
    CHECK(!mgen__moe_a_sorted_pays(wg, 8 * 63, 8, 8, 4096), "63 rows an expert");
    CHECK(!mgen__moe_a_sorted_pays(wg, 8 * 64, 8, 8, 4032), "n 4032");
    CHECK(mgen__moe_a_sorted_pays(wg, 256 * 128, 256, 64, 7168), "a quarter of 256 experts here");
    CHECK(!mgen__moe_a_sorted_pays(wg, 256 * 48, 256, 64, 7168), "48 rows an expert here");
    CHECK(!mgen__moe_a_sorted_pays(wg, 1000, 0, 0, 7168), "no experts");
    test_unsorted_rule(mma, wg);
  }
  printf("test_moe_sorted: %d GEMMs sent to the permutation, %d gathered\n", sent, kept);
  CHECK(sent >= 5 && kept >= 5, "the A/B tests both sides of the rule (%d sent, %d gathered)", sent, kept);
  return check_exit("test_moe_sorted");
}
