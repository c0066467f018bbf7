/* test_w4a8_gpu.c -- the W4A8 GEMM (mgen.h: mgen_gemm_a8, mgen_gemm_a8_kernel) on the GPU: every
 * kernel of the built-in table that reads the e4m3 layout (FP8 E4M3 activations times u4b8, u4 or
 * MXFP4 weights: the wgmma family's tile_k 128 kernels, sm_90a, and the mma family's sm89
 * decode tiles, mma.sync m16n8k32) against an FP64 reference, on fresh
 * random data each run (the seed is printed; MGEN_TEST_SEED repeats a run).
 *
 * For each (K, N) shape, act (FP16, BF16: the output's and the scales' type), format and group
 * the table's W4A8 kernels have (the default set: u4b8 128, per channel; --space full: u4b8 32,
 * 64, MXFP4 32 and u4 too), where a selected kernel of that key runs it:
 *   - u4b8 weights: random codes 0..15 and scales of either sign, |s| uniform in [2^-5, 2^-3],
 *     in the act, through mgen_pack into the e4m3 layout (buffers poisoned first);
 *   - u4 weights: the same codes and scales with zero points uniform over 0..15, through
 *     mgen_pack_weights; the reference weight is code - zero;
 *   - MXFP4 weights: a random checkpoint through mgen_pack_fp4 into the e4m3 layout: every
 *     E2M1 code, each column's largest E8M0 exponent e_max in 121..125 (one block has it) and
 *     its blocks at u = e_max - e of 0..11 (three in four: folded exactly) or 12..21 (past the
 *     tables' floor: codes rounded to it, layout.h mgen__mxfp4_e4m3_code, which
 *     test_dequant_e4m3 checks against a search); the reference weight is the rounded code's
 *     E2M1 value times 2^(e_max - min(u, 11) - 127). Once per act, mgen_quantize of FP16/BF16
 *     weights into the e4m3 layout (blocks 0..19 binades below their column's largest) must
 *     give the bytes mgen_pack_fp4 gives for the checkpoint the CPU quantizer
 *     (tests/common/fp4.c) makes of them: the GPU quantizer's two roundings are the import's;
 *   - where K is not a multiple of 128 the K padding's words are then overwritten with 0xff
 *     (every code -8 or -6: layout.h, the padding is the buffer's tail), so that only a kernel
 *     that zero-fills A past K passes;
 *   - activations: random FP16/BF16 rows of magnitudes 2^-2..2^2 (row i: 2^(i%5 - 2), so the
 *     rows' scales differ by powers of two) through mgen_quantize_act, whose E4M3 codes and
 *     FP32 row scales are copied back: the reference reads exactly those;
 *   - reference, FP64 (exact but for the group scales' sum): C[i][j] = a(i) * sum_k
 *     value(A8[i][k]) (code[j][k] - 8) scale[k / group][j] (MXFP4: the weight above), a(i) the
 *     row's scale (a_scale_per_row 1) or one per-tensor scale (0; 3 x row 0's, no row's own);
 *     u4: (code[j][k] - zero[k / group][j]) in place of code - 8.
 * Then every such kernel (mgen_gemm_a8_kernel) for every M of {1, 3, 7, 17, 33, 100, 256}
 * (--quick: {1, 7, 17, 100}) with row scales, and once at the largest M per tensor, into an
 * output poisoned with 0xff (NaN in both types) plus a guard of GUARD_ELEMS: every element
 * within the bound below, none NaN or inf (unwritten), none written past M x N. At M = 7
 * and 100 the same call twice, bit for bit, and captured into a CUDA graph on the stream
 * (after the direct runs: the stream's workspace exists) and replayed twice, the output
 * poisoned before each replay: bit for bit the direct run's; these runs with a bias
 * (mgen_weights.d_bias, n values of the act uniform in +-2x the outputs' RMS), checked
 * against a(i) ref + bias: added after the row scale a(i) (amax / 448, below 2^-6 here), so a
 * bias scaled by it, lost or doubled misses by about the outputs' size. mgen_gemm_a8's own choice
 * at every M (every other one with the bias): mgen_gemm_choice names a W4A8 kernel of the
 * key, and the result passes the check.
 * A kernel of the key that cannot run the shape (mgen__can_implement) must refuse it with
 * ERR_UNSUPPORTED_SHAPE, C untouched.
 * Refusals (once, C untouched, the message naming the cause): mgen_gemm and mgen_gemm_kernel
 * on e4m3-layout weights and mgen_gemm_a8(_kernel) on mma-layout weights
 * (ERR_UNSUPPORTED_FORMAT), a_scale_per_row 2 and -1 (ERR_INVALID_ARG), NULL d_a_scales
 * (ERR_NULL_POINTER), act != w->act (ERR_UNSUPPORTED_FORMAT), misaligned d_a8, d_a_scales
 * and w->d_bias (ERR_MISALIGNED).
 * Per kernel at the end: it ran, and (per channel, but --race and the 256-deep tiles, which
 * run no padded K) ran a K that is not a multiple of 128. A W4A8 kernel of a format other than
 * u4b8, u4 and MXFP4 fails the test (no weights for it here).
 *
 * The bound, per element, u the act's unit roundoff (2^-11 FP16, 2^-8 BF16):
 *     |c - ref| <= 2u |ref| + |a(i)| (2^-10 acc + (K / 128 + 8) 2^-24 abs) + tiny
 *   - 2u |ref|: the output's rounding to the act (u |c|) and the FP32 products of the sum by
 *     the column, row and 2^-kLog2 factors (a few 2^-24);
 *   - acc, the FP8 wgmma's accumulation: the products value(A8) x (code - 8) are exact (4 x 4
 *     significant bits), but Hopper's FP8 MMA keeps the running sum to about 13-14 bits
 *     (truncating; test_w4a8_probe_gpu measures one 128-deep sum), not FP32's 24. A chain of
 *     wgmma k32 steps runs per 128-deep stage, g128, per channel and MXFP4 alike (the kernel
 *     adds each stage's sums into FP32 totals, times the group scale at g128). Step t of a
 *     chain adds its products P_t = sum |p| to a sum that has reached at most H_t = max |sum|
 *     at the chain's earlier step ends (a piece starting inside the chain: at most 2 H_t), so
 *     acc = sum over groups |s_g| sum_t (2 H_t + P_t). 2^-10 of it is 8 to 16 times what
 *     truncating each step's sum to 13 bits costs (2^-13 |sum| <= 2^-13 (H_t + P_t)), room for
 *     the products' alignment inside a step; over one 128-deep chain it is at least 2^-10 of
 *     the terms' magnitudes, test_w4a8_probe_gpu's limit. (DeepSeek-V3 reports about 14 bits
 *     kept and a 2% worst relative error at K = 4096 in one chain: ~2^-12 |sum| per step; an
 *     emulation of these shapes' data, each step's sum truncated to 13 bits, its products
 *     first floored to 13 bits below the largest addend or not, used at most 0.1 of the bound,
 *     split chains included.) The worst err / bound of each kernel is printed: the headroom;
 *   - abs = sum_k |p_k s_g|: FP32 scaling and summing of the group sums and split pieces
 *     (K / 128 + a few additions of 2^-24 each);
 *   - tiny = 2^-24 (FP16; 2^-132 BF16): results in the act's subnormals.
 * What it catches: the outputs are about 3..50 (|ref| ~ sqrt(K) x the terms' RMS) and the
 * bound is typically 3-7% of |ref| (K 512-4160; it grows as K / sqrt(K), the chains' count
 * over |ref|), while a
 * missing row scale is off by 100-1800x and a wrong one (another row's, or per row where
 * per tensor was asked) by 4/3x or more (the per-tensor scale is no row's, the rows' scales
 * differ by 2x), a wrong group or column scale flips or rescales whole groups (random
 * signs, 4x spread), a transposed or misplaced W gives an uncorrelated sum, a lost or
 * doubled 128-deep stage moves an output by ~sqrt(128 / K) |ref|, a missing 2^-kLog2 factor
 * is 512x, and A read past K meets the padding's -8 codes: all over the bound on most
 * elements, and one element over it fails the case.
 *
 * Skips (exit 77) without a GPU, below sm_89, where the table has no W4A8 kernel or none of
 * them runs on this device (sm_89: the mma ones; sm_90a code). MGEN_TEST_KERNELS (comma-separated globs) narrows
 * the kernels; at least one must be tested.
 * --race (racecheck): K = 1024, N = 512, M = 7 and 100, on a context of 3 SMs (mgen_ctx_opts
 * max_sms) so that each block runs deep pieces of the ring, as test_gemm_gpu --race (K a
 * multiple of 256: the 256-deep mma tiles run only such k, and every kernel must run).
 * Run:  build/tests/test_w4a8_gpu                (ctest -L gpu)
 *       compute-sanitizer --error-exitcode 1 build/tests/test_w4a8_gpu --quick
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "dispatch/select.h" /* mgen__can_implement: the shapes a kernel runs */
#include "formats/layout.h"  /* MGEN_LAYOUT_K_PAD, mgen__mxfp4_e4m3_code */
#include "fp4.h"             /* fp4_e4m3_value */
#include "gpu_util.h"
#include "rng.h"

