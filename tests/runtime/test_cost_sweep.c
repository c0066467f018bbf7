/* test_cost_sweep.c -- the default choice (select.c + cost.c) against the H200 configuration
 * sweep: for every (key, M, K, N) of the sweep, the kernel the cost model picks among the
 * committed default set (generated/manifest.tsv) must be close to the fastest configuration swept.
 * This is the measurement the model was fitted to (bench/notes/cost-model.md, "Cost model v2"), so the test
 * holds the fit: a change to cost.c, select.c or the default set that makes the default choice
 * worse on the H200 fails here, without a GPU.
 *
 *   test_cost_sweep MANIFEST SWEEP.csv.xz ... [--times TIMES.csv.xz ...] [--sweeps SWEEP.csv.xz ...]
 *
 * Files are read in order; a later file's time of a kernel at a point replaces an earlier one's
 * (the best swept is the fastest time any file holds).
 *
 * Each SWEEP is a configuration sweep of the mma family (a coarse pass, then the near-best timed
 * fully; the inputs of bench/sweep_select.lua); each TIMES file holds fully timed rows of other
 * kernels (both families' candidates and default kernels) at the same points (H200, the 8 shapes,
 * up to 13 M); the files and their order are the test's registration in tests/CMakeLists.txt, the
 * newest sweep of a kernel read last. It also checks the model's mgen__mma_acc_scales against
 * every generated mma kernel's kAccScales. Figures: geometric-mean time of the pick over the
 * fastest swept configuration (the wgmma candidates outside the default set count there too: the
 * set's cover and the model's choice together), the pick over the fastest default kernel (the
 * model's own loss), and how many picks are within 3% of the fastest default kernel. Bounds:
 * 1.015, 1.011 and 87%, a little above what the committed set and constants give, so that
 * a change which makes the default choice worse fails. What each sweep file holds, and each
 * version's figures and bounds: bench/notes/cost-model.md. The W4A8 keys (rows of act e4m3 /
 * e4m3bf16: the e4m3 layout, the wgmma model's A8_* constants) are scored apart, on their own
 * sweep (sweep-h200-w4a8-v46), bounds 1.016, 1.010 and 87% (the fit: 1.0131, 1.0077, 89.8%;
 * with the 16-bit constants per 64-deep stage 1.0218, 1.0163, 79.0%: bench/notes/v46.md). MGEN_COST_SWEEP_LOG=1 prints a line
 * per point (key, M, K, N, pick, its time, the best default's, the best swept); =2 also each
 * default kernel of the key that runs the point: the model's time and the measured one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "manifest_table.h"
#include "families/family.h"
#include "dispatch/cost.h"
#include "dispatch/select.h"
#include "families/mma.h"
#include "formats/op.h"

enum { MAX_KERNELS = 1024, MAX_POINTS = 4096, HASH = 8192, LINE = 512 };

static mgen_kernel_desc kernels[MAX_KERNELS];
static char names[MAX_KERNELS][MANIFEST_NAME_SIZE];
static size_t nkernels;

/* One (key, M, K, N) of the sweep: the fastest swept kernel's latest fully timed row (below),
 * and each default kernel's time (coarse rows included: they are > 10% off the best, the pick
 * still pays them). */
typedef struct point {
  mgen__key key;
  int m, k, n, used;
  double best_us;
  double us[MAX_KERNELS];
} point;

static point *points;
static size_t npoints;
static int slots[HASH]; /* open addressing: point index + 1, 0 empty */

/* bench_gemm's act column: an activation type (f16, bf16: the format's default layout), or a
 * W4A8 row's (mgen__a8_act_name of its output type: e4m3, e4m3bf16): the e4m3 layout's key. */
static int key_act(const char *s, mgen__key *key) {
  key->act = mgen__act_parse(s, strlen(s));
  key->layout = mgen__wfmt_default_layout(key->wfmt);
  if (key->act < 0 && (key->act = mgen__a8_act_parse(s, strlen(s))) >= 0) key->layout = MGEN_LAYOUT_E4M3;
  return key->act >= 0;
}

