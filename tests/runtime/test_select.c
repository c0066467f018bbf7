/* test_select.c -- kernel selection (runtime/src/dispatch/select.c) over a fake table: functional key,
 * device filter, can_implement with its messages, the cost model's default; status texts. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "fake_table.h"
#include "dispatch/cost.h"
#include "dispatch/select.h"

/* A u4b8 key (group scales, the MMA layout). */
#define U4B8_KEY(act, group) {act, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, group, MGEN_LAYOUT_MMA, MGEN_OP_DENSE}
static const mgen__key f16_gc = U4B8_KEY(MGEN_ACT_F16, MGEN_GROUP_CHANNEL);
static const mgen__key f16_g64 = U4B8_KEY(MGEN_ACT_F16, 64);
static const mgen__key f16_g128 = U4B8_KEY(MGEN_ACT_F16, 128);

/* A device for the selection: compute capability `sm`, 132 SMs, the cost model's defaults. */
static mgen__device device(int sm) {
  mgen__device dev = {sm, 132, 0, 0, 0};
  return dev;
}

/* Selects and returns the index, or -1 - status on failure; the message goes to why. */
static int pick(int sm, const mgen__key *key, int m, int n, int k, char *why, size_t size) {
  int index = -99;
  mgen__device dev = device(sm);
  mgen_status st = mgen__select(&fake_table, &dev, key, m, n, k, &index, why, size);
  if (st != MGEN_OK) {
    CHECK(index == -99, "index written on failure");
    return -1 + (int)st; /* st < 0 */
  }
  return index;
}

static void test_key(void) {
  char why[512];
  mgen__key g32 = U4B8_KEY(MGEN_ACT_F16, 32);
  CHECK(pick(90, &g32, 1, 4096, 4096, why, sizeof why) == -1 + MGEN_ERR_UNSUPPORTED_FORMAT,
        "g32 is in no fake kernel");
  CHECK(strstr(why, "no kernel for f16/u4b8/g32") != NULL, "message: %s", why);
  CHECK(strstr(why, "f16/u4b8/gc, f16/u4b8/g64, f16/u4b8/g128, bf16/u4b8/g128") != NULL,
        "message lists the table's keys: %s", why);

  mgen__key fp4 = {MGEN_ACT_F16, MGEN_WFMT_FE2M1, MGEN_SCHEME_NVFP4, 128, MGEN_LAYOUT_MMA,
                   MGEN_OP_DENSE};
  CHECK(pick(90, &fp4, 1, 4096, 4096, why, sizeof why) == -1 + MGEN_ERR_UNSUPPORTED_FORMAT,
        "fe2m1");
  CHECK(strstr(why, "f16/fe2m1/g128") != NULL, "message: %s", why);

  mgen__key bf16 = U4B8_KEY(MGEN_ACT_BF16, 128);
  CHECK(pick(80, &bf16, 1, 4096, 4096, why, sizeof why) == FAKE_BF16_G128, "bf16 kernel");
  mgen__key bf16_gc = U4B8_KEY(MGEN_ACT_BF16, 0);
  CHECK(pick(80, &bf16_gc, 1, 4096, 4096, why, sizeof why) == -1 + MGEN_ERR_UNSUPPORTED_FORMAT,
        "bf16/gc");
  CHECK(strstr(why, "bf16/u4b8/gc") != NULL, "message: %s", why);
}

static void test_device(void) {
  char why[512];
  CHECK(pick(80, &f16_g64, 1, 4096, 4096, why, sizeof why) == -1 + MGEN_ERR_NO_KERNEL,
        "g64 needs sm_90");
  CHECK(strstr(why, "sm_90") != NULL && strstr(why, "sm_80") != NULL, "message: %s", why);
  CHECK(pick(90, &f16_g64, 1, 4096, 4096, why, sizeof why) == FAKE_G64_SM90, "sm_90 runs it");
  CHECK(pick(100, &f16_g64, 1, 4096, 4096, why, sizeof why) == FAKE_G64_SM90, "sm_100 too");
}

