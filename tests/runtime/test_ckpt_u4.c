/* test_ckpt_u4.c -- the asymmetric int4 checkpoint reference (tests/common/ckpt_u4.c: AutoAWQ
 * GEMM, GPTQ sym=false v1 / v2, compressed-tensors pack-quantized asymmetric) against words
 * written out by hand from the published layouts (a round trip alone would pass with the
 * packer and the unpacker sharing a wrong nibble order), then packed and unpacked to FP64 on
 * odd shapes (n not a multiple of 64, odd group counts, per channel; n % 8 != 0 for
 * compressed-tensors, whose zero points pad), zeros over all of 0..15, three scale dtypes:
 * w = (q - z) * s exactly. Nothing here comes from runtime/: the import tests will trust it. */
#include <stdint.h>
#include <stdlib.h>

#include "act.h"
#include "check.h"
#include "ckpt_u4.h"
#include "mgen/mgen.h"
#include "rng.h"

static const char *layout_name(int layout) {
  static const char *names[] = {"awq", "gptq-v1", "gptq-v2", "ct"};
  return names[layout];
}

/* codes (i + j) % 16 for row k = i of column n = j; zeros rows x n given; scales all 1. */
static void pack_small(ckpt_u4 *c, const uint8_t *zeros) {
  const int n = c->n, k = c->k, rows = ckpt_u4_rows(k, c->group);
  uint8_t *codes = malloc((size_t)n * k);
  float *scales = malloc(sizeof *scales * (size_t)rows * n);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < k; i++) codes[(size_t)j * k + i] = (uint8_t)((i + j) % 16);
  for (int i = 0; i < rows * n; i++) scales[i] = 1.0f + (float)i / 8; /* exact in every dtype */
  ckpt_u4_pack(c, codes, zeros, scales);
  free(codes);
  free(scales);
}

static void awq_words(void) {
  enum { N = 16, K = 8 };
  uint32_t q[K * N / 8], z[N / 8];
  float s[N];
  ckpt_u4 c = {CKPT_U4_AWQ, N, K, 0, MGEN_DTYPE_F32, q, z, s};
  uint8_t zeros[N];
  for (int j = 0; j < N; j++) zeros[j] = (uint8_t)j;
  pack_small(&c, zeros);
  /* row k = 0, columns 0..7 = codes 0..7 at nibbles in the order 0 2 4 6 1 3 5 7 */
  CHECK(q[0] == 0x75316420u, "awq qweight[0][0] = 0x%08x", q[0]);
  CHECK(q[1] == 0xfdb9eca8u, "awq qweight[0][1] = 0x%08x", q[1]);
  CHECK(q[2] == 0x86427531u, "awq qweight[1][0] (row k = 1: codes 1..8) = 0x%08x", q[2]);
  CHECK(z[0] == 0x75316420u && z[1] == 0xfdb9eca8u, "awq qzeros = 0x%08x 0x%08x", z[0], z[1]);
  CHECK(s[5] == 1.625f, "awq scales [rows, n]: scales[0][5] = %g", s[5]);
  /* column 3 of row 0: code 3, zero 3, weight 0; column 9 of row 1: code 10, zero 9 */
  CHECK(ckpt_u4_code(&c, 0, 3) == 3 && ckpt_u4_zero(&c, 0, 3) == 3, "awq read back (0, 3)");
  CHECK(ckpt_u4_code(&c, 1, 9) == 10 && ckpt_u4_zero(&c, 0, 9) == 9, "awq read back (1, 9)");
}

static void gptq_words(void) {
  enum { N = 16, K = 16, G = 8 };
  uint32_t q[K / 8 * N], z[2 * N / 8];
  uint16_t s[2 * N];
  uint8_t zeros[2 * N];
  for (int j = 0; j < N; j++) zeros[j] = (uint8_t)((j + 1) % 16), zeros[N + j] = (uint8_t)j;
  ckpt_u4 c = {CKPT_U4_GPTQ_V1, N, K, G, MGEN_DTYPE_F16, q, z, s};
  pack_small(&c, zeros);
  CHECK(q[0] == 0x76543210u && q[1] == 0x87654321u && q[N] == 0xfedcba98u, "gptq qweight 0x%08x", q[0]);
  /* v1 stores zero - 1: row 0 zeros 1..15, 0 -> 0..15; row 1 zeros 0..15 -> 15, 0..14 */
  CHECK(z[0] == 0x76543210u && z[1] == 0xfedcba98u, "gptq v1 qzeros row 0 = 0x%08x 0x%08x", z[0], z[1]);
  CHECK(z[2] == 0x6543210fu && z[3] == 0xedcba987u, "gptq v1 qzeros row 1 = 0x%08x 0x%08x", z[2], z[3]);
  CHECK(ckpt_u4_zero(&c, 1, 0) == 0 && ckpt_u4_zero(&c, 0, 15) == 0 && ckpt_u4_zero(&c, 0, 3) == 4,
        "gptq v1: (stored + 1) & 15");
  c.layout = CKPT_U4_GPTQ_V2;
  pack_small(&c, zeros);
  CHECK(z[0] == 0x87654321u && z[1] == 0x0fedcba9u, "gptq v2 qzeros row 0 = 0x%08x 0x%08x", z[0], z[1]);
  CHECK(z[2] == 0x76543210u && z[3] == 0xfedcba98u, "gptq v2 qzeros row 1 = 0x%08x 0x%08x", z[2], z[3]);
  CHECK(ckpt_u4_zero(&c, 1, 0) == 0 && ckpt_u4_zero(&c, 0, 3) == 4, "gptq v2: stored as is");
}

