/* test_gemm_gpu.c -- every kernel of the built-in table against an FP64 reference GEMM over
 * the exactly dequantized weights, for every weight format, on fresh random data each run (the
 * seed is printed; MGEN_TEST_SEED repeats a run).
 *
 * The cases come from the rows of gemm_formats.c, one per (act, wfmt, scheme, group, weight
 * source): u4b8 through mgen_pack on each group of the table; fe2m1 NVFP4 (g16) and MXFP4
 * (g32) from random checkpoints through mgen_pack_fp4 and from random weights through
 * mgen_quantize; for FP16 and BF16. Each row names its hooks: prepare (random weights through
 * the library path, and the exact weights and their slack through ref_gemm.cu's one
 * dequantization per format), bound (the error bound's coefficients, justified in
 * gemm_formats.c) and checks (the format's own checks, run once). A new format adds rows
 * there and a dequantization in ref_gemm.cu.
 *
 * What it checks:
 *   1. each format's own checks, once before the GEMMs (fe2m1_checks):
 *      a. fe2m1's bad inputs (tests/runtime/fp4_bad_inputs.c) on a real context, and MXFP4's
 *         import ignoring the global scale (NaN accepted);
 *      b. mgen_quantize against the CPU reference (tests/common/fp4.c: fp4_quantize +
 *         fp4_pack) bit for bit: packed words, scale rows and column factors, for FP16 and BF16
 *         weights, both schemes, over wide magnitudes, crafted ties, zero blocks and rows, each
 *         type's extremes (shapes 128x128, 128x512, 256x1024, 384x2048; the first two with
 *         --quick);
 *      c. mgen_pack_fp4 against fp4_pack bit for bit on random checkpoint bytes (every code
 *         and every scale byte but the NaNs, which it refuses: test_import_gpu; E8M0 0 and
 *         254), both schemes (128x512, and 512x2048 without --quick);
 *      d. fe2m1's bound coefficients against fp4_bound (tests/common/fp4.h).
 *   2. For each (K, N) shape, act and row whose (act, wfmt, group) a kernel this device runs
 *      has (and K % group == 0, K % 64 per channel; mgen_quantize rows only on the small
 *      shapes): random A (M_max x K), weights prepared into buffers poisoned with 0xAB, and the
 *      FP64 reference for M_max rows; where K is not a multiple of 128, the weights' K padding
 *      (layout.h) is then overwritten with non-zero weights (gemm_poison_padding), so that only
 *      a kernel that zero-fills A past K passes; then every kernel of that key whose tile_n
 *      divides N, for every M of {1, 2, 3, 7, 8, 15, 16, 17, 33, 64, 100, 128, 256, 1024,
 *      2049} (--quick: {1, 7, 16, 17, 64, 100}), into an output poisoned with 0xFFFF (a NaN in
 *      both types): no element over the row's worst-case bound, none NaN or inf, none left
 *      unwritten, none written past M x N; and on cases of at least GEMM_RMS_MIN_ELEMS
 *      effective outputs (ref_gemm.h, gemm_rms_outputs) the RMS ratio within GEMM_RMS_LIMIT
 *      (gemm_formats.c's header: it fails a kernel that accumulates in 16 bits, which the
 *      worst-case bound lets through).
 *   3. Each kernel twice on M = 7 and 100 of every problem, the second time captured in a CUDA
 *      graph and replayed twice (the output poisoned before each replay), with a bias
 *      (mgen_weights.d_bias: gemm_make_bias's n values, as large as the outputs, either sign):
 *      both runs pass the check of 2 against the reference plus the bias, and are
 *      bit-identical. (2 ran these M without a bias: the bias costs no GEMM of its own.)
 *   4. mgen_gemm's default choice on every case: mgen_gemm_choice succeeds and names a kernel
 *      of the problem's key, and mgen_gemm's result passes the check of 2 (every other M with
 *      the bias of 3).
 *   5. Per kernel: it ran at least once and with the bias (3), a shape with K % 128 != 0
 *      unless its group is 128 (full and --quick runs; a 256-deep tile instead refused a K it
 *      does not cover, with MGEN_ERR_UNSUPPORTED_SHAPE), and in the full run both big shapes
 *      and an odd M.
 *      Kernels that need a newer GPU or that MGEN_TEST_KERNELS (comma-separated globs) leaves
 *      out are listed as skipped (and the narrowing is printed first; ctest's registered
 *      test runs with MGEN_TEST_KERNELS and MGEN_TEST_QUICK unset); a kernel that no row
 *      describes fails the test (it would pass without a reference otherwise); at least one
 *      kernel must have been tested.
 *
 * Constraints: N % mgen__n_multiple(d) == 0 (64 in both families: the wgmma family's last
 * tile's consumers past N idle, the mma family's last tile is shifted to end at N, which
 * needs N >= tile_n, mgen__n_min), K % group == 0 (K % 64 per channel): the packed layout pads K
 * for every tile_k dividing its padding (a deeper tile_k: K % tile_k), so a kernel whose n
 * and k steps divide N and K must run the shape (a refusal fails it;
 * tests/runtime/test_shape_rules.c checks the rule itself).
 * --race (racecheck, tests/gpu/run_sanitizers_device.sh): one shape (and K = 1024 for the
 * 256-deep mma tiles, which do not run 896), K = 896, N = 512, M = 7
 * and 100 (one and two slabs, odd), with --quick's format checks, on a context of 3 SMs
 * (mgen_ctx_opts.max_sms): so few blocks that each runs pieces deep enough for every kind of
 * wgmma ring pass (the scaled-sums loop in both group phases, the one-group loop, the
 * overlapped loop from buffer 0 and 1; an offline replay of mgen_wgmma_sched.h and run()'s
 * lead and passes: the smallest such shape with K % 128 == 0 over 1-16 SMs), and the mma
 * tiles still split their columns. racecheck sees shared-memory hazards inside a block, which
 * these cases exercise; on --quick's 24 cases it costs 20-40 s per wgmma kernel (H200), too
 * much for the whole table.
 * Run:  build/tests/test_gemm_gpu                (ctest -L gpu)
 *       compute-sanitizer --error-exitcode 1 build/tests/test_gemm_gpu --quick
 *       MGEN_TEST_KERNELS='*_fe2m1_*' build/tests/test_gemm_gpu --quick   (a subset)
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "dispatch/select.h"
#include "formats/layout.h"
#include "gemm_formats.h"
#include "gpu_util.h"
#include "ref_gemm.h"
#include "rng.h"

typedef struct shape {
  int k, n, big; /* big: one of the two LLM-sized shapes every kernel must run */
  int family;    /* 0: every kernel; else only that mgen_family's */
  int deep_only; /* 1: only kernels whose tile_k exceeds the layout's K padding */
} shape;