static point *point_of(mgen__key key, int m, int k, int n) {
  unsigned h = (unsigned)key.act * 31u + (unsigned)key.wfmt * 7u + (unsigned)key.group + (unsigned)key.layout * 131u;
  h *= 2654435761u;
  h ^= (unsigned)m * 40503u + (unsigned)k * 9973u + (unsigned)n;
  for (unsigned i = h % HASH;; i = (i + 1) % HASH) {
    if (!slots[i]) {
      if (npoints == MAX_POINTS) return NULL;
      point *p = &points[npoints];
      memset(p, 0, sizeof *p);
      p->key = key, p->m = m, p->k = k, p->n = n, p->best_us = INFINITY;
      for (size_t j = 0; j < MAX_KERNELS; j++) p->us[j] = -1;
      slots[i] = (int)++npoints;
      return p;
    }
    point *p = &points[slots[i] - 1];
    if (p->key.act == key.act && p->key.wfmt == key.wfmt && p->key.group == key.group &&
        p->key.layout == key.layout && p->m == m && p->k == k && p->n == n)
      return p;
  }
}

/* Every swept kernel's latest row at each point, its name interned: the best swept is the
 * fastest of these, not the fastest row any file holds, so a kernel swept again in a later file
 * counts with its new time only. A minimum over every file kept the older files' fastest rows
 * of kernels swept again on another day's clocks: with the whole wgmma space re-timed
 * (bench/notes/v30.md item 1) the best default at M >= 512 read 2.8% behind a "best" that no current row
 * holds. A coarse row (the sweep's first pass, > 10% off that sweep's best) replaces an older
 * full row too, and is never the best. */
enum { NAME_HASH = 1 << 15, TIME_HASH = 1 << 21 };
typedef struct swept {
  int point, name; /* point index + 1 (0: empty slot), interned name */
  int full;        /* a fully timed row (not the coarse pass) */
  double us;
} swept;
static char *swept_names[NAME_HASH];
/* An interned name's default kernel, looked up once: 2 + its index (1: not a default kernel),
 * 0 until looked up. */
static int default_of_name[NAME_HASH];
static size_t nswept_names, nswept;
static swept *swept_rows; /* TIME_HASH slots */

static unsigned hash_text(const char *s) {
  unsigned h = 2166136261u;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
  return h;
}

static int intern_name(const char *name) {
  for (unsigned i = hash_text(name) % NAME_HASH;; i = (i + 1) % NAME_HASH) {
    if (swept_names[i] == NULL) {
      if (nswept_names + 1 >= NAME_HASH / 2 || (swept_names[i] = strdup(name)) == NULL) return -1;
      nswept_names++;
      return (int)i;
    }
    if (!strcmp(swept_names[i], name)) return (int)i;
  }
}

/* Records a kernel's row at point p (index), replacing the row an earlier file gave. */
static int record_swept(size_t p, int name, double us, int full) {
  if (nswept + 1 >= TIME_HASH / 2) return 0;
  for (unsigned i = ((unsigned)p * 2654435761u ^ (unsigned)name * 40503u) % TIME_HASH;;
       i = (i + 1) % TIME_HASH) {
    swept *s = &swept_rows[i];
    if (s->point == 0) nswept++;
    else if (s->point != (int)p + 1 || s->name != name) continue;
    *s = (swept){.point = (int)p + 1, .name = name, .full = full, .us = us};
    return 1;
  }
}

/* Each point's best: its fastest kernel's latest row, where that row is fully timed. */
static void settle_best(void) {
  for (size_t i = 0; i < TIME_HASH; i++) {
    const swept *s = &swept_rows[i];
    if (s->point != 0 && s->full && s->us < points[s->point - 1].best_us)
      points[s->point - 1].best_us = s->us;
  }
}

static int kernel_index(const char *name) {
  for (size_t i = 0; i < nkernels; i++)
    if (!strcmp(names[i], name)) return (int)i;
  return -1;
}

/* A sweep CSV (through xz -dc), its columns found by the header's names: act, fmt, kernel, M,
 * K, N, mgen_us and reps are read, any other column is skipped (bench_gemm's own CSV has gpu,
 * cublas_us, roofline fractions...; the older sweep files hold only those nine). */
