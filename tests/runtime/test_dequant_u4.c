/* test_dequant_u4.c -- the u4 dequantization partials (templates/formats/u4/mma_{f16,bf16}.cuh:
 * codes q 0..15, zero z per group and column, w = (q - z) * s), emulated bit for bit in C on
 * 16-bit patterns with the constants of mgen_dequant_consts.h, which the partials include:
 *   zero_pair(zw, j): the biased zeros of pair j from a thread's zero word, whose position
 *                     p = 2j + h sits at nibble MGEN_U4_ZERO_NIBBLE(p) (the packers' side);
 *   dequant(q, z):    the four fragment registers of a code word, lane h of z broadcast;
 * for every q and z in 0..15, every code nibble and every zero position, both activation
 * types: the result is exactly q - z (value and bit pattern, +0 for q = z). Then the scales:
 * grouped, act(act(q - z) * s) by one rounding (__hmul2) equals the exactly rounded
 * (q - z) * s for every finite scale of either sign; per channel, the FP32 product
 * float(q - z) * float(s) is exact, so the epilogue's one rounding to the act is too.
 * And the zero word's order agrees with the packers' (layout.h, mgen__zero_place).
 * Run: build/tests/test_dequant_u4 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "act.h"
#include "bf16.h"
#include "check.h"
#include "half.h"
#include "formats/layout.h"
#include "mgen_dequant_consts.h"
#include "rng.h"

static uint32_t lop3_and_or(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d = 0; /* lop3.b32 with the partials' table, bit by bit */
  for (int i = 0; i < 32; i++) {
    const int sel = (int)(((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1));
    d |= (uint32_t)((MGEN_LOP3_AND_OR >> sel) & 1) << i;
  }
  return d;
}
static uint16_t lane(uint32_t x, int h) { return (uint16_t)(x >> (16 * h)); }
static uint32_t pair(uint16_t lo, uint16_t hi) { return lo | (uint32_t)hi << 16; }
static uint32_t broadcast(uint32_t x, int h) { return pair(lane(x, h), lane(x, h)); } /* .Hh_Hh */
static uint32_t hsub2(uint32_t a, uint32_t b) {
  return pair(half_sub(lane(a, 0), lane(b, 0)), half_sub(lane(a, 1), lane(b, 1)));
}
static uint32_t hfma2(uint32_t a, uint32_t b, uint32_t c) {
  return pair(half_fma(lane(a, 0), lane(b, 0), lane(c, 0)), half_fma(lane(a, 1), lane(b, 1), lane(c, 1)));
}
static uint32_t bsub2(uint32_t a, uint32_t b) {
  return pair(bf16_sub(lane(a, 0), lane(b, 0)), bf16_sub(lane(a, 1), lane(b, 1)));
}

/* ---------------------------------------------------------------- the partials, emulated */

/* DequantU4F16::zero_pair: z[0] = 1024 + z, z[1] = 960 - z[0] = -(64 + z), lane h. */
static void zero_pair_f16(uint32_t zw, int j, uint32_t z[2]) {
  z[0] = lop3_and_or(zw >> (4 * j), MGEN_U4_F16_LO, MGEN_U4_F16_EXP);
  z[1] = hsub2(MGEN_U4_F16_ZHI, z[0]);
}
/* DequantU4F16::dequant; frag[2h + r] is the kernels' frag[h][r]. */
static void dequant_f16(uint32_t q, const uint32_t z[2], uint32_t frag[4]) {
  for (int h = 0; h < 2; h++) {
    const uint32_t lo = lop3_and_or(q, MGEN_U4_F16_LO, MGEN_U4_F16_EXP);
    const uint32_t hi = lop3_and_or(q, MGEN_U4_F16_HI, MGEN_U4_F16_EXP);
    frag[2 * h + 0] = hsub2(lo, broadcast(z[0], h));
    frag[2 * h + 1] = hfma2(hi, MGEN_U4_F16_MUL, broadcast(z[1], h));
    q >>= 8;
  }
}
/* DequantU4Bf16: z[0] = z[1] = 128 + z; register r from q >> 4r, lane r / 2 of the zeros. */
static void zero_pair_bf16(uint32_t zw, int j, uint32_t z[2]) {
  z[0] = z[1] = lop3_and_or(zw >> (4 * j), MGEN_U4_BF16_LO, MGEN_U4_BF16_EXP);
}
static void dequant_bf16(uint32_t q, const uint32_t z[2], uint32_t frag[4]) {
  for (int r = 0; r < 4; r++)
    frag[r] = bsub2(lop3_and_or(q >> (4 * r), MGEN_U4_BF16_LO, MGEN_U4_BF16_EXP), broadcast(z[0], r / 2));
}

