/* test_moe_args.c -- the MoE calls without a GPU: the route's CPU reference on hand-worked
 * cases (tests/common/moe_ref.c, which test_moe_gpu holds the GPU route to), the route's
 * capacity (mgen_moe_route_rows), and the argument checks of mgen_moe_route_tokens,
 * mgen_moe_gemm, mgen_moe_gemm_kernel, mgen_moe_gemm_choice, mgen_moe_gemm_a_sorted,
 * mgen_moe_permute and mgen_moe_sum over a context built by hand on the fake table (no moe
 * kernel in it): every refusal with its status, a message and no launch. The unsorted route
 * (mgen_moe_route.unsorted) also over contexts on a table of two moe kernels of this file (an
 * mma one and a wgmma one, launchers that record the call): what reaches the kernel
 * (mgen_moe_op_args), the refusals of the wgmma family, of A in the route's order and of
 * other block rows, and what mgen_moe_unsorted_pays and mgen_moe_gemm_a_sorted answer. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "context/internal.h"
#include "fake_ctx.h"
#include "fake_table.h"
#include "moe_ref.h"

static _Alignas(16) char buf_a[64], buf_c[64], buf_q[64], buf_s[64];
static _Alignas(16) int32_t ids[64], sorted[64], blocks[64], count[4];
static struct mgen_ctx ctx;

#define P 6 /* the padding id of the hand-worked cases: m * topk */

static void expect_ints(const int32_t *got, const int32_t *want, int n, const char *what) {
  for (int i = 0; i < n; i++)
    CHECK(got[i] == want[i], "%s[%d] = %d, want %d", what, i, got[i], want[i]);
}

/* m = 3 tokens, top-2: pairs 0..5 to experts 2 0 | 0 2 | 1 0, runs of 4 rows. */
static void test_reference(void) {
  const int32_t topk_ids[P] = {2, 0, 0, 2, 1, 0};
  int32_t s[16], b[6], n = -1; /* b: capacity / block_rows entries, 6 for the one-row blocks */
  /* Every expert here: e0 = 1 2 5, e1 = 4, e2 = 0 3. */
  CHECK(moe_ref_route(topk_ids, NULL, P, 3, 3, 4, 12, s, b, &n) == 0, "route");
  const int32_t want_s[12] = {1, 2, 5, P, 4, P, P, P, 0, 3, P, P}, want_b[3] = {0, 1, 2};
  CHECK(n == 12, "num_padded %d", n);
  expect_ints(s, want_s, 12, "sorted");
  expect_ints(b, want_b, 3, "blocks");
  /* Expert 0 on another GPU: experts 1, 2 are local 0, 1; the tail is padding. */
  const int32_t map[3] = {-1, 0, 1};
  CHECK(moe_ref_route(topk_ids, map, P, 3, 2, 4, 12, s, b, &n) == 0, "mapped route");
  const int32_t want_ms[12] = {4, P, P, P, 0, 3, P, P, P, P, P, P}, want_mb[3] = {0, 1, -1};
  CHECK(n == 8, "mapped num_padded %d", n);
  expect_ints(s, want_ms, 12, "mapped sorted");
  expect_ints(b, want_mb, 3, "mapped blocks");
  /* Ids outside 0..E-1 and map entries outside 0..local-1 route nowhere; one row a block. */
  const int32_t odd_ids[P] = {7, -3, 1, 1, 0, 2};
  const int32_t odd_map[3] = {0, 5, 1};
  CHECK(moe_ref_route(odd_ids, odd_map, P, 3, 2, 1, 6, s, b, &n) == 0, "odd route");
  const int32_t want_os[6] = {4, 5, P, P, P, P}, want_ob[6] = {0, 1, -1, -1, -1, -1};
  CHECK(n == 2, "odd num_padded %d", n);
  expect_ints(s, want_os, 6, "odd sorted");
  expect_ints(b, want_ob, 6, "odd blocks");
  CHECK(moe_ref_local(odd_ids, odd_map, 3, 2, 0) == -1 && moe_ref_local(odd_ids, odd_map, 3, 2, 2) == -1 &&
            moe_ref_local(odd_ids, odd_map, 3, 2, 5) == 1, "moe_ref_local");
  /* A capacity below the runs is refused. */
  CHECK(moe_ref_route(topk_ids, NULL, P, 3, 3, 4, 11, s, b, &n) == -1, "capacity 11 < 12");
}