static void read_sweep(const char *path, int coarse) {
  enum { ACT, FMT, KERNEL, M, K, N, US, REPS, NCOLS, MAXF = 32 };
  static const char *want[NCOLS] = {"act", "fmt", "kernel", "M", "K", "N", "mgen_us", "reps"};
  char cmd[1024], line[LINE];
  int col[NCOLS];
  snprintf(cmd, sizeof cmd, "xz -dc '%s'", path);
  FILE *f = popen(cmd, "r");
  CHECK(f != NULL, "cannot run %s", cmd);
  if (!f) return;
  int header = 1, min_reps = 1 << 30, gpu_col = -1;
  while (fgets(line, sizeof line, f)) {
    char *field[MAXF];
    const int nf = split_fields(line, ',', field, MAXF);
    if (header) {
      header = 0;
      /* Optional (bench_gemm writes it): the card. The fit is an H200's, so is every file. */
      gpu_col = column_of(field, nf, "gpu");
      if (!find_columns(field, nf, want, NCOLS, col, path)) break;
      continue;
    }
    int ok = 1;
    for (int c = 0; c < NCOLS; c++) ok &= col[c] < nf;
    if (!ok) {
      CHECK(0, "%s: short row (%d fields)", path, nf);
      break;
    }
    if (gpu_col >= 0 && (gpu_col >= nf || strstr(field[gpu_col], "H200") == NULL)) {
      CHECK(0, "%s: a row measured on %s, not an H200", path, gpu_col < nf ? field[gpu_col] : "?");
      break;
    }
    const char *act = field[col[ACT]], *fmt = field[col[FMT]], *kernel = field[col[KERNEL]];
    const int m = atoi(field[col[M]]), k = atoi(field[col[K]]), n = atoi(field[col[N]]);
    const int reps = atoi(field[col[REPS]]);
    const double us = atof(field[col[US]]);
    if (m <= 0 || k <= 0 || n <= 0 || reps <= 0 || !(us > 0)) {
      CHECK(0, "%s: bad row for %s (M %d K %d N %d us %g reps %d)", path, kernel, m, k, n, us, reps);
      break;
    }
    /* bench_gemm's format names: <wfmt>_<short name> (formats.h), e.g. u4b8_g128, fe2m1_nvfp4 */
    mgen__key key = {.op = MGEN_OP_DENSE}; /* the sweeps are the dense op's */
    if (mgen__format_name_parse(MGEN__FORMAT_BENCH, fmt, &key.wfmt, &key.scheme, &key.group) != 0) {
      CHECK(0, "%s: unknown format %s", path, fmt);
      break;
    }
    if (!key_act(act, &key)) {
      CHECK(0, "%s: unknown act %s", path, act);
      break;
    }
    point *p = point_of(key, m, k, n);
    if (!p) { CHECK(0, "too many points"); break; }
    if (reps < min_reps) min_reps = reps;
    const int name = intern_name(kernel);
    if (name < 0 || !record_swept((size_t)(p - points), name, us, reps > 2)) { /* 2: the coarse pass */
      CHECK(0, "%s: more kernel names or rows than the tables hold", path);
      break;
    }
    if (default_of_name[name] == 0) default_of_name[name] = kernel_index(kernel) + 2;
    const int i = default_of_name[name] - 2;
    if (i >= 0) p->us[i] = us;
  }
  CHECK(pclose(f) == 0, "%s: xz failed", cmd);
  if (coarse) CHECK(min_reps == 2, "%s: the sweep's coarse rows have 2 reps (got %d)", path, min_reps);
  else CHECK(min_reps > 2, "%s: every row fully timed (got a row of %d reps)", path, min_reps);
}

/* The cost model's statement of which mma tiles scale their FP32 sums once per group
 * (mgen__mma_acc_scales, families/mma.h) against each generated mma kernel's own kAccScales
 * (<manifest's directory>/kernels/<name>.cu, written from templates/mma/spec.lua), and the
 * loads in flight its reduction term assumes (MGEN_MMA_REDUCE_LOADS, _CHUNK) against the
 * kernels' kRedLoads and kRedMaxChunk (the family's body, include/mma/mgen_mma_body.cuh, which
 * every mma kernel compiles). */