#define NAME "test_w4a8_gpu"
#define WGMMA_K 32      /* K depth of one FP8 wgmma: a step of the accumulation chains */
#define ACC_REL 0x1p-10 /* the bound's FP8 accumulation term (header) */
#define W4A8_CHAIN 128  /* K depth of an FP8 accumulation chain: a stage, summed into FP32 after */
#define GUARD_ELEMS 4096
#define MAX_GROUPS 8
#define MXFP4_GROUP 32
enum { RACE_SMS = 3 };

typedef struct shape {
  int k, n;
} shape;

/* 640 x 320: the last column tile of the 128-, 192- and 256-wide tiles is partial; 4096 x 512:
 * long chains over few tiles (split K); 1088, 576, 960 and 4160 are multiples of 64, not of 128
 * (per channel only: the padded layout; 960 x 256 for the 256-wide tiles in --quick). 1024 x
 * 2048 (quick): more work units than SMs. */
static const shape full_shapes[] = {{512, 256},  {1024, 768}, {640, 320},
                                    {4096, 512}, {1088, 256}, {4160, 768}};
static const shape quick_shapes[] = {{512, 256}, {576, 192}, {960, 256}, {640, 320}, {1024, 2048}};
static const shape race_shapes[] = {{1024, 512}};
static const int full_ms[] = {1, 3, 7, 17, 33, 100, 256};
static const int quick_ms[] = {1, 7, 17, 100};
static const int race_ms[] = {7, 100};
static const int twice_ms[] = {7, 100}; /* determinism and graph replay */
/* Per channel, full mode: segments long enough for the consumers' unrolled passes over the ring
 * from a segment's first stage (the 192-row tile's per-channel zero points are read there). */
static const shape long_shape = {28672, 256};
static const int long_ms[] = {64, 100};
static const int acts[] = {MGEN_ACT_F16, MGEN_ACT_BF16};
static const int wfmts[] = {MGEN_WFMT_U4B8, MGEN_WFMT_FE2M1, MGEN_WFMT_U4};

typedef struct kernel_stats {
  int runs, failures, padded; /* padded: runs with K % 128 != 0 */
  double max_ratio;           /* worst err / bound */
} kernel_stats;

/* One (shape, act, group): weights, A and the reference for m_max rows, the outputs. */
typedef struct problem {
  int act, wfmt, group, n, k, m_max;
  char desc[64];            /* "f16 u4b8 g128 k=512 n=256": messages */
  mgen_weights w;           /* u4b8, u4 or MXFP4 in the e4m3 layout */
  size_t qbytes;            /* w.d_q's size */
  uint8_t *d_codes;         /* mgen_pack's inputs (n x k codes, rows x n scales), or
                               mgen_pack_fp4's (n x k / 2 code pairs, n x k / 32 E8M0 bytes) */
  void *d_wscales;
  double *wv, *sv;          /* n x k weights and scale rows x n (MXFP4: the column factors) */
  uint8_t *a8;              /* host: A's E4M3 codes, m_max x k, and row scales */
  float *as, ts;            /* ts: the per-tensor scale */
  uint8_t *d_a8;
  float *d_as, *d_ts;
  double *ref, *acc, *abs;  /* m_max x n: the sum without a(i), the bound's acc and abs */
  size_t c_cap;             /* m_max x n + GUARD_ELEMS */
  uint16_t *d_c, *d_c2, *c, *c2;
  uint16_t *bias, *d_bias;  /* n: the bias of the runs with one (make_bias); w.d_bias: the call's */
} problem;

static mgen_ctx *ctx;
static cudaStream_t stream;
static kernel_stats *stats;
static double e4m3[256]; /* value of each E4M3 byte */

/* ---------------------------------------------------------------- kernels */

static int is_w4a8(const mgen_kernel_desc *d) {
  return d->layout == MGEN_LAYOUT_E4M3 && d->op == MGEN_OP_DENSE;
}

/* A W4A8 kernel this device runs and MGEN_TEST_KERNELS (if set) selects. */
static int runs_here(const mgen_kernel_desc *d) {
  return is_w4a8(d) && mgen_kernel_runs_on(d, mgen_ctx_sm(ctx)) && gpu_kernel_selected(d->name);
}