/* (11008, 4096) at M = 2049: 45 MB of A, past the 24 MiB below which a dense wgmma launch keeps
 * one band of m slabs (templates/wgmma/spec.lua DENSE_BAND_L2_BYTES, mgen_wgmma_band): the 128-
 * and 256-row tiles run it in bands of 8, 8, 1 and 5, 4 slabs, the last band short.
 * The last four K are not multiples of 128 (the weights' K padding): 2752 = 64 * 43 (Llama-2-7B
 * TP4 down_proj; every group but 128), 1376 = 32 * 43 (TP8: g32, NVFP4, MXFP4) on 192 columns
 * (64-wide tiles and 3 x 64), 3696 = 16 * 231 (NVFP4 only), 4160 = 4096 + 64 on 768 columns
 * (every tile_n). */
static const shape full_shapes[] = {{4096, 12288, 1, 0, 0}, {11008, 4096, 2, 0, 0},
                                    {256, 256, 0, 0, 0},    {1024, 512, 0, 0, 0},
                                    {768, 384, 0, 0, 0},    {128, 1024, 0, 0, 0},
                                    {2752, 256, 0, 0, 0},   {1376, 192, 0, 0, 0},
                                    {3696, 128, 0, 0, 0},   {4160, 768, 0, 0, 0}};
/* Quick: small shapes, plus one with more work units than SMs (grids past sm_count,
 * split columns) so that compute-sanitizer sees the cross-block reduction at full width, and
 * one padded K every kernel of a group other than 128 runs (N = 256: every tile_n), and N = 192
 * (the wgmma tiles of 128 and 256 columns end with idle consumers), and K = 640 (10 stages of
 * 64): on 132 SMs the 32-row wgmma tiles cut it into stream-K pieces that start and end inside
 * a g128 group, the lead and tail of their scaled-sums loop (mgen_wgmma_body.cuh run_acc_scales).
 * The small shapes' pieces are all shorter than a wgmma ring (8 stages) on 132 SMs, so the
 * consumers' unrolled passes over it (mgen_wgmma_body.cuh run()) need a deeper one: K = 1280, N =
 * 12800 is the smallest single shape whose quick M reach every kind of pass there (the
 * scaled-sums loop in both group phases, the one-group loop, the overlapped loop from buffer 0
 * and from buffer 1; found by replaying the launch plan of mgen_wgmma_sched.h offline), for the
 * wgmma kernels only (8 MB of weights: the mma kernels have no such loop). */