static void test_shape(void) {
  char why[512];
  CHECK(pick(80, &f16_g128, 1, 1000, 4096, why, sizeof why) == -1 + MGEN_ERR_UNSUPPORTED_SHAPE,
        "n=1000");
  CHECK(strcmp(why, "n=1000 is not a multiple of 64 (n step of every f16/u4b8/g128 kernel)") == 0,
        "message: %s", why);
  /* n in 64-column steps, from one whole tile up (the mma family's shifted last tile) */
  CHECK(pick(80, &f16_g128, 1, 64, 4096, why, sizeof why) == -1 + MGEN_ERR_UNSUPPORTED_SHAPE,
        "n=64 below every g128 tile");
  CHECK(strcmp(why, "n=64 is below 128 (tile_n of every f16/u4b8/g128 kernel)") == 0,
        "message: %s", why);
  CHECK(pick(80, &f16_g128, 1, 192, 4096, why, sizeof why) >= 0, "n=192: a 128-wide tile, shifted");

  CHECK(pick(80, &f16_g128, 7, 4096, 4160, why, sizeof why) == -1 + MGEN_ERR_UNSUPPORTED_SHAPE,
        "k=4160");
  CHECK(strcmp(why, "k=4160 is not a multiple of 128 (group of every f16/u4b8/g128 kernel)") == 0,
        "message: %s", why);

  /* Candidates disagree: one clause per distinct constraint. */
  CHECK(pick(80, &f16_gc, 1, 96, 4096, why, sizeof why) == -1 + MGEN_ERR_UNSUPPORTED_SHAPE,
        "n=96 per channel");
  CHECK(strcmp(why, "n=96 is not a multiple of 64 (n step of every f16/u4b8/gc kernel)") == 0,
        "message: %s", why);
  mgen_kernel_desc wide = fake_table.kernels[FAKE_G128_16_R0];
  char least[128];
  wide.tile_n = 256;
  CHECK(!mgen__can_implement(&wide, 1, 192, 4096, least, sizeof least) &&
            strcmp(least, "n=192 is below 256 (tile_n)") == 0 &&
            mgen__can_implement(&wide, 1, 320, 4096, NULL, 0),
        "a 256-wide tile: n=192 below it (%s), n=320 runs", least);
  /* ... and a shape one of them runs is fine. */
  CHECK(pick(80, &f16_gc, 1, 192, 4096, why, sizeof why) == FAKE_GC_A, "n=192 -> gc_a");

  CHECK(pick(80, &f16_g128, 0, 4096, 4096, why, sizeof why) == -1 + MGEN_ERR_UNSUPPORTED_SHAPE,
        "m=0");
  CHECK(strstr(why, "m=0 is not positive") != NULL, "message: %s", why);

  /* A kernel whose tile_k does not cover its group: k % group is checked too. */
  mgen_kernel_desc d = fake_table.kernels[FAKE_G128_16_R0];
  d.tile_k = 64;
  char text[128];
  CHECK(!mgen__can_implement(&d, 1, 4096, 4160, text, sizeof text), "k=4160, group 128");
  CHECK(strcmp(text, "k=4160 is not a multiple of 128 (group)") == 0, "message: %s", text);
  CHECK(mgen__can_implement(&d, 1, 4096, 4096, text, sizeof text) == 1, "k=4096");
  CHECK(mgen__can_implement(&d, 1, 4096, 4096, NULL, 0) == 1, "why may be NULL");
  CHECK(!mgen__can_implement(&d, 1, 4000, 4096, NULL, 0), "n=4000");
  CHECK(!mgen__can_implement(&d, 1, 0, 4096, NULL, 0), "n=0");

  /* tile_k asks nothing of k: the packed layout pads k to 128, which every tile_k divides; a
   * kernel whose tile_k does not divide it can run nothing. */
  d = fake_table.kernels[FAKE_GC_B]; /* 64 x 128 x 128, per channel */
  CHECK(mgen__can_implement(&d, 1, 4096, 4160, text, sizeof text) == 1, "gc k=4160: %s", text);
  CHECK(mgen__k_multiple(&d) == 64, "gc: k step 64");
  CHECK(!mgen__can_implement(&d, 1, 4096, 4128, text, sizeof text) &&
            strcmp(text, "k=4128 is not a multiple of 64 (per-channel k step)") == 0,
        "gc k=4128: %s", text);
  d = fake_table.kernels[FAKE_G64_SM90]; /* 16 x 256 x 64, group 64 */
  CHECK(mgen__can_implement(&d, 1, 4096, 4160, NULL, 0) == 1 && mgen__k_multiple(&d) == 64,
        "g64 k=4160 (padded to 4224)");
  d.tile_k = 192;
  CHECK(!mgen__can_implement(&d, 1, 4096, 4096, text, sizeof text) && mgen__k_multiple(&d) == 0 &&
            strcmp(text, "tile_k=192 does not divide 128, the packed layout's K padding "
                         "(tile_k)") == 0,
        "tile_k 192: %s", text);
  /* A tile deeper than the padding, a multiple of it, runs the k it covers whole (not padded). */
  d.tile_k = 256;
  CHECK(mgen__k_multiple(&d) == 256 && mgen__can_implement(&d, 1, 4096, 4096, NULL, 0) == 1 &&
            mgen__can_implement(&d, 1, 4096, 11008, NULL, 0) == 1, "tile_k 256: k 4096, 11008");
  CHECK(!mgen__can_implement(&d, 1, 4096, 4224, text, sizeof text) &&
            strcmp(text, "k=4224 is not a multiple of 256 (tile_k deeper than the packed "
                         "layout's K padding)") == 0,
        "tile_k 256, k=4224: %s", text);
  CHECK(!mgen__can_implement(&d, 1, 4096, 4160, text, sizeof text) &&
            strcmp(text, "k=4160 is not a multiple of 64 (group)") != 0 &&
            strstr(text, "k=4160 is not a multiple of 256") != NULL,
        "tile_k 256, k=4160 (group 64 allows it): %s", text);
  d.tile_k = 384; /* 3 x the padding */
  CHECK(mgen__k_multiple(&d) == 384 && mgen__can_implement(&d, 1, 4096, 384 * 11, NULL, 0) == 1 &&
            !mgen__can_implement(&d, 1, 4096, 4096, NULL, 0), "tile_k 384");
  d.group = MGEN_GROUP_CHANNEL; d.tile_k = 256;
  CHECK(mgen__k_multiple(&d) == 256, "per channel, tile_k 256");
}

