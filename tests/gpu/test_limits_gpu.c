/* test_limits_gpu.c -- GEMMs at the library's size limits (mgen.h, "Limits"), where 32-bit
 * indexing in a kernel or packer would overflow first, checked against an exact reference on
 * sampled outputs, and the first size past each limit refused.
 *
 *   W. Packed weights at MGEN_MAX_PACKED_WORDS (n * k_packed / 8 <= 2^31 - 1): N = 150976,
 *      K = 113792 (n * k / 8 = 2^31 - 2^10, the largest below the limit with n a multiple of
 *      64 and k of 128; 8 GiB of packed codes), or N = 131072, K = 130944 (2^31 - 2^21)
 *      where no kernel of this build runs the first; M = 17. Through mgen_pack from a 16 GiB
 *      code buffer. Every f16 u4b8 g128 kernel that runs here and implements the shape, and
 *      mgen_gemm's default: every output column of 24 sampled ones (both ends, the middle,
 *      the last tile's, random), all M rows. Then n = k = 131072 (2^31 words, the limit + 1)
 *      is refused by mgen_weights_bytes, mgen_gemm_choice and mgen_gemm with
 *      MGEN_ERR_UNSUPPORTED_SHAPE.
 *   E. A and C at MGEN_MAX_ELEMENTS (m * max(n, k) <= 2^31 - 1): N = K = 1152, M = 1864135
 *      (M * N = 2^31 - 128, the largest with N = K a multiple of 128), and N = K = 2048,
 *      M = 1048575 (2^31 - 2048) for the kernels whose n step does not divide 1152 (tile_n
 *      256); 4 GiB each of A and C. Every kernel of the key that implements the shape, and
 *      the default: whole rows at both ends of A and C (the first 3, the last 33) and 48
 *      random ones against the reference; no element of C left unwritten (its 0xFFFF poison,
 *      a NaN), and the guard row past M x N untouched. Then M + 1 is refused by
 *      mgen_gemm_choice, mgen_gemm and mgen_gemm_kernel with MGEN_ERR_UNSUPPORTED_SHAPE (A
 *      and C have that row, so a wrongly accepted call would not fault).
 *
 * Data and bound. A, codes and scales are functions of the element index (gpu_aux.h), written
 * on the device and recomputed on the host, so no buffer is copied for the reference: A = v/16
 * (|v| <= 16), scales +-(1..4)/1024. Every product a * w is exact on the grid 2^-14, and every
 * partial sum, in any order, is bounded by abs = sum_k |a_k w_k|; the test asserts abs < 2^10
 * for every sampled output, so every FP32 partial sum (24 bits: 2^10 down to 2^-14) and the
 * FP64 reference are exact, and the kernel's only error is the rounding of C to FP16:
 *     |c - ref| <= 2u |ref| + 2^-24 + 2^-21 abs        (u = 2^-11)
 * (a factor 2 on the rounding, FP16's subnormal spacing, and 8 ulps of abs for an MMA unit
 * that truncates where it aligns its addends). An index that is off anywhere changes an
 * output by about sqrt(K) * rms(a w), some 10^4 times this bound at these K.
 * FP16 only: BF16 kernels index the same way (the templates share the address arithmetic).
 * Needs about 26 GiB of device memory (case W) and about 20 s on an H200.
 * Run: build/tests/test_limits_gpu   (exits 77 without a GPU) */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "dispatch/select.h"
#include "gpu_aux.h"
#include "gpu_util.h"
#include "rng.h"

enum { SEED_A = 11, SEED_CODES = 12, SEED_SCALES = 13, GROUP = 128 };
static const uint16_t kPoison = 0xFFFF; /* NaN in FP16 */

static mgen_ctx *ctx;
static cudaStream_t stream;
static rng r;

static mgen_weights weights_desc(int n, int k) {
  return (mgen_weights){.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16,
                        .scheme = MGEN_SCHEME_GROUP, .group = GROUP, .n = n, .k = k};
}

/* The exact weight (j, kk) of the hashed codes and scales (scales [k/group, n], GPTQ). */
static double weight(int j, int kk, int n, int k) {
  const int code = (int)aux_code((uint64_t)j * k + kk, SEED_CODES);
  return (code - 8) * aux_scale_value((uint64_t)(kk / GROUP) * n + j, SEED_SCALES);
}

