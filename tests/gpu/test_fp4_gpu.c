/* test_fp4_gpu.c -- fe2m1 weights (NVFP4, MXFP4) on the GPU, for FP16 and BF16 activations:
 *   1. bad inputs (tests/runtime/fp4_bad_inputs.c) on a real context, and MXFP4's import
 *      ignoring the global scale (NaN accepted);
 *   2. mgen_quantize against the CPU reference (tests/common/fp4.c: fp4_quantize + fp4_pack)
 *      bit for bit: packed words, scale rows and column factors, for FP16 and BF16 weights,
 *      over wide magnitudes, crafted ties, zero blocks and rows, each type's extremes;
 *   3. mgen_pack_fp4 against fp4_pack bit for bit on random checkpoint bytes (every code and
 *      scale byte, E4M3 NaN codes, E8M0 0, 254 and the NaN 255);
 *   4. every fe2m1 kernel of the built-in table against an FP64 GEMM of the exact dequantized
 *      weights (fp4_ref.cu), for every M of {1, 2, 3, 7, 8, 15, 16, 17, 33, 64, 100, 128, 256,
 *      1024} on (K, N) = (4096, 12288), (11008, 4096) and four small shapes, into an output
 *      poisoned with 0xFFFF (a NaN in both types): no element over the bound, none NaN or inf,
 *      none left unwritten, none written past M x N; two runs bit-identical on a few cases;
 *      mgen_gemm's default choice on every case. Weights come from random checkpoints through
 *      mgen_pack_fp4 (all shapes) and from random FP16/BF16 weights through mgen_quantize
 *      (small shapes). Fresh random data each run (MGEN_TEST_SEED repeats one).
 *
 * Error bound per output (fp4_bound, tests/common/fp4.h), u the act's unit roundoff (2^-11
 * FP16, 2^-8 BF16), abs = sum_k |a_k w_k|, w the exact weight (e2m1 * e4m3 * global or
 * e2m1 * 2^(e-127)):
 *     |c - ref| <= 2u |ref| + K 2^-22 abs + sum_k |a_k| cf slack_k + tiny
 * The kernel computes c = act(cf * sum_k a_k w16_k), w16 = w / cf its 16-bit weight:
 *   - NVFP4: w16 = e2m1 * s * 2^-7 is exact in both types, subnormal E4M3 scales included:
 *     the dequantized e2m1 * 2^-14 (FP16; 2^-126 BF16) and the multiplier s * 2^7 (s * 2^119)
 *     are exact (E4M3 has 4 significant bits, 57344 < 65504), and their product has at most
 *     6 significant bits, magnitude <= 21 and lowest bit >= 2^-1 * 2^-9 * 2^-7 = 2^-17, above
 *     both subnormal spacings (2^-24, 2^-133), so the FP16 result is exact even where it is
 *     subnormal (below 2^-14). test_fp4.c checks all 16 x 254 (code, scale) pairs. slack = 0.
 *   - MXFP4: w16 = e2m1 * 2^-u, exact while e2m1's lowest bit 2^-1-u stays on the subnormal
 *     grid: u <= 23 (FP16), u <= 132 (BF16). Below that __hmul2 rounds to the nearest
 *     subnormal (error <= 2^-25, 2^-134), and past the multiplier's clamp (u > 28 FP16, > 252
 *     BF16) the weight is 0, off by at most 6 * 2^-29 < 2^-25 (6 * 2^-253). These weights
 *     are at least 2^23 (FP16) times smaller than the column's largest block (u = 0, whose
 *     largest element is >= 4 in quantized weights), so they lose bits only below the FP16
 *     output's own precision; slack = 2^-25 (2^-134) for them, times the column factor.
 *   - MMA: products of two 16-bit values are exact in FP32, the K-sums cost at most
 *     K 2^-24 (2^-23 if the unit truncates) of abs / cf; K 2^-22 leaves a factor 2 for that
 *     and the FP32 split-K reductions. cf multiplies the FP32 sum once (2^-24 relative).
 *   - Output rounding to the act: u |c|; 2u |ref| covers it and the 2^-24 terms. tiny = 2^-24
 *     (FP16; 2^-132 BF16) covers outputs that round into the act's subnormals.
 * Test data keep |C| well inside FP16's range (column factors <= 1 for FP16).
 *
 * Run:  build/tests/test_fp4_gpu            (ctest -L gpu)
 *       compute-sanitizer --error-exitcode 1 build/tests/test_fp4_gpu --quick
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "fp4.h"
#include "fp4_bad_inputs.h"
#include "fp4_ref.h"
#include "gpu_util.h"
#include "rng.h"

typedef struct shape {
  int k, n, big; /* big: one of the two LLM-sized shapes every kernel must run */
} shape;

