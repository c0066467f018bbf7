/* test_swizzle.c -- mgen_swizzle (templates/common/mgen_swizzle.h) against the tables of
 * swizzle-bits-base-shift.zh.md, typed in from the document.
 *
 * `test_swizzle --digest` prints one line per (bits, base, shift) of the whole parameter range
 * with an FNV-1a digest of the swizzle of every offset below 2^16: gen.swizzle_agree compares
 * it with the Lua model's (tests/gen/swizzle_digest.lua). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "mgen_swizzle.h"

/* 8x8 tables: entry [r][c] is where offset 8*r + c goes. */
static const int doc_swz_2_0_3[8][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7},         {9, 8, 11, 10, 13, 12, 15, 14},
    {18, 19, 16, 17, 22, 23, 20, 21}, {27, 26, 25, 24, 31, 30, 29, 28},
    {32, 33, 34, 35, 36, 37, 38, 39}, {41, 40, 43, 42, 45, 44, 47, 46},
    {50, 51, 48, 49, 54, 55, 52, 53}, {59, 58, 57, 56, 63, 62, 61, 60},
};
static const int doc_swz_2_1_3[8][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7},         {8, 9, 10, 11, 12, 13, 14, 15},
    {18, 19, 16, 17, 22, 23, 20, 21}, {26, 27, 24, 25, 30, 31, 28, 29},
    {36, 37, 38, 39, 32, 33, 34, 35}, {44, 45, 46, 47, 40, 41, 42, 43},
    {54, 55, 52, 53, 50, 51, 48, 49}, {62, 63, 60, 61, 58, 59, 56, 57},
};
static const int doc_swz_2_2_3[8][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7},         {8, 9, 10, 11, 12, 13, 14, 15},
    {16, 17, 18, 19, 20, 21, 22, 23}, {24, 25, 26, 27, 28, 29, 30, 31},
    {36, 37, 38, 39, 32, 33, 34, 35}, {44, 45, 46, 47, 40, 41, 42, 43},
    {52, 53, 54, 55, 48, 49, 50, 51}, {60, 61, 62, 63, 56, 57, 58, 59},
};
static const int doc_swz_2_3_3[8][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7},         {8, 9, 10, 11, 12, 13, 14, 15},
    {16, 17, 18, 19, 20, 21, 22, 23}, {24, 25, 26, 27, 28, 29, 30, 31},
    {32, 33, 34, 35, 36, 37, 38, 39}, {40, 41, 42, 43, 44, 45, 46, 47},
    {48, 49, 50, 51, 52, 53, 54, 55}, {56, 57, 58, 59, 60, 61, 62, 63},
};

/* swizzle<3,3,3> XOR table: row = the 16-byte column ZZZ (offset bits 3..5), column = the row
 * bits YYY (bits 6..8); entry = the new ZZZ, and in parentheses the distance moved (units of
 * 2^base elements). Binary in the document. */
static const int doc_xor_3[8][8] = {
    {00, 01, 02, 03, 04, 05, 06, 07}, {01, 00, 03, 02, 05, 04, 07, 06},
    {02, 03, 00, 01, 06, 07, 04, 05}, {03, 02, 01, 00, 07, 06, 05, 04},
    {04, 05, 06, 07, 00, 01, 02, 03}, {05, 04, 07, 06, 01, 00, 03, 02},
    {06, 07, 04, 05, 02, 03, 00, 01}, {07, 06, 05, 04, 03, 02, 01, 00},
};
static const int doc_xor_3_dist[8][8] = {
    {0, 1, 2, 3, 4, 5, 6, 7},         {0, -1, 2, 1, 4, 3, 6, 5},
    {0, 1, -2, -1, 4, 5, 2, 3},       {0, -1, -2, -3, 4, 3, 2, 1},
    {0, 1, 2, 3, -4, -3, -2, -1},     {0, -1, 2, 1, -4, -5, -2, -3},
    {0, 1, -2, -1, -4, -3, -6, -5},   {0, -1, -2, -3, -4, -5, -6, -7},
};
/* swizzle<2,3,3>: the 4x4 corner of the same table. */
static const int doc_xor_2[4][4] = {
    {0, 1, 2, 3}, {1, 0, 3, 2}, {2, 3, 0, 1}, {3, 2, 1, 0},
};

static void check_table(int bits, int base, int shift, const int table[8][8]) {
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 8; c++) {
      int got = mgen_swizzle(bits, base, shift, 8 * r + c);
      CHECK(got == table[r][c], "Swizzle<%d,%d,%d>(%d) = %d, doc %d", bits, base, shift,
            8 * r + c, got, table[r][c]);
    }
}

