/* test_format_seam.c -- a toy weight format through the format registries only: this test
 * links its own registries (format.h's mgen__formats, format_ops.h's mgen__format_ops_list)
 * holding the library's u4b8 and a toy in the fe2m1 row of the format table (a new format's
 * table row is the templates' side; its runtime side is these two structures), with no edit of
 * a shared file. Everything format-specific must then come from the toy's hooks: the sizes and
 * K padding of mgen_weights_bytes, the cost models' memory floor and dequantization factor,
 * and the dispatch of mgen_quantize, mgen_pack_weights, mgen_pack_fp4 and the import; u4b8
 * keeps its own. No device: a context built by hand on the fake table.
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "fake_ctx.h"
#include "fake_table.h"
#include "context/internal.h"
#include "dispatch/cost.h"
#include "families/family.h"
#include "formats/format.h"
#include "prepare/format_ops.h"

#define TOY MGEN_WFMT_FE2M1

static int k_padded_calls, sizes_calls, quantize_calls, pack_calls;
static mgen__pack_src last_src;

/* 8-bit codes over K padded to 256; a fixed scale buffer, to be recognized. */
static long long toy_k_padded(int k) {
  k_padded_calls++;
  return (k + 255LL) / 256 * 256;
}
static void toy_sizes(const mgen_weights *w, size_t *qbytes, size_t *sbytes) {
  sizes_calls++;
  *qbytes = (size_t)w->n * (size_t)toy_k_padded(w->k);
  *sbytes = 12345;
}
static mgen__dequant_cost kToyCosts[] = {{MGEN_FAMILY_MMA, MGEN__ANY, MGEN__ANY, 3.0},
                                         {MGEN_FAMILY_WGMMA, MGEN__ANY, MGEN__ANY, 1.0},
                                         {0, 0, 0, 0.0}};
static const mgen__format toy = {.wfmt = TOY, .name = "toy", .cost_code_bits = 8.0,
                                 .cost_scale_bytes = 4.0, .dequant_costs = kToyCosts,
                                 .k_padded = toy_k_padded, .sizes = toy_sizes};

static int toy_quantize(const mgen_weights *w, const void *d_w, void *stream) {
  (void)w, (void)d_w, (void)stream;
  quantize_calls++;
  return 0;
}
static mgen_status toy_pack(mgen_ctx *ctx, const mgen__pack_src *src, mgen_weights *w, void *stream) {
  (void)ctx, (void)w, (void)stream;
  pack_calls++;
  last_src = *src;
  return MGEN_OK;
}
static const mgen__format_ops toy_ops = {.wfmt = TOY, .quantize = toy_quantize, .pack = toy_pack,
                                         .import_int4 = NULL, .inputs = "toy codes",
                                         .legacy_pack = NULL};

/* The test's registries: the library's u4b8 and the toy. */
extern const mgen__format mgen__format_u4b8;
extern const mgen__format_ops mgen__format_ops_u4b8;
const mgen__format *const mgen__formats[] = {&mgen__format_u4b8, &toy};
const size_t mgen__format_count = 2;
const mgen__format_ops *const mgen__format_ops_list[] = {&mgen__format_ops_u4b8, &toy_ops};
const size_t mgen__format_ops_count = 2;

static _Alignas(16) char buf[64];
static struct mgen_ctx ctx;

static mgen_weights toy_weights(void) {
  mgen_weights w = {.wfmt = TOY, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_NVFP4, .group = 16,
                    .n = 256, .k = 512 + 16, .d_q = buf, .d_scales = buf};
  return w;
}

static void sizes_and_padding(void) {
  mgen_weights w = toy_weights();
  size_t qb = 0, sb = 0;
  CHECK(mgen_weights_bytes(&w, &qb, &sb) == MGEN_OK, "toy weights: %s", mgen_status_str(
        mgen_weights_bytes(&w, &qb, &sb)));
  CHECK(qb == 256u * 768 && sb == 12345, "the toy's sizes (k 528 padded to 768, 8 bits): %zu %zu",
        qb, sb);
  CHECK(sizes_calls > 0 && k_padded_calls > 0, "sizes %d, padding %d calls", sizes_calls,
        k_padded_calls);
  const int before = k_padded_calls;
  mgen_weights u = w;
  u.wfmt = MGEN_WFMT_U4B8, u.scheme = MGEN_SCHEME_GROUP, u.group = 128, u.k = 4096;
  CHECK(mgen_weights_bytes(&u, &qb, &sb) == MGEN_OK && qb == 256u * 4096 / 2 &&
            sb == 32u * 256 * 2 && k_padded_calls == before,
        "u4b8 keeps its own hooks: %zu %zu", qb, sb);
}

