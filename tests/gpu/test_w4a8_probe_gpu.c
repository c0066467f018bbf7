/* test_w4a8_probe_gpu.c -- the W4A8 design on the hardware (issue #52) before its kernel: W4A8
 * words packed by layout.h's map (mgen__e4m3_source / mgen__e4m3_word), dequantized by the
 * format partials (formats/<wfmt>/mma_e4m3.cuh) into FP8 A fragments of
 * wgmma.mma_async.m64n8k32 .e4m3 against E4M3 activations in 128-byte swizzled shared memory
 * (tests/gpu/w4a8_probe.cu), for u4b8 and fe2m1 (MXFP4: each row's 32-deep blocks at random
 * offsets u of 0..11, folded into the E4M3 bytes by the partial's tables):
 *   - one product per output (each activation row nonzero at one k, 16 runs cover all 128 k):
 *     every C^T[n][m] must equal W[n][k] * A[m][k] exactly, so any element of the map, any
 *     register of the fragment or any byte of the swizzle that is off fails here, by element;
 *   - full random sums (every 4-bit code, every finite E4M3 byte): within 2^-10 of the sum of
 *     the terms' magnitudes of an FP64 reference (FP8 wgmma's accumulation is narrower than
 *     FP32: the largest error seen is printed), and bit-identical run to run;
 *   - every output written (the output is poisoned with NaN first).
 * Needs an sm_90 GPU (exit 77 on others, and without one). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "formats/layout.h"
#include "formats/mgen_dequant_consts.h"
#include "fp4.h"
#include "gpu_util.h"
#include "rng.h"
#include "w4a8_probe.h"

enum { N = W4A8_PROBE_N, M = W4A8_PROBE_M, K = W4A8_PROBE_K, TILES = W4A8_PROBE_TILES };

static uint8_t w_codes[N][K]; /* u4b8: q 0..15; fe2m1: [S E1 E0 M0] */
static uint8_t w_u[N][W4A8_PROBE_BLOCKS]; /* fe2m1: each 32-deep block's E8M0 offset u, 0..11 */
static uint8_t a_bytes[M][K];
static uint32_t words[128][TILES];
static float c_t[N][M], c_again[N][M];

/* The weight as the fragments read it, before 2^kLog2: E2M1 * 2^-u (MXFP4) or q - 8. */
static double w_value(int fe2m1, int n, int k) {
  return fe2m1 ? ldexp(fp4_e2m1_value(w_codes[n][k]), -w_u[n][k / 32]) : (double)w_codes[n][k] - 8.0;
}

/* The words of w_codes as layout.h places them, by thread and 16-deep tile. */
static void pack(int fe2m1) {
  const int total = N * K / MGEN_W4_NIBBLES;
  for (int word = 0; word < total; word++) {
    int k0, n0;
    mgen__w4_source(N, mgen__e4m3_mma_word(word), 0, &k0, &n0); /* k0 = 16 kb + 2 q, n0 = 16 nt + c */
    const int kb = k0 / 16, q = (k0 % 16) / 2, nt = n0 / 16, c = n0 % 16;
    uint8_t codes[8];
    for (int s = 0; s < 8; s++) {
      int k, n;
      mgen__e4m3_source(N, word, s, &k, &n);
      codes[s] = w_codes[n][k];
    }
    words[32 * nt + 4 * c + q][kb] = mgen__e4m3_word(fe2m1, codes);
  }
}

static void run(int fe2m1, float out[N][M]) {
  pack(fe2m1);
  CUDA_CHECK((cudaError_t)w4a8_probe_run(fe2m1, (const uint32_t(*)[TILES])words,
                                         (const uint8_t(*)[W4A8_PROBE_BLOCKS])w_u, (const uint8_t(*)[K])a_bytes, out));
}

static unsigned random_e4m3(rng *r) {
  for (;;) {
    const unsigned b = rng_below(r, 256);
    if ((b & 0x7f) != 0x7f) return b; /* not NaN */
  }
}