static mgen_moe_route route(void) {
  mgen_moe_route r = {.m = 3, .topk = 2, .num_experts = 3, .local_experts = 3, .block_rows = 4,
                      .d_topk_ids = ids, .d_expert_map = NULL, .d_sorted_ids = sorted,
                      .d_block_experts = blocks, .d_num_padded = count};
  return r;
}

static void test_rows(void) {
  mgen_moe_route r = route();
  int rows = -1;
  CHECK(mgen_moe_route_rows(&r, &rows) == MGEN_OK && rows == 12, "rows %d (6 + 3 x 3, by 4)", rows);
  r.block_rows = 16;
  CHECK(mgen_moe_route_rows(&r, &rows) == MGEN_OK && rows == 48, "rows %d (6 + 3 x 15, by 16)", rows);
  r.block_rows = 1;
  CHECK(mgen_moe_route_rows(&r, &rows) == MGEN_OK && rows == 6, "rows %d (one row a block)", rows);
  /* Sizes only: fewer local experts need no map here (the route call checks it). */
  r.block_rows = 4, r.local_experts = 2, r.d_expert_map = NULL;
  CHECK(mgen_moe_route_rows(&r, &rows) == MGEN_OK && rows == 12, "rows %d (6 + 2 x 3)", rows);
  CHECK(mgen_moe_route_rows(NULL, &rows) == MGEN_ERR_NULL_POINTER, "NULL route");
  r = route();
  CHECK(mgen_moe_route_rows(&r, NULL) == MGEN_ERR_NULL_POINTER, "NULL rows");
  /* Each size out of its range; rows untouched. */
  const struct { int m, topk, experts, local, block_rows; } bad[] = {
    {0, 2, 3, 3, 4}, {3, 0, 3, 3, 4}, {3, 65, 3, 3, 4}, {3, 2, 0, 3, 4}, {3, 2, 4097, 4097, 4},
    {3, 2, 3, 0, 4}, {3, 2, 3, 4, 4},
    {3, 2, 3, 3, 0}, {3, 2, 3, 3, 257}, {1 << 25, 64, 3, 3, 4} /* 2^31 pairs */,
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    r = route();
    r.m = bad[i].m, r.topk = bad[i].topk, r.num_experts = bad[i].experts;
    r.local_experts = bad[i].local, r.block_rows = bad[i].block_rows;
    rows = -1;
    CHECK(mgen_moe_route_rows(&r, &rows) == MGEN_ERR_INVALID_ARG && rows == -1,
          "case %zu (m %d topk %d E %d local %d rows %d) accepted", i, r.m, r.topk,
          r.num_experts, r.local_experts, r.block_rows);
  }
  /* An unsorted route has no list: 0 rows, whatever block_rows; unsorted is 0 or 1 (rows
   * untouched otherwise). Its GEMM's rows, a block per pair, must fit an int where the
   * sorted list's do: 2^28 pairs of 16 rows are refused. */
  r = route();
  r.unsorted = 1;
  CHECK(mgen_moe_route_rows(&r, &rows) == MGEN_OK && rows == 0, "unsorted: rows %d", rows);
  for (int u = -1; u <= 2; u += 3) {
    r.unsorted = u, rows = -1;
    CHECK(mgen_moe_route_rows(&r, &rows) == MGEN_ERR_INVALID_ARG && rows == -1, "unsorted=%d", u);
  }
  r = route();
  r.m = 1 << 24, r.topk = 16, r.block_rows = 16;
  CHECK(mgen_moe_route_rows(&r, &rows) == MGEN_OK && rows == (1 << 28) + 3 * 15 / 16 * 16,
        "2^28 pairs, sorted: %d rows", rows);
  r.unsorted = 1, rows = -1;
  CHECK(mgen_moe_route_rows(&r, &rows) == MGEN_ERR_INVALID_ARG && rows == -1,
        "2^28 pairs of 16 rows unsorted: %d", rows);
  /* The most pairs: 2^30 - 1, with the most padding still an int; 2^30 refused. */
  r = route();
  r.m = (1 << 30) - 1, r.topk = 1, r.num_experts = r.local_experts = 4096, r.block_rows = 256;
  CHECK(mgen_moe_route_rows(&r, &rows) == MGEN_OK && rows == ((1 << 30) - 1 + 4096 * 255) / 256 * 256,
        "2^30 - 1 pairs: %d rows", rows);
  r.m = 1 << 24, r.topk = 64;
  CHECK(mgen_moe_route_rows(&r, &rows) == MGEN_ERR_INVALID_ARG, "2^30 pairs");
}