static const shape quick_shapes[] = {{256, 256, 0, 0, 0},   {768, 384, 0, 0, 0},
                                     {128, 1024, 0, 0, 0},  {1024, 2048, 0, 0, 0},
                                     {2752, 256, 0, 0, 0},  {1024, 192, 0, 0, 0},
                                     {640, 256, 0, 0, 0},   {1280, 12800, 0, MGEN_FAMILY_WGMMA, 0}};
static const int full_ms[] = {1, 2, 3, 7, 8, 15, 16, 17, 33, 64, 100, 128, 256, 1024, 2049};
static const int quick_ms[] = {1, 7, 16, 17, 64, 100};
/* K = 896 is 3.5 deep tiles of 256: those (--space full's and the decode defaults' 256-deep
 * tiles) race on K = 1024 instead, and only they (racecheck time). */
static const shape race_shapes[] = {{896, 512, 0, 0, 0}, {1024, 512, 0, MGEN_FAMILY_MMA, 1}};
enum { RACE_SMS = 3 }; /* --race's context: mgen_ctx_opts.max_sms */
static const int race_ms[] = {7, 100};
static const int determinism_ms[] = {7, 100};
static const int acts[] = {MGEN_ACT_F16, MGEN_ACT_BF16};
#define GUARD_ELEMS 4096
#define MAX_GROUPS 16
/* The RMS ratio's limit and the fewest effective outputs a case needs for it (gemm_formats.c's
 * header: at most about 0.43 for a correct kernel, measured 0.30-0.43 over the default set on an
 * H200; with 128 outputs of equal weight the estimate's relative spread is about 6%, so 0.6 is
 * over 6 spreads away, and under what 16-bit sums of chains of 4 MMAs or more make). Effective
 * (gemm_rms_outputs): outputs weigh in by their scale squared, and in one row of MXFP4 outputs
 * (block scales over several binades) a few of the 256 set the sum, as noisy as a handful of
 * samples: such a case measured 0.662, every element within its bound (bench/notes/v61.md). */
#define GEMM_RMS_LIMIT 0.6
#define GEMM_RMS_MIN_ELEMS 128

typedef struct kernel_stats {
  int runs, failures, big_mask, odd_m, padded; /* padded: runs with K % 128 != 0 */
  int biased; /* runs with a bias (check_determinism's) */
  int refused; /* shapes whose K a deep tile does not cover, refused as it must */
  double max_ratio, max_rms; /* worst-case ratio; RMS ratio (over cases it applies to) */
} kernel_stats;

/* Device data of one (shape, row, group) problem. */
typedef struct problem {
  int k, n, m_max;
  int family; /* 0, or the only family whose kernels run it (shape.family) */
  int deep_only; /* shape.deep_only */
  char desc[128]; /* "bf16 fe2m1/mxfp4 g32 (mgen_quantize)": messages */
  gemm_bound bound;
  uint16_t *d_a;
  mgen_weights w;
  double *d_w, *d_slack;          /* n x k: exact weights and slack */
  gemm_ref ref;                   /* m_max x n each */
  uint16_t *d_c, *d_c2;
  size_t c_cap;
  gemm_check *d_check;
  uint16_t *d_bias;               /* n: the bias of the runs with one (gemm_make_bias) */
} problem;

static gemm_env env;
static kernel_stats *stats;
/* Cases of GEMM_RMS_MIN_ELEMS outputs or more whose effective count falls short (no RMS ratio
 * checked), and the fewest effective outputs among them: printed, so that a shape set that
 * leaves the ratio unchecked shows. */
static long long rms_few_cases;
static double rms_few_least = INFINITY;

/* ---------------------------------------------------------------- running and checking */

static double ratio_of(unsigned long long bits) {
  double r;
  memcpy(&r, &bits, sizeof r);
  return r;
}

/* Synchronizes; a device fault poisons the context, so it ends the test naming the case. */
static void sync_case(const char *what, const problem *p, int m) {
  char label[256];
  snprintf(label, sizeof label, "%s m=%d n=%d k=%d %s", what, m, p->n, p->k, p->desc);
  gemm_sync(&env, label);
}

static mgen_status gemm_call(const problem *p, const char *name, int m, uint16_t *c) {
  return name ? mgen_gemm_kernel(env.ctx, name, p->w.act, m, p->d_a, &p->w, c, env.stream)
              : mgen_gemm(env.ctx, p->w.act, m, p->d_a, &p->w, c, env.stream);
}