/* Whether kernel d is of the key (f16 u4b8 g128), runs here and implements (m, n, k). */
static int runs(const mgen_kernel_desc *d, int m, int n, int k) {
  return d->op == MGEN_OP_DENSE && d->act == MGEN_ACT_F16 && d->wfmt == MGEN_WFMT_U4B8 &&
         d->group == GROUP && gpu_default_layout(d) && /* (W4A8's: test_w4a8_gpu) */
         d->scheme == MGEN_SCHEME_GROUP && mgen_kernel_runs_on(d, mgen_ctx_sm(ctx)) &&
         mgen__can_implement(d, m, n, k, NULL, 0);
}


/* Packs the index-derived codes and scales (gpu_aux.h) of w's shape into w's buffers through
 * mgen_pack, from device buffers made for the purpose (16 GiB of codes at case W's shape). */
static void pack_weights(mgen_weights *w, const char *what) {
  const size_t count = (size_t)w->n * w->k, rows = (size_t)(w->k / GROUP) * w->n;
  uint8_t *codes = gpu_alloc(count);
  uint16_t *scales = gpu_alloc(rows * 2);
  CUDA_CHECK((cudaError_t)aux_fill_codes(codes, count, SEED_CODES, stream));
  CUDA_CHECK((cudaError_t)aux_fill_scales(scales, rows, SEED_SCALES, MGEN_ACT_F16, stream));
  MGEN_CHECK(ctx, mgen_pack(ctx, codes, scales, w, stream));
  gpu_sync(stream, what);
  CUDA_CHECK(cudaFree(codes));
  CUDA_CHECK(cudaFree(scales));
}

/* Checks one output against ref and abs; returns 1 if it passes. */
static int check_output(const char *kernel, const char *shape, long long i, int j, uint16_t bits,
                        double ref, double abs_sum) {
  static const double u = 0x1p-11;
  CHECK(abs_sum < 1024.0, "%s: data precondition: abs %.1f >= 2^10 at (%lld, %d): the test's "
        "exactness argument fails (a test defect)", shape, abs_sum, i, j);
  const double c = act_to_double(MGEN_ACT_F16, bits);
  const double bound = 2 * u * fabs(ref) + 0x1p-24 + 0x1p-21 * abs_sum;
  const int ok = fabs(c - ref) <= bound; /* NaN fails */
  CHECK(ok, "%s %s: C[%lld][%d] = %.9g (bits 0x%04x), exact %.9g, |error| %.3g > bound %.3g",
        shape, kernel, i, j, c, bits, ref, fabs(c - ref), bound);
  return ok;
}

/* ---------------------------------------------------------------- W: packed words */

