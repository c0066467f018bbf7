/* test_dequant_e4m3.c -- the W4A8 words (runtime/src/formats/layout.h, "W4A8 words") and their
 * dequantization to FP8 E4M3 (the MGEN_E4M3_* constants of mgen_dequant_consts.h), on the CPU,
 * before any kernel reads them (issue #52):
 *   - the placement: for u4b8, fe2m1 and u4, the 32 (slot, bit) of a word are 32 distinct bits;
 *   - the elements: mgen__e4m3_source against the FP8 fragment of wgmma / mma.sync k32 as the
 *     PTX ISA draws it (written out here, not from layout.h: 8-bit A, thread t = 4 c + q of a
 *     warp holds in register r, byte i, row c + 8 (r & 1) and k = 4 q + i + 16 (r >> 1)), with
 *     the word of tile kb giving registers 0, 1 and tile kb + 1 registers 2, 3; and every
 *     element of a 32 x 64 block exactly once;
 *   - the dequantization, emulated on 32-bit words with the constants: every code in every
 *     slot (the other slots random), and random words, each output byte decoded as E4M3
 *     (tests/common/fp4.c, independent of the placement) equal to (q - 8) * 2^-9 (u4b8) or the
 *     E2M1 value * 2^(6 - u) (fe2m1, MXFP4: each of the two rows' tables at every offset u of
 *     0..11, the byte permute emulated as PTX defines it, sign replication included) or
 *     (q - z) * 2^-9 (u4: each of the two rows' zero words, zero_pair()'s, at every zero point
 *     z of 0..15, from a zero word holding it at pair j's nibbles), the sign
 *     of a zero too (u4b8's and u4's 0 are +0); and the bytes of
 *     the other slots' codes never leak into a register (a word with one slot's code and zeros elsewhere dequantizes to
 *     that code's byte alone);
 *   - mgen__mxfp4_e4m3_code, the packers' rounding of blocks past offset 11, against a search
 *     over the E2M1 values for every code and offset.
 * Run: build/tests/test_dequant_e4m3   (MGEN_TEST_SEED=<seed> repeats a run) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bits.h"
#include "check.h"
#include "formats/layout.h"
#include "fp4.h"
#include "mgen_dequant_consts.h"
#include "rng.h"

/* PTX prmt.b32 in its generic mode: selector nibble n picks byte (nibble & 7) of {b, a}, and
 * with its bit 3 set replicates that byte's sign instead. */
static uint32_t prmt(uint32_t a, uint32_t b, uint32_t c) {
  const uint64_t bytes = (uint64_t)b << 32 | a;
  uint32_t r = 0;
  for (int n = 0; n < 4; n++) {
    const unsigned sel = (c >> (4 * n)) & 15u, byte = (unsigned)(bytes >> (8 * (sel & 7u))) & 0xffu;
    r |= (uint32_t)((sel & 8u) ? ((byte & 0x80u) ? 0xffu : 0u) : byte) << (8 * n);
  }
  return r;
}

/* u4's zero_pair(): the zero words of rows 16 j + c and 16 j + 8 + c from a thread's zero word. */
static void u4_zero_pair(uint32_t zw, int j, uint32_t z[2]) {
  z[0] = MGEN_E4M3_U4_BIAS - ((zw >> (4 * j)) & 0xfu) * MGEN_E4M3_ONES;
  z[1] = MGEN_E4M3_U4_BIAS - ((zw >> (4 * j + 16)) & 0xfu) * MGEN_E4M3_ONES;
}

/* __vabsdiffu4: |x - y| of each byte. */
static uint32_t vabsdiffu4(uint32_t x, uint32_t y) {
  uint32_t r = 0;
  for (int n = 0; n < 4; n++) {
    const int a = (int)((x >> (8 * n)) & 0xffu), b = (int)((y >> (8 * n)) & 0xffu);
    r |= (uint32_t)(a > b ? a - b : b - a) << (8 * n);
  }
  return r;
}

/* u4's bytes(): four codes' bytes q of a row with zero word zc. */
static uint32_t u4_bytes(uint32_t q, uint32_t zc) {
  const uint32_t a = q + zc;
  return vabsdiffu4(a, MGEN_E4M3_U4_BIAS) | (~a & MGEN_E4M3_SIGNS);
}

/* The kernels' dequantization of one word: registers of slots A (out[0]) and B (out[1]); fe2m1
 * with the tables of offsets u[0] (slots A's row) and u[1] (B's); u4 with the zero points u[0]
 * and u[1] of those rows, through zero_pair() of a zero word holding them at pair j's nibbles
 * (the other nibbles random). */
