/* test_dequant.c -- the u4b8 -> FP16 magic-number dequantization of marlin-bitwise-dequant.md
 * section 2, emulated on FP16 bit patterns in C, and the two ways a scale is applied:
 *   grouped:     FP16 multiply of the dequantized value by the FP16 scale (__hmul2);
 *   per channel: the FP32 sum of a * (q - 8) multiplied by the scale at the end.
 * The last part checks the error bound that tests/gpu/test_gemm_gpu.c uses against a
 * faithful sequential emulation of both paths. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "half.h"
#include "rng.h"

/* lop3.b32 d, a, b, c, lut: bit i of d is bit (a_i<<2 | b_i<<1 | c_i) of lut. */
static uint32_t lop3(uint32_t a, uint32_t b, uint32_t c, int lut) {
  uint32_t d = 0;
  for (int i = 0; i < 32; i++) {
    int sel = (int)(((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1));
    d |= (uint32_t)((lut >> sel) & 1) << i;
  }
  return d;
}

/* half2 lanes: .x = bits 0..15, .y = bits 16..31. */
static uint32_t hsub2(uint32_t a, uint32_t b) {
  return half_sub((uint16_t)a, (uint16_t)b) | (uint32_t)half_sub((uint16_t)(a >> 16), (uint16_t)(b >> 16)) << 16;
}
static uint32_t hfma2(uint32_t a, uint32_t b, uint32_t c) {
  return half_fma((uint16_t)a, (uint16_t)b, (uint16_t)c) |
         (uint32_t)half_fma((uint16_t)(a >> 16), (uint16_t)(b >> 16), (uint16_t)(c >> 16)) << 16;
}

/* dequant<half2, kU4B8, false> as in the document, applied to q and then to q >> 8:
 * frag[0] = (b0, b4), frag[1] = (b1, b5), frag[2] = (b2, b6), frag[3] = (b3, b7). */
static void dequant_u4b8(int32_t q, uint32_t frag[4]) {
  const int lut = (0xf0 & 0xcc) | 0xaa;
  for (int pass = 0; pass < 2; pass++) {
    uint32_t lo = lop3((uint32_t)q, 0x000f000fu, 0x64006400u, lut);
    uint32_t hi = lop3((uint32_t)q, 0x00f000f0u, 0x64006400u, lut);
    frag[2 * pass + 0] = hsub2(lo, 0x64086408u);
    frag[2 * pass + 1] = hfma2(hi, 0x2c002c00u, 0xd480d480u);
    q >>= 8; /* arithmetic shift, as on an int in CUDA: only bits 0..23 are read afterwards */
  }
}

static void test_lop3(rng *r) {
  CHECK(((0xf0 & 0xcc) | 0xaa) == 0xea, "lut");
  for (int i = 0; i < 1000; i++) {
    uint32_t a = (uint32_t)rng_next(r), b = (uint32_t)rng_next(r), c = (uint32_t)rng_next(r);
    CHECK(lop3(a, b, c, 0xea) == ((a & b) | c), "lop3 0xea is (a & b) | c");
  }
  /* The constants: 1024, 1032, 1/16, -72. */
  CHECK(half_to_double(0x6400) == 1024.0, "0x6400");
  CHECK(half_to_double(0x6408) == 1032.0, "0x6408");
  CHECK(half_to_double(0x2c00) == 0.0625, "0x2c00");
  CHECK(half_to_double(0xd480) == -72.0, "0xd480");
}

/* Every code in every nibble position, the other nibbles random. */
static void test_all_codes(rng *r) {
  static const int lane_nibble[4][2] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
  for (int pos = 0; pos < 8; pos++)
    for (int code = 0; code < 16; code++)
      for (int trial = 0; trial < 16; trial++) {
        uint32_t q = (uint32_t)rng_next(r);
        q = (q & ~(0xfu << (4 * pos))) | (uint32_t)code << (4 * pos);
        uint32_t frag[4];
        dequant_u4b8((int32_t)q, frag);
        for (int f = 0; f < 4; f++)
          for (int lane = 0; lane < 2; lane++) {
            const int nibble = lane_nibble[f][lane];
            const int v = (int)((q >> (4 * nibble)) & 0xf);
            const uint16_t h = (uint16_t)(frag[f] >> (16 * lane));
            CHECK(half_to_double(h) == v - 8, "q=0x%08x nibble %d (code %d): %g", q, nibble, v,
                  half_to_double(h));
            CHECK(h == half_from_double(v - 8), "bit pattern of %d", v - 8);
          }
      }
}

/* Grouped scales: fp16(deq * s) by the FP16 multiply equals the correctly rounded product
 * (computed exactly in double), for every finite positive FP16 scale and every code; its
 * relative error is at most 2^-11 (normal results). */
static void test_grouped_scale(void) {
  long subnormal = 0;
  for (uint32_t s = 0x0001; s < 0x7c00; s++) {
    const double sd = half_to_double((uint16_t)s);
    for (int code = 0; code < 16; code++) {
      const uint16_t deq = half_from_double(code - 8);
      /* The hardware path: the product is exact in FP32 (4 x 11 significant bits), then one
       * rounding to FP16. */
      const float prod32 = half_to_float(deq) * half_to_float((uint16_t)s);
      const uint16_t got = half_from_float(prod32);
      const double exact = (code - 8) * sd;
      CHECK((double)prod32 == exact, "FP32 product exact: s=0x%04x code %d", s, code);
      CHECK(got == half_mul(deq, (uint16_t)s), "emulation agrees with half_mul");
      CHECK(got == half_from_double(exact) || (exact == 0.0 && half_to_double(got) == 0.0),
            "s=0x%04x code %d: 0x%04x vs correctly rounded 0x%04x", s, code, got,
            half_from_double(exact));
      const double err = fabs(half_to_double(got) - exact);
      if (fabs(exact) >= 0x1p-14 && fabs(exact) <= 65504.0)
        CHECK(err <= 0x1p-11 * fabs(exact), "relative error s=0x%04x code %d", s, code);
      else if (fabs(exact) < 0x1p-14) {
        subnormal++;
        CHECK(err <= 0x1p-25, "subnormal error s=0x%04x code %d", s, code);
      }
    }
  }
  CHECK(subnormal > 0, "subnormal products covered");
}

/* Sequential emulation of one output of each path against the bound of test_gemm_gpu.c:
 * |c - ref| <= 2^-10 |ref| + (2^-10 + K 2^-22) abs. */
static void test_bound(rng *r) {
  static const int ks[] = {64, 256, 4096, 11008};
  double worst = 0.0;
  for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
    const int k = ks[ki];
    uint16_t *a = malloc(sizeof *a * (size_t)k);
    uint8_t *q = malloc((size_t)k);
    for (int trial = 0; trial < 40; trial++) {
      const int group = (int[]){0, 32, 64, 128}[trial % 4];
      uint16_t scale[11008 / 32 + 1];
      for (int g = 0; g < (group ? k / group : 1); g++)
        scale[g] = half_from_double(rng_uniform(r, 0.001, 0.3));
      for (int i = 0; i < k; i++) {
        a[i] = half_from_double(rng_uniform(r, -1.0, 1.0));
        q[i] = (uint8_t)rng_below(r, 16);
      }
      double ref = 0.0, abs_sum = 0.0;
      float acc = 0.0f;
      for (int i = 0; i < k; i++) {
        const uint16_t s = scale[group ? i / group : 0];
        const double w = (q[i] - 8) * half_to_double(s);
        ref += half_to_double(a[i]) * w;
        abs_sum += fabs(half_to_double(a[i]) * w);
        /* grouped: FP16 weight w_h = fp16(deq * s); per channel: the raw (q - 8) */
        const float wk = group ? half_to_float(half_mul(half_from_double(q[i] - 8), s))
                               : (float)(q[i] - 8);
        acc += half_to_float(a[i]) * wk; /* products exact in FP32; sums rounded */
      }
      const float out32 = group ? acc : acc * half_to_float(scale[0]);
      const double c = half_to_double(half_from_float(out32));
      const double bound = 0x1p-10 * fabs(ref) + (0x1p-10 + k * 0x1p-22) * abs_sum;
      const double ratio = fabs(c - ref) / bound;
      if (ratio > worst) worst = ratio;
      CHECK(fabs(c - ref) <= bound, "k=%d group=%d: |%g - %g| > %g", k, group, c, ref, bound);
    }
    free(a);
    free(q);
  }
  printf("test_dequant: worst emulated error / bound = %.3g\n", worst);
}

int main(void) {
  rng r;
  rng_seed(&r, rng_test_seed("test_dequant"));
  test_lop3(&r);
  test_all_codes(&r);
  test_grouped_scale();
  test_bound(&r);
  return check_exit("test_dequant");
}