/* The default by the cost model over tile_m 16 (rank 1), 16 (rank 0, twice), 32, 64, 128 (+256
 * on sm_90), all 128 x 128 in N x K, at N = K = 4096 on 132 SMs. Per weight element the model
 * charges one dequantization per row block plus one mma per 16 rows of the tile (padding
 * included) and a fixed cost per pipeline step, so exact fits win and larger tiles win once
 * padding is small: M = 96 takes three 32-row blocks (3 x 0.063 = 0.189 cycles/element on sm_80
 * before latency hiding and step costs) over two 64-row (0.222) or one 128-row (0.207). With
 * mma.c's step cost (UNIT_CYCLES 116.4) M = 100..128 is a near tie on sm_80 that two 64-row blocks
 * win (38.74 us against one 128-row block's 38.78), and M = 256 goes to the 128-row tile. On
 * sm_90 each 16-row block beyond a tile's first also costs c_rows (mma.c): at M = 200 four
 * 64-row blocks (38.0 us) then beat two 128-row (40.1) and one 256-row block (42.8); at
 * M = 4096 the 256-row tile still wins. */
static void test_default_choice(void) {
  static const struct {
    int sm, m, expect;
  } cases[] = {
      {80, 1, FAKE_G128_16_R0},   /* least padding; rank 0 beats rank 1; then table order */
      {80, 16, FAKE_G128_16_R0},  {80, 17, FAKE_G128_32},   {80, 32, FAKE_G128_32},
      {80, 33, FAKE_G128_64},     {80, 64, FAKE_G128_64},   {80, 65, FAKE_G128_32},
      {80, 96, FAKE_G128_32},     {80, 100, FAKE_G128_64},  {80, 128, FAKE_G128_64},
      {80, 130, FAKE_G128_32},    {80, 192, FAKE_G128_64},  {80, 256, FAKE_G128_128},
      {80, 4096, FAKE_G128_128},  {90, 1, FAKE_G128_16_R0}, {90, 200, FAKE_G128_64},
      {90, 4096, FAKE_G128_256_SM90},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char why[256];
    int got = pick(cases[i].sm, &f16_g128, cases[i].m, 4096, 4096, why, sizeof why);
    CHECK(got == cases[i].expect, "sm_%d m=%d: got %d (%s), expected %d", cases[i].sm, cases[i].m,
          got, got >= 0 ? fake_table.kernels[got].name : why, cases[i].expect);
  }

  /* Only tiles 16 and 32 (sm_80, 8 warps over 128 x 128): M = 32 takes one 32-row block
   * (16.6 us < 19.1 for two 16-row ones), M = 1000 32-row blocks; M = 48 is a near tie that,
   * with mma.c's step cost (UNIT_CYCLES 116.4), three 16-row blocks win (25.13 us against two
   * 32-row blocks' 25.22; with 145.5, before bench/notes/v31.md's refit, two 32-row blocks did). */
  mgen_kernel_desc small[2] = {fake_table.kernels[FAKE_G128_16_R0], fake_table.kernels[FAKE_G128_32]};
  mgen_table t = {small, 2, 0, "small"};
  mgen__device dev = device(80);
  int index = -1;
  CHECK(mgen__select(&t, &dev, &f16_g128, 32, 4096, 4096, &index, NULL, 0) == MGEN_OK && index == 1,
        "m=32 over tiles 16, 32: %d", index);
  CHECK(mgen__select(&t, &dev, &f16_g128, 48, 4096, 4096, &index, NULL, 0) == MGEN_OK && index == 0,
        "m=48 over tiles 16, 32: %d", index);
  CHECK(mgen__select(&t, &dev, &f16_g128, 1000, 4096, 4096, &index, NULL, 0) == MGEN_OK &&
            index == 1, "m=1000 over tiles 16, 32: %d", index);

  /* Candidates come best predicted first, and the first is the default. */
  int cand[8], first = -1;
  int total = mgen__candidates(&fake_table, &dev, &f16_g128, 96, 4096, 4096, cand, 8);
  CHECK(total == 6, "6 f16/u4b8/g128 candidates on sm_80, got %d", total);
  mgen__select(&fake_table, &dev, &f16_g128, 96, 4096, 4096, &first, NULL, 0);
  CHECK(total > 0 && cand[0] == first, "candidate 0 (%d) is the default (%d)", cand[0], first);
  double prev = 0;
  for (int i = 0; i < total && i < 8; i++) {
    double ns = mgen__cost_ns(&fake_table.kernels[cand[i]], 96, 4096, 4096, &dev);
    CHECK(ns >= prev, "candidate %d predicted %.0f ns after %.0f", i, ns, prev);
    prev = ns;
  }
  CHECK(mgen__candidates(&fake_table, &dev, &f16_g128, 96, 4096, 4096, cand, 2) == 6 &&
            cand[0] == first, "a short buffer keeps the best");
  CHECK(mgen__candidates(&fake_table, &dev, &f16_g128, 96, 1000, 4096, cand, 8) == 0,
        "n=1000: no candidate");
}