static void check_acc_rule(const char *manifest) {
  char dir[1024], path[1200], line[LINE];
  snprintf(dir, sizeof dir, "%s", manifest);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = '\0';
  else snprintf(dir, sizeof dir, ".");
  snprintf(path, sizeof path, "%s/include/mma/mgen_mma_body.cuh", dir);
  FILE *body = fopen(path, "r");
  CHECK(body != NULL, "cannot read %s", path);
  int loads = -1, chunk = -1;
  while (body && (loads < 0 || chunk < 0) && fgets(line, sizeof line, body))
    if (sscanf(line, "constexpr int kRedLoads = %d;", &loads) != 1)
      sscanf(line, "constexpr int kRedMaxChunk = %d;", &chunk);
  if (body) fclose(body);
  CHECK(loads == MGEN_MMA_REDUCE_LOADS && chunk == MGEN_MMA_REDUCE_CHUNK,
        "%s: kRedLoads %d, kRedMaxChunk %d; families/mma.h says %d, %d", path, loads, chunk,
        MGEN_MMA_REDUCE_LOADS, MGEN_MMA_REDUCE_CHUNK);
  int checked = 0, acc = 0;
  for (size_t i = 0; i < nkernels; i++) {
    if (kernels[i].family != MGEN_FAMILY_MMA) continue;
    snprintf(path, sizeof path, "%s/kernels/%s.cu", dir, names[i]);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot read %s", path);
    if (!f) continue;
    int text = -1;
    while (text < 0 && fgets(line, sizeof line, f)) {
      if (strstr(line, "constexpr bool kAccScales = true;")) text = 1;
      else if (strstr(line, "constexpr bool kAccScales = false;")) text = 0;
    }
    fclose(f);
    CHECK(text >= 0, "%s: no kAccScales line", path);
    CHECK(text < 0 || text == mgen__mma_acc_scales(&kernels[i]),
          "%s: kAccScales %d in the kernel, mgen__mma_acc_scales says %d", names[i], text,
          mgen__mma_acc_scales(&kernels[i]));
    checked++;
    acc += text == 1;
  }
  CHECK(checked >= 100 && acc >= 4, "kAccScales checked on %d mma kernels, %d of them true", checked, acc);
}