static void case_words(void) {
  int n = 150976, k = 113792;
  const int m = 17;
  const mgen_table *table = mgen_builtin_table();
  int any = 0;
  for (size_t i = 0; i < table->count && !any; i++) any = runs(&table->kernels[i], m, n, k);
  if (!any) {
    printf("W: no kernel of this build runs N=%d K=%d (it needs a 64-wide tile): N=131072 "
           "K=130944 instead\n", n, k);
    n = 131072, k = 130944;
  }
  char shape[96];
  snprintf(shape, sizeof shape, "W (N=%d K=%d M=%d, %lld packed words)", n, k, m,
           (long long)n * k / 8);
  mgen_weights w = weights_desc(n, k), past = weights_desc(131072, 131072);
  size_t qb, sb, qb_past = 0, sb_past = 0;
  MGEN_CHECK(ctx, mgen_weights_bytes(&w, &qb, &sb));
  CHECK((long long)qb / 4 <= MGEN_MAX_PACKED_WORDS && (long long)qb / 4 > MGEN_MAX_PACKED_WORDS / 2,
        "%s: %zu bytes of codes", shape, qb);
  mgen_status st = mgen_weights_bytes(&past, &qb_past, &sb_past);
  CHECK(st == MGEN_ERR_UNSUPPORTED_SHAPE, "N=K=131072 (2^31 packed words, the limit + 1): "
        "mgen_weights_bytes gave %s, expected MGEN_ERR_UNSUPPORTED_SHAPE", mgen_status_str(st));
  /* Buffers of the refused shape's size (8 GiB, 256 MiB): a refusal wrongly skipped reads in
   * bounds and fails on its status, not with a fault. */
  const size_t q_alloc = (size_t)1 << 33, s_alloc = sb > ((size_t)1 << 28) ? sb : (size_t)1 << 28;
  w.d_q = gpu_alloc(q_alloc);
  w.d_scales = gpu_alloc(s_alloc);
  pack_weights(&w, "W: mgen_pack of 16 GiB of codes");
  /* A (and C) get a guard row: M + 1 rows. */
  uint16_t *a = gpu_alloc((size_t)(m + 1) * k * 2), *c = gpu_alloc((size_t)(m + 1) * n * 2);
  CUDA_CHECK((cudaError_t)aux_fill_act(a, (size_t)(m + 1) * k, SEED_A, MGEN_ACT_F16, stream));

  /* The reference for 24 columns, all M rows. */
  enum { COLS = 24 };
  int cols[COLS] = {0, 1, 2, 63, 64, n / 2, n / 2 + 1, n - 257, n - 256, n - 129, n - 128,
                    n - 65, n - 64, n - 3, n - 2, n - 1};
  for (int t = 16; t < COLS; t++) cols[t] = (int)rng_below(&r, (uint32_t)n);
  double *ref = malloc(sizeof *ref * m * COLS), *abs_sum = malloc(sizeof *abs_sum * m * COLS);
  double *wcol = malloc(sizeof *wcol * k), *arow = malloc(sizeof *arow * (size_t)m * k);
  for (size_t x = 0; x < (size_t)m * k; x++) arow[x] = aux_act_value(x, SEED_A);
  for (int t = 0; t < COLS; t++) {
    for (int kk = 0; kk < k; kk++) wcol[kk] = weight(cols[t], kk, n, k);
    for (int i = 0; i < m; i++) {
      double s = 0, sa = 0;
      for (int kk = 0; kk < k; kk++) {
        const double p = arow[(size_t)i * k + kk] * wcol[kk];
        s += p, sa += fabs(p);
      }
      ref[i * COLS + t] = s, abs_sum[i * COLS + t] = sa;
    }
  }
  uint16_t *host = malloc((size_t)(m + 1) * n * 2);
  int kernels = 0;
  for (size_t ki = 0; ki <= table->count; ki++) {
    const char *name = ki < table->count ? table->kernels[ki].name : "(mgen_gemm's default)";
    if (ki < table->count && !runs(&table->kernels[ki], m, n, k)) continue;
    CUDA_CHECK(cudaMemsetAsync(c, 0xFF, (size_t)(m + 1) * n * 2, stream));
    if (ki < table->count)
      MGEN_CHECK(ctx, mgen_gemm_kernel(ctx, name, MGEN_ACT_F16, m, a, &w, c, stream));
    else
      MGEN_CHECK(ctx, mgen_gemm(ctx, MGEN_ACT_F16, m, a, &w, c, stream));
    CUDA_CHECK(cudaMemcpyAsync(host, c, (size_t)(m + 1) * n * 2, cudaMemcpyDeviceToHost, stream));
    gpu_sync(stream, name);
    kernels += ki < table->count;
    int bad = 0;
    for (int i = 0; i < m && bad < 5; i++)
      for (int t = 0; t < COLS && bad < 5; t++)
        bad += !check_output(name, shape, i, cols[t], host[(size_t)i * n + cols[t]],
                             ref[i * COLS + t], abs_sum[i * COLS + t]);
    size_t unwritten = 0, guard = 0;
    for (size_t x = 0; x < (size_t)m * n; x++) unwritten += host[x] == kPoison;
    for (size_t x = (size_t)m * n; x < (size_t)(m + 1) * n; x++) guard += host[x] != kPoison;
    CHECK(unwritten == 0, "%s %s: %zu of %lld outputs unwritten or NaN", shape, name, unwritten,
          (long long)m * n);
    CHECK(guard == 0, "%s %s: %zu elements written past M x N", shape, name, guard);
  }
  CHECK(kernels > 0, "%s: no kernel ran", shape);
  printf("W: %s: %d kernels and the default checked\n", shape, kernels);

  /* One past: the refused descriptor over the same (large enough) buffers. */
  past.d_q = w.d_q, past.d_scales = w.d_scales;
  const char *choice = NULL;
  st = mgen_gemm_choice(ctx, MGEN_ACT_F16, m, &past, &choice);
  CHECK(st == MGEN_ERR_UNSUPPORTED_SHAPE, "N=K=131072: mgen_gemm_choice gave %s (%s), expected "
        "MGEN_ERR_UNSUPPORTED_SHAPE", mgen_status_str(st), choice ? choice : "-");
  st = mgen_gemm(ctx, MGEN_ACT_F16, 1, a, &past, c, stream);
  CHECK(st == MGEN_ERR_UNSUPPORTED_SHAPE, "N=K=131072: mgen_gemm gave %s, expected "
        "MGEN_ERR_UNSUPPORTED_SHAPE", mgen_status_str(st));
  gpu_sync(stream, "W: after the refusals");
  free(ref), free(abs_sum), free(wcol), free(arow), free(host);
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(c));
  CUDA_CHECK(cudaFree(w.d_q));
  CUDA_CHECK(cudaFree(w.d_scales));
}