/* The moe op's cost of `slabs` experts of m mean rows (cost.c mgen__cost_slabs_ns): one expert
 * is the plain cost; over several, each expert's rows spread about m, so a 64-row tile over
 * experts of 64 rows on average runs ~1.5 slabs of each: between the cost of one and of two
 * slabs per expert; far more rows than the tile: about m / tile + 1/2 slabs each, and the
 * cost is finite for any m. */
static void test_slabs(void) {
  const mgen__device dev = device(80);
  const mgen_kernel_desc *d = &fake_table.kernels[FAKE_G128_64];
  const double one = mgen__cost_ns(d, 64, 4096 * 8, 4096, &dev);
  const double two = mgen__cost_ns(d, 64, 4096 * 16, 4096, &dev);
  const double spread = mgen__cost_slabs_ns(d, 64, 4096, 4096, 8, &dev);
  CHECK(mgen__cost_slabs_ns(d, 64, 4096, 4096, 1, &dev) == mgen__cost_ns(d, 64, 4096, 4096, &dev),
        "one expert: the plain cost");
  CHECK(spread > one && spread < two, "64 +- 8 rows over a 64-row tile: %.0f ns, not between one "
        "slab each (%.0f) and two (%.0f)", spread, one, two);
  CHECK(mgen__cost_slabs_ns(d, 8, 4096, 4096, 8, &dev) == mgen__cost_ns(d, 8, 4096 * 8, 4096, &dev),
        "8 rows over a 64-row tile: one slab each");
  const double big = mgen__cost_slabs_ns(d, 1 << 24, 128, 4096, 2, &dev);
  const double slabs = (double)(1 << 24) / 64 + 0.5; /* 2 experts: 2 x 262144.5 slabs of 128 columns */
  const double columns = 128.0 * 2 * slabs;
  CHECK(isfinite(big) && big > 0 && fabs(big / mgen__cost_ns(d, 64, (int)columns, 4096, &dev) - 1) < 1e-3,
        "2^24 rows over a 64-row tile: %.3g ns, not the cost of m / 64 + 1/2 slabs each", big);
}