int main(int argc, char **argv) {
  if (argc < 3 || !strcmp(argv[2], "--times")) {
    fprintf(stderr, "usage: test_cost_sweep MANIFEST SWEEP.csv.xz ... [--times TIMES.csv.xz ...] [--sweeps SWEEP.csv.xz ...]\n");
    return 2;
  }
  points = malloc(MAX_POINTS * sizeof *points);
  swept_rows = calloc(TIME_HASH, sizeof *swept_rows);
  if (!points || !swept_rows) return 1;
  nkernels = manifest_read(argv[1], kernels, names, MAX_KERNELS);
  check_acc_rule(argv[1]);
  int coarse = 1; /* sweeps until --times, fully timed files until --sweeps; later files win */
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--times")) coarse = 0;
    else if (!strcmp(argv[i], "--sweeps")) coarse = 1;
    else read_sweep(argv[i], coarse);
  }
  settle_best();
  CHECK(nkernels >= 12 && npoints >= 1000, "%zu kernels, %zu points", nkernels, npoints);

  /* An H200 as libmgen's context describes it: what CUDA reports for it. */
  const mgen__device h200 = mgen__device_model(90, 132, 1980000, 3201000, 6144, 62914560);
  const mgen_table table = {kernels, nkernels, 0, "generated/manifest.tsv"};
  /* The figures per kind of key, [0] W4A16, [1] W4A8 (the e4m3 layout: its own sweep and its own
   * model constants, families/wgmma.c), each with its bounds below. */
  double log_loss[2] = {0, 0}, log_model[2] = {0, 0};
  int near_default[2] = {0, 0}, scored[2] = {0, 0};
  for (size_t i = 0; i < npoints; i++) {
    point *p = &points[i];
    int pick = -1;
    mgen_status st = mgen__select(&table, &h200, &p->key, p->m, p->n, p->k, &pick, NULL, 0);
    CHECK(st == MGEN_OK && pick >= 0, "no default for M=%d K=%d N=%d", p->m, p->k, p->n);
    if (st != MGEN_OK || pick < 0) continue;
    CHECK(p->us[pick] > 0 && isfinite(p->best_us), "%s M=%d K=%d N=%d: not in the sweep",
          names[pick], p->m, p->k, p->n);
    if (!(p->us[pick] > 0 && isfinite(p->best_us))) continue;
    double best_default = INFINITY;
    for (size_t j = 0; j < nkernels; j++)
      if (p->us[j] > 0 && mgen__key_matches(&kernels[j], &p->key) && p->us[j] < best_default)
        best_default = p->us[j];
    const char *log_level = getenv("MGEN_COST_SWEEP_LOG");
    if (log_level != NULL) /* one line per point, for fitting by hand */
      printf("point %d %d %d %d %d %d %s %.3f %.3f %.3f\n", p->key.act, p->key.wfmt, p->key.group, p->m, p->k, p->n,
             names[pick], p->us[pick], best_default, p->best_us);
    if (log_level != NULL && !strcmp(log_level, "2")) /* and each default kernel: model, measured */
      for (size_t j = 0; j < nkernels; j++)
        if (mgen__key_matches(&kernels[j], &p->key) && mgen__kernel_runs(&kernels[j], h200.sm) &&
            mgen__can_implement(&kernels[j], p->m, p->n, p->k, NULL, 0))
          printf("  cand %s model %.3f us measured %.3f\n", names[j],
                 mgen__cost_ns(&kernels[j], p->m, p->n, p->k, &h200) / 1e3, p->us[j]);
    const int a8 = mgen__layout_a8(p->key.layout);
    log_loss[a8] += log(p->us[pick] / p->best_us);
    log_model[a8] += log(p->us[pick] / best_default);
    near_default[a8] += p->us[pick] <= best_default * 1.03;
    scored[a8]++;
  }
  /* Both families' models know that a launch streams its packed weights at least once: on a
   * device with half the H200's bandwidth, no default kernel of any key is predicted faster
   * than n k / 2 bytes at that bandwidth. The wgmma model once had no memory term: it did not
   * slow down with an H100's bandwidth while the mma model did, and put decode (M <= 16) on
   * wgmma tiles 1.3-1.6x slower than the mma ones there (bench/notes/v14.md). */
  mgen__device half_bw = h200;
  half_bw.mem_bw /= 2;
  int bw_checked = 0;
  for (size_t i = 0; i < npoints; i++) {
    const point *p = &points[i];
    const double floor_ns = (double)p->n * p->k / 2.0 / half_bw.mem_bw * 1e9;
    for (size_t j = 0; j < nkernels; j++) {
      if (!(p->us[j] > 0) || !mgen__key_matches(&kernels[j], &p->key)) continue;
      const double ns = mgen__cost_ns(&kernels[j], p->m, p->n, p->k, &half_bw);
      CHECK(ns >= floor_ns, "%s M=%d K=%d N=%d at half the bandwidth: %.0f ns < the weights' %.0f ns",
            names[j], p->m, p->k, p->n, ns, floor_ns);
      bw_checked++;
    }
  }
  CHECK(bw_checked >= (int)npoints, "bandwidth floor: %d kernel-points", bw_checked);
  double geo[2], model[2];
  for (int a8 = 0; a8 < 2; a8++) {
    geo[a8] = scored[a8] ? exp(log_loss[a8] / scored[a8]) : INFINITY;
    model[a8] = scored[a8] ? exp(log_model[a8] / scored[a8]) : INFINITY;
  }
  printf("test_cost_sweep: %d points, %zu default kernels: pick / fastest swept = %.4f "
         "(geometric mean); within 3%% of the fastest default: %d (%.1f%%); pick / fastest "
         "default = %.4f\n",
         scored[0], nkernels, geo[0], near_default[0], 100.0 * near_default[0] / (scored[0] ? scored[0] : 1),
         model[0]);
  /* (worded apart: bench/fit_cost_models.py reads the first line's figures, or with --a8 these) */
  printf("test_cost_sweep: W4A8, %d points: pick over the fastest swept %.4f (geometric mean); "
         "within 3%% of the fastest default %d (%.1f%%); pick over the fastest default %.4f\n",
         scored[1], geo[1], near_default[1], 100.0 * near_default[1] / (scored[1] ? scored[1] : 1), model[1]);
  CHECK(scored[0] + scored[1] == (int)npoints, "every point scored (%d of %zu)", scored[0] + scored[1], npoints);
  CHECK(geo[0] <= 1.015, "geometric-mean loss %.4f > 1.015", geo[0]);
  CHECK(model[0] <= 1.011, "the model's own loss (pick over the fastest default) %.4f > 1.011", model[0]);
  CHECK(near_default[0] >= 0.87 * scored[0], "%d of %d picks within 3%% of the best default", near_default[0],
        scored[0]);
  CHECK(scored[1] >= 150, "W4A8: %d points (its sweep: 176)", scored[1]);
  CHECK(geo[1] <= 1.016, "W4A8: geometric-mean loss %.4f > 1.016", geo[1]);
  CHECK(model[1] <= 1.010, "W4A8: the model's own loss %.4f > 1.010", model[1]);
  CHECK(near_default[1] >= 0.87 * scored[1], "W4A8: %d of %d picks within 3%% of the best default",
        near_default[1], scored[1]);
  free(points);
  free(swept_rows);
  for (size_t i = 0; i < NAME_HASH; i++) free(swept_names[i]);
  return check_exit("test_cost_sweep");
}