static const shape full_shapes[] = {{4096, 12288, 1}, {11008, 4096, 2}, {256, 256, 0},
                                    {1024, 512, 0},   {768, 384, 0},    {128, 1024, 0}};
static const shape quick_shapes[] = {{256, 256, 0}, {768, 384, 0}, {128, 1024, 0}, {1024, 2048, 0}};
static const int full_ms[] = {1, 2, 3, 7, 8, 15, 16, 17, 33, 64, 100, 128, 256, 1024};
static const int quick_ms[] = {1, 7, 16, 17, 64, 100};
static const int determinism_ms[] = {7, 100};
static const int acts[] = {MGEN_ACT_F16, MGEN_ACT_BF16};
static const int schemes[] = {MGEN_SCHEME_NVFP4, MGEN_SCHEME_MXFP4};
#define GUARD_ELEMS 4096

static mgen_ctx *ctx;
static cudaStream_t stream;

static int group_of(int scheme) { return scheme == MGEN_SCHEME_NVFP4 ? 16 : 32; }
static const char *scheme_str(int s) { return s == MGEN_SCHEME_NVFP4 ? "nvfp4" : "mxfp4"; }

static void sync_or_die(const char *what) {
  cudaError_t err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) {
    fprintf(stderr, "FAIL %s: %s (%s)\n", what, cudaGetErrorString(err), cudaGetErrorName(err));
    exit(1);
  }
}

/* Host to device, complete on return and ordered before later work on `stream`: a plain
 * cudaMemcpy from pageable memory may return before its DMA lands, on the legacy stream,
 * which the test's non-blocking stream does not wait for. */