/* Random codes, and for fe2m1 random block offsets over the tables' whole range. */
static void random_weights(int fe2m1, rng *r) {
  for (int n = 0; n < N; n++) {
    for (int k = 0; k < K; k++) w_codes[n][k] = (uint8_t)rng_below(r, 16);
    for (int b = 0; b < W4A8_PROBE_BLOCKS; b++)
      w_u[n][b] = fe2m1 ? (uint8_t)rng_below(r, MGEN_MXFP4_E4M3_U_MAX + 1) : 0;
  }
}

int main(void) {
  gpu_require_device("test_w4a8_probe_gpu");
  struct cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major != 9) {
    printf("test_w4a8_probe_gpu: skipped: sm_%d%d (the probe is sm_90a code)\n", prop.major, prop.minor);
    return SKIP_EXIT;
  }
  rng r;
  rng_seed(&r, rng_test_seed("test_w4a8_probe_gpu"));
  for (int fe2m1 = 0; fe2m1 < 2; fe2m1++) {
    const int scale_log2 = fe2m1 ? MGEN_E4M3_MXFP4_LOG2 : MGEN_E4M3_U4B8_LOG2;
    const char *fmt = fe2m1 ? "fe2m1" : "u4b8";
    /* One product per output: row m's only nonzero at k = 8 run + m. */
    long exact_bad = 0;
    for (int run_i = 0; run_i < K / M; run_i++) {
      random_weights(fe2m1, &r);
      memset(a_bytes, 0, sizeof a_bytes);
      for (int m = 0; m < M; m++) {
        unsigned b;
        do b = random_e4m3(&r); while ((b & 0x7f) == 0); /* nonzero */
        a_bytes[m][M * run_i + m] = (uint8_t)b;
      }
      run(fe2m1, c_t);
      for (int n = 0; n < N; n++)
        for (int m = 0; m < M; m++) {
          const int k = M * run_i + m;
          const double want = w_value(fe2m1, n, k) * fp4_e4m3_value(a_bytes[m][k]);
          const double got = ldexp((double)c_t[n][m], -scale_log2);
          if (got != want) exact_bad++;
          CHECK(got == want, "%s: C^T[%d][%d] = %.9g, want W[%d][%d] %g x A[%d][%d] %g = %.9g", fmt, n,
                m, got, n, k, w_value(fe2m1, n, k), m, k, fp4_e4m3_value(a_bytes[m][k]), want);
        }
    }
    /* Full random sums. */
    double worst = 0;
    for (int trial = 0; trial < 8; trial++) {
      random_weights(fe2m1, &r);
      for (int m = 0; m < M; m++)
        for (int k = 0; k < K; k++) a_bytes[m][k] = (uint8_t)random_e4m3(&r);
      run(fe2m1, c_t);
      run(fe2m1, c_again);
      CHECK(memcmp(c_t, c_again, sizeof c_t) == 0, "%s trial %d: two runs differ", fmt, trial);
      for (int n = 0; n < N; n++)
        for (int m = 0; m < M; m++) {
          double ref = 0, mag = 0;
          for (int k = 0; k < K; k++) {
            const double p = w_value(fe2m1, n, k) * fp4_e4m3_value(a_bytes[m][k]);
            ref += p, mag += fabs(p);
          }
          const double got = ldexp((double)c_t[n][m], -scale_log2);
          const double err = mag > 0 ? fabs(got - ref) / mag : fabs(got - ref);
          if (err > worst || isnan(got)) worst = isnan(got) ? INFINITY : err;
          CHECK(isfinite(got) && err <= 0x1p-10, "%s trial %d: C^T[%d][%d] = %.9g, FP64 %.9g (error %.3g of "
                "the terms' magnitudes %.6g)", fmt, trial, n, m, got, ref, err, mag);
        }
    }
    printf("test_w4a8_probe_gpu: %s: %ld of %d single products off; random sums: worst error %.3g "
           "of the terms' magnitudes (2^%.1f)\n", fmt, exact_bad, N * K, worst,
           worst > 0 ? log2(worst) : -INFINITY);
  }
  return check_exit("test_w4a8_probe_gpu");
}