typedef struct u4_case {
  const char *name;
  int act;
  void (*zero_pair)(uint32_t zw, int j, uint32_t z[2]);
  void (*dequant)(uint32_t q, const uint32_t z[2], uint32_t frag[4]);
} u4_case;

static const u4_case cases[] = {
    {"u4/f16", MGEN_ACT_F16, zero_pair_f16, dequant_f16},
    {"u4/bf16", MGEN_ACT_BF16, zero_pair_bf16, dequant_bf16},
};

/* The code nibbles of fragment register f, lanes 0 and 1 (runtime/src/formats/layout.h: the
 * mma fragment order b0 b4 | b1 b5 | b2 b6 | b3 b7), and its column block h = f / 2. */
static const int code_nibble[4][2] = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};

/* A thread's zero word from the zeros of its 8 packed positions (what the packer writes). */
static uint32_t zero_word(const int z[8]) {
  uint32_t w = 0;
  for (int p = 0; p < 8; p++) w |= (uint32_t)z[p] << (4 * MGEN_U4_ZERO_NIBBLE(p));
  return w;
}

/* ---------------------------------------------------------------- tests */

static void test_constants(void) {
  CHECK(half_to_double((uint16_t)MGEN_U4_F16_EXP) == 1024.0, "0x6400");
  CHECK(half_to_double((uint16_t)MGEN_U4_F16_MUL) == 1.0 / 16, "0x2c00");
  CHECK(half_to_double((uint16_t)MGEN_U4_F16_ZHI) == 1024.0 - 1024.0 / 16, "0x6380 = 960");
  CHECK(bf16_to_double((uint16_t)MGEN_U4_BF16_EXP) == 128.0, "0x4300");
  const uint32_t all[] = {MGEN_U4_F16_LO, MGEN_U4_F16_HI, MGEN_U4_F16_EXP, MGEN_U4_F16_MUL,
                          MGEN_U4_F16_ZHI, MGEN_U4_BF16_LO, MGEN_U4_BF16_EXP};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    CHECK(lane(all[i], 0) == lane(all[i], 1), "constant %zu: both lanes agree", i);
  /* the zero word's nibbles: a permutation, pair j's columns at nibbles j and j + 4 */
  unsigned seen = 0;
  for (int p = 0; p < 8; p++) seen |= 1u << MGEN_U4_ZERO_NIBBLE(p);
  CHECK(seen == 0xffu, "MGEN_U4_ZERO_NIBBLE is a permutation of 0..7");
  for (int j = 0; j < 4; j++)
    CHECK(MGEN_U4_ZERO_NIBBLE(2 * j) == j && MGEN_U4_ZERO_NIBBLE(2 * j + 1) == j + 4, "pair %d", j);
}

/* The two copies of the zero word's order agree: the packers' (layout.h, mgen__zero_place and
 * its inverse mgen__zero_source_col) and the partials' (MGEN_U4_ZERO_NIBBLE). Thread c of a
 * warp (lane / 4) takes column 16j + 8h + c of a 64-column chunk i for pair j, lane h (the
 * fragment order of u4/mma_*.cuh): its zero must be in the chunk's word c, row word 8i + c, at
 * nibble MGEN_U4_ZERO_NIBBLE(2j + h), for every column of a wide weight. */
static void test_layout_agrees(void) {
  const int n = 4096;
  long bad = 0;
  for (int i = 0; i < n / 64; i++)
    for (int c = 0; c < 8; c++)
      for (int j = 0; j < 4; j++)
        for (int h = 0; h < 2; h++) {
          const int col = 64 * i + 16 * j + 8 * h + c;
          int word, nibble;
          mgen__zero_place(col, &word, &nibble);
          const int ok = word == 8 * i + c && nibble == MGEN_U4_ZERO_NIBBLE(2 * j + h) &&
                         mgen__zero_source_col(word, nibble) == col;
          if (!ok && bad++ == 0)
            CHECK(0, "column %d (chunk %d, thread %d, pair %d, lane %d): layout.h word %d nibble "
                  "%d, the partials' word %d nibble %d", col, i, c, j, h, word, nibble, 8 * i + c,
                  MGEN_U4_ZERO_NIBBLE(2 * j + h));
        }
  CHECK(bad == 0, "%ld of %d columns' zeros are not where the partials read them", bad, n);
}