/* ---------------------------------------------------------------- E: elements of A and C */

enum { ROWS = 3 + 33 + 48 };

/* Runs, on N = K = n and M = m, every kernel of the key that implements it, except those that
 * also implement N = K = skip_n (0: none; they ran there), and mgen_gemm's default; checks
 * them and the refusal of M + 1. Returns the kernels run (the default not counted). */
static int elements_shape(int n, int m, int skip_n) {
  const int k = n;
  char shape[96];
  snprintf(shape, sizeof shape, "E (N=K=%d M=%d, %lld elements of A and C)", n, m,
           (long long)m * n);
  CHECK((long long)m * n <= MGEN_MAX_ELEMENTS && (long long)(m + 1) * n > MGEN_MAX_ELEMENTS,
        "%s: M is not the largest the limit allows", shape);
  mgen_weights w = weights_desc(n, k);
  {
    size_t qb, sb;
    MGEN_CHECK(ctx, mgen_weights_bytes(&w, &qb, &sb));
    w.d_q = gpu_alloc(qb), w.d_scales = gpu_alloc(sb);
    pack_weights(&w, "E: mgen_pack");
  }
  const size_t a_count = (size_t)(m + 1) * k, c_count = (size_t)(m + 1) * n;
  uint16_t *a = gpu_alloc(a_count * 2), *c = gpu_alloc(c_count * 2);
  CUDA_CHECK((cudaError_t)aux_fill_act(a, a_count, SEED_A, MGEN_ACT_F16, stream));
  unsigned long long *d_count = gpu_alloc(sizeof *d_count), count;

  long long rows[ROWS];
  for (int t = 0; t < 3; t++) rows[t] = t;
  for (int t = 0; t < 33; t++) rows[3 + t] = m - 33 + t;
  for (int t = 36; t < ROWS; t++) rows[t] = rng_below(&r, (uint32_t)m);
  double *wt = malloc(sizeof *wt * (size_t)n * k), *ref = malloc(sizeof *ref * ROWS * n),
         *abs_sum = malloc(sizeof *abs_sum * ROWS * n), *arow = malloc(sizeof *arow * k);
  for (int j = 0; j < n; j++)
    for (int kk = 0; kk < k; kk++) wt[(size_t)j * k + kk] = weight(j, kk, n, k);
  for (int t = 0; t < ROWS; t++) {
    for (int kk = 0; kk < k; kk++) arow[kk] = aux_act_value((uint64_t)rows[t] * k + kk, SEED_A);
    for (int j = 0; j < n; j++) {
      double s = 0, sa = 0;
      for (int kk = 0; kk < k; kk++) {
        const double p = arow[kk] * wt[(size_t)j * k + kk];
        s += p, sa += fabs(p);
      }
      ref[(size_t)t * n + j] = s, abs_sum[(size_t)t * n + j] = sa;
    }
  }
  uint16_t *row = malloc((size_t)n * 2);
  const mgen_table *table = mgen_builtin_table();
  int kernels = 0;
  for (size_t ki = 0; ki <= table->count; ki++) {
    const char *name = ki < table->count ? table->kernels[ki].name : "(mgen_gemm's default)";
    if (ki < table->count && (!runs(&table->kernels[ki], m, n, k) ||
                              (skip_n && runs(&table->kernels[ki], 1, skip_n, skip_n))))
      continue;
    const double t0 = gpu_seconds();
    CUDA_CHECK(cudaMemsetAsync(c, 0xFF, c_count * 2, stream));
    if (ki < table->count)
      MGEN_CHECK(ctx, mgen_gemm_kernel(ctx, name, MGEN_ACT_F16, m, a, &w, c, stream));
    else
      MGEN_CHECK(ctx, mgen_gemm(ctx, MGEN_ACT_F16, m, a, &w, c, stream));
    gpu_sync(stream, name);
    const double seconds = gpu_seconds() - t0;
    kernels += ki < table->count;
    int bad = 0;
    for (int t = 0; t < ROWS && bad < 5; t++) {
      CUDA_CHECK(cudaMemcpy(row, c + (size_t)rows[t] * n, (size_t)n * 2, cudaMemcpyDeviceToHost));
      for (int j = 0; j < n && bad < 5; j++)
        bad += !check_output(name, shape, rows[t], j, row[j], ref[(size_t)t * n + j],
                             abs_sum[(size_t)t * n + j]);
    }
    CUDA_CHECK((cudaError_t)aux_count(c, (size_t)m * n, kPoison, 1, d_count, stream));
    CUDA_CHECK(cudaMemcpyAsync(&count, d_count, sizeof count, cudaMemcpyDeviceToHost, stream));
    gpu_sync(stream, "E: counting unwritten outputs");
    CHECK(count == 0, "%s %s: %llu of %lld outputs unwritten or NaN", shape, name, count,
          (long long)m * n);
    CUDA_CHECK((cudaError_t)aux_count(c + (size_t)m * n, (size_t)n, kPoison, 0, d_count, stream));
    CUDA_CHECK(cudaMemcpyAsync(&count, d_count, sizeof count, cudaMemcpyDeviceToHost, stream));
    gpu_sync(stream, "E: the guard row");
    CHECK(count == 0, "%s %s: %llu elements written past M x N", shape, name, count);
    printf("E: N=K=%d M=%d %s: %.3f s\n", n, m, name, seconds);
  }

  /* One row past the limit: refused before anything runs (A and C have that row). */
  const char *choice = NULL;
  mgen_status st = mgen_gemm_choice(ctx, MGEN_ACT_F16, m + 1, &w, &choice);
  CHECK(st == MGEN_ERR_UNSUPPORTED_SHAPE, "%s: M+1=%d: mgen_gemm_choice gave %s (%s), expected "
        "MGEN_ERR_UNSUPPORTED_SHAPE", shape, m + 1, mgen_status_str(st), choice ? choice : "-");
  st = mgen_gemm(ctx, MGEN_ACT_F16, m + 1, a, &w, c, stream);
  CHECK(st == MGEN_ERR_UNSUPPORTED_SHAPE, "%s: M+1=%d: mgen_gemm gave %s, expected "
        "MGEN_ERR_UNSUPPORTED_SHAPE", shape, m + 1, mgen_status_str(st));
  for (size_t ki = 0; ki < table->count; ki++) {
    if (!runs(&table->kernels[ki], m, n, k)) continue;
    st = mgen_gemm_kernel(ctx, table->kernels[ki].name, MGEN_ACT_F16, m + 1, a, &w, c, stream);
    CHECK(st == MGEN_ERR_UNSUPPORTED_SHAPE, "%s: M+1=%d: mgen_gemm_kernel %s gave %s, expected "
          "MGEN_ERR_UNSUPPORTED_SHAPE", shape, m + 1, table->kernels[ki].name,
          mgen_status_str(st));
  }
  gpu_sync(stream, "E: after the refusals");
  free(wt), free(ref), free(abs_sum), free(arow), free(row);
  CUDA_CHECK(cudaFree(d_count));
  CUDA_CHECK(cudaFree(a));
  CUDA_CHECK(cudaFree(c));
  CUDA_CHECK(cudaFree(w.d_q));
  CUDA_CHECK(cudaFree(w.d_scales));
  return kernels;
}

static void case_elements(void) {
  const int first = elements_shape(1152, 1864135, 0);
  const int second = elements_shape(2048, 1048575, 1152);
  CHECK(first > 0, "E: no kernel ran N=K=1152");
  printf("E: %d kernels at N=K=1152, %d more at N=K=2048\n", first, second);
}

int main(void) {
  gpu_require_device("test_limits_gpu");
  rng_seed(&r, rng_test_seed("test_limits_gpu"));
  MGEN_CHECK(NULL, mgen_ctx_create(&ctx, mgen_builtin_table(), NULL));
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  case_words();
  case_elements();
  CUDA_CHECK(cudaStreamDestroy(stream));
  mgen_ctx_destroy(ctx);
  return check_exit("test_limits_gpu");
}