static void cost(void) {
  mgen_kernel_desc d = {.name = "toy_kernel", .family = MGEN_FAMILY_MMA, .wfmt = TOY,
                        .scheme = MGEN_SCHEME_NVFP4, .group = 16, .act = MGEN_ACT_F16,
                        .tile_m = 16, .tile_n = 256, .tile_k = 128, .blocks_per_sm = 1};
  const mgen__device dev = mgen__device_model(90, 132, 0, 0, 0, 1 << 20); /* 1 MiB L2: re-read */
  const int m = 64, n = 4096, k = 4096;
  const double k_read = 4096, rows = 4, grid = 132, bw = 4e12;
  /* the floor with the toy's 8-bit codes and 4-byte scales */
  const double wbytes = (double)n * k_read + (double)n * (k_read / 16) * 4.0;
  const double want = (wbytes * rows + 2.0 * m * k + 2.0 * m * n) / bw * 1e9;
  const double got = mgen__memory_ns(&d, m, n, k, k_read, rows, grid, bw, &dev);
  CHECK(fabs(got - want) <= 1e-9 * want, "memory floor %.3f ns, the toy's figures give %.3f", got,
        want);
  CHECK(mgen__dequant_factor(&d, 0) == 3.0, "the toy's mma row: %g", mgen__dequant_factor(&d, 0));
  /* Each family's model applies the toy's factor: changing a row changes its cost only. */
  for (int family = MGEN_FAMILY_MMA; family <= MGEN_FAMILY_WGMMA; family++) {
    mgen__dequant_cost *row = &kToyCosts[family - MGEN_FAMILY_MMA];
    const double was = row->factor;
    d.family = family, d.tile_m = family == MGEN_FAMILY_WGMMA ? 128 : 16;
    d.params[0] = 1; /* wgmma: one consumer warpgroup; mma: stages */
    const double base = mgen__cost_ns(&d, 4096, n, k, &dev);
    row->factor = 2 * was;
    const double more = mgen__cost_ns(&d, 4096, n, k, &dev);
    row->factor = was;
    CHECK(mgen__dequant_factor(&d, 0) == was, "family %d: the toy's row, %g", family,
          mgen__dequant_factor(&d, 0));
    CHECK(more > base, "family %d: a toy factor x2 costs more (%.0f, %.0f ns)", family, more, base);
  }
  d.family = MGEN_FAMILY_MMA, d.tile_m = 16;
  mgen_kernel_desc u = d;
  u.wfmt = MGEN_WFMT_U4B8, u.scheme = MGEN_SCHEME_GROUP, u.group = 16;
  CHECK(mgen__cost_ns(&d, 4096, n, k, &dev) > mgen__cost_ns(&u, 4096, n, k, &dev),
        "the toy's 3x dequantization and bytes cost more than u4b8's");
}

static void dispatch(void) {
  mgen_weights w = toy_weights();
  CHECK(mgen_quantize(&ctx, buf, &w, NULL) == MGEN_OK && quantize_calls == 1,
        "mgen_quantize through the toy: %s", mgen_ctx_last_error(&ctx));
  const mgen_pack_src src = {buf, 7, buf, 9, 2.5f, NULL, 0};
  CHECK(mgen_pack_weights(&ctx, &src, &w, NULL) == MGEN_OK && pack_calls == 1,
        "mgen_pack_weights through the toy: %s", mgen_ctx_last_error(&ctx));
  CHECK(strcmp(last_src.call, "mgen_pack_weights") == 0 &&
            strcmp(last_src.codes_bytes_name, "src->codes_bytes") == 0 &&
            last_src.codes_bytes == 7 && last_src.scales_bytes == 9 &&
            last_src.global_scale == 2.5f,
        "the toy got src: %s %s", last_src.call, last_src.codes_bytes_name);
  CHECK(mgen_pack_fp4(&ctx, (const uint8_t *)buf, 3, (const uint8_t *)buf, 4, 1.0f, &w, NULL) ==
                MGEN_OK && pack_calls == 2 && strcmp(last_src.codes_name, "d_packed") == 0,
        "mgen_pack_fp4 of the fe2m1 row through the toy: %s", mgen_ctx_last_error(&ctx));
  CHECK(mgen_pack(&ctx, (const uint8_t *)buf, buf, &w, NULL) == MGEN_ERR_UNSUPPORTED_FORMAT &&
            strstr(mgen_ctx_last_error(&ctx), "mgen_pack packs u4b8 weights; toy codes are "
                                              "packed by mgen_pack_weights") != NULL,
        "mgen_pack names the toy's call: %s", mgen_ctx_last_error(&ctx));
  const mgen_gptq gptq = {.zeros = MGEN_GPTQ_ZEROS_AUTO};
  CHECK(mgen_import_gptq(&ctx, &gptq, &w, NULL) == MGEN_ERR_UNSUPPORTED_FORMAT && pack_calls == 2,
        "the toy imports no int4 checkpoint: %s", mgen_ctx_last_error(&ctx));
  mgen_weights u = w;
  u.wfmt = MGEN_WFMT_U4B8, u.scheme = MGEN_SCHEME_GROUP, u.group = 128, u.k = 4096;
  const mgen_pack_src usrc = {buf, 1, buf, 1, 0.0f, NULL, 0};
  CHECK(mgen_pack_weights(&ctx, &usrc, &u, NULL) == MGEN_ERR_INVALID_ARG && pack_calls == 2,
        "u4b8 packs through its own hook (its size check): %s", mgen_ctx_last_error(&ctx));
}

int main(void) {
  fake_ctx_init(&ctx);
  sizes_and_padding();
  cost();
  dispatch();
  return check_exit("test_format_seam");
}