static void dequant(int kind, uint32_t w, const unsigned u[2], uint32_t out[2], rng *r) {
  if (kind == MGEN_E4M3_WORDS_U4) {
    const int j = (int)rng_below(r, 4);
    uint32_t zw = (uint32_t)rng_next(r), z[2];
    zw &= ~(0xfu << (4 * j) | 0xfu << (4 * j + 16));
    zw |= u[0] << (4 * j) | u[1] << (4 * j + 16);
    u4_zero_pair(zw, j, z);
    out[0] = u4_bytes(w & MGEN_E4M3_U4_CODES, z[0]);
    out[1] = u4_bytes((w & MGEN_E4M3_U4_B_CODES) >> MGEN_E4M3_U4_B_SHIFT, z[1]);
    return;
  }
  if (kind == MGEN_E4M3_WORDS_FE2M1) {
    const uint32_t sel = w & MGEN_E4M3_FE2M1_SELECTORS;
    uint32_t lo[2], hi[2];
    for (int h = 0; h < 2; h++) {
      lo[h] = MGEN_E4M3_MXFP4_LO - u[h] * MGEN_E4M3_MXFP4_LO_STEP;
      hi[h] = MGEN_E4M3_MXFP4_HI - u[h] * MGEN_E4M3_MXFP4_HI_STEP;
    }
    out[0] = prmt(lo[0], hi[0], sel) | (w & MGEN_E4M3_SIGNS);
    out[1] = prmt(lo[1], hi[1], sel >> MGEN_E4M3_FE2M1_B_SELECTORS) |
             ((w << MGEN_E4M3_FE2M1_B_SIGNS) & MGEN_E4M3_SIGNS);
    return;
  }
  for (int h = 0; h < 2; h++) {
    const uint32_t x = h ? rotr(w, MGEN_E4M3_U4B8_ROTR_B) : w;
    out[h] = (x & MGEN_E4M3_U4B8_CODES) + ((x & MGEN_E4M3_SIGNS) >> MGEN_E4M3_U4B8_SIGN_SHIFT);
  }
}

static const char *const kind_name[] = {"u4b8", "fe2m1", "u4"};

static double expected(int kind, unsigned code, unsigned u) {
  if (kind == MGEN_E4M3_WORDS_FE2M1) return ldexp(fp4_e2m1_value(code), MGEN_E4M3_MXFP4_LOG2 - (int)u);
  return ldexp((double)code - (kind == MGEN_E4M3_WORDS_U4 ? (double)u : 8.0), MGEN_E4M3_U4B8_LOG2);
}

/* Dequantizes the word of codes[8] and checks every slot's byte (fe2m1: slots A of the block at
 * offset u[0], B at u[1]; u4: slots A's row with zero point u[0], B's with u[1]). */
static void check_word(int kind, const uint8_t codes[8], const unsigned u[2], const char *what, rng *r) {
  uint32_t regs[2];
  dequant(kind, mgen__e4m3_word(kind, codes), u, regs, r);
  for (int s = 0; s < 8; s++) {
    const unsigned byte = (regs[s >> 2] >> (8 * (s & 3))) & 0xffu;
    const double got = fp4_e4m3_value(byte), want = expected(kind, codes[s], u[s >> 2]);
    CHECK(got == want && !signbit(got) == !signbit(want),
          "%s %s: slot %d code %u (u %u) -> E4M3 0x%02x = %g, want %g", kind_name[kind], what, s,
          codes[s], u[s >> 2], byte, got, want);
  }
}

static void test_placement(int kind) {
  uint32_t seen = 0;
  int distinct = 1;
  for (int s = 0; s < 8; s++)
    for (int j = 0; j < 4; j++) {
      const int b = mgen__e4m3_bit(kind, s, j);
      distinct &= b >= 0 && b < 32 && !(seen >> b & 1u);
      if (b >= 0 && b < 32) seen |= 1u << b;
    }
  CHECK(distinct && seen == 0xffffffffu, "%s: the 32 (slot, bit) are not a permutation (bits 0x%08x)",
        kind_name[kind], seen);
}

/* mgen__e4m3_source against the fragment: word (tile kb of a chunk, thread t), slot 4 h + i
 * is register 2 (kb & 1) + h's byte i. And a 32 x 64 block (two chunks' tiles of k) is covered
 * once. */
static void test_source(void) {
  const int n_total = 64; /* one chunk of four tiles a k row of tiles */
  static int hits[32][64];
  memset(hits, 0, sizeof hits);
  int mismatches = 0;
  for (int word = 0; word < 2 * MGEN_W4_CHUNK_WORDS; word++) {
    const int j = (word >> 5) & 3, t = word & 31, kb = word >> 7; /* tile-major in the chunk */
    const int c = t >> 2, q = t & 3;
    for (int s = 0; s < 8; s++) {
      const int h = s >> 2, i = s & 3, reg = 2 * (kb & 1) + h;
      const int want_row = c + 8 * (reg & 1), want_k = 4 * q + i + 16 * (reg >> 1);
      int k, n;
      mgen__e4m3_source(n_total, word, s, &k, &n);
      mismatches += k != want_k || n != 16 * j + want_row;
      if (k >= 0 && k < 32 && n >= 0 && n < 64) hits[k][n]++;
    }
  }
  CHECK(mismatches == 0, "%d slots off the FP8 fragment", mismatches);
  int once = 1;
  for (int k = 0; k < 32; k++)
    for (int n = 0; n < 64; n++) once &= hits[k][n] == 1;
  CHECK(once, "the 32 x 64 block is not covered once");
}