static void test_misc(void) {
  int index = 0;
  mgen__device dev80 = device(80);
  CHECK(mgen__select(NULL, &dev80, &f16_g128, 1, 128, 128, &index, NULL, 0) == MGEN_ERR_NULL_POINTER,
        "NULL table");
  CHECK(mgen__select(&fake_table, &dev80, NULL, 1, 128, 128, &index, NULL, 0) == MGEN_ERR_NULL_POINTER,
        "NULL key");
  CHECK(mgen__select(&fake_table, &dev80, &f16_g128, 1, 128, 128, NULL, NULL, 0) == MGEN_ERR_NULL_POINTER,
        "NULL index");
  mgen_table empty = {NULL, 0, 0, "empty"};
  char why[128];
  CHECK(mgen__select(&empty, &dev80, &f16_g128, 1, 128, 128, &index, why, sizeof why) ==
            MGEN_ERR_UNSUPPORTED_FORMAT, "empty table");
  CHECK(strstr(why, "the table is empty") != NULL, "message: %s", why);
  /* A small message buffer truncates, never overflows. */
  char tiny[8];
  memset(tiny, 'x', sizeof tiny);
  mgen__select(&fake_table, &dev80, &f16_g128, 1, 1000, 4096, &index, tiny, sizeof tiny);
  CHECK(memchr(tiny, '\0', sizeof tiny) != NULL, "tiny buffer terminated");

  for (int i = 0; i < FAKE_COUNT; i++)
    CHECK(mgen_table_find(&fake_table, fake_table.kernels[i].name) == i, "find %d", i);
  CHECK(mgen_table_find(&fake_table, "mgen_nope") == -1, "unknown name");
  CHECK(mgen_table_find(&fake_table, NULL) == -1, "NULL name");
  CHECK(mgen_table_find(NULL, "fake_gc_a") == -1, "NULL table");

  char key_text[48];
  mgen__key odd = {7, 9, 0, 32, 1, MGEN_OP_DENSE};
  mgen__key_str(&odd, key_text, sizeof key_text);
  CHECK(strcmp(key_text, "?/?/g32") == 0, "key text %s", key_text);
}