/* The call captured into a CUDA graph on env.stream and replayed twice, the output poisoned
 * before each replay (so the second shows that a replay leaves the split tiles' counters of
 * the graph's workspace ready for the next one). */
static mgen_status gemm_graph(const problem *p, const char *name, int m, uint16_t *c) {
  cudaGraph_t graph = NULL;
  cudaGraphExec_t exec = NULL;
  CUDA_CHECK(cudaStreamBeginCapture(env.stream, cudaStreamCaptureModeThreadLocal));
  const mgen_status st = gemm_call(p, name, m, c);
  CUDA_CHECK(cudaStreamEndCapture(env.stream, &graph));
  if (st != MGEN_OK) {
    CUDA_CHECK(cudaGraphDestroy(graph));
    return st;
  }
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; replay++) {
    CUDA_CHECK(cudaMemsetAsync(c, 0xFF, p->c_cap * sizeof *c, env.stream));
    CUDA_CHECK(cudaGraphLaunch(exec, env.stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(env.stream));
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return MGEN_OK;
}

/* Runs one GEMM (the named kernel, or mgen_gemm's choice for name == NULL) into `c`, directly
 * or by graph replay (gemm_graph), and checks it (against the reference plus p->w.d_bias, the
 * call's bias, where there is one): every element within the worst-case bound
 * and, on cases of at least GEMM_RMS_MIN_ELEMS effective outputs, the RMS ratio within
 * GEMM_RMS_LIMIT.
 * Returns the worst-case ratio (*rms: the RMS ratio, 0 where it does not apply), or -1 if the
 * call failed. */
static double run_case_as(const problem *p, const char *name, int m, uint16_t *c, int graph,
                          double *rms) {
  const char *label = name ? name : "mgen_gemm (default)";
  const int act = p->w.act;
  *rms = 0.0;
  if (!graph) /* (gemm_graph poisons before each replay) */
    CUDA_CHECK(cudaMemsetAsync(c, 0xFF, p->c_cap * sizeof *c, env.stream));
  mgen_status st = graph ? gemm_graph(p, name, m, c) : gemm_call(p, name, m, c);
  CHECK(st == MGEN_OK, "%s m=%d n=%d k=%d %s%s: %s: %s", label, m, p->n, p->k, p->desc,
        graph ? " (graph)" : "", mgen_status_str(st), mgen_ctx_last_error(env.ctx));
  if (st != MGEN_OK) return -1.0;
  gemm_check init = {0, 0, 0, 0, ~0ull, 0, 0.0, 0.0, 0.0}, res;
  CUDA_CHECK(cudaMemcpyAsync(p->d_check, &init, sizeof init, cudaMemcpyHostToDevice, env.stream));
  CUDA_CHECK((cudaError_t)gpu_check_gemm(act, m, p->n, &p->bound, c, p->c_cap, &p->ref,
                                         p->w.d_bias, 0, p->d_check, env.stream));
  CUDA_CHECK(cudaMemcpyAsync(&res, p->d_check, sizeof res, cudaMemcpyDeviceToHost, env.stream));
  sync_case(label, p, m);
  const double ratio = ratio_of(res.max_ratio_bits);
  CHECK(res.bad == 0 && res.nonfinite == 0 && res.unwritten == 0 && res.guard_bad == 0,
        "%s m=%d n=%d k=%d %s: %llu over the bound (max ratio %.3g), %llu NaN/inf, %llu "
        "unwritten, %llu written past m x n", label, m, p->n, p->k, p->desc, res.bad, ratio,
        res.nonfinite, res.unwritten, res.guard_bad);
  if (res.bad != 0) {
    const size_t i = (size_t)res.first_bad;
    const gemm_bound *b = &p->bound;
    uint16_t cv, bv = 0; /* (0: +0 in both types) */
    double rv, av, ev;
    CUDA_CHECK(cudaMemcpy(&cv, c + i, sizeof cv, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&rv, p->ref.ref + i, sizeof rv, cudaMemcpyDeviceToHost));
    if (p->w.d_bias != NULL)
      CUDA_CHECK(cudaMemcpy(&bv, (const uint16_t *)p->w.d_bias + i % (size_t)p->n, sizeof bv,
                            cudaMemcpyDeviceToHost));
    rv += act_to_double(act, bv);
    CUDA_CHECK(cudaMemcpy(&av, p->ref.abs_sum + i, sizeof av, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&ev, p->ref.werr + i, sizeof ev, cudaMemcpyDeviceToHost));
    fprintf(stderr, "  first bad element: row %zu col %zu: c=%.6g (%s 0x%04x) ref=%.6g abs=%.6g "
            "werr=%.3g bound=%.3g\n", i / (size_t)p->n, i % (size_t)p->n,
            act_to_double(act, cv), act_name(act), cv, rv, av, ev,
            b->rel * fabs(rv) + b->abs * av + ev + b->tiny);
  }
  /* scale_sq is 0 only where every product a_k w_k is 0: then so must every error be. */
  if (res.scale_sq == 0.0) {
    CHECK(res.err_sq == 0.0, "%s m=%d n=%d k=%d %s%s: every product is 0, the output not", label,
          m, p->n, p->k, p->desc, graph ? " (graph)" : "");
  }
  const double outputs = gemm_rms_outputs(&res);
  if (outputs < GEMM_RMS_MIN_ELEMS && (long long)m * p->n >= GEMM_RMS_MIN_ELEMS) {
    rms_few_cases++;
    rms_few_least = fmin(rms_few_least, outputs);
  }
  if (outputs >= GEMM_RMS_MIN_ELEMS) {
    *rms = sqrt(res.err_sq / res.scale_sq);
    CHECK(*rms <= GEMM_RMS_LIMIT,
          "%s m=%d n=%d k=%d %s%s: RMS error %.3g x its scale over %.0f effective outputs "
          "(limit %.2g): more than the roundings of FP32 accumulation make (a 16-bit "
          "accumulator?)", label, m, p->n, p->k, p->desc, graph ? " (graph)" : "", *rms,
          outputs, GEMM_RMS_LIMIT);
  }
  return ratio;
}

static double run_case(const problem *p, const char *name, int m, uint16_t *c, double *rms) {
  return run_case_as(p, name, m, c, 0, rms);
}

/* The same GEMM twice, the second by graph replay (engines capture decode): both correct and
 * bit-identical. */
static void check_determinism(const problem *p, const char *name, int m) {
  double rms;
  if (run_case(p, name, m, p->d_c, &rms) < 0 || run_case_as(p, name, m, p->d_c2, 1, &rms) < 0)
    return;
  unsigned long long diff = 0, *d_diff = gpu_alloc(sizeof diff);
  CUDA_CHECK(cudaMemsetAsync(d_diff, 0, sizeof diff, env.stream));
  CUDA_CHECK((cudaError_t)gpu_count_diff(p->d_c, p->d_c2, (size_t)m * p->n, d_diff, env.stream));
  CUDA_CHECK(cudaMemcpyAsync(&diff, d_diff, sizeof diff, cudaMemcpyDeviceToHost, env.stream));
  sync_case(name, p, m);
  CHECK(diff == 0, "%s m=%d n=%d k=%d %s: the direct run and the graph replay differ in %llu elements",
        name, m, p->n, p->k, p->desc, diff);
  CUDA_CHECK(cudaFree(d_diff));
}

/* ---------------------------------------------------------------- kernels, rows, shapes */

/* This device runs it, and MGEN_TEST_KERNELS (if set) selects it. */
static int runs_here(const mgen_kernel_desc *d) {
  return d->op == MGEN_OP_DENSE && /* the moe op's kernels: test_moe_gpu */
         gpu_default_layout(d) && /* W4A8's: test_w4a8_gpu */
         mgen_kernel_runs_on(d, mgen_ctx_sm(env.ctx)) && gpu_kernel_selected(d->name);
}

static int same_key(const mgen_kernel_desc *d, const problem *p) {
  return d->act == (int)p->w.act && d->wfmt == (int)p->w.wfmt && d->group == p->w.group;
}

/* Whether row f describes kernel d (f's act, wfmt and group). */
static int row_covers(const gemm_format *f, const mgen_kernel_desc *d) {
  return f->act == d->act && f->wfmt == d->wfmt &&
         (f->group == GEMM_TABLE_GROUPS || f->group == d->group);
}

static void run_problem(const problem *p, const int *ms, size_t n_ms, int big) {
  const mgen_table *table = mgen_builtin_table();
  problem biased = *p; /* the same problem with its bias (header, 3) */
  biased.w.d_bias = p->d_bias;
  snprintf(biased.desc, sizeof biased.desc, "%.100s + bias", p->desc);
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (!same_key(d, p) || !runs_here(d) || (p->family && d->family != p->family)) continue;
    /* N: its tile_n, or a family's partial-tile step (the wgmma family's 64; a shape the
     * runtime then refuses fails the test). K: every tile_k that divides the layout's K
     * padding runs the padded layout; a deeper one (tile_k 256) runs only K that are
     * multiples of it, and must refuse the others with a status, before touching C. */
    if (p->n % mgen__n_multiple(d) != 0 || p->n < mgen__n_min(d)) continue;
    if (p->deep_only && d->tile_k <= MGEN_LAYOUT_K_PAD) continue;
    if (p->k % mgen__k_multiple(d) != 0) {
      const mgen_status st = mgen_gemm_kernel(env.ctx, d->name, p->w.act, 7, p->d_a, &p->w,
                                              p->d_c, env.stream);
      CHECK(st == MGEN_ERR_UNSUPPORTED_SHAPE, "%s k=%d (tile_k %d): %s, expected a refusal",
            d->name, p->k, d->tile_k, mgen_status_str(st));
      stats[i].refused++;
      continue;
    }
    for (size_t j = 0; j < n_ms; j++) {
      double rms;
      const double ratio = run_case(p, d->name, ms[j], p->d_c, &rms);
      stats[i].runs++;
      stats[i].padded += p->k % 128 != 0;
      stats[i].failures += ratio < 0.0 || !(ratio <= 1.0) || !(rms <= GEMM_RMS_LIMIT);
      if (ratio > stats[i].max_ratio) stats[i].max_ratio = ratio;
      if (!(rms <= stats[i].max_rms)) stats[i].max_rms = rms;
      stats[i].odd_m |= ms[j] % 2 == 1;
    }
    stats[i].big_mask |= big;
    for (size_t j = 0; j < sizeof determinism_ms / sizeof determinism_ms[0]; j++) {
      check_determinism(&biased, d->name, determinism_ms[j]);
      stats[i].biased++;
    }
  }
  /* The default choice: a kernel of the right key, and a correct result. */
  for (size_t j = 0; j < n_ms; j++) {
    const char *choice = NULL;
    mgen_status st = mgen_gemm_choice(env.ctx, p->w.act, ms[j], &p->w, &choice);
    CHECK(st == MGEN_OK, "choice m=%d n=%d k=%d %s: %s", ms[j], p->n, p->k, p->desc,
          mgen_ctx_last_error(env.ctx));
    if (st != MGEN_OK) continue;
    const int index = mgen_table_find(table, choice);
    CHECK(index >= 0 && same_key(&table->kernels[index], p), "choice %s for %s", choice, p->desc);
    double rms;
    run_case(j % 2 ? &biased : p, NULL, ms[j], p->d_c, &rms);
  }
}

