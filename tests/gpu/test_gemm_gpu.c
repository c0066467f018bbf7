/* test_gemm_gpu.c -- every kernel of the built-in table against an FP64 reference GEMM over
 * the dequantized weights, on fresh random data each run (the seed is printed;
 * MGEN_TEST_SEED repeats a run).
 *
 * For each (K, N) shape, activation type (FP16, BF16) and group size some kernel implements:
 * random A (M_max x K, of the act), codes and scales (of the act) are packed with mgen_pack,
 * dequantized exactly (ref_gemm.cu, one function per weight format), and the FP64 reference
 * is computed once for M_max rows; every kernel of that (act, format, group) then runs every
 * M of the list into an output poisoned with 0xFFFF (a NaN in FP16 and BF16), and a GPU check
 * compares the first M rows with the reference, counts elements left unwritten and elements
 * changed past the M x N result. Each kernel also runs twice on a few cases, bit-identical
 * outputs required, and mgen_gemm's default choice runs every case too. Kernels of a weight
 * format this test has no reference for are skipped, and the summary says so.
 *
 * Error bound per element, with u the unit roundoff of the activation type (FP16: 11-bit
 * significand, u = 2^-11; BF16: 8-bit significand, 7 bits stored, u = 2^-8):
 *     |c - ref| <= 2u |ref| + (2u + K 2^-22) abs
 *     FP16: 2^-10 |ref| + (2^-10 + K 2^-22) abs      BF16: 2^-7 |ref| + (2^-7 + K 2^-22) abs
 * abs = sum_k |a_k w_k| (FP64), w = (q - 8) s exactly. The kernel differs from ref by
 *   - output rounding to the act (round to nearest even): u |c| (2u |ref| leaves room for
 *     the terms below);
 *   - grouped scales: the kernel multiplies each dequantized weight by its scale in the act
 *     (__hmul2, one rounding, relative u; tests/runtime/test_dequant.c checks every scale and
 *     finds u attained to within 2%, so for BF16 it is 2^-8, not 2^-9), which moves the sum
 *     by at most u abs; per channel the scale multiplies the FP32 sum instead (2^-24
 *     relative, inside the room of the first term);
 *   - FP32 accumulation: the products are exact in the MMA (FP16: 11 x 11 bits, BF16: 8 x 8
 *     bits, both within FP32's 24), the K additions cost at most K 2^-24 abs (2^-23 where the
 *     MMA unit truncates); K 2^-22 leaves a factor of 2 for that and for FP32 split-K
 *     reductions.
 * test_dequant.c checks this bound against a sequential emulation of both types.
 *
 * Constraints: N % tile_n == 0, K % tile_k == 0, K % group == 0 (kernels that cannot run a
 * shape skip it; in the full run each kernel must run both big shapes and an odd M).
 * Run:  build/tests/test_gemm_gpu                (ctest -L gpu; seconds on an H200)
 *       compute-sanitizer --error-exitcode 1 build/tests/test_gemm_gpu --quick
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "gpu_util.h"
#include "ref.h"
#include "ref_gemm.h"
#include "rng.h"

typedef struct shape {
  int k, n, big; /* big: one of the two LLM-sized shapes every kernel must run */
} shape;

static const shape full_shapes[] = {{4096, 12288, 1}, {11008, 4096, 2}, {256, 256, 0},
                                    {1024, 512, 0},   {768, 384, 0},    {128, 1024, 0}};
/* Quick: small shapes, plus one with more work units than SMs (grids past sm_count,
 * split columns) so that compute-sanitizer sees the cross-block reduction at full width. */
static const shape quick_shapes[] = {{256, 256, 0}, {768, 384, 0}, {128, 1024, 0}, {1024, 2048, 0}};
static const int full_ms[] = {1, 2, 3, 7, 8, 15, 16, 17, 33, 64, 100, 128, 256, 1024};
static const int quick_ms[] = {1, 7, 16, 17, 64, 100};
static const int determinism_ms[] = {7, 100};
static const int acts[] = {MGEN_ACT_F16, MGEN_ACT_BF16};
#define GUARD_ELEMS 4096
#define MAX_GROUPS 16

