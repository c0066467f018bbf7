/* test_ckpt_ref.c -- the int4 checkpoint reference (tests/common/ckpt.c) against words written
 * out by hand from the published formats (GPTQ: eight codes along K per int32, code k at bits
 * 4 (k % 8); qzeros eight along N; compressed-tensors pack-quantized: eight along K in rows of
 * n), and its scale conversions against hand-computed FP16/BF16 bit patterns. The GPU import
 * test (tests/gpu/test_import_gpu.c) trusts this reference, so it must not share a mistake with
 * the library: nothing here comes from runtime/. */
#include <math.h>
#include <stdint.h>

#include "act.h"
#include "check.h"
#include "ckpt.h"
#include "mgen/mgen.h"
#include "rng.h"

static void gptq_words(void) {
  enum { N = 8, K = 16 };
  uint8_t codes[N * K];
  for (int j = 0; j < N; j++)
    for (int i = 0; i < K; i++) codes[j * K + i] = (uint8_t)((i + j) % 16);
  uint32_t q[K / 8 * N];
  ckpt_gptq_qweight(codes, N, K, q);
  /* row 0 of qweight: k 0..7 of each column; row 1: k 8..15 */
  CHECK(q[0] == 0x76543210u, "qweight[0][0] = 0x%08x", q[0]);
  CHECK(q[1] == 0x87654321u, "qweight[0][1] = 0x%08x", q[1]);
  CHECK(q[7] == 0xedcba987u, "qweight[0][7] = 0x%08x", q[7]);
  CHECK(q[N + 0] == 0xfedcba98u, "qweight[1][0] = 0x%08x", q[N]);
  CHECK(q[N + 1] == 0x0fedcba9u, "qweight[1][1] = 0x%08x", q[N + 1]);
  for (int j = 0; j < N; j++)
    for (int i = 0; i < K; i++)
      CHECK(ckpt_gptq_code(q, N, i, j) == codes[j * K + i], "gptq code k=%d n=%d", i, j);

  uint8_t zeros[2 * 16];
  for (int j = 0; j < 16; j++) zeros[j] = (uint8_t)j, zeros[16 + j] = 7;
  uint32_t qz[2 * 2];
  ckpt_gptq_qzeros(zeros, 2, 16, qz);
  CHECK(qz[0] == 0x76543210u && qz[1] == 0xfedcba98u, "qzeros row 0: 0x%08x 0x%08x", qz[0], qz[1]);
  CHECK(qz[2] == 0x77777777u && qz[3] == 0x77777777u, "qzeros row 1 (v1 symmetric): 0x%08x", qz[2]);
}

static void ct_words(void) {
  enum { N = 2, K = 16 };
  uint8_t codes[N * K];
  for (int j = 0; j < N; j++)
    for (int i = 0; i < K; i++) codes[j * K + i] = (uint8_t)((i + j) % 16);
  uint32_t p[N * K / 8];
  ckpt_ct_packed(codes, N, K, p);
  /* row n of weight_packed: column n's K codes, eight per word */
  CHECK(p[0] == 0x76543210u && p[1] == 0xfedcba98u, "weight_packed[0] = 0x%08x 0x%08x", p[0], p[1]);
  CHECK(p[2] == 0x87654321u && p[3] == 0x0fedcba9u, "weight_packed[1] = 0x%08x 0x%08x", p[2], p[3]);
  rng r;
  rng_seed(&r, rng_test_seed("test_ckpt_ref"));
  enum { N2 = 64, K2 = 128 };
  static uint8_t c2[N2 * K2];
  static uint32_t p2[N2 * K2 / 8], q2[N2 * K2 / 8];
  for (int i = 0; i < N2 * K2; i++) c2[i] = (uint8_t)rng_below(&r, 16);
  ckpt_ct_packed(c2, N2, K2, p2);
  ckpt_gptq_qweight(c2, N2, K2, q2);
  long bad = 0;
  for (int j = 0; j < N2; j++)
    for (int i = 0; i < K2; i++)
      bad += ckpt_ct_code(p2, K2, i, j) != c2[j * K2 + i] || ckpt_gptq_code(q2, N2, i, j) != c2[j * K2 + i];
  CHECK(bad == 0, "%ld codes do not read back", bad);
}

static void scales(void) {
  /* 1/3 in FP32 (0x3eaaaaab) -> FP16 0x3555 and BF16 0x3eab (both round the tail up) */
  float third = 1.0f / 3.0f;
  uint16_t out[2];
  ckpt_scales_to_act(&third, MGEN_DTYPE_F32, 0, 1, 1, MGEN_ACT_F16, out);
  CHECK(out[0] == 0x3555, "f32 1/3 -> f16 0x%04x", out[0]);
  ckpt_scales_to_act(&third, MGEN_DTYPE_F32, 0, 1, 1, MGEN_ACT_BF16, out);
  CHECK(out[0] == 0x3eab, "f32 1/3 -> bf16 0x%04x", out[0]);
  /* FP16 0x3555 = 0x3eaaa000 in FP32 -> BF16 0x3eab (tail 0xa000 above half) */
  const uint16_t h = 0x3555;
  ckpt_scales_to_act(&h, MGEN_DTYPE_F16, 0, 1, 1, MGEN_ACT_BF16, out);
  CHECK(out[0] == 0x3eab, "f16 0x3555 -> bf16 0x%04x", out[0]);
  /* BF16 1e5 (0x47c3 = 99840) is past FP16's 65504: infinite */
  const uint16_t big = 0x47c3;
  ckpt_scales_to_act(&big, MGEN_DTYPE_BF16, 0, 1, 1, MGEN_ACT_F16, out);
  CHECK(out[0] == 0x7c00, "bf16 99840 -> f16 0x%04x (inf)", out[0]);
  /* n x rows (compressed-tensors) becomes rows x n */
  const uint16_t nk[6] = {0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600}; /* 1..6, [n=3, rows=2] */
  uint16_t rn[6];
  ckpt_scales_to_act(nk, MGEN_DTYPE_F16, 1, 2, 3, MGEN_ACT_F16, rn);
  CHECK(rn[0] == 0x3c00 && rn[1] == 0x4200 && rn[2] == 0x4500 && rn[3] == 0x4000 &&
            rn[4] == 0x4400 && rn[5] == 0x4600, "transpose: %04x %04x %04x / %04x %04x %04x",
        rn[0], rn[1], rn[2], rn[3], rn[4], rn[5]);
  float f;
  ckpt_scale_store(&f, MGEN_DTYPE_F32, 0, 0.75f);
  CHECK(ckpt_scale_value(&f, MGEN_DTYPE_F32, 0) == 0.75f, "f32 store/load");
}

int main(void) {
  gptq_words();
  ct_words();
  scales();
  return check_exit("test_ckpt_ref");
}