static void copy_in(void *d, const void *host, size_t bytes) {
  CUDA_CHECK(cudaMemcpyAsync(d, host, bytes, cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

static void *upload(const void *host, size_t bytes) {
  void *d = gpu_alloc(bytes);
  copy_in(d, host, bytes);
  return d;
}

static mgen_weights fe2m1_weights(int act, int scheme, int n, int k) {
  mgen_weights w = {.wfmt = MGEN_WFMT_FE2M1, .act = (mgen_act)act, .scheme = (mgen_scheme)scheme,
                    .group = group_of(scheme), .n = n, .k = k};
  size_t qb, sb;
  MGEN_CHECK(ctx, mgen_weights_bytes(&w, &qb, &sb));
  w.d_q = gpu_alloc(qb);
  w.d_scales = gpu_alloc(sb);
  /* Garbage that every byte must overwrite, on the test's stream: a plain cudaMemset runs on
   * the legacy stream, which a non-blocking stream does not wait for. */
  CUDA_CHECK(cudaMemsetAsync(w.d_q, 0xAB, qb, stream));
  CUDA_CHECK(cudaMemsetAsync(w.d_scales, 0xAB, sb, stream));
  return w;
}

static void free_weights(mgen_weights *w) {
  CUDA_CHECK(cudaFree(w->d_q));
  CUDA_CHECK(cudaFree(w->d_scales));
}

/* The packed buffers of w against fp4_pack's, bit for bit. */
static void compare_packed(const char *what, const mgen_weights *w, const uint32_t *q,
                           const uint8_t *sbuf) {
  const int n = w->n, k = w->k, scheme = w->scheme;
  const size_t qb = fp4_qbytes(n, k), sb = fp4_sbytes(scheme, n, k);
  uint32_t *gq = malloc(qb);
  uint8_t *gs = malloc(sb);
  CUDA_CHECK(cudaMemcpy(gq, w->d_q, qb, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(gs, w->d_scales, sb, cudaMemcpyDeviceToHost));
  long bad_q = 0, bad_s = 0, first_q = -1, first_s = -1;
  for (size_t i = 0; i < qb / 4; i++)
    if (gq[i] != q[i]) bad_q++, first_q = first_q < 0 ? (long)i : first_q;
  for (size_t i = 0; i < sb; i++)
    if (gs[i] != sbuf[i]) bad_s++, first_s = first_s < 0 ? (long)i : first_s;
  CHECK(bad_q == 0, "%s %s %s n=%d k=%d: %ld of %zu words differ, first %ld: 0x%08x vs 0x%08x",
        what, act_name(w->act), scheme_str(scheme), n, k, bad_q, qb / 4, first_q,
        bad_q ? gq[first_q] : 0, bad_q ? q[first_q] : 0);
  CHECK(bad_s == 0, "%s %s %s n=%d k=%d: %ld of %zu scale bytes differ, first %ld (factors from "
        "%zu): 0x%02x vs 0x%02x", what, act_name(w->act), scheme_str(scheme), n, k, bad_s, sb,
        first_s, sb - (size_t)n * 4, bad_s ? gs[first_s] : 0, bad_s ? sbuf[first_s] : 0);
  free(gq);
  free(gs);
}

/* ---------------------------------------------------------------- 1. bad inputs */

static void test_bad_inputs(void) {
  void *buf = gpu_alloc(1 << 16);
  fp4_check_bad_inputs(ctx, buf);
  /* MXFP4 ignores the global scale: a NaN is fine there. */
  mgen_weights w = fe2m1_weights(MGEN_ACT_F16, MGEN_SCHEME_MXFP4, 128, 128);
  CUDA_CHECK(cudaMemsetAsync(buf, 0, 1 << 16, stream));
  mgen_status st = mgen_pack_fp4(ctx, buf, 128 * 64, buf, 128 * 4, NAN, &w, stream);
  CHECK(st == MGEN_OK, "mxfp4 with a NaN global scale: %s", mgen_ctx_last_error(ctx));
  sync_or_die("mgen_pack_fp4");
  free_weights(&w);
  CUDA_CHECK(cudaFree(buf));
}

/* ---------------------------------------------------------------- 2. quantize, bit for bit */

/* A random value of the act with exponent field in [lo, hi] (biased) and a random sign. */
static uint16_t random_bits(rng *r, int act, int lo, int hi) {
  const int man = act == MGEN_ACT_F16 ? 10 : 7;
  const uint32_t e = (uint32_t)lo + rng_below(r, (uint32_t)(hi - lo + 1));
  return (uint16_t)(rng_below(r, 2) << 15 | e << man | rng_below(r, 1u << man));
}

/* Rows of eight kinds: zero; per-block magnitudes 2^-30..2^8; uniform in a row scale; every
 * other block zero; tie multiples of 2^j (with 6 * 2^j fixing the block's exponent, and 7 *
 * 2^j saturating); and with `extreme`, the type's largest and subnormal values, and random
 * finite bit patterns over all exponents. */
static void random_weights(rng *r, int act, int n, int k, int extreme, uint16_t *w) {
  static const double ties[] = {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0, 7.0};
  const int emax = act == MGEN_ACT_F16 ? 30 : 254, man = act == MGEN_ACT_F16 ? 10 : 7;
  for (int j = 0; j < n; j++) {
    int kind = j % 8;
    if (!extreme && (kind == 5 || kind == 7)) kind = 2;
    const double row_scale = ldexp(1.0, (int)rng_below(r, 14) - 10);
    double block_scale = 1.0;
    for (int i = 0; i < k; i++) {
      uint16_t *x = &w[(size_t)j * k + i];
      if (i % 32 == 0) block_scale = ldexp(1.0, (int)rng_below(r, 39) - 30);
      switch (kind) {
      case 0: *x = 0; break;
      case 1: *x = act_from_double(act, rng_uniform(r, -1, 1) * block_scale); break;
      case 2: *x = act_from_double(act, rng_uniform(r, -1, 1) * row_scale); break;
      case 3: *x = (i / 32) % 2 ? 0 : act_from_double(act, rng_uniform(r, -1, 1) * row_scale); break;
      case 4: {
        const double t = i % 32 == 0 ? 6.0 : ties[rng_below(r, 9)];
        *x = act_from_double(act, (rng_below(r, 2) ? -t : t) * ldexp(1.0, (int)(i / 32) % 5 - 2));
        break;
      }
      case 5:
        *x = (i / 16) % 2 ? (uint16_t)(rng_below(r, 2) << 15 | (1 + rng_below(r, (1u << man) - 1)))
                          : random_bits(r, act, emax, emax);
        break;
      default: *x = random_bits(r, act, 0, emax); break;
      }
    }
  }
}

static void check_quantize(rng *r, int act, int scheme, int n, int k, int extreme) {
  uint16_t *w = malloc(sizeof *w * (size_t)n * k);
  uint8_t *codes = malloc((size_t)n * k), *scales = malloc((size_t)n * k / 16);
  uint32_t *q = malloc(fp4_qbytes(n, k));
  uint8_t *sbuf = malloc(fp4_sbytes(scheme, n, k));
  float global;
  random_weights(r, act, n, k, extreme, w);
  if (n == 128 && k == 128) { /* crafted: NVFP4's global scale is 1 and row 0's s is 1 */
    static const double ties[] = {0.25, 0.75, 2.5, 5.0, 6.0, 1.25, 3.5, -5.0, -0.25};
    w[5 * k] = act_from_double(act, 2688.0);
    for (int i = 0; i < 9; i++) w[i] = act_from_double(act, ties[i]);
  }
  fp4_quantize(act, scheme, w, n, k, codes, scales, &global);
  fp4_pack(scheme, codes, scales, global, n, k, q, sbuf);
  void *d_w = upload(w, sizeof *w * (size_t)n * k);
  mgen_weights gw = fe2m1_weights(act, scheme, n, k);
  MGEN_CHECK(ctx, mgen_quantize(ctx, d_w, &gw, stream));
  sync_or_die("mgen_quantize");
  compare_packed(extreme ? "quantize (extremes)" : "quantize", &gw, q, sbuf);
  free_weights(&gw);
  CUDA_CHECK(cudaFree(d_w));
  free(w), free(codes), free(scales), free(q), free(sbuf);
}

static void test_quantize(rng *r, int quick) {
  static const int shapes[][2] = {{128, 128}, {128, 512}, {256, 1024}, {384, 2048}};
  const int count = quick ? 2 : 4;
  for (size_t ai = 0; ai < 2; ai++)
    for (size_t si = 0; si < 2; si++)
      for (int s = 0; s < count; s++)
        for (int extreme = 0; extreme < 2; extreme++)
          check_quantize(r, acts[ai], schemes[si], shapes[s][0], shapes[s][1], extreme);
}

/* ---------------------------------------------------------------- 3. import, bit for bit */

static void check_import(rng *r, int scheme, int n, int k) {
  const int groups = k / group_of(scheme);
  uint8_t *codes = malloc((size_t)n * k), *packed = malloc((size_t)n * k / 2);
  uint8_t *scales = malloc((size_t)n * groups);
  uint32_t *q = malloc(fp4_qbytes(n, k));
  uint8_t *sbuf = malloc(fp4_sbytes(scheme, n, k));
  for (size_t i = 0; i < (size_t)n * k; i++) codes[i] = (uint8_t)rng_below(r, 16);
  for (size_t i = 0; i < (size_t)n * groups; i++) scales[i] = (uint8_t)rng_below(r, 256);
  for (int g = 0; g < groups; g++) { /* columns 0..3: all 0, one 254, one 255, all 255 */
    scales[g] = 0;
    scales[groups + g] = g == 1 ? 254 : (uint8_t)rng_below(r, 254);
    scales[2 * groups + g] = g == groups - 1 ? 255 : (uint8_t)rng_below(r, 255);
    scales[3 * groups + g] = 255;
  }
  const float global = (float)ldexp(rng_uniform(r, 1.0, 2.0), (int)rng_below(r, 40) - 30);
  fp4_pack_bytes(codes, n, k, packed);
  fp4_pack(scheme, codes, scales, global, n, k, q, sbuf);
  uint8_t *d_packed = upload(packed, (size_t)n * k / 2), *d_scales = upload(scales, (size_t)n * groups);
  mgen_weights w = fe2m1_weights(MGEN_ACT_F16, scheme, n, k);
  MGEN_CHECK(ctx, mgen_pack_fp4(ctx, d_packed, (size_t)n * k / 2, d_scales, (size_t)n * groups,
                                global, &w, stream));
  sync_or_die("mgen_pack_fp4");
  compare_packed("import", &w, q, sbuf);
  free_weights(&w);
  CUDA_CHECK(cudaFree(d_packed));
  CUDA_CHECK(cudaFree(d_scales));
  free(codes), free(packed), free(scales), free(q), free(sbuf);
}

static void test_import(rng *r, int quick) {
  for (size_t si = 0; si < 2; si++) {
    check_import(r, schemes[si], 128, 512);
    if (!quick) check_import(r, schemes[si], 512, 2048);
  }
}

/* ---------------------------------------------------------------- 4. every kernel */

typedef struct kernel_stats {
  int runs, failures, big_mask, odd_m;
  double max_ratio;
} kernel_stats;

typedef struct problem {
  int act, scheme, n, k, m_max;
  const char *source;
  uint16_t *d_a, *d_c, *d_c2;
  size_t c_cap;
  mgen_weights w;
  double *d_ref, *d_abs, *d_werr;
  fp4_check *d_check;
} problem;

static kernel_stats *stats;

static double ratio_of(unsigned long long bits) {
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

static double run_case(const problem *p, const char *name, int m, uint16_t *c) {
  const char *label = name ? name : "mgen_gemm (default)";
  CUDA_CHECK(cudaMemsetAsync(c, 0xFF, p->c_cap * sizeof *c, stream));
  mgen_status st = name ? mgen_gemm_kernel(ctx, name, p->w.act, m, p->d_a, &p->w, c, stream)
                        : mgen_gemm(ctx, p->w.act, m, p->d_a, &p->w, c, stream);
  CHECK(st == MGEN_OK, "%s m=%d n=%d k=%d %s %s: %s: %s", label, m, p->n, p->k, act_name(p->act),
        scheme_str(p->scheme), mgen_status_str(st), mgen_ctx_last_error(ctx));
  if (st != MGEN_OK) return -1.0;
  fp4_check init = {0, 0, 0, 0, ~0ull, 0}, res;
  CUDA_CHECK(cudaMemcpyAsync(p->d_check, &init, sizeof init, cudaMemcpyHostToDevice, stream));
  CUDA_CHECK((cudaError_t)fp4_gpu_check(p->act, m, p->n, p->k, c, p->c_cap, p->d_ref, p->d_abs,
                                        p->d_werr, p->d_check, stream));
  CUDA_CHECK(cudaMemcpyAsync(&res, p->d_check, sizeof res, cudaMemcpyDeviceToHost, stream));
  sync_or_die(label);
  const double ratio = ratio_of(res.max_ratio_bits);
  CHECK(res.bad == 0 && res.nonfinite == 0 && res.unwritten == 0 && res.guard_bad == 0,
        "%s m=%d n=%d k=%d %s %s (%s): %llu over the bound (max ratio %.3g), %llu NaN/inf, %llu "
        "unwritten, %llu written past m x n", label, m, p->n, p->k, act_name(p->act),
        scheme_str(p->scheme), p->source, res.bad, ratio, res.nonfinite, res.unwritten,
        res.guard_bad);
  if (res.bad != 0) {
    const size_t i = (size_t)res.first_bad;
    uint16_t cv;
    double rv, av, ev;
    CUDA_CHECK(cudaMemcpy(&cv, c + i, sizeof cv, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&rv, p->d_ref + i, sizeof rv, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&av, p->d_abs + i, sizeof av, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&ev, p->d_werr + i, sizeof ev, cudaMemcpyDeviceToHost));
    fprintf(stderr, "  first bad element: row %zu col %zu: c=%.6g (0x%04x) ref=%.6g abs=%.6g "
            "werr=%.3g bound=%.3g\n", i / (size_t)p->n, i % (size_t)p->n, act_to_double(p->act, cv),
            cv, rv, av, ev, fp4_bound(p->act, p->k, rv, av, ev));
  }
  return ratio;
}

static void check_determinism(const problem *p, const char *name, int m) {
  if (run_case(p, name, m, p->d_c) < 0 || run_case(p, name, m, p->d_c2) < 0) return;
  uint16_t *x = malloc(sizeof *x * (size_t)m * p->n), *y = malloc(sizeof *y * (size_t)m * p->n);
  CUDA_CHECK(cudaMemcpy(x, p->d_c, sizeof *x * (size_t)m * p->n, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(y, p->d_c2, sizeof *y * (size_t)m * p->n, cudaMemcpyDeviceToHost));
  CHECK(memcmp(x, y, sizeof *x * (size_t)m * p->n) == 0, "%s m=%d n=%d k=%d: two runs differ",
        name, m, p->n, p->k);
  free(x);
  free(y);
}

/* This device runs it, and MGEN_TEST_KERNELS (if set) selects it. */
static int runs_here(const mgen_kernel_desc *d) {
  return mgen_kernel_runs_on(d, mgen_ctx_sm(ctx)) && gpu_kernel_selected(d->name);
}

static int same_key(const mgen_kernel_desc *d, const problem *p) {
  return d->act == p->act && d->wfmt == MGEN_WFMT_FE2M1 && d->group == group_of(p->scheme);
}

static int key_in_table(int act, int scheme) {
  const mgen_table *t = mgen_builtin_table();
  for (size_t i = 0; i < t->count; i++)
    if (t->kernels[i].act == act && t->kernels[i].wfmt == MGEN_WFMT_FE2M1 &&
        t->kernels[i].group == group_of(scheme) && runs_here(&t->kernels[i]))
      return 1;
  return 0;
}

static void run_problem(const problem *p, const int *ms, size_t n_ms, int big) {
  const mgen_table *table = mgen_builtin_table();
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (!same_key(d, p) || !runs_here(d) || p->n % d->tile_n || p->k % d->tile_k) continue;
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
  for (size_t j = 0; j < n_ms; j++) {
    const char *choice = NULL;
    mgen_status st = mgen_gemm_choice(ctx, p->w.act, ms[j], &p->w, &choice);
    CHECK(st == MGEN_OK, "choice m=%d n=%d k=%d %s %s: %s", ms[j], p->n, p->k, act_name(p->act),
          scheme_str(p->scheme), mgen_ctx_last_error(ctx));
    if (st != MGEN_OK) continue;
    const int index = mgen_table_find(table, choice);
    CHECK(index >= 0 && same_key(&table->kernels[index], p), "choice %s", choice);
    run_case(p, NULL, ms[j], p->d_c);
  }
}

/* Random checkpoint data for the GEMMs: all 16 codes; NVFP4 finite non-negative E4M3 bytes
 * (zero and subnormals included) and a global scale in [2^-14, 2^-8]; MXFP4 per column an
 * e_max with u = e_max - e mostly 0..3, an eighth of the blocks 0..39 (past FP16's exactness
 * at 23 and its clamp at 28), and every 61st column u over 0..e_max (BF16: e_max 140, so
 * past BF16's exactness at 132 too). Column factors stay <= 1 for FP16 outputs. */
static void random_checkpoint(rng *r, int act, int scheme, int n, int k, uint8_t *codes,
                              uint8_t *scales, float *global) {
  const int groups = k / group_of(scheme);
  for (size_t i = 0; i < (size_t)n * k; i += 16) {
    const uint64_t bits = rng_next(r);
    for (int b = 0; b < 16; b++) codes[i + b] = (uint8_t)((bits >> (4 * b)) & 0xf);
  }
  *global = (float)ldexp(rng_uniform(r, 1.0, 2.0), -8 - (int)rng_below(r, 7));
  for (int j = 0; j < n; j++) {
    const int wide = j % 61 == 1;
    const unsigned e_max = wide ? (act == MGEN_ACT_BF16 ? 140 : 127) : 112 + rng_below(r, 16);
    for (int g = 0; g < groups; g++) {
      unsigned v;
      if (scheme == MGEN_SCHEME_NVFP4) {
        v = rng_below(r, 0x7f);
      } else {
        unsigned u = wide ? rng_below(r, e_max + 1)
                   : rng_below(r, 8) == 0 ? rng_below(r, 40) : rng_below(r, 4);
        if (g == 0) u = 0;
        v = e_max - (u < e_max ? u : e_max);
      }
      scales[(size_t)j * groups + g] = (uint8_t)v;
    }
  }
}

/* One (shape, act, scheme, source) problem: weights prepared on the GPU, the exact weights and
 * the FP64 reference for m_max rows, then every kernel. */
static void run_source(rng *r, const shape *s, int act, int scheme, int quantized, problem *p,
                       const int *ms, size_t n_ms) {
  const int n = s->n, k = s->k, groups = k / group_of(scheme);
  uint8_t *codes = malloc((size_t)n * k), *scales = malloc((size_t)n * groups);
  float global;
  p->scheme = scheme;
  p->w = fe2m1_weights(act, scheme, n, k);
  if (quantized) {
    uint16_t *w = malloc(sizeof *w * (size_t)n * k);
    for (int j = 0; j < n; j++) {
      const double row_scale = ldexp(1.0, (int)rng_below(r, 6) - 4);
      for (int i = 0; i < k; i++)
        w[(size_t)j * k + i] =
            act_from_double(act, (rng_uniform(r, -1, 1) + rng_uniform(r, -1, 1)) * row_scale);
    }
    fp4_quantize(act, scheme, w, n, k, codes, scales, &global);
    void *d_w = upload(w, sizeof *w * (size_t)n * k);
    MGEN_CHECK(ctx, mgen_quantize(ctx, d_w, &p->w, stream));
    sync_or_die("mgen_quantize");
    CUDA_CHECK(cudaFree(d_w));
    free(w);
    p->source = "mgen_quantize";
  } else {
    random_checkpoint(r, act, scheme, n, k, codes, scales, &global);
    uint8_t *packed = malloc((size_t)n * k / 2);
    fp4_pack_bytes(codes, n, k, packed);
    uint8_t *d_packed = upload(packed, (size_t)n * k / 2);
    uint8_t *d_bs = upload(scales, (size_t)n * groups);
    MGEN_CHECK(ctx, mgen_pack_fp4(ctx, d_packed, (size_t)n * k / 2, d_bs, (size_t)n * groups,
                                  global, &p->w, stream));
    sync_or_die("mgen_pack_fp4");
    CUDA_CHECK(cudaFree(d_packed));
    CUDA_CHECK(cudaFree(d_bs));
    free(packed);
    p->source = "mgen_pack_fp4";
  }
  uint8_t *d_codes = upload(codes, (size_t)n * k), *d_scales = upload(scales, (size_t)n * groups);
  double *d_w = gpu_alloc(sizeof(double) * (size_t)n * k);
  double *d_slack = gpu_alloc(sizeof(double) * (size_t)n * k);
  CUDA_CHECK((cudaError_t)fp4_gpu_dequant(act, scheme, d_codes, d_scales, global, n, k, d_w,
                                          d_slack, stream));
  CUDA_CHECK((cudaError_t)fp4_gpu_ref_gemm(act, p->m_max, n, k, p->d_a, d_w, d_slack, p->d_ref,
                                           p->d_abs, p->d_werr, stream));
  sync_or_die("reference");
  CUDA_CHECK(cudaFree(d_codes));
  CUDA_CHECK(cudaFree(d_scales));
  CUDA_CHECK(cudaFree(d_w));
  CUDA_CHECK(cudaFree(d_slack));
  free(codes);
  free(scales);
  run_problem(p, ms, n_ms, s->big);
  free_weights(&p->w);
}

static void run_shape(rng *r, const shape *s, const int *ms, size_t n_ms) {
  int m_max = 0;
  for (size_t j = 0; j < n_ms; j++) m_max = ms[j] > m_max ? ms[j] : m_max;
  const int n = s->n, k = s->k;
  const double t0 = gpu_seconds();
  problem p = {.n = n, .k = k, .m_max = m_max, .c_cap = (size_t)m_max * n + GUARD_ELEMS};
  uint16_t *a = malloc(sizeof *a * (size_t)m_max * k);
  p.d_a = gpu_alloc(sizeof *a * (size_t)m_max * k);
  p.d_c = gpu_alloc(sizeof(uint16_t) * p.c_cap);
  p.d_c2 = gpu_alloc(sizeof(uint16_t) * p.c_cap);
  p.d_ref = gpu_alloc(sizeof(double) * (size_t)m_max * n);
  p.d_abs = gpu_alloc(sizeof(double) * (size_t)m_max * n);
  p.d_werr = gpu_alloc(sizeof(double) * (size_t)m_max * n);
  p.d_check = gpu_alloc(sizeof(fp4_check));
  for (size_t ai = 0; ai < 2; ai++) {
    p.act = acts[ai];
    for (size_t i = 0; i < (size_t)m_max * k; i++)
      a[i] = act_from_double(p.act, rng_uniform(r, -1.0, 1.0));
    copy_in(p.d_a, a, sizeof *a * (size_t)m_max * k);
    for (size_t si = 0; si < 2; si++) {
      if (!key_in_table(p.act, schemes[si]) || k % group_of(schemes[si])) continue;
      run_source(r, s, p.act, schemes[si], 0, &p, ms, n_ms);
      if (!s->big) run_source(r, s, p.act, schemes[si], 1, &p, ms, n_ms);
    }
  }
  printf("test_fp4_gpu: K=%d N=%d done in %.1f s\n", k, n, gpu_seconds() - t0);
  fflush(stdout);
  CUDA_CHECK(cudaFree(p.d_a));
  CUDA_CHECK(cudaFree(p.d_c));
  CUDA_CHECK(cudaFree(p.d_c2));
  CUDA_CHECK(cudaFree(p.d_ref));
  CUDA_CHECK(cudaFree(p.d_abs));
  CUDA_CHECK(cudaFree(p.d_werr));
  CUDA_CHECK(cudaFree(p.d_check));
  free(a);
}

int main(int argc, char **argv) {
  gpu_require_device("test_fp4_gpu");
  const int quick = gpu_quick_mode(argc, argv);
  rng r;
  rng_seed(&r, rng_test_seed("test_fp4_gpu"));
  const double t0 = gpu_seconds();
  const mgen_table *table = mgen_builtin_table();
  MGEN_CHECK(ctx, mgen_ctx_create(&ctx, table, NULL));
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  stats = calloc(table->count ? table->count : 1, sizeof *stats);

  test_bad_inputs();
  test_quantize(&r, quick);
  test_import(&r, quick);
  printf("test_fp4_gpu: bad inputs, quantize and import checked (%ld checks) in %.1f s\n",
         check_count, gpu_seconds() - t0);
  fflush(stdout);

  const shape *shapes = quick ? quick_shapes : full_shapes;
  const size_t n_shapes = quick ? sizeof quick_shapes / sizeof quick_shapes[0]
                                : sizeof full_shapes / sizeof full_shapes[0];
  const int *ms = quick ? quick_ms : full_ms;
  const size_t n_ms = quick ? sizeof quick_ms / sizeof quick_ms[0] : sizeof full_ms / sizeof full_ms[0];
  for (size_t s = 0; s < n_shapes; s++) run_shape(&r, &shapes[s], ms, n_ms);

  int tested = 0;
  printf("%-52s %6s %9s\n", "kernel", "cases", "max err/bound");
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (d->wfmt != MGEN_WFMT_FE2M1) continue;
    if (!runs_here(d)) {
      printf("%-52s skipped: %s\n", d->name,
             gpu_kernel_selected(d->name) ? "needs a newer GPU" : "not in MGEN_TEST_KERNELS");
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
  CHECK(tested > 0, "the table (%s) has no fe2m1 kernel this device runs",
        table->generator ? table->generator : "?");
  printf("test_fp4_gpu: %d fe2m1 kernels tested; %.1f s\n", tested, gpu_seconds() - t0);
  CUDA_CHECK(cudaStreamDestroy(stream));
  mgen_ctx_destroy(ctx);
  free(stats);
  return check_exit("test_fp4_gpu");
}