static int of_key(const mgen_kernel_desc *d, int act, int wfmt, int group) {
  return d->act == act && d->wfmt == wfmt && d->group == group;
}

/* The distinct groups of the selected W4A8 kernels of `act` and `wfmt`. */
static int groups_here(int act, int wfmt, int *groups) {
  return gpu_table_groups(act, wfmt, runs_here, groups, MAX_GROUPS);
}

/* ---------------------------------------------------------------- data and reference */

/* Buffers of p->w sized (p->qbytes) and poisoned, for the packing call that follows. */
static void alloc_weights(problem *p) {
  size_t sb;
  MGEN_CHECK(ctx, mgen_weights_bytes(&p->w, &p->qbytes, &sb));
  p->w.d_q = gpu_alloc(p->qbytes);
  p->w.d_scales = gpu_alloc(sb);
  gpu_fill(p->w.d_q, 0xAB, p->qbytes);
  gpu_fill(p->w.d_scales, 0xAB, sb);
}

/* A weight scale of the act: either sign, |s| uniform in [2^-5, 2^-3] (header). */
static uint16_t random_scale(rng *r, int act) {
  const double sign = rng_below(r, 2) ? -1.0 : 1.0;
  return act_from_double(act, sign * rng_uniform(r, 0.5, 2.0) * 0x1p-4);
}

static void make_u4b8(rng *r, problem *p) {
  const int rows = p->group ? p->k / p->group : 1;
  const size_t nk = (size_t)p->n * p->k;
  uint8_t *codes = malloc(nk);
  uint16_t *scales = malloc(sizeof *scales * (size_t)rows * p->n);
  for (size_t i = 0; i < nk; i++) codes[i] = (uint8_t)rng_below(r, 16), p->wv[i] = (double)codes[i] - 8.0;
  for (size_t i = 0; i < (size_t)rows * p->n; i++) {
    scales[i] = random_scale(r, p->act);
    p->sv[i] = act_to_double(p->act, scales[i]);
  }
  p->d_codes = gpu_alloc(nk);
  p->d_wscales = gpu_alloc((size_t)rows * p->n * 2);
  gpu_upload(p->d_codes, codes, nk);
  gpu_upload(p->d_wscales, scales, (size_t)rows * p->n * 2);
  p->w = (mgen_weights){.wfmt = MGEN_WFMT_U4B8, .act = (mgen_act)p->act, .scheme = MGEN_SCHEME_GROUP,
                        .group = p->group, .n = p->n, .k = p->k, .layout = MGEN_LAYOUT_E4M3};
  alloc_weights(p);
  MGEN_CHECK(ctx, mgen_pack(ctx, p->d_codes, p->d_wscales, &p->w, stream));
  free(codes), free(scales);
}

/* u4 (header): u4b8's codes and scales with zero points over 0..15, through mgen_pack_weights;
 * wv = code - zero. */
static void make_u4(rng *r, problem *p) {
  const int rows = p->group ? p->k / p->group : 1;
  const size_t nk = (size_t)p->n * p->k, rn = (size_t)rows * p->n;
  uint8_t *codes = malloc(nk), *zeros = malloc(rn);
  uint16_t *scales = malloc(sizeof *scales * rn);
  for (size_t i = 0; i < rn; i++) {
    zeros[i] = (uint8_t)rng_below(r, 16);
    scales[i] = random_scale(r, p->act);
    p->sv[i] = act_to_double(p->act, scales[i]);
  }
  for (int j = 0; j < p->n; j++)
    for (int kk = 0; kk < p->k; kk++) {
      const size_t at = (size_t)j * p->k + kk;
      codes[at] = (uint8_t)rng_below(r, 16);
      p->wv[at] = (double)codes[at] - zeros[(size_t)(p->group ? kk / p->group : 0) * p->n + j];
    }
  p->d_codes = gpu_alloc(nk);
  p->d_wscales = gpu_alloc(rn * 2);
  uint8_t *d_zeros = gpu_alloc(rn);
  gpu_upload(p->d_codes, codes, nk);
  gpu_upload(p->d_wscales, scales, rn * 2);
  gpu_upload(d_zeros, zeros, rn);
  p->w = (mgen_weights){.wfmt = MGEN_WFMT_U4, .act = (mgen_act)p->act, .scheme = MGEN_SCHEME_ASYM,
                        .group = p->group, .n = p->n, .k = p->k, .layout = MGEN_LAYOUT_E4M3};
  alloc_weights(p);
  const mgen_pack_src src = {.codes = p->d_codes, .codes_bytes = nk, .scales = p->d_wscales,
                             .scales_bytes = rn * 2, .zeros = d_zeros, .zeros_bytes = rn};
  MGEN_CHECK(ctx, mgen_pack_weights(ctx, &src, &p->w, stream));
  gpu_sync(stream, "mgen_pack_weights (u4)");
  CUDA_CHECK(cudaFree(d_zeros));
  free(codes), free(zeros), free(scales);
}

/* An MXFP4 checkpoint (header): codes, E8M0 bytes with u past the floor in a quarter of the
 * blocks; wv the weights the e4m3 layout holds over sv, each column's 2^(e_max - 127). */
static void make_mxfp4(rng *r, problem *p) {
  const int n = p->n, k = p->k, blocks = k / MXFP4_GROUP;
  uint8_t *codes = malloc((size_t)n * k), *packed = malloc((size_t)n * k / 2), *e = malloc((size_t)n * blocks);
  for (int j = 0; j < n; j++) {
    const int e_max = 121 + (int)rng_below(r, 5);
    p->sv[j] = ldexp(1.0, e_max - 127);
    for (int b = 0; b < blocks; b++) {
      const int u = b == j % blocks ? 0 : rng_below(r, 4) ? (int)rng_below(r, 12) : 12 + (int)rng_below(r, 10);
      e[(size_t)j * blocks + b] = (uint8_t)(e_max - u);
      for (int t = 0; t < MXFP4_GROUP; t++) {
        const size_t at = (size_t)j * k + (size_t)b * MXFP4_GROUP + t;
        codes[at] = (uint8_t)rng_below(r, 16);
        const unsigned stored = mgen__mxfp4_e4m3_code(codes[at], u);
        p->wv[at] = ldexp(fp4_e2m1_value(stored), -(u < MGEN_MXFP4_E4M3_U_MAX ? u : MGEN_MXFP4_E4M3_U_MAX));
      }
    }
  }
  fp4_pack_bytes(codes, n, k, packed);
  p->d_codes = gpu_alloc((size_t)n * k / 2);
  p->d_wscales = gpu_alloc((size_t)n * blocks);
  gpu_upload(p->d_codes, packed, (size_t)n * k / 2);
  gpu_upload(p->d_wscales, e, (size_t)n * blocks);
  p->w = (mgen_weights){.wfmt = MGEN_WFMT_FE2M1, .act = (mgen_act)p->act, .scheme = MGEN_SCHEME_MXFP4,
                        .group = MXFP4_GROUP, .n = n, .k = k, .layout = MGEN_LAYOUT_E4M3};
  alloc_weights(p);
  MGEN_CHECK(ctx, mgen_pack_fp4(ctx, p->d_codes, (size_t)n * k / 2, p->d_wscales, (size_t)n * blocks, 1.0f,
                                &p->w, stream));
  free(codes), free(packed), free(e);
}