static mgen_weights weights(void) {
  mgen_weights w = {.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_GROUP,
                    .group = 128, .n = 256, .k = 256, .d_q = buf_q, .d_scales = buf_s};
  return w;
}

static void test_calls(void) {
  mgen_moe_route r = route(), bad;
  mgen_weights w = weights();
  const char *name = NULL;
  int rows = -1;
  CHECK(mgen_moe_route_tokens(NULL, &r, NULL) == MGEN_ERR_NULL_POINTER, "route: NULL ctx");
  CHECK(mgen_moe_gemm(NULL, w.act, &r, 0, buf_a, &w, NULL, buf_c, NULL) == MGEN_ERR_NULL_POINTER,
        "gemm: NULL ctx");
  CHECK(mgen_moe_sum(NULL, w.act, &r, 256, buf_c, buf_a, NULL) == MGEN_ERR_NULL_POINTER, "sum: NULL ctx");
  EXPECT_FAIL(mgen_moe_route_tokens(&ctx, NULL, NULL), MGEN_ERR_NULL_POINTER, "route is NULL");
  bad = r, bad.d_sorted_ids = NULL;
  EXPECT_FAIL(mgen_moe_route_tokens(&ctx, &bad, NULL), MGEN_ERR_NULL_POINTER, "d_sorted_ids");
  bad = r, bad.d_block_experts = (int32_t *)(buf_a + 2);
  EXPECT_FAIL(mgen_moe_route_tokens(&ctx, &bad, NULL), MGEN_ERR_MISALIGNED, "d_block_experts");
  bad = r, bad.d_expert_map = (const int32_t *)(buf_a + 1), bad.local_experts = 2;
  EXPECT_FAIL(mgen_moe_route_tokens(&ctx, &bad, NULL), MGEN_ERR_MISALIGNED, "d_expert_map");
  bad = r, bad.topk = 65;
  EXPECT_FAIL(mgen_moe_route_tokens(&ctx, &bad, NULL), MGEN_ERR_INVALID_ARG, "topk");
  bad = r, bad.local_experts = 2;
  EXPECT_FAIL(mgen_moe_route_tokens(&ctx, &bad, NULL), MGEN_ERR_INVALID_ARG, "without an expert map");

  /* The GEMM: its own arguments, then the weights' and buffers' checks as mgen_gemm's. */
  EXPECT_FAIL(mgen_moe_gemm(&ctx, w.act, &r, 3, buf_a, &w, NULL, buf_c, NULL),
              MGEN_ERR_INVALID_ARG, "a_rows=3");
  EXPECT_FAIL(mgen_moe_gemm(&ctx, w.act, &r, 0, buf_a, NULL, NULL, buf_c, NULL),
              MGEN_ERR_NULL_POINTER, "w is NULL");
  EXPECT_FAIL(mgen_moe_gemm(&ctx, MGEN_ACT_BF16, &r, 0, buf_a, &w, NULL, buf_c, NULL),
              MGEN_ERR_UNSUPPORTED_FORMAT, "bf16 activations with f16 scales");
  EXPECT_FAIL(mgen_moe_gemm(&ctx, w.act, &r, 0, buf_a + 8, &w, NULL, buf_c, NULL),
              MGEN_ERR_MISALIGNED, "d_a");
  EXPECT_FAIL(mgen_moe_gemm(&ctx, w.act, &r, 1, buf_a, &w, NULL, NULL, NULL),
              MGEN_ERR_NULL_POINTER, "d_c");
  EXPECT_FAIL(mgen_moe_gemm(&ctx, w.act, &r, 0, buf_a, &w, (const float *)(buf_a + 2), buf_c, NULL),
              MGEN_ERR_MISALIGNED, "d_topk_weights");
  bad = r, bad.num_experts = 0;
  EXPECT_FAIL(mgen_moe_gemm(&ctx, w.act, &bad, 0, buf_a, &w, NULL, buf_c, NULL),
              MGEN_ERR_INVALID_ARG, "num_experts=0");
  mgen_weights wb = w;
  wb.d_q = NULL;
  EXPECT_FAIL(mgen_moe_gemm(&ctx, w.act, &r, 0, buf_a, &wb, NULL, buf_c, NULL),
              MGEN_ERR_NULL_POINTER, "d_q");
  /* A bias one element off 16 bytes, refused before the kernel (and its name) is looked at. */
  wb = w, wb.d_bias = buf_s + 2;
  EXPECT_FAIL(mgen_moe_gemm(&ctx, w.act, &r, 0, buf_a, &wb, NULL, buf_c, NULL),
              MGEN_ERR_MISALIGNED, "w->d_bias=");
  EXPECT_FAIL(mgen_moe_gemm_kernel(&ctx, fake_table.kernels[FAKE_G128_16_R0].name, w.act, &r, 1,
                                   buf_a, &wb, NULL, buf_c, NULL),
              MGEN_ERR_MISALIGNED, "w->d_bias=");
  /* The fake table has dense kernels only: the moe key (op moe) finds none, and a dense kernel
   * by name computes another key. */
  EXPECT_FAIL(mgen_moe_gemm(&ctx, w.act, &r, 0, buf_a, &w, NULL, buf_c, NULL),
              MGEN_ERR_UNSUPPORTED_FORMAT, "moe/f16/u4b8/g128");
  EXPECT_FAIL(mgen_moe_gemm_kernel(&ctx, fake_table.kernels[FAKE_G128_16_R0].name, w.act, &r, 0,
                                   buf_a, &w, NULL, buf_c, NULL),
              MGEN_ERR_UNSUPPORTED_FORMAT, "the call is moe/f16/u4b8/g128");
  EXPECT_FAIL(mgen_moe_gemm_kernel(&ctx, "mgen_sm80_moe_nothing", w.act, &r, 0, buf_a, &w, NULL,
                                   buf_c, NULL),
              MGEN_ERR_UNKNOWN_KERNEL, "mgen_sm80_moe_nothing");
  EXPECT_FAIL(mgen_moe_gemm_kernel(&ctx, NULL, w.act, &r, 0, buf_a, &w, NULL, buf_c, NULL),
              MGEN_ERR_NULL_POINTER, "kernel_name");
  EXPECT_FAIL(mgen_moe_gemm_choice(&ctx, w.act, &r, &w, &name, &rows),
              MGEN_ERR_UNSUPPORTED_FORMAT, "moe/f16/u4b8/g128");
  CHECK(name == NULL && rows == -1, "out-parameters written on failure");
  /* The choice reads sizes only: local experts without the map the route will have is no
   * refusal of its own (the same key, not found in the fake table). */
  bad = r, bad.local_experts = 2, bad.d_expert_map = NULL;
  EXPECT_FAIL(mgen_moe_gemm_choice(&ctx, w.act, &bad, &w, &name, &rows),
              MGEN_ERR_UNSUPPORTED_FORMAT, "moe/f16/u4b8/g128");
  bad.local_experts = 4;
  EXPECT_FAIL(mgen_moe_gemm_choice(&ctx, w.act, &bad, &w, &name, &rows), MGEN_ERR_INVALID_ARG,
              "local_experts=4");
  EXPECT_FAIL(mgen_moe_gemm_choice(&ctx, w.act, &r, &w, NULL, &rows), MGEN_ERR_NULL_POINTER,
              "kernel_name");

  /* A in the route's order: the GEMM takes the mode (then the fake table's refusal); the
   * permutation's own checks; where it pays (the choice's refusals first). */
  EXPECT_FAIL(mgen_moe_gemm(&ctx, w.act, &r, MGEN_MOE_A_SORTED, buf_a, &w, NULL, buf_c, NULL),
              MGEN_ERR_UNSUPPORTED_FORMAT, "moe/f16/u4b8/g128");
  CHECK(mgen_moe_permute(NULL, &r, 0, 256, buf_a, buf_c, NULL) == MGEN_ERR_NULL_POINTER, "permute: no ctx");
  EXPECT_FAIL(mgen_moe_permute(&ctx, &r, MGEN_MOE_A_SORTED, 256, buf_a, buf_c, NULL),
              MGEN_ERR_INVALID_ARG, "a_rows=2");
  EXPECT_FAIL(mgen_moe_permute(&ctx, &r, 0, 12, buf_a, buf_c, NULL), MGEN_ERR_INVALID_ARG, "k=12");
  EXPECT_FAIL(mgen_moe_permute(&ctx, &r, 0, 0, buf_a, buf_c, NULL), MGEN_ERR_INVALID_ARG, "k=0");
  EXPECT_FAIL(mgen_moe_permute(&ctx, &r, 1, 256, NULL, buf_c, NULL), MGEN_ERR_NULL_POINTER, "d_a");
  EXPECT_FAIL(mgen_moe_permute(&ctx, &r, 1, 256, buf_a, buf_c + 8, NULL), MGEN_ERR_MISALIGNED,
              "d_sorted");
  bad = r, bad.d_sorted_ids = NULL;
  EXPECT_FAIL(mgen_moe_permute(&ctx, &bad, 0, 256, buf_a, buf_c, NULL), MGEN_ERR_NULL_POINTER,
              "d_sorted_ids");
  int pays = -1;
  EXPECT_FAIL(mgen_moe_gemm_a_sorted(&ctx, w.act, &r, &w, &pays), MGEN_ERR_UNSUPPORTED_FORMAT,
              "moe/f16/u4b8/g128");
  CHECK(pays == -1, "pays written on failure");
  EXPECT_FAIL(mgen_moe_gemm_a_sorted(&ctx, w.act, &r, &w, NULL), MGEN_ERR_NULL_POINTER, "pays");
  EXPECT_FAIL(mgen_moe_gemm_a_sorted(&ctx, w.act, NULL, &w, &pays), MGEN_ERR_NULL_POINTER, "route");

  /* Unsorted: the route call checks the ids alone and goes no further: with another device
   * current, where the sorted route is refused before its launch (ERR_WRONG_DEVICE), the
   * unsorted one returns OK with no list at all. */
  mgen_moe_route u = r;
  u.unsorted = 1, u.d_sorted_ids = u.d_block_experts = u.d_num_padded = NULL;
  fake_device_current = 1;
  EXPECT_FAIL(mgen_moe_route_tokens(&ctx, &r, NULL), MGEN_ERR_WRONG_DEVICE, "current CUDA device");
  (void)mgen__fail(&ctx, MGEN_OK, "%s", "");
  const mgen_status routed = mgen_moe_route_tokens(&ctx, &u, NULL);
  CHECK(routed == MGEN_OK && mgen_ctx_last_error(&ctx)[0] == '\0', "unsorted route: %s (%s)",
        mgen_status_str(routed), mgen_ctx_last_error(&ctx));
  fake_device_current = 0;
  bad = u, bad.d_topk_ids = NULL;
  EXPECT_FAIL(mgen_moe_route_tokens(&ctx, &bad, NULL), MGEN_ERR_NULL_POINTER, "d_topk_ids");
  bad = u, bad.d_topk_ids = (const int32_t *)(buf_a + 2);
  EXPECT_FAIL(mgen_moe_route_tokens(&ctx, &bad, NULL), MGEN_ERR_MISALIGNED, "d_topk_ids");
  bad = u, bad.unsorted = 2;
  EXPECT_FAIL(mgen_moe_route_tokens(&ctx, &bad, NULL), MGEN_ERR_INVALID_ARG, "unsorted=2");
  bad = r, bad.unsorted = -1;
  EXPECT_FAIL(mgen_moe_gemm(&ctx, w.act, &bad, 0, buf_a, &w, NULL, buf_c, NULL),
              MGEN_ERR_INVALID_ARG, "unsorted=-1");
  EXPECT_FAIL(mgen_moe_permute(&ctx, &u, 0, 256, buf_a, buf_c, NULL), MGEN_ERR_INVALID_ARG,
              "no order to permute A");
  bad = r, bad.unsorted = 1; /* with the list's buffers: refused all the same */
  EXPECT_FAIL(mgen_moe_permute(&ctx, &bad, 1, 256, buf_a, buf_c, NULL), MGEN_ERR_INVALID_ARG,
              "no order to permute A");
  EXPECT_FAIL(mgen_moe_unsorted_pays(&ctx, w.act, &u, &w, &pays, &rows),
              MGEN_ERR_UNSUPPORTED_FORMAT, "moe/f16/u4b8/g128");
  EXPECT_FAIL(mgen_moe_unsorted_pays(&ctx, w.act, &u, &w, NULL, &rows), MGEN_ERR_NULL_POINTER,
              "pays or block_rows");
  EXPECT_FAIL(mgen_moe_unsorted_pays(&ctx, w.act, &u, &w, &pays, NULL), MGEN_ERR_NULL_POINTER,
              "pays or block_rows");
  EXPECT_FAIL(mgen_moe_unsorted_pays(&ctx, w.act, NULL, &w, &pays, &rows), MGEN_ERR_NULL_POINTER,
              "route");
  CHECK(mgen_moe_unsorted_pays(NULL, w.act, &u, &w, &pays, &rows) == MGEN_ERR_NULL_POINTER,
        "unsorted_pays: no ctx");
  CHECK(pays == -1 && rows == -1, "unsorted_pays wrote pays %d, block_rows %d on failure", pays,
        rows);

  /* The sum. */
  EXPECT_FAIL(mgen_moe_sum(&ctx, w.act, &r, 12, buf_c, buf_a, NULL), MGEN_ERR_INVALID_ARG, "n=12");
  EXPECT_FAIL(mgen_moe_sum(&ctx, (mgen_act)7, &r, 256, buf_c, buf_a, NULL), MGEN_ERR_INVALID_ARG, "act=7");
  EXPECT_FAIL(mgen_moe_sum(&ctx, w.act, &r, 256, buf_c + 8, buf_a, NULL), MGEN_ERR_MISALIGNED, "d_c");
  EXPECT_FAIL(mgen_moe_sum(&ctx, w.act, &r, 256, buf_c, NULL, NULL), MGEN_ERR_NULL_POINTER, "d_out");
  bad = r, bad.d_topk_ids = NULL;
  EXPECT_FAIL(mgen_moe_sum(&ctx, w.act, &bad, 256, buf_c, buf_a, NULL), MGEN_ERR_NULL_POINTER,
              "d_topk_ids");
}