/* Whether a kernel of (act, wfmt, group) that this device runs covers n (its n step divides
 * it; shape.family's only): the shape rules come from the table, so a table without one (an
 * MGEN_KERNELS build, a mutant's) refuses such weights, and the problem has nothing to run. */
static int key_runs_n(int act, int wfmt, int group, int n, int family) {
  const mgen_table *table = mgen_builtin_table();
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (d->act == act && d->wfmt == wfmt && d->group == group && runs_here(d) &&
        (!family || d->family == family) && n % mgen__n_multiple(d) == 0 && n >= mgen__n_min(d))
      return 1;
  }
  return 0;
}

/* The distinct groups of the table's kernels of (act, wfmt) this device runs. */
static int groups_in_table(int act, int wfmt, int *groups) {
  return gpu_table_groups(act, wfmt, runs_here, groups, MAX_GROUPS);
}

/* One row with one group on p's shape (A of the row's act already in p->d_a): the weights
 * through the row's hook, the reference for m_max rows, then every kernel of the key. */
static void run_row(rng *r, problem *p, const gemm_format *f, int group, const int *ms,
                    size_t n_ms, int big) {
  p->w = (mgen_weights){.wfmt = (mgen_wfmt)f->wfmt, .act = (mgen_act)f->act,
                        .scheme = (mgen_scheme)f->scheme, .group = group, .n = p->n, .k = p->k};
  char group_name[16];
  snprintf(group_name, sizeof group_name, group ? "g%d" : "gc", group);
  snprintf(p->desc, sizeof p->desc, "%s %s %s (%s)", act_name(f->act), f->name, group_name,
           f->source);
  f->bound(f->act, p->k, &p->bound);
  gemm_weights_alloc(&env, &p->w);
  f->prepare(&env, r, &p->w, p->d_w, p->d_slack);
  gemm_poison_padding(&p->w);
  CUDA_CHECK((cudaError_t)gpu_ref_gemm(f->act, p->m_max, p->n, p->k, p->d_a, p->d_w, p->d_slack,
                                       &p->ref, env.stream));
  sync_case("reference", p, p->m_max);
  gemm_make_bias(r, f->act, p->ref.ref, p->n, 1, NULL, p->d_bias);
  run_problem(p, ms, n_ms, big);
  gemm_weights_free(&p->w);
}