static void ct_words(void) {
  enum { N = 10, K = 16, G = 8, ROWS = K / G };
  uint32_t q[N * K / 8], z[2 * ROWS];
  uint16_t s[N * ROWS];
  uint8_t zeros[ROWS * N];
  for (int g = 0; g < ROWS; g++)
    for (int j = 0; j < N; j++) zeros[g * N + j] = (uint8_t)(j + 3 * g);
  ckpt_u4 c = {CKPT_U4_CT, N, K, G, MGEN_DTYPE_BF16, q, z, s};
  CHECK(ckpt_u4_zero_words(CKPT_U4_CT, N, K, G) == 4, "ct weight_zero_point is [ceil(n/8), rows]");
  pack_small(&c, zeros);
  CHECK(q[0] == 0x76543210u && q[1] == 0xfedcba98u && q[2] == 0x87654321u && q[3] == 0x0fedcba9u,
        "ct weight_packed rows 0, 1 = 0x%08x 0x%08x 0x%08x 0x%08x", q[0], q[1], q[2], q[3]);
  /* weight_zero_point [n/8][g]: columns 0..7 of group 0, of group 1, then columns 8, 9 */
  CHECK(z[0] == 0x76543210u && z[1] == 0xa9876543u, "ct zero points [0][*] = 0x%08x 0x%08x", z[0], z[1]);
  CHECK(z[2] == 0x00000098u && z[3] == 0x000000cbu, "ct zero points [1][*] = 0x%08x 0x%08x", z[2], z[3]);
  /* weight_scale [n, rows]: (g 1, column 3) at 3 * 2 + 1; BF16 1 + (1 * 10 + 3) / 8 = 2.625 */
  CHECK(s[7] == 0x4028, "ct weight_scale[3][1] = 0x%04x", s[7]);
  CHECK(ckpt_u4_scale(&c, 1, 3) == 2.625, "ct scale read back");
}

/* Pack and unpack one shape: w = (q - z) * s exactly, zeros over all of 0..15. */
static void round_trip(int layout, int n, int k, int group, int dtype, rng *r) {
  const int rows = ckpt_u4_rows(k, group);
  const long ww = ckpt_u4_weight_words(layout, n, k), zw = ckpt_u4_zero_words(layout, n, k, group);
  CHECK(ww > 0 && zw > 0, "%s n=%d k=%d group=%d: a shape it stores", layout_name(layout), n, k, group);
  if (ww <= 0 || zw <= 0) return;
  uint8_t *codes = malloc((size_t)n * k), *zeros = malloc((size_t)rows * n);
  float *scales = malloc(sizeof *scales * (size_t)rows * n);
  uint32_t *wq = malloc(sizeof *wq * (size_t)ww), *zq = malloc(sizeof *zq * (size_t)zw);
  void *sq = malloc(4 * (size_t)rows * n);
  double *w = malloc(sizeof *w * (size_t)n * k);
  for (long i = 0; i < (long)n * k; i++) codes[i] = (uint8_t)rng_below(r, 16);
  const uint32_t offset = rng_below(r, 16);
  unsigned seen = 0;
  for (int i = 0; i < rows * n; i++) {
    zeros[i] = (uint8_t)((7u * (uint32_t)i + offset) % 16); /* every value once per 16 */
    seen |= 1u << zeros[i];
    const double v = rng_uniform(r, 0.001, 0.5);
    scales[i] = dtype == MGEN_DTYPE_F32 ? (float)v
                : act_to_float(dtype == MGEN_DTYPE_BF16 ? MGEN_ACT_BF16 : MGEN_ACT_F16,
                               act_from_double(dtype == MGEN_DTYPE_BF16 ? MGEN_ACT_BF16 : MGEN_ACT_F16, v));
  }
  CHECK(seen == 0xffffu, "zeros cover 0..15 (n=%d rows=%d)", n, rows);
  ckpt_u4 c = {layout, n, k, group, dtype, wq, zq, sq};
  ckpt_u4_pack(&c, codes, zeros, scales);
  ckpt_u4_unpack(&c, w);
  const int gsize = group > 0 ? group : k;
  long bad = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < k; i++) {
      const int g = i / gsize;
      const double want = ((int)codes[(size_t)j * k + i] - (int)zeros[(size_t)g * n + j]) * (double)scales[(size_t)g * n + j];
      bad += w[(size_t)j * k + i] != want;
    }
  CHECK(bad == 0, "%s n=%d k=%d group=%d dtype=%d: %ld weights differ", layout_name(layout), n, k, group,
        dtype, bad);
  free(codes), free(zeros), free(scales), free(wq), free(zq), free(sq), free(w);
}

int main(void) {
  rng r;
  rng_seed(&r, rng_test_seed("test_ckpt_u4"));
  awq_words();
  gptq_words();
  ct_words();
  static const struct { int n, k, group; } shapes[] = {
      {24, 96, 32}, {40, 192, 64}, {72, 384, 128}, {24, 64, 0}, {56, 160, 32}, {104, 128, 0}};
  static const int dtypes[] = {MGEN_DTYPE_F16, MGEN_DTYPE_BF16, MGEN_DTYPE_F32};
  for (int layout = CKPT_U4_AWQ; layout <= CKPT_U4_CT; layout++)
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
      for (size_t d = 0; d < 3; d++) round_trip(layout, shapes[s].n, shapes[s].k, shapes[s].group, dtypes[d], &r);
  /* compressed-tensors pads its zero points along n */
  round_trip(CKPT_U4_CT, 13, 96, 32, MGEN_DTYPE_BF16, &r);
  round_trip(CKPT_U4_CT, 21, 64, 0, MGEN_DTYPE_F16, &r);
  CHECK(ckpt_u4_weight_words(CKPT_U4_AWQ, 13, 96) == 0, "AWQ packs n in eights");
  return check_exit("test_ckpt_u4");
}