typedef struct kernel_stats {
  int runs, failures, big_mask, odd_m;
  double max_ratio;
} kernel_stats;

/* Device data of one (shape, act, format, group) problem. */
typedef struct problem {
  int k, n, group, m_max;
  uint16_t *d_a;
  mgen_weights w;
  double *d_ref, *d_abs;
  uint16_t *d_c, *d_c2;
  size_t c_cap;
  gemm_check *d_check;
} problem;

static mgen_ctx *ctx;
static cudaStream_t stream;
static kernel_stats *stats;

/* ---------------------------------------------------------------- weight formats */

/* Packs p->w (its wfmt, act, group, n, k set; buffers allocated) from the codes d_codes
 * (n x k bytes, 0..15) and random scales, and writes the exact weights to d_wdq. */
typedef void (*prepare_fn)(rng *r, problem *p, const uint8_t *d_codes, float *d_wdq);

/* u4b8: scales of the act, uniform in [0.002, 0.02] (|C| around 1 for |A| <= 1). */
static void prepare_u4b8(rng *r, problem *p, const uint8_t *d_codes, float *d_wdq) {
  const int act = p->w.act, n = p->n, k = p->k, rows = ref_scale_rows(k, p->group);
  uint16_t *scales = malloc(sizeof *scales * (size_t)rows * n);
  const size_t bytes = sizeof *scales * (size_t)rows * n;
  for (size_t i = 0; i < (size_t)rows * n; i++)
    scales[i] = act_from_double(act, rng_uniform(r, 0.002, 0.02));
  uint16_t *d_scales = gpu_alloc(bytes);
  gpu_upload(d_scales, scales, bytes);
  MGEN_CHECK(ctx, mgen_pack(ctx, d_codes, d_scales, &p->w, stream));
  CUDA_CHECK((cudaError_t)gpu_dequant(MGEN_WFMT_U4B8, act, d_codes, d_scales, n, k, p->group,
                                      d_wdq, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaFree(d_scales));
  free(scales);
}

/* The formats this test feeds; a new one adds a row here and its struct in ref_gemm.cu. */
static const struct {
  int wfmt;
  const char *name;
  prepare_fn prepare;
} formats[] = {{MGEN_WFMT_U4B8, "u4b8", prepare_u4b8}};

static prepare_fn prepare_of(int wfmt, int act) {
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (formats[i].wfmt == wfmt && gpu_ref_knows(wfmt, act)) return formats[i].prepare;
  return NULL;
}

/* ---------------------------------------------------------------- running and checking */

static double ratio_of(unsigned long long bits) {
  double r;
  memcpy(&r, &bits, sizeof r);
  return r;
}

/* Synchronizes; a device fault poisons the context, so it ends the test naming the case. */
static void sync_case(const char *what, const problem *p, int m) {
  cudaError_t err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) {
    fprintf(stderr, "FAIL %s m=%d n=%d k=%d %s group=%d: %s (%s)\n", what, m, p->n, p->k,
            act_name(p->w.act), p->group, cudaGetErrorString(err), cudaGetErrorName(err));
    exit(1);
  }
}

/* Runs one GEMM (the named kernel, or mgen_gemm's choice for name == NULL) into `c` and
 * checks it; returns the error ratio, or -1 if the call failed. */
