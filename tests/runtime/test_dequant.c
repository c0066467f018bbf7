/* test_dequant.c -- the kernels' bitwise u4b8 dequantization, emulated on 16-bit patterns in
 * C for both activation types, every code in every nibble position, bit for bit:
 *   FP16: templates/formats/u4b8/mma_f16.cuh (marlin-bitwise-dequant.md section 2);
 *   BF16: templates/formats/u4b8/mma_bf16.cuh;
 * the constants come from mgen_dequant_consts.h, which the partials include, so the emulation
 * is the kernels' own. Then
 * the ways a scale is applied, for each type:
 *   grouped:     multiply of the dequantized value by the scale in the act (__hmul2), one
 *                rounding, against the exactly rounded product for every finite scale;
 *   per channel: the FP32 sum of a * (q - 8) times the scale in FP32, then rounded to the act;
 * and the u4b8 error bound of tests/gpu/gemm_formats.c against a sequential emulation of both.
 *
 * The BF16 constants. BF16 = sign, 8 exponent bits (bias 127), 7 mantissa bits.
 *   0x4300 = 0 10000110 0000000: exponent 134 - 127 = 7, value 2^7 = 128.0. One unit of the
 *            7-bit mantissa is 2^(7-7) = 1, so 0x4300 | c reads as exactly 128 + c for any
 *            c < 128: a 4-bit code ORed into the low mantissa bits gives 128 + c.
 *   0x4308 = 128 + 8 = 136.0. (128 + c) - 136 = c - 8 in [-8, 7]: exact in BF16 (4
 *            significant bits), so the one subtraction rounds nothing; it removes both the
 *            magic 128 and the u4b8 bias of 8.
 *   Why shifts: FP16 uses the high nibble in place (bits 4..7 of a lane, then * 1/16 - 72),
 *   since FP16's 10 mantissa bits hold 8 code bits. BF16 has 7: bit 7 is the exponent's
 *   lowest bit, so 0x4300 | (c << 4) is not 128 + 16c for c >= 8. Each nibble pair is
 *   shifted down to bits 0..3 (q >> 0, 4, 8, 12) and masked with 0x000f000f.
 * Run: build/tests/test_dequant */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "bf16.h"
#include "check.h"
#include "half.h"
#include "mgen_dequant_consts.h"
#include "rng.h"


static const int acts[] = {MGEN_ACT_F16, MGEN_ACT_BF16};
#define LUT_OR MGEN_LOP3_AND_OR /* 0xea: (a & b) | c, the partials' kOr */