/* ---------------------------------------------------------------- unsorted routes */

/* Two moe kernels of one key, as the generated table describes them (an mma one, tile_m 16;
 * a wgmma one, tile_m 64, sm_90 only), whose launchers record the call: the op args copied,
 * as the call's own live on its stack. */
enum { MOE_MMA, MOE_WGMMA, MOE_COUNT };
static mgen_launch_args moe_args;
static mgen_moe_op_args moe_op;
static int moe_last = -1, moe_launches;

#define MOE_LAUNCHER(i)                                                    \
  static int moe_launch_##i(const mgen_launch_args *args, void *stream) { \
    (void)stream;                                                          \
    moe_args = *args;                                                      \
    moe_op = *(const mgen_moe_op_args *)args->op_args;                     \
    moe_last = i;                                                          \
    moe_launches++;                                                        \
    return 0;                                                              \
  }
MOE_LAUNCHER(0)
MOE_LAUNCHER(1)

static const mgen_kernel_desc moe_kernels[MOE_COUNT] = {
  [MOE_MMA] = {.name = "fake_moe_mma_16", .family = MGEN_FAMILY_MMA, .op = MGEN_OP_MOE,
               .act = MGEN_ACT_F16, .wfmt = MGEN_WFMT_U4B8, .group = 128,
               .scheme = MGEN_SCHEME_GROUP, .layout = MGEN_LAYOUT_MMA, .tile_m = 16,
               .tile_n = 128, .tile_k = 128, .sm_min = 80, .blocks_per_sm = 1,
               .params = {4, 4, 3, 4, 4}, .launch = moe_launch_0},
  [MOE_WGMMA] = {.name = "fake_moe_wgmma_64", .family = MGEN_FAMILY_WGMMA, .op = MGEN_OP_MOE,
                 .act = MGEN_ACT_F16, .wfmt = MGEN_WFMT_U4B8, .group = 128,
                 .scheme = MGEN_SCHEME_GROUP, .layout = MGEN_LAYOUT_MMA, .tile_m = 64,
                 .tile_n = 256, .tile_k = 64, .sm_min = 90, .sm_max = 90, .blocks_per_sm = 1,
                 .params = {4, 8, 16, 4, 0}, .launch = moe_launch_1},
};
/* Both kernels; the mma one alone; the wgmma one alone (the choice has one answer there). */
static const mgen_table moe_both = {moe_kernels, MOE_COUNT, 0x5678, "fake moe table"};
static const mgen_table moe_mma = {moe_kernels + MOE_MMA, 1, 0x5679, "fake moe table, mma"};
static const mgen_table moe_wgmma = {moe_kernels + MOE_WGMMA, 1, 0x567a, "fake moe table, wgmma"};