/* Every code q in every code nibble, every zero z at every zero position (pair j, column h),
 * the other nibbles random: fragment register f lane l is exactly code - zero of column f / 2. */
static void test_all(const u4_case *uc, rng *r) {
  long checked = 0;
  for (int p = 0; p < 8; p++)
    for (int zv = 0; zv < 16; zv++)
      for (int pos = 0; pos < 8; pos++)
        for (int qv = 0; qv < 16; qv++)
          for (int trial = 0; trial < 3; trial++) {
            int z[8];
            for (int i = 0; i < 8; i++) z[i] = trial == 2 ? zv : (int)rng_below(r, 16);
            z[p] = zv;
            uint32_t q = trial == 2 ? 0x11111111u * (uint32_t)qv : (uint32_t)rng_next(r);
            q = (q & ~(0xfu << (4 * pos))) | (uint32_t)qv << (4 * pos);
            const int j = p / 2;
            uint32_t zp[2], frag[4];
            uc->zero_pair(zero_word(z), j, zp);
            uc->dequant(q, zp, frag);
            for (int f = 0; f < 4; f++)
              for (int l = 0; l < 2; l++) {
                const int code = (int)((q >> (4 * code_nibble[f][l])) & 0xf);
                const int zero = z[2 * j + f / 2];
                const uint16_t got = lane(frag[f], l);
                CHECK(act_to_double(uc->act, got) == code - zero && got == act_from_double(uc->act, code - zero),
                      "%s q=0x%08x zeros %d..%d pair %d: register %d lane %d = 0x%04x (%g), want %d - %d",
                      uc->name, q, z[0], z[7], j, f, l, got, act_to_double(uc->act, got), code, zero);
                checked++;
              }
          }
  CHECK(checked == 8L * 16 * 8 * 16 * 3 * 8, "%s: %ld lanes", uc->name, checked);
}

/* Grouped: the dequantized d = q - z (exact) times s in the act, one rounding, for every finite
 * scale of either sign and every d in -15..15, against the exactly rounded product. Per
 * channel: d stays unscaled in the MMA and the epilogue multiplies FP32 sums by float(s); for
 * one term that product is exact (5 x 11 significant bits), so its rounding to the act is the
 * exactly rounded (q - z) * s as well. */
static void test_scales(int act) {
  const uint16_t inf = act_inf_bits(act);
  long n = 0;
  for (uint32_t mag = 0x0001; mag < inf; mag++)
    for (uint32_t sign = 0; sign < 2; sign++) {
      const uint16_t s = (uint16_t)(mag | sign << 15);
      const double sd = act_to_double(act, s);
      for (int d = -15; d <= 15; d++) {
        const uint16_t deq = act_from_double(act, d);
        const double exact = d * sd;
        const uint16_t want = act_from_double(act, exact);
        const uint16_t got = act_mul(act, deq, s);
        CHECK(got == want || (exact == 0.0 && act_to_double(act, got) == 0.0),
              "%s grouped: (%d) * 0x%04x = 0x%04x, exactly rounded 0x%04x", act_name(act), d, s, got, want);
        const float prod = (float)d * act_to_float(act, s);
        CHECK((double)prod == exact || (isinf(prod) && fabs(exact) > 0x1p127),
              "%s per channel: FP32 (%d) * 0x%04x not exact", act_name(act), d, s);
        CHECK(act_from_float(act, prod) == want || (exact == 0.0 && act_to_double(act, act_from_float(act, prod)) == 0.0),
              "%s per channel: (%d) * 0x%04x", act_name(act), d, s);
        n++;
      }
    }
  printf("test_dequant_u4: %s: %ld scaled values exactly rounded\n", act_name(act), n);
}

int main(void) {
  rng r;
  rng_seed(&r, rng_test_seed("test_dequant_u4"));
  test_constants();
  test_layout_agrees();
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    test_all(&cases[i], &r);
    test_scales(cases[i].act);
  }
  return check_exit("test_dequant_u4");
}
