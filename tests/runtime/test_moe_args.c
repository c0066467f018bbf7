/* test_moe_args.c -- the MoE calls without a GPU: the route's CPU reference on hand-worked
 * cases (tests/common/moe_ref.c, which test_moe_gpu holds the GPU route to), the route's
 * capacity (mgen_moe_route_rows), and the argument checks of mgen_moe_route_tokens,
 * mgen_moe_gemm, mgen_moe_gemm_kernel, mgen_moe_gemm_choice, mgen_moe_gemm_a_sorted,
 * mgen_moe_permute and mgen_moe_sum over a context built by hand on the fake table (no moe
 * kernel in it): every refusal with its status, a message and no launch. */
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

  /* The sum. */
  EXPECT_FAIL(mgen_moe_sum(&ctx, w.act, &r, 12, buf_c, buf_a, NULL), MGEN_ERR_INVALID_ARG, "n=12");
  EXPECT_FAIL(mgen_moe_sum(&ctx, (mgen_act)7, &r, 256, buf_c, buf_a, NULL), MGEN_ERR_INVALID_ARG, "act=7");
  EXPECT_FAIL(mgen_moe_sum(&ctx, w.act, &r, 256, buf_c + 8, buf_a, NULL), MGEN_ERR_MISALIGNED, "d_c");
  EXPECT_FAIL(mgen_moe_sum(&ctx, w.act, &r, 256, buf_c, NULL, NULL), MGEN_ERR_NULL_POINTER, "d_out");
  bad = r, bad.d_topk_ids = NULL;
  EXPECT_FAIL(mgen_moe_sum(&ctx, w.act, &bad, 256, buf_c, buf_a, NULL), MGEN_ERR_NULL_POINTER,
              "d_topk_ids");
}

int main(void) {
  test_reference();
  test_rows();
  fake_ctx_init(&ctx);
  mgen__pool_fixed(&ctx.pool, (float *)buf_c, (int *)buf_q);
  if (mgen__ctx_init_host(&ctx) != MGEN_OK) return 1;
  test_calls();
  return check_exit("test_moe_args");
}