/* lop3.b32 d, a, b, c, lut: bit i of d is bit (a_i<<2 | b_i<<1 | c_i) of lut. */
static uint32_t lop3(uint32_t a, uint32_t b, uint32_t c, int lut) {
  uint32_t d = 0;
  for (int i = 0; i < 32; i++) {
    int sel = (int)(((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1));
    d |= (uint32_t)((lut >> sel) & 1) << i;
  }
  return d;
}

/* Packed pairs: .x = bits 0..15, .y = bits 16..31. */
static uint32_t hsub2(uint32_t a, uint32_t b) {
  return half_sub((uint16_t)a, (uint16_t)b) | (uint32_t)half_sub((uint16_t)(a >> 16), (uint16_t)(b >> 16)) << 16;
}
static uint32_t hfma2(uint32_t a, uint32_t b, uint32_t c) {
  return half_fma((uint16_t)a, (uint16_t)b, (uint16_t)c) |
         (uint32_t)half_fma((uint16_t)(a >> 16), (uint16_t)(b >> 16), (uint16_t)(c >> 16)) << 16;
}
static uint32_t bsub2(uint32_t a, uint32_t b) {
  return bf16_sub((uint16_t)a, (uint16_t)b) | (uint32_t)bf16_sub((uint16_t)(a >> 16), (uint16_t)(b >> 16)) << 16;
}

/* ---------------------------------------------------------------- the partials' constants */

/* The partials' constants (mgen_dequant_consts.h, included by the kernels too), as the
 * emulations below name them. */
static const struct {
  uint32_t lo, hi, exp, sub, mul, add;
} kF16 = {MGEN_U4B8_F16_LO,  MGEN_U4B8_F16_HI,  MGEN_U4B8_F16_EXP,
          MGEN_U4B8_F16_SUB, MGEN_U4B8_F16_MUL, MGEN_U4B8_F16_ADD};
static const struct {
  uint32_t lo, exp, sub;
} kBf16 = {MGEN_U4B8_BF16_LO, MGEN_U4B8_BF16_EXP, MGEN_U4B8_BF16_SUB};

static void test_constants(rng *r) {
  CHECK(((0xf0 & 0xcc) | 0xaa) == LUT_OR, "lut");
  for (int i = 0; i < 1000; i++) {
    uint32_t a = (uint32_t)rng_next(r), b = (uint32_t)rng_next(r), c = (uint32_t)rng_next(r);
    CHECK(lop3(a, b, c, LUT_OR) == ((a & b) | c), "lop3 0xea is (a & b) | c");
  }
  /* FP16: 1024, 1032, 1/16, -72 = -(1024/16 + 8). */
  CHECK(half_to_double((uint16_t)kF16.exp) == 1024.0, "0x6400");
  CHECK(half_to_double((uint16_t)kF16.sub) == 1032.0, "0x6408");
  CHECK(half_to_double((uint16_t)kF16.mul) == 0.0625, "0x2c00");
  CHECK(half_to_double((uint16_t)kF16.add) == -72.0, "0xd480");
  /* BF16: 128 with a mantissa unit of 1, 136; an in-place high nibble would not work. */
  CHECK(bf16_to_double((uint16_t)kBf16.exp) == 128.0, "0x4300");
  CHECK(bf16_to_double((uint16_t)kBf16.sub) == 136.0, "0x4308");
  for (uint32_t c = 0; c < 16; c++) {
    CHECK(bf16_to_double((uint16_t)(kBf16.exp | c)) == 128.0 + c, "0x4300 | %u", c);
    if (c >= 9) /* c = 8 lands on 0x4380 = 256 = 128 + 16 * 8 by accident */
      CHECK(bf16_to_double((uint16_t)(kBf16.exp | c << 4)) != 128.0 + 16 * c,
            "a high nibble in place reaches the exponent (c=%u)", c);
  }
  for (int lane = 0; lane < 2; lane++) {
    CHECK((kF16.exp >> (16 * lane) & 0xffff) == (kF16.exp & 0xffff), "FP16 lanes agree");
    CHECK((kBf16.exp >> (16 * lane) & 0xffff) == (kBf16.exp & 0xffff) &&
              (kBf16.sub >> (16 * lane) & 0xffff) == (kBf16.sub & 0xffff), "BF16 lanes agree");
  }
}

/* ---------------------------------------------------------------- the partials, emulated */

/* frag[2h + r] is the kernels' frag[h][r]: B-fragment register r of 8-column block h. */

/* DequantU4b8F16: (b0,b4) -> frag 0, (b1,b5) -> 1, then q >> 8: (b2,b6) -> 2, (b3,b7) -> 3.
 * The shift of the kernel's uint32_t is logical; only bits 0..23 are read after it. */
static void dequant_u4b8_f16(uint32_t q, uint32_t frag[4]) {
  for (int h = 0; h < 2; h++) {
    const uint32_t lo = lop3(q, kF16.lo, kF16.exp, LUT_OR);
    const uint32_t hi = lop3(q, kF16.hi, kF16.exp, LUT_OR);
    frag[2 * h + 0] = hsub2(lo, kF16.sub);
    frag[2 * h + 1] = hfma2(hi, kF16.mul, kF16.add);
    q >>= 8;
  }
}

/* DequantU4b8Bf16: register r takes nibbles (r, r + 4) from q >> 4r, masked to bits 0..3. */
static void dequant_u4b8_bf16(uint32_t q, uint32_t frag[4]) {
  for (int r = 0; r < 4; r++) {
    const uint32_t x = lop3(q >> (4 * r), kBf16.lo, kBf16.exp, LUT_OR);
    frag[r] = bsub2(x, kBf16.sub);
  }
}

static double value_u4b8(int code) { return code - 8; }

/* One partial: a new format adds a row (its nibble order, its code values, and the factor its
 * 16-bit output carries, e.g. a bias correction folded into the scale). */
typedef struct dequant_case {
  const char *name;
  int act;
  void (*dequant)(uint32_t q, uint32_t frag[4]);
  double (*value)(int code);  /* the weight a code stands for, before scaling */
  double factor;              /* the 16-bit output is value(code) * factor */
  int nibble[4][2];           /* nibbles of fragment register 0..3, lanes .x and .y */
} dequant_case;

static const dequant_case cases[] = {
    {"u4b8/f16", MGEN_ACT_F16, dequant_u4b8_f16, value_u4b8, 1.0, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
    {"u4b8/bf16", MGEN_ACT_BF16, dequant_u4b8_bf16, value_u4b8, 1.0, {{0, 4}, {1, 5}, {2, 6}, {3, 7}}},
};

/* Every code in every nibble position, the other nibbles random; then every word whose
 * nibbles are all equal. Values and bit patterns exact. */
static void test_all_codes(const dequant_case *dc, rng *r) {
  long checked = 0;
  for (int pos = 0; pos < 8; pos++)
    for (int code = 0; code < 16; code++)
      for (int trial = 0; trial < 17; trial++) {
        uint32_t q = trial < 16 ? (uint32_t)rng_next(r) : 0x11111111u * (uint32_t)code;
        q = (q & ~(0xfu << (4 * pos))) | (uint32_t)code << (4 * pos);
        uint32_t frag[4];
        dc->dequant(q, frag);
        for (int f = 0; f < 4; f++)
          for (int lane = 0; lane < 2; lane++) {
            const int nibble = dc->nibble[f][lane];
            const int v = (int)((q >> (4 * nibble)) & 0xf);
            const uint16_t got = (uint16_t)(frag[f] >> (16 * lane));
            const double want = dc->value(v) * dc->factor;
            CHECK(act_to_double(dc->act, got) == want, "%s q=0x%08x nibble %d (code %d): %g, want %g",
                  dc->name, q, nibble, v, act_to_double(dc->act, got), want);
            CHECK(got == act_from_double(dc->act, want), "%s: bit pattern 0x%04x of %g", dc->name,
                  got, want);
            checked++;
          }
      }
  CHECK(checked == 8 * 16 * 17 * 8, "%s: %ld lanes", dc->name, checked);
}

/* ---------------------------------------------------------------- scales */

/* Grouped scales: act(deq * s) by the hardware multiply (fma.rn / mul.rn with the product
 * exact in FP32: 4 significant bits times 11 or 8) equals the correctly rounded product,
 * for every finite positive scale of the act and every code. The relative error of normal
 * results is at most u (2^-11 FP16, 2^-8 BF16), and u is attained within a few per cent: u/2
 * is not a bound (the BF16 bound of gemm_formats.c rests on this). */
static void test_grouped_scale(int act) {
  const double u = act_unit_roundoff(act);
  const uint16_t inf = act_inf_bits(act);
  const double min_normal = act_to_double(act, act == MGEN_ACT_BF16 ? 0x0080 : 0x0400);
  const double max_finite = act_to_double(act, (uint16_t)(inf - 1));
  const double half_sub_ulp = act_to_double(act, 0x0001) / 2;
  long subnormal = 0, overflow = 0;
  double worst = 0.0;
  for (uint32_t s = 0x0001; s < inf; s++) {
    const double sd = act_to_double(act, (uint16_t)s);
    for (int code = 0; code < 16; code++) {
      const uint16_t deq = act_from_double(act, code - 8);
      const float prod32 = act_to_float(act, deq) * act_to_float(act, (uint16_t)s);
      const uint16_t got = act_from_float(act, prod32);
      const double exact = (code - 8) * sd;
      CHECK((double)prod32 == exact || (isinf(prod32) && fabs(exact) > 0x1p127),
            "%s: FP32 product exact: s=0x%04x code %d", act_name(act), s, code);
      CHECK(got == act_mul(act, deq, (uint16_t)s), "%s: emulation agrees with the multiply",
            act_name(act));
      CHECK(got == act_from_double(act, exact) || (exact == 0.0 && act_to_double(act, got) == 0.0),
            "%s s=0x%04x code %d: 0x%04x vs correctly rounded 0x%04x", act_name(act), s, code,
            got, act_from_double(act, exact));
      const double err = fabs(act_to_double(act, got) - exact);
      if (fabs(exact) >= min_normal && fabs(exact) <= max_finite) {
        CHECK(err <= u * fabs(exact), "%s: relative error s=0x%04x code %d", act_name(act), s, code);
        if (err / fabs(exact) > worst) worst = err / fabs(exact);
      } else if (fabs(exact) > max_finite) {
        overflow++;
      } else if (exact != 0.0) {
        subnormal++;
        CHECK(err <= half_sub_ulp, "%s: subnormal error s=0x%04x code %d", act_name(act), s, code);
      }
    }
  }
  CHECK(subnormal > 0 && overflow > 0, "%s: subnormal (%ld) and overflowing (%ld) products",
        act_name(act), subnormal, overflow);
  CHECK(worst > 0.9 * u, "%s: worst relative error %.4g of u = %.4g", act_name(act), worst / u, u);
  printf("test_dequant: %s grouped scale: worst relative error %.4g u (u = 2^%d)\n", act_name(act),
         worst / u, (int)log2(u));
}

/* Per channel: act(float(acc) * float(s)), an FP32 multiply (relative error <= 2^-24) and
 * one rounding to the act (<= u): within (u + 2^-24 (1 + u)) of acc * s for normal results
 * (subnormal ones: half the subnormal spacing more), against the exact product in double,
 * for random FP32 sums and scales. */
static void test_channel_scale(int act, rng *r) {
  const double u = act_unit_roundoff(act);
  const double min_normal = act_to_double(act, act == MGEN_ACT_BF16 ? 0x0080 : 0x0400);
  const double half_sub_ulp = act_to_double(act, 0x0001) / 2;
  long double_rounded = 0;
  for (int i = 0; i < 1000000; i++) {
    const float acc = (float)ldexp(rng_uniform(r, -2.0, 2.0), (int)rng_below(r, 24) - 8);
    const uint16_t s = act_from_double(act, rng_uniform(r, 0.001, 0.3));
    const double exact = (double)acc * act_to_double(act, s);
    const uint16_t got = act_from_float(act, acc * act_to_float(act, s));
    const double err = fabs(act_to_double(act, got) - exact);
    const double rel = (fabs(exact) >= min_normal ? u : 0.0) + 0x1p-24 * (1 + u);
    CHECK(err <= rel * fabs(exact) + (fabs(exact) < min_normal ? half_sub_ulp : 0.0),
          "%s: acc=%a s=0x%04x", act_name(act), acc, s);
    double_rounded += got != act_from_double(act, exact);
  }
  printf("test_dequant: %s per-channel scale: %ld of 1e6 differ from the exactly rounded product "
         "(FP32 then %s: double rounding)\n", act_name(act), double_rounded, act_name(act));
}

/* Sequential emulation of one output of each path against the u4b8 bound of gemm_formats.c:
 * |c - ref| <= 2u |ref| + (2u + K 2^-22) abs, u the act's unit roundoff. */
static void test_bound(int act, rng *r) {
  static const int ks[] = {64, 256, 4096, 11008};
  const double u = act_unit_roundoff(act);
  double worst = 0.0;
  for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
    const int k = ks[ki];
    uint16_t *a = malloc(sizeof *a * (size_t)k);
    uint8_t *q = malloc((size_t)k);
    for (int trial = 0; trial < 40; trial++) {
      const int group = (int[]){0, 32, 64, 128}[trial % 4];
      uint16_t scale[11008 / 32 + 1];
      for (int g = 0; g < (group ? k / group : 1); g++)
        scale[g] = act_from_double(act, rng_uniform(r, 0.001, 0.3));
      for (int i = 0; i < k; i++) {
        a[i] = act_from_double(act, rng_uniform(r, -1.0, 1.0));
        q[i] = (uint8_t)rng_below(r, 16);
      }
      double ref = 0.0, abs_sum = 0.0;
      float acc = 0.0f;
      for (int i = 0; i < k; i++) {
        const uint16_t s = scale[group ? i / group : 0];
        const double w = (q[i] - 8) * act_to_double(act, s);
        ref += act_to_double(act, a[i]) * w;
        abs_sum += fabs(act_to_double(act, a[i]) * w);
        /* grouped: the act weight act(deq * s); per channel: the raw (q - 8) */
        const float wk = group ? act_to_float(act, act_mul(act, act_from_double(act, q[i] - 8), s))
                               : (float)(q[i] - 8);
        acc += act_to_float(act, a[i]) * wk; /* products exact in FP32; sums rounded */
      }
      const float out32 = group ? acc : acc * act_to_float(act, scale[0]);
      const double c = act_to_double(act, act_from_float(act, out32));
      const double bound = 2 * u * fabs(ref) + (2 * u + k * 0x1p-22) * abs_sum;
      const double ratio = fabs(c - ref) / bound;
      if (ratio > worst) worst = ratio;
      CHECK(fabs(c - ref) <= bound, "%s k=%d group=%d: |%g - %g| > %g", act_name(act), k, group,
            c, ref, bound);
    }
    free(a);
    free(q);
  }
  printf("test_dequant: %s worst emulated error / bound = %.3g\n", act_name(act), worst);
}

int main(void) {
  rng r;
  rng_seed(&r, rng_test_seed("test_dequant"));
  test_constants(&r);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_all_codes(&cases[i], &r);
  for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
    test_grouped_scale(acts[i]);
    test_channel_scale(acts[i], &r);
    test_bound(acts[i], &r);
  }
  return check_exit("test_dequant");
}