static void test_status(void) {
  int count = 0;
#define CHECK_STATUS_(name, value, msg)                                                       \
  CHECK(MGEN_##name == value, #name);                                                         \
  CHECK(strcmp(mgen_status_str(MGEN_##name), msg) == 0, #name ": %s", mgen_status_str(MGEN_##name)); \
  count++;
  MGEN_STATUS_MAP(CHECK_STATUS_)
#undef CHECK_STATUS_
  CHECK(count == 16, "%d statuses", count);
  CHECK(MGEN_OK == 0, "MGEN_OK is 0");
  CHECK(strcmp(mgen_status_str((mgen_status)12345), "unknown status") == 0, "unknown");
  CHECK(strcmp(mgen_status_str((mgen_status)-16), "unknown status") == 0, "unknown");
  /* Every text distinct. */
  for (int a = -15; a <= 0; a++)
    for (int b = a + 1; b <= 0; b++)
      CHECK(strcmp(mgen_status_str((mgen_status)a), mgen_status_str((mgen_status)b)) != 0,
            "%d and %d share a text", a, b);
  CHECK(mgen_version_number() == MGEN_VERSION_NUMBER, "version %d", mgen_version_number());
  CHECK(MGEN_VERSION_NUMBER == 100, "0.1.0 is 100");
}

/* The scheme and the layout are matched explicitly: a table whose kernels differ only by
 * scheme, or only by layout, is chosen from by the key's, never by the group. (fe2m1 g32 with
 * NVFP4 scales exists in no format table; selection does not care.) */
static void test_scheme_layout(void) {
#define FE2M1_DESC(nm, scheme_, layout_)                                                        \
  {.name = nm, .family = MGEN_FAMILY_MMA, .act = MGEN_ACT_F16, .wfmt = MGEN_WFMT_FE2M1,          \
   .group = 32, .scheme = scheme_, .layout = layout_, .tile_m = 16, .tile_n = 64, .tile_k = 64,  \
   .sm_min = 80, .params = {4, 4}, .blocks_per_sm = 1}
  static const mgen_kernel_desc kernels[] = {
      FE2M1_DESC("k_nvfp4", MGEN_SCHEME_NVFP4, MGEN_LAYOUT_MMA),
      FE2M1_DESC("k_mxfp4", MGEN_SCHEME_MXFP4, MGEN_LAYOUT_MMA),
      FE2M1_DESC("k_mxfp4_layout2", MGEN_SCHEME_MXFP4, 2),
  };
  const mgen_table table = {kernels, 3, 0, "scheme table"};
  mgen__device dev = device(80);
  mgen__key key = {MGEN_ACT_F16, MGEN_WFMT_FE2M1, MGEN_SCHEME_MXFP4, 32, MGEN_LAYOUT_MMA,
                   MGEN_OP_DENSE};
  char why[256];
  int index = -1;
  CHECK(mgen__select(&table, &dev, &key, 1, 4096, 4096, &index, why, sizeof why) == MGEN_OK &&
            index == 1, "mxfp4 picks k_mxfp4: %d %s", index, why);
  key.scheme = MGEN_SCHEME_NVFP4;
  CHECK(mgen__select(&table, &dev, &key, 1, 4096, 4096, &index, why, sizeof why) == MGEN_OK &&
            index == 0, "nvfp4 picks k_nvfp4: %d %s", index, why);
  key.scheme = MGEN_SCHEME_MXFP4, key.layout = 2;
  CHECK(mgen__select(&table, &dev, &key, 1, 4096, 4096, &index, why, sizeof why) == MGEN_OK &&
            index == 2, "layout 2 picks k_mxfp4_layout2: %d %s", index, why);
  key.scheme = MGEN_SCHEME_GROUP, key.layout = MGEN_LAYOUT_MMA;
  CHECK(mgen__select(&table, &dev, &key, 1, 4096, 4096, &index, why, sizeof why) ==
            MGEN_ERR_UNSUPPORTED_FORMAT, "no kernel for fe2m1 with group scales");
  int out[4];
  key.scheme = MGEN_SCHEME_MXFP4;
  CHECK(mgen__candidates(&table, &dev, &key, 1, 4096, 4096, out, 4) == 1 && out[0] == 1,
        "one candidate: same group, other schemes and layouts are not candidates");
#undef FE2M1_DESC
}

/* The op is matched like the format: a key whose op no kernel computes has no kernel, and
 * kernels that differ only by op are chosen from by the key's. (Op 1, moe, has no kernel in
 * the fake table.) */
static void test_op(void) {
  char why[512];
  mgen__key other = f16_g128;
  other.op = 1;
  CHECK(pick(90, &other, 1, 4096, 4096, why, sizeof why) == -1 + MGEN_ERR_UNSUPPORTED_FORMAT,
        "op 1 is in no fake kernel");
  CHECK(strstr(why, "no kernel for moe/f16/u4b8/g128") != NULL, "message: %s", why);
  CHECK(pick(90, &f16_g128, 1, 4096, 4096, why, sizeof why) >= 0, "dense: %s", why);

#define OP_DESC(nm, op_)                                                                         \
  {.name = nm, .family = MGEN_FAMILY_MMA, .op = op_, .act = MGEN_ACT_F16, .wfmt = MGEN_WFMT_U4B8, \
   .group = 128, .scheme = MGEN_SCHEME_GROUP, .layout = MGEN_LAYOUT_MMA, .tile_m = 16,            \
   .tile_n = 64, .tile_k = 64, .sm_min = 80, .params = {4, 4}, .blocks_per_sm = 1}
  static const mgen_kernel_desc kernels[] = {OP_DESC("k_op1", 1), OP_DESC("k_dense", MGEN_OP_DENSE)};
#undef OP_DESC
  const mgen_table table = {kernels, 2, 0, "op table"};
  mgen__device dev = device(80);
  mgen__key key = f16_g128;
  int index = -1, out[4];
  CHECK(mgen__select(&table, &dev, &key, 1, 4096, 4096, &index, why, sizeof why) == MGEN_OK &&
            index == 1, "dense picks k_dense: %d %s", index, why);
  CHECK(mgen__candidates(&table, &dev, &key, 1, 4096, 4096, out, 4) == 1 && out[0] == 1,
        "one candidate: the other op's kernel is none");
  key.op = 1;
  CHECK(mgen__select(&table, &dev, &key, 1, 4096, 4096, &index, why, sizeof why) == MGEN_OK &&
            index == 0, "op 1 picks k_op1: %d %s", index, why);
  const mgen__key back = mgen__desc_key(&kernels[0]);
  CHECK(back.op == 1 && mgen__key_matches(&kernels[0], &back) &&
            !mgen__key_matches(&kernels[1], &back), "the descriptor's key carries its op");
}

int main(void) {
  test_key();
  test_op();
  test_scheme_layout();
  test_device();
  test_shape();
  test_default_choice();
  test_slabs();
  test_misc();
  test_status();
  return check_exit("test_select");
}