static void make_weights(rng *r, problem *p) {
  if (p->wfmt == MGEN_WFMT_FE2M1) make_mxfp4(r, p);
  else if (p->wfmt == MGEN_WFMT_U4) make_u4(r, p);
  else make_u4b8(r, p);
  gpu_sync(stream, "packing");
  /* The K padding (the words' tail, past n * k / 2 bytes): every code -8 (-6; u4: 15 - 8, the
   * padded rows' zero) instead of 0.
   * The memset's device synchronization is the boundary mgen.h asks before the first GEMM. */
  const size_t nk = (size_t)p->n * p->k;
  if (p->k % MGEN_LAYOUT_K_PAD != 0)
    gpu_fill((uint8_t *)p->w.d_q + nk / 2, 0xff, p->qbytes - nk / 2);
}

/* mgen_quantize into the e4m3 layout (MXFP4) against mgen_pack_fp4 of the CPU quantizer's
 * checkpoint of the same weights, byte for byte (header). */
static void check_mxfp4_quantize(rng *r, int act) {
  const int n = 256, k = 1088, blocks = k / MXFP4_GROUP;
  const size_t nk = (size_t)n * k;
  uint16_t *w16 = malloc(2 * nk);
  uint8_t *codes = malloc(nk), *packed = malloc(nk / 2), *e = malloc((size_t)n * blocks);
  for (int j = 0; j < n; j++)
    for (int b = 0; b < blocks; b++) {
      const double mag = ldexp(1.0, -(int)rng_below(r, 20));
      for (int t = 0; t < MXFP4_GROUP; t++)
        w16[(size_t)j * k + (size_t)b * MXFP4_GROUP + t] = act_from_double(act, mag * rng_uniform(r, -1.0, 1.0));
    }
  float global;
  fp4_quantize(act, MGEN_SCHEME_MXFP4, w16, n, k, codes, e, &global);
  fp4_pack_bytes(codes, n, k, packed);
  mgen_weights q = {.wfmt = MGEN_WFMT_FE2M1, .act = (mgen_act)act, .scheme = MGEN_SCHEME_MXFP4,
                    .group = MXFP4_GROUP, .n = n, .k = k, .layout = MGEN_LAYOUT_E4M3};
  mgen_weights imp = q;
  size_t qb, sb;
  MGEN_CHECK(ctx, mgen_weights_bytes(&q, &qb, &sb));
  void *d_w = gpu_alloc(2 * nk), *d_packed = gpu_alloc(nk / 2), *d_e = gpu_alloc((size_t)n * blocks);
  q.d_q = gpu_alloc(qb), q.d_scales = gpu_alloc(sb), imp.d_q = gpu_alloc(qb), imp.d_scales = gpu_alloc(sb);
  gpu_fill(q.d_q, 0xAB, qb), gpu_fill(q.d_scales, 0xAB, sb);
  gpu_fill(imp.d_q, 0x5A, qb), gpu_fill(imp.d_scales, 0x5A, sb);
  gpu_upload(d_w, w16, 2 * nk);
  gpu_upload(d_packed, packed, nk / 2);
  gpu_upload(d_e, e, (size_t)n * blocks);
  MGEN_CHECK(ctx, mgen_quantize(ctx, d_w, &q, stream));
  MGEN_CHECK(ctx, mgen_pack_fp4(ctx, d_packed, nk / 2, d_e, (size_t)n * blocks, 1.0f, &imp, stream));
  gpu_sync(stream, "mgen_quantize / mgen_pack_fp4 (e4m3)");
  uint8_t *a = malloc(qb + sb), *b = malloc(qb + sb);
  CUDA_CHECK(cudaMemcpy(a, q.d_q, qb, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(a + qb, q.d_scales, sb, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(b, imp.d_q, qb, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(b + qb, imp.d_scales, sb, cudaMemcpyDeviceToHost));
  size_t diff = 0, first = 0;
  for (size_t i = 0; i < qb + sb; i++)
    if (a[i] != b[i] && diff++ == 0) first = i;
  int past_floor = 0;
  for (int j = 0; j < n; j++) {
    const uint8_t *row = e + (size_t)j * blocks;
    int e_max = 0;
    for (int b = 0; b < blocks; b++) e_max = row[b] > e_max ? row[b] : e_max;
    for (int b = 0; b < blocks; b++) past_floor += e_max - row[b] > MGEN_MXFP4_E4M3_U_MAX;
  }
  CHECK(diff == 0, "%s MXFP4 e4m3 layout: mgen_quantize and mgen_pack_fp4 of the CPU checkpoint differ in "
        "%zu of %zu bytes (first: %s byte %zu)", act_name(act), diff, qb + sb, first < qb ? "d_q" : "d_scales",
        first < qb ? first : first - qb);
  CHECK(past_floor > 0, "%s: the weights put no block past the floor (the case is not exercised)", act_name(act));
  printf("%s: %s MXFP4 quantize = import of the CPU checkpoint (%zu bytes, %d of %d blocks past the floor)\n",
         NAME, act_name(act), qb + sb, past_floor, n * blocks);
  void *bufs[] = {d_w, d_packed, d_e, q.d_q, q.d_scales, imp.d_q, imp.d_scales};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) CUDA_CHECK(cudaFree(bufs[i]));
  free(w16), free(codes), free(packed), free(e), free(a), free(b);
}

static void make_activations(rng *r, problem *p) {
  const size_t mk = (size_t)p->m_max * p->k;
  uint16_t *x = malloc(2 * mk);
  for (int i = 0; i < p->m_max; i++) {
    const double mag = ldexp(1.0, i % 5 - 2);
    for (int j = 0; j < p->k; j++)
      x[(size_t)i * p->k + j] = act_from_double(p->act, mag * rng_uniform(r, -1.0, 1.0));
  }
  void *d_x = gpu_alloc(2 * mk);
  gpu_upload(d_x, x, 2 * mk);
  MGEN_CHECK(ctx, mgen_quantize_act(ctx, (mgen_act)p->act, p->m_max, p->k, d_x, p->d_a8, p->d_as,
                                    stream));
  gpu_sync(stream, "mgen_quantize_act");
  CUDA_CHECK(cudaMemcpy(p->a8, p->d_a8, mk, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(p->as, p->d_as, 4 * (size_t)p->m_max, cudaMemcpyDeviceToHost));
  p->ts = 3.0f * p->as[0]; /* no row's: row 0 is the least (2^-2), the others 2x, 4x, ... */
  gpu_upload(p->d_ts, &p->ts, sizeof p->ts);
  CUDA_CHECK(cudaFree(d_x));
  free(x);
}

/* ref, acc and abs of the header for m_max rows; chains of WGMMA_K steps per 128-deep stage, or
 * per group where u4b8 and u4 groups are shorter (a chain's sums take one scale; per channel,
 * and MXFP4's column factors, one scale for the whole K). */
static void reference(problem *p) {
  const int k = p->k, n = p->n, rows = p->wfmt != MGEN_WFMT_FE2M1 && p->group > 0;
  const int chain = rows && p->group < W4A8_CHAIN ? p->group : W4A8_CHAIN;
  double *av = malloc(sizeof *av * (size_t)k);
  for (int i = 0; i < p->m_max; i++) {
    for (int kk = 0; kk < k; kk++) av[kk] = e4m3[p->a8[(size_t)i * k + kk]];
    for (int j = 0; j < n; j++) {
      const double *w = p->wv + (size_t)j * k;
      double sum = 0, acc = 0, abs = 0;
      for (int c0 = 0; c0 < k; c0 += chain) {
        const double s = p->sv[(size_t)(rows ? c0 / p->group : 0) * n + j];
        const int c1 = c0 + chain < k ? c0 + chain : k;
        double run = 0, high = 0, chain_acc = 0, chain_abs = 0;
        for (int t0 = c0; t0 < c1; t0 += WGMMA_K) {
          const int t1 = t0 + WGMMA_K < c1 ? t0 + WGMMA_K : c1;
          double step = 0, mag = 0;
          for (int kk = t0; kk < t1; kk++) {
            const double t = av[kk] * w[kk];
            step += t, mag += fabs(t);
          }
          chain_acc += 2.0 * high + mag;
          chain_abs += mag;
          run += step; /* exact: multiples of 2^-21 below 2^24 */
          high = fmax(high, fabs(run));
        }
        sum += s * run, acc += fabs(s) * chain_acc, abs += fabs(s) * chain_abs;
      }
      const size_t at = (size_t)i * n + j;
      p->ref[at] = sum, p->acc[at] = acc, p->abs[at] = abs;
    }
  }
  free(av);
}

/* The bias (header): uniform in [-2 rms, 2 rms], rms that of the outputs a(i) ref. */
static void make_bias(rng *r, problem *p) {
  double sq = 0;
  for (int i = 0; i < p->m_max; i++)
    for (int j = 0; j < p->n; j++) {
      const double y = p->as[i] * p->ref[(size_t)i * p->n + j];
      sq += y * y;
    }
  const double rms = sq > 0 ? sqrt(sq / ((double)p->m_max * p->n)) : 1.0;
  for (int j = 0; j < p->n; j++)
    p->bias[j] = act_from_double(p->act, rng_uniform(r, -2.0, 2.0) * rms);
  gpu_upload(p->d_bias, p->bias, sizeof *p->bias * (size_t)p->n);
}

/* ---------------------------------------------------------------- running and checking */

static mgen_status a8_call(const problem *p, const char *name, int m, int per_row, uint16_t *d_c) {
  const float *scales = per_row ? p->d_as : p->d_ts;
  return name ? mgen_gemm_a8_kernel(ctx, name, (mgen_act)p->act, m, p->d_a8, scales, per_row, &p->w,
                                    d_c, stream)
              : mgen_gemm_a8(ctx, (mgen_act)p->act, m, p->d_a8, scales, per_row, &p->w, d_c, stream);
}

/* The call captured into a CUDA graph on the stream and replayed twice, C poisoned before
 * each replay (the second shows the replay leaves the graph workspace ready). */
static mgen_status a8_graph(const problem *p, const char *name, int m, int per_row, uint16_t *d_c) {
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const mgen_status st = a8_call(p, name, m, per_row, d_c);
  CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  if (st != MGEN_OK) {
    CUDA_CHECK(cudaGraphDestroy(graph));
    return st;
  }
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; replay++) {
    CUDA_CHECK(cudaMemsetAsync(d_c, 0xff, p->c_cap * 2, stream));
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return MGEN_OK;
}

/* Every element of c (m rows) against the bound; the guard past m x n untouched. Returns the
 * worst err / bound (inf where an element is NaN or inf). */
static double check_output(const problem *p, const char *label, int m, int per_row, const uint16_t *c) {
  const double u = act_unit_roundoff(p->act), tiny = p->act == MGEN_ACT_F16 ? 0x1p-24 : 0x1p-132;
  const double fp32 = ldexp((p->k + 127) / 128 + 8, -24);
  size_t bad = 0, nonfinite = 0, guard = 0, first = (size_t)-1;
  double worst = 0;
  for (int i = 0; i < m; i++) {
    const double a = per_row ? p->as[i] : p->ts;
    for (int j = 0; j < p->n; j++) {
      const size_t at = (size_t)i * p->n + j;
      const double b = p->w.d_bias != NULL ? act_to_double(p->act, p->bias[j]) : 0.0;
      const double v = act_to_double(p->act, c[at]), ref = a * p->ref[at] + b;
      const double bound =
          2 * u * fabs(ref) + fabs(a) * (ACC_REL * p->acc[at] + fp32 * p->abs[at]) + tiny;
      const double ratio = isfinite(v) ? fabs(v - ref) / bound : INFINITY;
      nonfinite += !isfinite(v);
      bad += isfinite(v) && ratio > 1.0;
      if (ratio > 1.0 && first == (size_t)-1) first = at;
      if (ratio > worst) worst = ratio;
    }
  }
  for (size_t at = (size_t)m * p->n; at < p->c_cap; at++) guard += c[at] != 0xffff;
  CHECK(bad == 0 && nonfinite == 0 && guard == 0, "%s m=%d %s (%s): %zu over the bound (worst %.3g), "
        "%zu NaN/inf (unwritten?), %zu written past m x n", label, m, p->desc,
        per_row ? "row scales" : "per tensor", bad, worst, nonfinite, guard);
  if (first != (size_t)-1) {
    const size_t i = first / (size_t)p->n;
    const double a = per_row ? p->as[i] : p->ts;
    const size_t j = first % (size_t)p->n;
    const double b = p->w.d_bias != NULL ? act_to_double(p->act, p->bias[j]) : 0.0;
    fprintf(stderr, "  first bad element: row %zu col %zu: c=%.6g (0x%04x) ref=%.6g (bias %.6g) "
            "a=%.6g acc=%.6g abs=%.6g\n", i, j, act_to_double(p->act, c[first]), c[first],
            a * p->ref[first] + b, b, a, p->acc[first], p->abs[first]);
  }
  return worst;
}

/* One GEMM (the named kernel, or mgen_gemm_a8's choice for name NULL) into d_c (graph: d_c2
 * by graph replay), copied into `host` and checked. Returns the worst ratio, -1 if refused. */
static double run_case(const problem *p, const char *name, int m, int per_row, int graph, uint16_t *host) {
  const char *label = name ? name : "mgen_gemm_a8 (choice)";
  uint16_t *d_c = graph ? p->d_c2 : p->d_c;
  mgen_status st;
  if (graph) {
    st = a8_graph(p, name, m, per_row, d_c);
  } else {
    CUDA_CHECK(cudaMemsetAsync(d_c, 0xff, p->c_cap * 2, stream)); /* NaN in both types */
    st = a8_call(p, name, m, per_row, d_c);
  }
  CHECK(st == MGEN_OK, "%s m=%d %s%s: %s: %s", label, m, p->desc, graph ? " (graph)" : "",
        mgen_status_str(st), mgen_ctx_last_error(ctx));
  if (st != MGEN_OK) return -1.0;
  CUDA_CHECK(cudaMemcpyAsync(host, d_c, p->c_cap * 2, cudaMemcpyDeviceToHost, stream));
  gpu_sync(stream, label); /* a device fault ends the test here, naming the kernel */
  return check_output(p, label, m, per_row, host);
}

/* The same call twice, bit for bit; then by graph replay, bit for bit the direct run's. */
static void check_twice(problem *p, const char *name, int m) {
  if (run_case(p, name, m, 1, 0, p->c) < 0 || run_case(p, name, m, 1, 0, p->c2) < 0) return;
  CHECK(memcmp(p->c, p->c2, p->c_cap * 2) == 0, "%s m=%d %s: two runs differ", name, m, p->desc);
  if (run_case(p, name, m, 1, 1, p->c2) < 0) return;
  CHECK(memcmp(p->c, p->c2, p->c_cap * 2) == 0, "%s m=%d %s: the graph replay differs from the "
        "direct run", name, m, p->desc);
}

static void record(size_t index, const problem *p, double ratio) {
  stats[index].runs++;
  stats[index].padded += p->k % MGEN_LAYOUT_K_PAD != 0;
  stats[index].failures += !(ratio >= 0.0 && ratio <= 1.0);
  if (!(ratio <= stats[index].max_ratio)) stats[index].max_ratio = ratio;
}

/* ---------------------------------------------------------------- refusals */

/* `got` (a call made with C poisoned with 0x5a) refused with `want`, its message naming `text`,
 * C untouched; C poisoned again for the next call. */
static void refused(const problem *p, mgen_status got, mgen_status want, const char *text, const char *what) {
  gpu_sync(stream, what);
  gpu_expect_refused(ctx, got, want, text, what, p->d_c, p->c_cap * 2, 0x5a);
  gpu_fill(p->d_c, 0x5a, p->c_cap * 2);
}

static void check_refusals(const problem *p, const char *kernel) {
  const mgen_act act = (mgen_act)p->act, other = act == MGEN_ACT_F16 ? MGEN_ACT_BF16 : MGEN_ACT_F16;
  const size_t bytes = p->c_cap * 2;
  mgen_weights mma = p->w; /* the same codes and scales in the mma layout (mgen_gemm's) */
  mma.layout = MGEN_LAYOUT_MMA;
  size_t qb, sb;
  MGEN_CHECK(ctx, mgen_weights_bytes(&mma, &qb, &sb));
  mma.d_q = gpu_alloc(qb);
  mma.d_scales = gpu_alloc(sb);
  MGEN_CHECK(ctx, mgen_pack(ctx, p->d_codes, p->d_wscales, &mma, stream));
  void *d_a16 = gpu_alloc((size_t)7 * p->k * 2);
  gpu_fill(d_a16, 0, (size_t)7 * p->k * 2);
  const uint8_t *a8 = p->d_a8;
  const float *as = p->d_as;
  gpu_fill(p->d_c, 0x5a, bytes);
  refused(p, mgen_gemm(ctx, act, 7, d_a16, &p->w, p->d_c, stream), MGEN_ERR_UNSUPPORTED_FORMAT,
          "mgen_gemm_a8", "mgen_gemm on e4m3-layout weights");
  refused(p, mgen_gemm_kernel(ctx, kernel, act, 7, d_a16, &p->w, p->d_c, stream),
          MGEN_ERR_UNSUPPORTED_FORMAT, "mgen_gemm_a8", "mgen_gemm_kernel on e4m3-layout weights");
  refused(p, mgen_gemm_a8(ctx, act, 7, a8, as, 1, &mma, p->d_c, stream), MGEN_ERR_UNSUPPORTED_FORMAT,
          "mma", "mgen_gemm_a8 on mma-layout weights");
  refused(p, mgen_gemm_a8_kernel(ctx, kernel, act, 7, a8, as, 1, &mma, p->d_c, stream),
          MGEN_ERR_UNSUPPORTED_FORMAT, "mma", "mgen_gemm_a8_kernel on mma-layout weights");
  refused(p, mgen_gemm_a8(ctx, act, 7, a8, as, 2, &p->w, p->d_c, stream), MGEN_ERR_INVALID_ARG,
          "a_scale_per_row", "a_scale_per_row = 2");
  refused(p, mgen_gemm_a8_kernel(ctx, kernel, act, 7, a8, as, -1, &p->w, p->d_c, stream),
          MGEN_ERR_INVALID_ARG, "a_scale_per_row", "a_scale_per_row = -1");
  refused(p, mgen_gemm_a8(ctx, act, 7, a8, NULL, 1, &p->w, p->d_c, stream), MGEN_ERR_NULL_POINTER,
          "d_a_scales", "d_a_scales NULL (per row)");
  refused(p, mgen_gemm_a8_kernel(ctx, kernel, act, 7, a8, NULL, 0, &p->w, p->d_c, stream),
          MGEN_ERR_NULL_POINTER, "d_a_scales", "d_a_scales NULL (per tensor)");
  refused(p, mgen_gemm_a8(ctx, other, 7, a8, as, 1, &p->w, p->d_c, stream), MGEN_ERR_UNSUPPORTED_FORMAT,
          "w->act", "mgen_gemm_a8 with act != w->act");
  refused(p, mgen_gemm_a8_kernel(ctx, kernel, other, 7, a8, as, 1, &p->w, p->d_c, stream),
          MGEN_ERR_UNSUPPORTED_FORMAT, "w->act", "mgen_gemm_a8_kernel with act != w->act");
  refused(p, mgen_gemm_a8(ctx, act, 7, a8 + 8, as, 1, &p->w, p->d_c, stream), MGEN_ERR_MISALIGNED,
          "d_a", "d_a8 8 bytes off 16");
  refused(p, mgen_gemm_a8(ctx, act, 7, a8, (const float *)((const char *)as + 2), 1, &p->w, p->d_c,
                          stream), MGEN_ERR_MISALIGNED, "d_a_scales", "d_a_scales 2 bytes off 4");
  mgen_weights off = p->w; /* a bias one element off 16 bytes */
  off.d_bias = p->d_bias + 1;
  refused(p, mgen_gemm_a8(ctx, act, 7, a8, as, 1, &off, p->d_c, stream), MGEN_ERR_MISALIGNED,
          "w->d_bias", "d_bias 2 bytes off 16");
  refused(p, mgen_gemm_a8_kernel(ctx, kernel, act, 7, a8, as, 1, &off, p->d_c, stream),
          MGEN_ERR_MISALIGNED, "w->d_bias", "mgen_gemm_a8_kernel: d_bias 2 bytes off 16");
  CUDA_CHECK(cudaFree(d_a16));
  CUDA_CHECK(cudaFree(mma.d_q));
  CUDA_CHECK(cudaFree(mma.d_scales));
}

/* ---------------------------------------------------------------- problems */

/* The first selected kernel of the key that runs (n, k), or -1: nothing to prepare. */
static int first_kernel(int act, int wfmt, int group, int n, int k) {
  const mgen_table *table = mgen_builtin_table();
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (runs_here(d) && of_key(d, act, wfmt, group) && mgen__can_implement(d, 1, n, k, NULL, 0)) return (int)i;
  }
  return -1;
}

static void run_problem(rng *r, const shape *s, int act, int wfmt, int group, const int *ms, size_t n_ms) {
  const mgen_table *table = mgen_builtin_table();
  const int first = first_kernel(act, wfmt, group, s->n, s->k);
  if (first < 0) return;
  const double t0 = gpu_seconds();
  problem p = {.act = act, .wfmt = wfmt, .group = group, .n = s->n, .k = s->k, .m_max = ms[n_ms - 1]};
  char group_name[16];
  snprintf(group_name, sizeof group_name, group ? "g%d" : "gc", group);
  snprintf(p.desc, sizeof p.desc, "%s %s %s k=%d n=%d", act_name(act),
           wfmt == MGEN_WFMT_FE2M1 ? "mxfp4" : wfmt == MGEN_WFMT_U4 ? "u4" : "u4b8", group_name, p.k, p.n);
  const size_t nk = (size_t)p.n * p.k, mn = (size_t)p.m_max * p.n;
  p.wv = malloc(sizeof *p.wv * nk);
  p.sv = malloc(sizeof *p.sv * (size_t)(group ? p.k / group : 1) * p.n);
  p.a8 = malloc((size_t)p.m_max * p.k);
  p.as = malloc(sizeof *p.as * (size_t)p.m_max);
  p.d_a8 = gpu_alloc((size_t)p.m_max * p.k);
  p.d_as = gpu_alloc(sizeof *p.d_as * (size_t)p.m_max);
  p.d_ts = gpu_alloc(sizeof *p.d_ts); /* one float: a per-row read past it is memcheck's */
  p.ref = malloc(sizeof *p.ref * mn);
  p.acc = malloc(sizeof *p.acc * mn);
  p.abs = malloc(sizeof *p.abs * mn);
  p.c_cap = mn + GUARD_ELEMS;
  p.d_c = gpu_alloc(p.c_cap * 2);
  p.d_c2 = gpu_alloc(p.c_cap * 2);
  p.c = malloc(p.c_cap * 2);
  p.c2 = malloc(p.c_cap * 2);
  p.bias = malloc(sizeof *p.bias * (size_t)p.n);
  p.d_bias = gpu_alloc(sizeof *p.d_bias * (size_t)p.n);
  make_weights(r, &p);
  make_activations(r, &p);
  reference(&p);
  make_bias(r, &p);
  problem biased = p; /* the same problem with its bias (header) */
  biased.w.d_bias = p.d_bias;
  snprintf(biased.desc, sizeof biased.desc, "%.50s + bias", p.desc);

  static int refusals_done; /* (u4b8's: its mma-layout copy comes from the same inputs) */
  if (!refusals_done && wfmt == MGEN_WFMT_U4B8) check_refusals(&p, table->kernels[first].name), refusals_done = 1;

  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (!runs_here(d) || !of_key(d, act, wfmt, group)) continue;
    char why[160] = "";
    if (!mgen__can_implement(d, 1, p.n, p.k, why, sizeof why)) { /* refused, C untouched */
      gpu_fill(p.d_c, 0x5a, p.c_cap * 2);
      refused(&p, a8_call(&p, d->name, 7, 1, p.d_c), MGEN_ERR_UNSUPPORTED_SHAPE, "", d->name);
      continue;
    }
    for (size_t j = 0; j < n_ms; j++) record(i, &p, run_case(&p, d->name, ms[j], 1, 0, p.c));
    record(i, &p, run_case(&p, d->name, p.m_max, 0, 0, p.c)); /* per tensor */
    for (size_t j = 0; j < sizeof twice_ms / sizeof twice_ms[0]; j++)
      if (twice_ms[j] <= p.m_max) check_twice(&biased, d->name, twice_ms[j]);
  }
  /* mgen_gemm_a8's choice: a W4A8 kernel of the key, and a correct result. */
  for (size_t j = 0; j < n_ms; j++) {
    const char *choice = NULL;
    const mgen_status st = mgen_gemm_choice(ctx, (mgen_act)act, ms[j], &p.w, &choice);
    CHECK(st == MGEN_OK, "choice m=%d %s: %s: %s", ms[j], p.desc, mgen_status_str(st),
          mgen_ctx_last_error(ctx));
    if (st != MGEN_OK) continue;
    const int index = mgen_table_find(table, choice);
    CHECK(index >= 0 && is_w4a8(&table->kernels[index]) && of_key(&table->kernels[index], act, wfmt, group),
          "choice m=%d %s: %s is not a W4A8 kernel of the key", ms[j], p.desc, choice);
    run_case(j % 2 ? &biased : &p, NULL, ms[j], 1, 0, p.c);
  }
  printf("%s: %s done in %.1f s\n", NAME, p.desc, gpu_seconds() - t0);
  fflush(stdout);

  CUDA_CHECK(cudaFree(p.w.d_q));
  CUDA_CHECK(cudaFree(p.w.d_scales));
  CUDA_CHECK(cudaFree(p.d_codes));
  CUDA_CHECK(cudaFree(p.d_wscales));
  CUDA_CHECK(cudaFree(p.d_a8));
  CUDA_CHECK(cudaFree(p.d_as));
  CUDA_CHECK(cudaFree(p.d_ts));
  CUDA_CHECK(cudaFree(p.d_c));
  CUDA_CHECK(cudaFree(p.d_c2));
  CUDA_CHECK(cudaFree(p.d_bias));
  free(p.wv), free(p.sv), free(p.a8), free(p.as), free(p.ref), free(p.acc), free(p.abs);
  free(p.c), free(p.c2), free(p.bias);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv) {
  gpu_require_device(NAME);
  int race = 0;
  for (int i = 1; i < argc; i++) race |= strcmp(argv[i], "--race") == 0;
  const int quick = race || gpu_quick_mode(argc, argv);
  struct cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sm = 10 * prop.major + prop.minor;
  if (sm < 89) {
    printf("%s: SKIPPED: sm_%d: the W4A8 kernels (FP8 mma.sync, FP8 wgmma) need sm_89, sm_90\n", NAME, sm);
    return SKIP_EXIT;
  }
  const mgen_table *table = mgen_builtin_table();
  int in_table = 0, on_device = 0;
  for (size_t i = 0; i < table->count; i++)
    if (is_w4a8(&table->kernels[i]))
      in_table++, on_device += mgen_kernel_runs_on(&table->kernels[i], sm);
  if (in_table == 0 || on_device == 0) {
    if (in_table == 0)
      printf("%s: SKIPPED: the kernel table (%s) has no kernel in the e4m3 layout (W4A8)\n", NAME,
             table->generator ? table->generator : "?");
    else
      printf("%s: SKIPPED: none of the table's %d W4A8 kernels runs on sm_%d\n", NAME, in_table, sm);
    return SKIP_EXIT;
  }
  for (unsigned b = 0; b < 256; b++) e4m3[b] = (b & 0x80 ? -1.0 : 1.0) * fp4_e4m3_value(b & 0x7f);
  rng r;
  rng_seed(&r, rng_test_seed(NAME));
  const double t0 = gpu_seconds();
  const mgen_ctx_opts race_opts = {.device = -1, .max_sms = RACE_SMS};
  MGEN_CHECK(ctx, mgen_ctx_create(&ctx, table, race ? &race_opts : NULL));
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  stats = calloc(table->count, sizeof *stats);

  size_t n_shapes, n_ms;
  const shape *shapes = GPU_MODE_ARRAY(race, quick, race_shapes, quick_shapes, full_shapes, &n_shapes);
  const int *ms = GPU_MODE_ARRAY(race, quick, race_ms, quick_ms, full_ms, &n_ms);
  for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
    int groups[MAX_GROUPS];
    if (!race && groups_here(acts[a], MGEN_WFMT_FE2M1, groups) > 0) check_mxfp4_quantize(&r, acts[a]);
  }
  for (size_t s = 0; s < n_shapes; s++)
    for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++)
      for (size_t f = 0; f < sizeof wfmts / sizeof wfmts[0]; f++) {
        int groups[MAX_GROUPS];
        const int n_groups = groups_here(acts[a], wfmts[f], groups);
        for (int g = 0; g < n_groups; g++) run_problem(&r, &shapes[s], acts[a], wfmts[f], groups[g], ms, n_ms);
      }
  for (size_t a = 0; !quick && a < sizeof acts / sizeof acts[0]; a++)
    for (size_t f = 0; f < sizeof wfmts / sizeof wfmts[0]; f++) {
      int groups[MAX_GROUPS];
      const int n_groups = groups_here(acts[a], wfmts[f], groups);
      for (int g = 0; g < n_groups; g++)
        if (groups[g] == 0)
          run_problem(&r, &long_shape, acts[a], wfmts[f], 0, long_ms,
                      sizeof long_ms / sizeof long_ms[0]);
    }

  int tested = 0, elsewhere = 0, unselected = 0;
  printf("%-52s %6s %13s\n", "kernel", "cases", "max err/bound");
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (!is_w4a8(d)) continue;
    if (!runs_here(d)) {
      const int selected = gpu_kernel_selected(d->name);
      printf("%-52s skipped: %s\n", d->name,
             selected ? "does not run on this device" : "not in MGEN_TEST_KERNELS");
      elsewhere += selected, unselected += !selected;
      continue;
    }
    const int made = d->wfmt == MGEN_WFMT_U4B8 || d->wfmt == MGEN_WFMT_U4 ||
                     (d->wfmt == MGEN_WFMT_FE2M1 && d->scheme == MGEN_SCHEME_MXFP4);
    CHECK(made, "%s: wfmt %d scheme %d: this test makes u4b8, u4 and MXFP4 weights only: it ran against "
          "no reference", d->name, d->wfmt, d->scheme);
    if (!made) continue;
    tested++;
    printf("%-52s %6d %13.3g%s\n", d->name, stats[i].runs, stats[i].max_ratio,
           stats[i].failures ? "  FAIL" : "");
    CHECK(stats[i].runs > 0, "%s never ran", d->name);
    /* (a tile deeper than the padding runs only k that are multiples of it: select.h) */
    CHECK(race || d->group != MGEN_GROUP_CHANNEL || d->tile_k > MGEN_LAYOUT_K_PAD || stats[i].padded > 0,
          "%s never ran a K that is not a multiple of %d", d->name, MGEN_LAYOUT_K_PAD);
  }
  CHECK(tested > 0, "no W4A8 kernel of the table (%s) was tested on this device%s",
        table->generator ? table->generator : "?",
        getenv("MGEN_TEST_KERNELS") ? " with this MGEN_TEST_KERNELS" : "");
  printf("%s: %d W4A8 kernels tested; %d do not run here; %d left out by MGEN_TEST_KERNELS; %.1f s%s\n",
         NAME, tested, elsewhere, unselected, gpu_seconds() - t0,
         race ? " (--race)" : quick ? " (--quick)" : "");
  CUDA_CHECK(cudaStreamDestroy(stream));
  mgen_ctx_destroy(ctx);
  free(stats);
  return check_exit(NAME);
}