/* Every row of the table's keys on one (K, N): A per act. */
static void run_shape(rng *r, const shape *s, const int *ms, size_t n_ms) {
  if (s->family) {  /* a family's shape: nothing to prepare where none of its kernels runs */
    const mgen_table *table = mgen_builtin_table();
    int any = 0;
    for (size_t i = 0; i < table->count && !any; i++)
      any = table->kernels[i].family == s->family && runs_here(&table->kernels[i]) &&
            (!s->deep_only || table->kernels[i].tile_k > MGEN_LAYOUT_K_PAD);
    if (!any) return;
  }
  int m_max = 0;
  for (size_t j = 0; j < n_ms; j++) m_max = ms[j] > m_max ? ms[j] : m_max;
  const int n = s->n, k = s->k;
  const double t0 = gpu_seconds();

  uint16_t *a = malloc(sizeof *a * (size_t)m_max * k);
  problem p = {.k = k, .n = n, .m_max = m_max, .family = s->family, .deep_only = s->deep_only,
               .c_cap = (size_t)m_max * n + GUARD_ELEMS};
  p.d_a = gpu_alloc(sizeof *a * (size_t)m_max * k);
  p.d_w = gpu_alloc(sizeof(double) * (size_t)n * k);
  p.d_slack = gpu_alloc(sizeof(double) * (size_t)n * k);
  p.ref.ref = gpu_alloc(sizeof(double) * (size_t)m_max * n);
  p.ref.abs_sum = gpu_alloc(sizeof(double) * (size_t)m_max * n);
  p.ref.werr = gpu_alloc(sizeof(double) * (size_t)m_max * n);
  p.ref.sq_sum = gpu_alloc(sizeof(double) * (size_t)m_max * n);
  p.d_c = gpu_alloc(sizeof(uint16_t) * p.c_cap);
  p.d_c2 = gpu_alloc(sizeof(uint16_t) * p.c_cap);
  p.d_check = gpu_alloc(sizeof(gemm_check));
  p.d_bias = gpu_alloc(sizeof(uint16_t) * (size_t)n);

  for (size_t ai = 0; ai < sizeof acts / sizeof acts[0]; ai++) {
    const int act = acts[ai];
    for (size_t i = 0; i < (size_t)m_max * k; i++) a[i] = act_from_double(act, rng_uniform(r, -1.0, 1.0));
    gpu_upload(p.d_a, a, sizeof *a * (size_t)m_max * k);
    for (size_t fi = 0; fi < gemm_format_count; fi++) {
      const gemm_format *f = &gemm_formats[fi];
      if (f->act != act || (f->small_only && s->big)) continue;
      int groups[MAX_GROUPS];
      const int n_groups = groups_in_table(act, f->wfmt, groups);
      for (int g = 0; g < n_groups; g++) {
        const int group = groups[g];
        if (f->group != GEMM_TABLE_GROUPS && group != f->group) continue;
        if (k % (group ? group : 64) || !key_runs_n(act, f->wfmt, group, n, s->family)) continue;
        run_row(r, &p, f, group, ms, n_ms, s->big);
      }
    }
  }
  printf("test_gemm_gpu: K=%d N=%d done in %.1f s\n", k, n, gpu_seconds() - t0);
  fflush(stdout);
  CUDA_CHECK(cudaFree(p.d_a));
  CUDA_CHECK(cudaFree(p.d_w));
  CUDA_CHECK(cudaFree(p.d_slack));
  CUDA_CHECK(cudaFree(p.ref.ref));
  CUDA_CHECK(cudaFree(p.ref.abs_sum));
  CUDA_CHECK(cudaFree(p.ref.werr));
  CUDA_CHECK(cudaFree(p.ref.sq_sum));
  CUDA_CHECK(cudaFree(p.d_c));
  CUDA_CHECK(cudaFree(p.d_c2));
  CUDA_CHECK(cudaFree(p.d_check));
  CUDA_CHECK(cudaFree(p.d_bias));
  free(a);
}

