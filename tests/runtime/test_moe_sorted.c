/* test_moe_sorted.c -- mgen_moe_gemm_a_sorted's rule (dispatch/select.h mgen__moe_a_sorted_pays:
 * where A permuted into the route's order, MGEN_MOE_A_SORTED, pays for mgen_moe_permute) against
 * the H200 A/B it was fitted to (bench_moe and bench_moe --a-sorted over the same points, each
 * GEMM's kernel the default choice, bench/notes/v51.md). At every GEMM of the A/B the rule
 * sends to the permutation, the permutation plus the GEMM on sorted A must not be slower than
 * the gather; at every other, the gather must be within `--slack` (default 1.06) of it: the
 * rule leaves no large gain behind. A change to the rule, its thresholds or the families' flag
 * that breaks either fails here, without a GPU.
 *
 *   test_moe_sorted MANIFEST AB.csv.xz [--slack S]
 *
 * AB: bench_moe rows (scenario, m, part, kernel, us, ..., experts, topk, n, k), the sorted
 * run's scenarios named SCENARIO+sorted; a point's time is its fastest row of each mode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
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

static void read_ab(const char *path) {
  static const char *const want[NCOLS] = {"scenario", "m", "part", "kernel", "us", "experts", "topk", "n"};
  char cmd[1024], line[LINE];
  snprintf(cmd, sizeof cmd, "xz -dc '%s'", path);
  FILE *f = popen(cmd, "r");
  CHECK(f != NULL, "%s: cannot run", cmd);
  if (f == NULL) return;
  int col[NCOLS], have = 0;
  while (fgets(line, sizeof line, f)) {
    char *field[24];
    line[strcspn(line, "\n")] = '\0';
    const int nf = split_fields(line, ',', field, 24);
    if (!strcmp(field[0], "scenario")) { /* a header (one per run) */
      have = find_columns(field, nf, want, NCOLS, col, path);
      continue;
    }
    if (!have) continue;
    const char *part = field[col[2]];
    if (strcmp(part, "gate_up") != 0 && strcmp(part, "down") != 0) continue;
    char scenario[48];
    snprintf(scenario, sizeof scenario, "%s", field[col[0]]);
    char *tag = strstr(scenario, "+sorted");
    const int sorted = tag != NULL;
    if (tag) *tag = '\0';
    point *p = point_of(scenario, atoi(field[col[1]]), part);
    CHECK(p != NULL, "%s: more than %d points", path, MAX_POINTS);
    if (p == NULL) break;
    const double us = atof(field[col[4]]);
    CHECK(us > 0, "%s: %s m=%d %s: time %s", path, scenario, p->m, part, field[col[4]]);
    if (us > 0 && (p->us[sorted] == 0 || us < p->us[sorted])) p->us[sorted] = us;
    if (!sorted) snprintf(p->kernel, sizeof p->kernel, "%s", field[col[3]]);
    p->experts = atoi(field[col[5]]), p->topk = atoi(field[col[6]]), p->n = atoi(field[col[7]]);
  }
  CHECK(pclose(f) == 0, "%s: xz failed", cmd);
}

int main(int argc, char **argv) {
  double slack = 1.06;
  if (argc < 3) {
    fprintf(stderr, "usage: test_moe_sorted MANIFEST AB.csv.xz [--slack S]\n");
    return 2;
  }
  if (argc == 5 && !strcmp(argv[3], "--slack")) slack = atof(argv[4]);
  const size_t nkernels = manifest_read(argv[1], kernels, names, MAX_KERNELS);
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
  }
  printf("test_moe_sorted: %d GEMMs sent to the permutation, %d gathered\n", sent, kept);
  CHECK(sent >= 5 && kept >= 5, "the A/B tests both sides of the rule (%d sent, %d gathered)", sent, kept);
  return check_exit("test_moe_sorted");
}