/* The range the digest covers: every value the generator's swizzle axis could take and more. */
enum { MAX_BITS = 4, MAX_BASE = 6, MAX_SHIFT = 6, OFFSETS = 1 << 16 };

static void print_digests(void) {
  for (int bits = 0; bits <= MAX_BITS; bits++)
    for (int base = 0; base <= MAX_BASE; base++)
      for (int shift = 0; shift <= MAX_SHIFT; shift++) {
        uint32_t h = 2166136261u;
        for (int x = 0; x < OFFSETS; x++) {
          const uint32_t y = (uint32_t)mgen_swizzle(bits, base, shift, x);
          for (int byte = 0; byte < 4; byte++) h = (h ^ ((y >> (8 * byte)) & 0xffu)) * 16777619u;
        }
        printf("%d %d %d %08x\n", bits, base, shift, h);
      }
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--digest") == 0) {
    print_digests();
    return 0;
  }
  check_table(2, 0, 3, doc_swz_2_0_3);
  check_table(2, 1, 3, doc_swz_2_1_3);
  check_table(2, 2, 3, doc_swz_2_2_3);
  check_table(2, 3, 3, doc_swz_2_3_3);

  /* The doc's worked examples: 8 -> 9 and 9 -> 8 under Swizzle<2,0,3>. */
  CHECK(mgen_swizzle(2, 0, 3, 8) == 9, "8");
  CHECK(mgen_swizzle(2, 0, 3, 9) == 8, "9");

  for (int z = 0; z < 8; z++)
    for (int y = 0; y < 8; y++) {
      const int offset = (y << 6) | (z << 3) | 5; /* element 5 of its 8-element group */
      const int out = mgen_swizzle(3, 3, 3, offset);
      const int new_z = (out >> 3) & 7;
      CHECK(new_z == doc_xor_3[z][y], "<3,3,3> z=%d y=%d: %d, doc %d", z, y, new_z, doc_xor_3[z][y]);
      CHECK(new_z - z == doc_xor_3_dist[z][y], "<3,3,3> distance z=%d y=%d", z, y);
      CHECK((out & 7) == 5 && (out >> 6) == y, "<3,3,3> keeps the group and the row bits");
      if (z < 4 && y < 4) {
        const int out2 = mgen_swizzle(2, 3, 3, (y << 6) | (z << 3));
        CHECK(((out2 >> 3) & 7) == doc_xor_2[z][y], "<2,3,3> z=%d y=%d", z, y);
      }
    }

  /* Every swizzle is an involution and a bijection on [0, 2^(bits+base+shift)). */
  static const int params[][3] = {{2, 0, 3}, {2, 1, 3}, {2, 2, 3}, {2, 3, 3}, {3, 3, 3},
                                  {3, 4, 3}, {2, 4, 3}, {1, 4, 3}, {3, 0, 4}, {2, 5, 2}};
  for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
    const int b = params[i][0], m = params[i][1], s = params[i][2];
    const int span = 1 << (b + m + s + 1);
    int bad = 0;
    for (int x = 0; x < span; x++) {
      const int y = mgen_swizzle(b, m, s, x);
      bad += mgen_swizzle(b, m, s, y) != x || y < 0 || y >= span;
    }
    CHECK(bad == 0, "Swizzle<%d,%d,%d>: %d offsets not an involution", b, m, s, bad);
  }

  /* Every swizzle is linear over XOR: swz(x ^ y) = swz(x) ^ swz(y). The mma family's A
   * addresses rely on it (templates/mma/include/mgen_mma_body.cuh a_step_address: a lane's part swizzled
   * once, each step's part a constant XORed in), for every parameter the digest covers. */
  for (int b = 0; b <= MAX_BITS; b++)
    for (int m = 0; m <= MAX_BASE; m++)
      for (int s = 0; s <= MAX_SHIFT; s++) {
        int bad = 0;
        for (int x = 0; x < 1 << 12; x += 7)
          for (int y = 0; y < 1 << 12; y += 13)
            bad += mgen_swizzle(b, m, s, x ^ y) != (mgen_swizzle(b, m, s, x) ^ mgen_swizzle(b, m, s, y));
        CHECK(bad == 0, "Swizzle<%d,%d,%d>: %d pairs not linear over XOR", b, m, s, bad);
      }
  return check_exit("test_swizzle");
}