/* ---------------------------------------------------------------- main */

/* Each distinct checks hook of the rows, once, in row order. */
static void run_format_checks(rng *r, int quick) {
  for (size_t fi = 0; fi < gemm_format_count; fi++) {
    const gemm_checks_fn checks = gemm_formats[fi].checks;
    int seen = checks == NULL;
    for (size_t j = 0; j < fi && !seen; j++) seen = gemm_formats[j].checks == checks;
    if (!seen) checks(&env, r, quick);
  }
}

int main(int argc, char **argv) {
  gpu_require_device("test_gemm_gpu");
  int race = 0;
  for (int i = 1; i < argc; i++) race |= strcmp(argv[i], "--race") == 0;
  const int quick = race || gpu_quick_mode(argc, argv);
  rng r;
  rng_seed(&r, rng_test_seed("test_gemm_gpu"));
  const double t0 = gpu_seconds();

  const mgen_table *table = mgen_builtin_table();
  CHECK(table->count > 0, "the built-in table is empty (%s): nothing to test",
        table->generator ? table->generator : "?");
  if (table->count == 0) return check_exit("test_gemm_gpu");
  const mgen_ctx_opts race_opts = {.device = -1, .max_sms = RACE_SMS};
  MGEN_CHECK(env.ctx, mgen_ctx_create(&env.ctx, table, race ? &race_opts : NULL));
  CUDA_CHECK(cudaStreamCreateWithFlags(&env.stream, cudaStreamNonBlocking));
  stats = calloc(table->count, sizeof *stats);

  run_format_checks(&r, quick);
  printf("test_gemm_gpu: the formats' own checks done (%ld checks) in %.1f s\n", check_count,
         gpu_seconds() - t0);
  fflush(stdout);

  size_t n_shapes, n_ms;
  const shape *shapes = GPU_MODE_ARRAY(race, quick, race_shapes, quick_shapes, full_shapes, &n_shapes);
  const int *ms = GPU_MODE_ARRAY(race, quick, race_ms, quick_ms, full_ms, &n_ms);
  for (size_t s = 0; s < n_shapes; s++) run_shape(&r, &shapes[s], ms, n_ms);

  int tested = 0, newer = 0, unselected = 0;
  printf("%-52s %6s %9s %9s\n", "kernel", "cases", "max err/bound", "RMS ratio");
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (d->op != MGEN_OP_DENSE) continue; /* test_moe_gpu's */
    if (!gpu_default_layout(d)) continue; /* test_w4a8_gpu's */
    if (!runs_here(d)) {
      const int selected = gpu_kernel_selected(d->name);
      printf("%-52s skipped: %s\n", d->name,
             selected ? "needs a newer GPU" : "not in MGEN_TEST_KERNELS");
      newer += selected, unselected += !selected;
      continue;
    }
    /* A kernel no row describes has no reference: a failure, not a skip, so that a new
     * format's kernels cannot pass without a numeric check (a row in gemm_formats.c and a
     * dequantization in ref_gemm.cu make one). */
    int covered = 0;
    for (size_t fi = 0; fi < gemm_format_count && !covered; fi++)
      covered = row_covers(&gemm_formats[fi], d);
    CHECK(covered, "%s: no row of tests/gpu/gemm_formats.c describes its (act %d, wfmt %d, "
          "group %d): it ran against no reference", d->name, d->act, d->wfmt, d->group);
    if (!covered) continue;
    tested++;
    printf("%-52s %6d %9.3g %9.3g%s\n", d->name, stats[i].runs, stats[i].max_ratio,
           stats[i].max_rms, stats[i].failures ? "  FAIL" : "");
    CHECK(stats[i].runs > 0 && stats[i].biased > 0, "%s never ran (%d runs, %d with a bias)",
          d->name, stats[i].runs, stats[i].biased);
    CHECK(race || stats[i].padded > 0 || (d->group ? d->group : 64) % 128 == 0 ||
              (d->tile_k > MGEN_LAYOUT_K_PAD && stats[i].refused > 0),
          "%s never ran a K that is not a multiple of 128 (a deep tile: never refused one)",
          d->name);
    if (!quick)
      CHECK(stats[i].big_mask == 3 && stats[i].odd_m, "%s: ran big shapes 0x%x, odd m %d",
            d->name, stats[i].big_mask, stats[i].odd_m);
  }
  CHECK(tested > 0, "no kernel of the table (%s) was tested on this device%s",
        table->generator ? table->generator : "?",
        getenv("MGEN_TEST_KERNELS") ? " with this MGEN_TEST_KERNELS" : "");
  printf("test_gemm_gpu: %d kernels tested; %d need a newer GPU; %d left out by "
         "MGEN_TEST_KERNELS; %.1f s\n", tested, newer, unselected, gpu_seconds() - t0);
  if (rms_few_cases > 0)
    printf("test_gemm_gpu: RMS ratio not checked on %lld cases of %d outputs or more (fewer "
           "effective: the fewest %.1f)\n", rms_few_cases, GEMM_RMS_MIN_ELEMS, rms_few_least);
  CUDA_CHECK(cudaStreamDestroy(env.stream));
  mgen_ctx_destroy(env.ctx);
  free(stats);
  return check_exit("test_gemm_gpu");
}