static double run_case(const problem *p, const char *name, int m, uint16_t *c) {
  const char *label = name ? name : "mgen_gemm (default)";
  const int act = p->w.act;
  CUDA_CHECK(cudaMemsetAsync(c, 0xFF, p->c_cap * sizeof *c, stream));
  mgen_status st = name ? mgen_gemm_kernel(ctx, name, p->w.act, m, p->d_a, &p->w, c, stream)
                        : mgen_gemm(ctx, p->w.act, m, p->d_a, &p->w, c, stream);
  CHECK(st == MGEN_OK, "%s m=%d n=%d k=%d %s group=%d: %s: %s", label, m, p->n, p->k,
        act_name(act), p->group, mgen_status_str(st), mgen_ctx_last_error(ctx));
  if (st != MGEN_OK) return -1.0;
  gemm_check init = {0, 0, 0, ~0ull, 0}, res;
  CUDA_CHECK(cudaMemcpyAsync(p->d_check, &init, sizeof init, cudaMemcpyHostToDevice, stream));
  CUDA_CHECK((cudaError_t)gpu_check_gemm(act, m, p->n, p->k, c, p->c_cap, p->d_ref, p->d_abs,
                                         p->d_check, stream));
  CUDA_CHECK(cudaMemcpyAsync(&res, p->d_check, sizeof res, cudaMemcpyDeviceToHost, stream));
  sync_case(label, p, m);
  const double ratio = ratio_of(res.max_ratio_bits);
  CHECK(res.bad == 0 && res.unwritten == 0 && res.guard_bad == 0,
        "%s m=%d n=%d k=%d %s group=%d: %llu over the bound (max ratio %.3g), %llu unwritten, "
        "%llu written past m x n",
        label, m, p->n, p->k, act_name(act), p->group, res.bad, ratio, res.unwritten, res.guard_bad);
  if (res.bad != 0) {
    const size_t i = (size_t)res.first_bad;
    uint16_t cv;
    double rv, av, rel, absc;
    CUDA_CHECK(cudaMemcpy(&cv, c + i, sizeof cv, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&rv, p->d_ref + i, sizeof rv, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&av, p->d_abs + i, sizeof av, cudaMemcpyDeviceToHost));
    gpu_gemm_bound(act, p->k, &rel, &absc);
    fprintf(stderr, "  first bad element: row %zu col %zu: c=%.6g (%s 0x%04x) ref=%.6g abs=%.6g "
            "bound=%.3g\n", i / (size_t)p->n, i % (size_t)p->n, act_to_double(act, cv),
            act_name(act), cv, rv, av, rel * fabs(rv) + absc * av);
  }
  return ratio;
}

/* The same GEMM twice: bit-identical outputs. */
static void check_determinism(const problem *p, const char *name, int m) {
  if (run_case(p, name, m, p->d_c) < 0 || run_case(p, name, m, p->d_c2) < 0) return;
  unsigned long long diff = 0, *d_diff = gpu_alloc(sizeof diff);
  CUDA_CHECK(cudaMemsetAsync(d_diff, 0, sizeof diff, stream));
  CUDA_CHECK((cudaError_t)gpu_count_diff(p->d_c, p->d_c2, (size_t)m * p->n, d_diff, stream));
  CUDA_CHECK(cudaMemcpyAsync(&diff, d_diff, sizeof diff, cudaMemcpyDeviceToHost, stream));
  sync_case(name, p, m);
  CHECK(diff == 0, "%s m=%d n=%d k=%d: two runs differ in %llu elements", name, m, p->n, p->k, diff);
  CUDA_CHECK(cudaFree(d_diff));
}

/* This device runs it, and MGEN_TEST_KERNELS (if set) selects it. */
static int runs_here(const mgen_kernel_desc *d) {
  return mgen_kernel_runs_on(d, mgen_ctx_sm(ctx)) && gpu_kernel_selected(d->name);
}

static int same_key(const mgen_kernel_desc *d, const problem *p) {
  return d->act == (int)p->w.act && d->wfmt == (int)p->w.wfmt && d->group == p->group;
}

static void run_problem(const problem *p, const int *ms, size_t n_ms, int big) {
  const mgen_table *table = mgen_builtin_table();
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (!same_key(d, p) || !runs_here(d)) continue;
    if (p->n % d->tile_n != 0 || p->k % d->tile_k != 0) continue;
    for (size_t j = 0; j < n_ms; j++) {
      const double ratio = run_case(p, d->name, ms[j], p->d_c);
      stats[i].runs++;
      stats[i].failures += ratio < 0.0 || !(ratio <= 1.0);
      if (ratio > stats[i].max_ratio) stats[i].max_ratio = ratio;
      stats[i].odd_m |= ms[j] % 2 == 1;
    }
    stats[i].big_mask |= big;
    for (size_t j = 0; j < sizeof determinism_ms / sizeof determinism_ms[0]; j++)
      check_determinism(p, d->name, determinism_ms[j]);
  }
  /* The default choice: a kernel of the right key, and a correct result. */
  for (size_t j = 0; j < n_ms; j++) {
    const char *choice = NULL;
    mgen_status st = mgen_gemm_choice(ctx, p->w.act, ms[j], &p->w, &choice);
    CHECK(st == MGEN_OK, "choice m=%d n=%d k=%d %s group=%d: %s", ms[j], p->n, p->k,
          act_name(p->w.act), p->group, mgen_ctx_last_error(ctx));
    if (st != MGEN_OK) continue;
    const int index = mgen_table_find(table, choice);
    CHECK(index >= 0 && same_key(&table->kernels[index], p), "choice %s for %s group %d", choice,
          act_name(p->w.act), p->group);
    run_case(p, NULL, ms[j], p->d_c);
  }
}