static void moe_ctx_init(struct mgen_ctx *c, const mgen_table *table) {
  fake_ctx_init(c);
  c->table = table;
  c->sm = 90; /* both families run */
  mgen__pool_fixed(&c->pool, (float *)buf_c, (int *)buf_q);
  CHECK(mgen__ctx_init_host(c) == MGEN_OK, "%s: context", table->generator);
}

/* A refusal on context c: status, message, and no moe launch. */
#define EXPECT_MOE_REFUSED(c, call, status, text)                                           \
  do {                                                                                      \
    int launches_ = moe_launches;                                                           \
    EXPECT_REFUSED(c, call, status, text);                                                  \
    CHECK(moe_launches == launches_, "%s launched", #call);                                 \
  } while (0)

/* A call on context c that must succeed. */
#define EXPECT_OK(c, call)                                                                  \
  do {                                                                                      \
    mgen_status st_ = (call);                                                               \
    CHECK(st_ == MGEN_OK, "%s: %s (%s)", #call, mgen_status_str(st_), mgen_ctx_last_error(c)); \
  } while (0)

static void test_unsorted(void) {
  static struct mgen_ctx both, mma, wgmma;
  static _Alignas(16) int32_t map[3] = {1, -1, 0};
  static _Alignas(16) float topk_w[P];
  moe_ctx_init(&both, &moe_both);
  moe_ctx_init(&mma, &moe_mma);
  moe_ctx_init(&wgmma, &moe_wgmma);
  mgen_weights w = weights();
  /* m 3, top-2 over 3 experts, 2 of them here (the map); no list at all */
  mgen_moe_route u = route();
  u.unsorted = 1, u.local_experts = 2, u.d_expert_map = map, u.block_rows = 16;
  u.d_sorted_ids = u.d_block_experts = u.d_num_padded = NULL;

  /* What reaches the mma kernel: a block of 16 rows per pair, the ids, map and expert counts
   * it derives each block's expert from, no list; A per pair and per token. */
  for (int a_rows = MGEN_MOE_A_TOKENS; a_rows <= MGEN_MOE_A_PAIRS; a_rows++) {
    memset(&moe_op, 0x5a, sizeof moe_op);
    const int launches = moe_launches;
    const mgen_status st = mgen_moe_gemm_kernel(&both, "fake_moe_mma_16", w.act, &u, a_rows,
                                                buf_a, &w, topk_w, buf_c, NULL);
    CHECK(st == MGEN_OK && moe_launches == launches + 1 && moe_last == MOE_MMA,
          "unsorted, a_rows %d: %s (%s), %d launches of %d", a_rows, mgen_status_str(st),
          mgen_ctx_last_error(&both), moe_launches - launches, moe_last);
    CHECK(moe_args.m == P * 16 && moe_args.op == MGEN_OP_MOE && moe_args.op_args != NULL,
          "launch rows %d (a block of 16 per pair: %d), op %d", moe_args.m, P * 16, moe_args.op);
    CHECK(moe_op.unsorted == 1 && moe_op.topk_ids == ids && moe_op.expert_map == map &&
              moe_op.num_experts == 3 && moe_op.experts == 2 && moe_op.pairs == P,
          "op args: unsorted %d, ids %p (%p), map %p (%p), num_experts %d, experts %d, pairs %d",
          moe_op.unsorted, (const void *)moe_op.topk_ids, (void *)ids,
          (const void *)moe_op.expert_map, (void *)map, moe_op.num_experts, moe_op.experts,
          moe_op.pairs);
    CHECK(moe_op.a_sorted == 0 && moe_op.a_div == (a_rows == MGEN_MOE_A_TOKENS ? 2 : 1) &&
              moe_op.topk_weights == topk_w,
          "a_rows %d: a_sorted %d, a_div %d", a_rows, moe_op.a_sorted, moe_op.a_div);
    CHECK(moe_op.sorted_ids == NULL && moe_op.block_experts == NULL && moe_op.num_padded == NULL,
          "the route's (absent) list passed on");
  }
  /* The same route sorted (its buffers back) passes unsorted 0: the flag is the route's. */
  mgen_moe_route s = u;
  s.unsorted = 0, s.d_sorted_ids = sorted, s.d_block_experts = blocks, s.d_num_padded = count;
  CHECK(mgen_moe_gemm_kernel(&both, "fake_moe_mma_16", w.act, &s, 0, buf_a, &w, NULL, buf_c,
                             NULL) == MGEN_OK && moe_op.unsorted == 0 && moe_op.sorted_ids == sorted,
        "sorted: unsorted %d", moe_op.unsorted);

  /* Refused, C untouched (nothing launched): a wgmma kernel (its blocks plan over the list),
   * named with its own block rows; A in the route's order; a route of other block rows. */
  mgen_moe_route u64 = u;
  u64.block_rows = 64;
  EXPECT_MOE_REFUSED(&both, mgen_moe_gemm_kernel(&both, "fake_moe_wgmma_64", w.act, &u64, 0,
                                                 buf_a, &w, NULL, buf_c, NULL),
                     MGEN_ERR_INVALID_ARG, "fake_moe_wgmma_64 needs a sorted route");
  EXPECT_MOE_REFUSED(&wgmma, mgen_moe_gemm(&wgmma, w.act, &u64, 0, buf_a, &w, NULL, buf_c, NULL),
                     MGEN_ERR_INVALID_ARG, "needs a sorted route");
  EXPECT_MOE_REFUSED(&both, mgen_moe_gemm_kernel(&both, "fake_moe_mma_16", w.act, &u,
                                                 MGEN_MOE_A_SORTED, buf_a, &w, NULL, buf_c, NULL),
                     MGEN_ERR_INVALID_ARG, "no order for A");
  EXPECT_MOE_REFUSED(&mma, mgen_moe_gemm(&mma, w.act, &u, MGEN_MOE_A_SORTED, buf_a, &w, NULL,
                                         buf_c, NULL),
                     MGEN_ERR_INVALID_ARG, "no order for A");
  mgen_moe_route u8 = u;
  u8.block_rows = 8;
  EXPECT_MOE_REFUSED(&mma, mgen_moe_gemm(&mma, w.act, &u8, 0, buf_a, &w, NULL, buf_c, NULL),
                     MGEN_ERR_INVALID_ARG, "block_rows 8");

  /* The choice over an unsorted route: the mma kernel, its block rows (16) for the route. */
  const char *name = NULL;
  int rows = -1, pays = -1;
  EXPECT_OK(&mma, mgen_moe_gemm_choice(&mma, w.act, &u, &w, &name, &rows));
  CHECK(name == moe_kernels[MOE_MMA].name && rows == 16, "choice %s, block_rows %d", name, rows);
  const int launches = moe_launches;
  EXPECT_OK(&mma, mgen_moe_gemm(&mma, w.act, &u, 1, buf_a, &w, NULL, buf_c, NULL));
  CHECK(moe_launches == launches + 1 && moe_op.unsorted == 1 && moe_args.m == P * 16,
        "mgen_moe_gemm unsorted: %d launches, unsorted %d, rows %d", moe_launches - launches,
        moe_op.unsorted, moe_args.m);

  /* mgen_moe_unsorted_pays: the verdict of its choice (the rule's points: test_moe_sorted) and
   * that choice's tile_m, from the sizes alone (the route's flag and buffers not read). One
   * token pays on the mma kernel, never on the wgmma one; 64 tokens' top-8 over 256 experts
   * read ~290 experts twice, ~10 MB of these 34 KB experts: more than the route costs. */
  mgen_moe_route one = {.m = 1, .topk = 8, .num_experts = 256, .local_experts = 256};
  EXPECT_OK(&mma, mgen_moe_unsorted_pays(&mma, w.act, &one, &w, &pays, &rows));
  CHECK(pays == 1 && rows == 16, "mma, m 1: pays %d, block_rows %d", pays, rows);
  EXPECT_OK(&wgmma, mgen_moe_unsorted_pays(&wgmma, w.act, &one, &w, &pays, &rows));
  CHECK(pays == 0 && rows == 64, "wgmma, m 1: pays %d, block_rows %d", pays, rows);
  one.m = 64;
  EXPECT_OK(&mma, mgen_moe_unsorted_pays(&mma, w.act, &one, &w, &pays, &rows));
  CHECK(pays == 0 && rows == 16, "mma, m 64 top-8 of 256: pays %d, block_rows %d", pays, rows);
  one.m = 4, one.unsorted = 1;
  EXPECT_OK(&mma, mgen_moe_unsorted_pays(&mma, w.act, &one, &w, &pays, &rows));
  CHECK(pays == 1, "mma, m 4 top-8 of 256, the route's flag set: pays %d", pays);

  /* A in the route's order never pays for an unsorted route (no order to permute into), where
   * the same sizes sorted do (wgmma, 64 rows an expert, n 4096: test_moe_sorted's edge). */
  mgen_weights wide = w;
  wide.n = 4096;
  mgen_moe_route many = {.m = 512, .topk = 1, .num_experts = 8, .local_experts = 8};
  EXPECT_OK(&wgmma, mgen_moe_gemm_a_sorted(&wgmma, w.act, &many, &wide, &pays));
  CHECK(pays == 1, "sorted, 64 rows an expert, n 4096: a_sorted pays %d", pays);
  many.unsorted = 1;
  EXPECT_OK(&wgmma, mgen_moe_gemm_a_sorted(&wgmma, w.act, &many, &wide, &pays));
  CHECK(pays == 0, "unsorted: a_sorted pays %d", pays);
}

int main(void) {
  test_reference();
  test_rows();
  fake_ctx_init(&ctx);
  mgen__pool_fixed(&ctx.pool, (float *)buf_c, (int *)buf_q);
  if (mgen__ctx_init_host(&ctx) != MGEN_OK) return 1;
  test_calls();
  test_unsorted();
  return check_exit("test_moe_args");
}