/* u: fe2m1's block offsets (0..11), u4's zero points (0..15); u4b8 none. */
static void test_dequant(int kind, rng *r) {
  uint8_t codes[8];
  unsigned u[2] = {0, 0};
  const unsigned offsets = kind == MGEN_E4M3_WORDS_FE2M1 ? MGEN_MXFP4_E4M3_U_MAX + 1
                           : kind == MGEN_E4M3_WORDS_U4  ? 16
                                                         : 1;
  for (int s = 0; s < 8; s++)
    for (unsigned code = 0; code < 16; code++)
      for (unsigned us = 0; us < offsets; us++) {
        for (int trial = 0; trial < 64; trial++) {
          for (int o = 0; o < 8; o++) codes[o] = (uint8_t)rng_below(r, 16);
          codes[s] = (uint8_t)code;
          u[s >> 2] = us, u[1 - (s >> 2)] = rng_below(r, offsets);
          check_word(kind, codes, u, "every code", r);
        }
        /* alone: the word of the slot's code and codes of value 0 elsewhere (u4: the zero point) */
        for (int o = 0; o < 8; o++)
          codes[o] = (uint8_t)(kind == MGEN_E4M3_WORDS_FE2M1 ? 0 : kind == MGEN_E4M3_WORDS_U4 ? u[o >> 2] : 8);
        codes[s] = (uint8_t)code;
        check_word(kind, codes, u, "alone", r);
      }
  for (int trial = 0; trial < 200000; trial++) {
    for (int o = 0; o < 8; o++) codes[o] = (uint8_t)rng_below(r, 16);
    for (int h = 0; h < 2; h++) u[h] = rng_below(r, offsets);
    check_word(kind, codes, u, "random", r);
  }
}

/* mgen__mxfp4_e4m3_code: past U_MAX the E2M1 value nearest code * 2^(U_MAX - u), ties to the
 * even code, the sign kept; unchanged up to U_MAX. Against a search over the E2M1 values. */
static void test_floor_rounding(void) {
  int bad = 0;
  for (int u = 0; u < 256; u++)
    for (unsigned code = 0; code < 16; code++) {
      const double x = u <= MGEN_MXFP4_E4M3_U_MAX ? fp4_e2m1_value(code & 7u)
                                                  : ldexp(fp4_e2m1_value(code & 7u), MGEN_MXFP4_E4M3_U_MAX - u);
      unsigned want = 0;
      for (unsigned c = 1; c < 8; c++) {
        const double dc = fabs(fp4_e2m1_value(c) - x), dw = fabs(fp4_e2m1_value(want) - x);
        if (dc < dw || (dc == dw && !(c & 1))) want = c;
      }
      want |= code & 8u;
      const unsigned got = mgen__mxfp4_e4m3_code(code, u);
      if (got != want && bad++ < 8) CHECK(0, "mgen__mxfp4_e4m3_code(%u, %d) = %u, want %u", code, u, got, want);
    }
  CHECK(bad == 0, "%d (code, u) rounded off", bad);
  /* the floor: every value of the largest table fits E4M3, the least is its least normal */
  CHECK(ldexp(6.0, MGEN_E4M3_MXFP4_LOG2) <= 448.0 &&
            ldexp(0.5, MGEN_E4M3_MXFP4_LOG2 - MGEN_MXFP4_E4M3_U_MAX) == 0x1p-6,
        "U_MAX or LOG2 off E4M3's normal range");
}

int main(void) {
  rng r;
  rng_seed(&r, rng_test_seed("test_dequant_e4m3"));
  for (int kind = MGEN_E4M3_WORDS_U4B8; kind <= MGEN_E4M3_WORDS_U4; kind++) {
    test_placement(kind);
    test_dequant(kind, &r);
  }
  test_source();
  test_floor_rounding();
  /* the u4b8 field: a bijection of 0..15 whose value S ? -(M + 1) : M is q - 8 */
  int bijective = 1, seen = 0;
  for (unsigned q = 0; q < 16; q++) {
    const unsigned f = mgen__u4b8_e4m3_field(q);
    const int value = (f & 8) ? -(int)((f & 7) + 1) : (int)(f & 7);
    bijective &= f < 16 && !(seen >> f & 1) && value == (int)q - 8;
    seen |= 1 << (f & 15);
  }
  CHECK(bijective, "the u4b8 field is not the sign-and-magnitude bijection");
  return check_exit("test_dequant_e4m3");
}