/* The distinct groups of the table's kernels of (act, wfmt) this device runs. */
static int groups_in_table(int act, int wfmt, int *groups) {
  const mgen_table *table = mgen_builtin_table();
  int count = 0;
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (d->act != act || d->wfmt != wfmt || !runs_here(d)) continue;
    int seen = 0;
    for (int g = 0; g < count; g++) seen |= groups[g] == d->group;
    if (!seen && count < MAX_GROUPS) groups[count++] = d->group;
  }
  return count;
}

/* Every (act, format, group) of the table on one (K, N): A per act, codes shared. */
static void run_shape(rng *r, const shape *s, const int *ms, size_t n_ms) {
  int m_max = 0;
  for (size_t j = 0; j < n_ms; j++) m_max = ms[j] > m_max ? ms[j] : m_max;
  const int n = s->n, k = s->k;
  const double t0 = gpu_seconds();

  uint16_t *a = malloc(sizeof *a * (size_t)m_max * k);
  uint8_t *codes = malloc((size_t)n * k);
  for (size_t i = 0; i < (size_t)n * k; i += 16) {
    uint64_t bits = rng_next(r);
    for (int b = 0; b < 16; b++) codes[i + b] = (uint8_t)((bits >> (4 * b)) & 0xf);
  }
  problem p = {.k = k, .n = n, .m_max = m_max, .c_cap = (size_t)m_max * n + GUARD_ELEMS};
  p.d_a = gpu_alloc(sizeof *a * (size_t)m_max * k);
  uint8_t *d_codes = gpu_alloc((size_t)n * k);
  float *d_wdq = gpu_alloc(sizeof(float) * (size_t)n * k);
  p.d_ref = gpu_alloc(sizeof(double) * (size_t)m_max * n);
  p.d_abs = gpu_alloc(sizeof(double) * (size_t)m_max * n);
  p.d_c = gpu_alloc(sizeof(uint16_t) * p.c_cap);
  p.d_c2 = gpu_alloc(sizeof(uint16_t) * p.c_cap);
  p.d_check = gpu_alloc(sizeof(gemm_check));
  gpu_upload(d_codes, codes, (size_t)n * k);

  for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++) {
    const int act = acts[ai];
    for (size_t i = 0; i < (size_t)m_max * k; i++) a[i] = act_from_double(act, rng_uniform(r, -1.0, 1.0));
    gpu_upload(p.d_a, a, sizeof *a * (size_t)m_max * k);
    for (size_t fi = 0; fi < sizeof formats / sizeof formats[0]; fi++) {
      const int wfmt = formats[fi].wfmt;
      const prepare_fn prepare = prepare_of(wfmt, act);
      int groups[MAX_GROUPS];
      const int n_groups = prepare ? groups_in_table(act, wfmt, groups) : 0;
      for (int g = 0; g < n_groups; g++) {
        const int group = groups[g];
        if (group && k % group) continue;
        p.group = group;
        p.w = (mgen_weights){.wfmt = (mgen_wfmt)wfmt, .act = (mgen_act)act,
                             .scheme = MGEN_SCHEME_GROUP, .group = group, .n = n, .k = k};
        size_t qbytes, sbytes;
        MGEN_CHECK(ctx, mgen_weights_bytes(&p.w, &qbytes, &sbytes));
        p.w.d_q = gpu_alloc(qbytes);
        p.w.d_scales = gpu_alloc(sbytes);
        prepare(r, &p, d_codes, d_wdq);
        CUDA_CHECK((cudaError_t)gpu_ref_gemm(act, m_max, n, k, p.d_a, d_wdq, p.d_ref, p.d_abs, stream));
        sync_case("reference", &p, m_max);

        run_problem(&p, ms, n_ms, s->big);

        CUDA_CHECK(cudaFree(p.w.d_q));
        CUDA_CHECK(cudaFree(p.w.d_scales));
      }
    }
  }
  printf("test_gemm_gpu: K=%d N=%d done in %.1f s\n", k, n, gpu_seconds() - t0);
  fflush(stdout);
  CUDA_CHECK(cudaFree(p.d_a));
  CUDA_CHECK(cudaFree(d_codes));
  CUDA_CHECK(cudaFree(d_wdq));
  CUDA_CHECK(cudaFree(p.d_ref));
  CUDA_CHECK(cudaFree(p.d_abs));
  CUDA_CHECK(cudaFree(p.d_c));
  CUDA_CHECK(cudaFree(p.d_c2));
  CUDA_CHECK(cudaFree(p.d_check));
  free(a);
  free(codes);
}

int main(int argc, char **argv) {
  gpu_require_device("test_gemm_gpu");
  const int quick = gpu_quick_mode(argc, argv);
  rng r;
  rng_seed(&r, rng_test_seed("test_gemm_gpu"));
  const double t0 = gpu_seconds();

  const mgen_table *table = mgen_builtin_table();
  CHECK(table->count > 0, "the built-in table is empty (%s): nothing to test",
        table->generator ? table->generator : "?");
  if (table->count == 0) return check_exit("test_gemm_gpu");
  MGEN_CHECK(ctx, mgen_ctx_create(&ctx, table, NULL));
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  stats = calloc(table->count, sizeof *stats);

  const shape *shapes = quick ? quick_shapes : full_shapes;
  const size_t n_shapes = quick ? sizeof quick_shapes / sizeof quick_shapes[0]
                                : sizeof full_shapes / sizeof full_shapes[0];
  const int *ms = quick ? quick_ms : full_ms;
  const size_t n_ms = quick ? sizeof quick_ms / sizeof quick_ms[0] : sizeof full_ms / sizeof full_ms[0];
  for (size_t s = 0; s < n_shapes; s++) run_shape(&r, &shapes[s], ms, n_ms);

  int tested = 0, skipped = 0;
  printf("%-52s %6s %9s\n", "kernel", "cases", "max err/bound");
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (!runs_here(d)) {
      printf("%-52s skipped: %s\n", d->name,
             gpu_kernel_selected(d->name) ? "needs a newer GPU" : "not in MGEN_TEST_KERNELS");
      continue;
    }
    if (prepare_of(d->wfmt, d->act) == NULL) {
      const char *wfmt = d->wfmt == MGEN_WFMT_U4B8    ? "u4b8"
                         : d->wfmt == MGEN_WFMT_FE2M1 ? "fe2m1"
                                                      : "?";
      const int known_act = d->act == MGEN_ACT_F16 || d->act == MGEN_ACT_BF16;
      printf("%-52s skipped: this test has no reference for %s weights with %s activations "
             "yet\n", d->name, wfmt, known_act ? act_name(d->act) : "unknown");
      skipped++;
      continue;
    }
    tested++;
    printf("%-52s %6d %9.3g%s\n", d->name, stats[i].runs, stats[i].max_ratio,
           stats[i].failures ? "  FAIL" : "");
    CHECK(stats[i].runs > 0, "%s never ran", d->name);
    if (!quick)
      CHECK(stats[i].big_mask == 3 && stats[i].odd_m, "%s: ran big shapes 0x%x, odd m %d",
            d->name, stats[i].big_mask, stats[i].odd_m);
  }
  printf("test_gemm_gpu: %d kernels tested, %d skipped for want of a reference; %.1f s\n", tested,
         skipped, gpu_seconds() - t0);
  CUDA_CHECK(cudaStreamDestroy(stream));
  mgen_ctx_destroy(ctx);
  free(stats);
  return check_exit("test_gemm_gpu");
}
