/* test_layout.c -- the packed u4b8 layout (runtime/src/formats/layout.h) against the worked 32x32
 * example of marlin-w4-layout.md, typed in from the document, and the scale permutation
 * against IST Marlin's scale_perm; then the K padding: the CPU references (ref.c, fp4.c, which
 * pack a padded k as the weight with zero columns appended) against layout.h's statement of
 * it (the pad values, the padding as the buffers' tail, the sizes). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "formats/formats.h"
#include "formats/layout.h"
#include "fp4.h"
#include "mgen/mgen.h"
#include "ref.h"
#include "rng.h"

/* marlin-w4-layout.md step 3: the final (32, 4 x 8) table of element ids (k*32 + n) for a
 * 32x32 B; row = thread t, column 8*j + b = nibble b of the word of tile j. */
static const int doc_final[32][32] = {
    {   0,  256,    8,  264,   32,  288,   40,  296,   16,  272,   24,  280,   48,  304,   56,  312,
      512,  768,  520,  776,  544,  800,  552,  808,  528,  784,  536,  792,  560,  816,  568,  824},
    {  64,  320,   72,  328,   96,  352,  104,  360,   80,  336,   88,  344,  112,  368,  120,  376,
      576,  832,  584,  840,  608,  864,  616,  872,  592,  848,  600,  856,  624,  880,  632,  888},
    { 128,  384,  136,  392,  160,  416,  168,  424,  144,  400,  152,  408,  176,  432,  184,  440,
      640,  896,  648,  904,  672,  928,  680,  936,  656,  912,  664,  920,  688,  944,  696,  952},
    { 192,  448,  200,  456,  224,  480,  232,  488,  208,  464,  216,  472,  240,  496,  248,  504,
      704,  960,  712,  968,  736,  992,  744, 1000,  720,  976,  728,  984,  752, 1008,  760, 1016},
    {   1,  257,    9,  265,   33,  289,   41,  297,   17,  273,   25,  281,   49,  305,   57,  313,
      513,  769,  521,  777,  545,  801,  553,  809,  529,  785,  537,  793,  561,  817,  569,  825},
    {  65,  321,   73,  329,   97,  353,  105,  361,   81,  337,   89,  345,  113,  369,  121,  377,
      577,  833,  585,  841,  609,  865,  617,  873,  593,  849,  601,  857,  625,  881,  633,  889},
    { 129,  385,  137,  393,  161,  417,  169,  425,  145,  401,  153,  409,  177,  433,  185,  441,
      641,  897,  649,  905,  673,  929,  681,  937,  657,  913,  665,  921,  689,  945,  697,  953},
    { 193,  449,  201,  457,  225,  481,  233,  489,  209,  465,  217,  473,  241,  497,  249,  505,
      705,  961,  713,  969,  737,  993,  745, 1001,  721,  977,  729,  985,  753, 1009,  761, 1017},
    {   2,  258,   10,  266,   34,  290,   42,  298,   18,  274,   26,  282,   50,  306,   58,  314,
      514,  770,  522,  778,  546,  802,  554,  810,  530,  786,  538,  794,  562,  818,  570,  826},
    {  66,  322,   74,  330,   98,  354,  106,  362,   82,  338,   90,  346,  114,  370,  122,  378,
      578,  834,  586,  842,  610,  866,  618,  874,  594,  850,  602,  858,  626,  882,  634,  890},
    { 130,  386,  138,  394,  162,  418,  170,  426,  146,  402,  154,  410,  178,  434,  186,  442,
      642,  898,  650,  906,  674,  930,  682,  938,  658,  914,  666,  922,  690,  946,  698,  954},
    { 194,  450,  202,  458,  226,  482,  234,  490,  210,  466,  218,  474,  242,  498,  250,  506,
      706,  962,  714,  970,  738,  994,  746, 1002,  722,  978,  730,  986,  754, 1010,  762, 1018},
    {   3,  259,   11,  267,   35,  291,   43,  299,   19,  275,   27,  283,   51,  307,   59,  315,
      515,  771,  523,  779,  547,  803,  555,  811,  531,  787,  539,  795,  563,  819,  571,  827},
    {  67,  323,   75,  331,   99,  355,  107,  363,   83,  339,   91,  347,  115,  371,  123,  379,
      579,  835,  587,  843,  611,  867,  619,  875,  595,  851,  603,  859,  627,  883,  635,  891},
    { 131,  387,  139,  395,  163,  419,  171,  427,  147,  403,  155,  411,  179,  435,  187,  443,
      643,  899,  651,  907,  675,  931,  683,  939,  659,  915,  667,  923,  691,  947,  699,  955},
    { 195,  451,  203,  459,  227,  483,  235,  491,  211,  467,  219,  475,  243,  499,  251,  507,
      707,  963,  715,  971,  739,  995,  747, 1003,  723,  979,  731,  987,  755, 1011,  763, 1019},
    {   4,  260,   12,  268,   36,  292,   44,  300,   20,  276,   28,  284,   52,  308,   60,  316,
      516,  772,  524,  780,  548,  804,  556,  812,  532,  788,  540,  796,  564,  820,  572,  828},
    {  68,  324,   76,  332,  100,  356,  108,  364,   84,  340,   92,  348,  116,  372,  124,  380,
      580,  836,  588,  844,  612,  868,  620,  876,  596,  852,  604,  860,  628,  884,  636,  892},
    { 132,  388,  140,  396,  164,  420,  172,  428,  148,  404,  156,  412,  180,  436,  188,  444,
      644,  900,  652,  908,  676,  932,  684,  940,  660,  916,  668,  924,  692,  948,  700,  956},
    { 196,  452,  204,  460,  228,  484,  236,  492,  212,  468,  220,  476,  244,  500,  252,  508,
      708,  964,  716,  972,  740,  996,  748, 1004,  724,  980,  732,  988,  756, 1012,  764, 1020},
    {   5,  261,   13,  269,   37,  293,   45,  301,   21,  277,   29,  285,   53,  309,   61,  317,
      517,  773,  525,  781,  549,  805,  557,  813,  533,  789,  541,  797,  565,  821,  573,  829},
    {  69,  325,   77,  333,  101,  357,  109,  365,   85,  341,   93,  349,  117,  373,  125,  381,
      581,  837,  589,  845,  613,  869,  621,  877,  597,  853,  605,  861,  629,  885,  637,  893},
    { 133,  389,  141,  397,  165,  421,  173,  429,  149,  405,  157,  413,  181,  437,  189,  445,
      645,  901,  653,  909,  677,  933,  685,  941,  661,  917,  669,  925,  693,  949,  701,  957},
    { 197,  453,  205,  461,  229,  485,  237,  493,  213,  469,  221,  477,  245,  501,  253,  509,
      709,  965,  717,  973,  741,  997,  749, 1005,  725,  981,  733,  989,  757, 1013,  765, 1021},
    {   6,  262,   14,  270,   38,  294,   46,  302,   22,  278,   30,  286,   54,  310,   62,  318,
      518,  774,  526,  782,  550,  806,  558,  814,  534,  790,  542,  798,  566,  822,  574,  830},
    {  70,  326,   78,  334,  102,  358,  110,  366,   86,  342,   94,  350,  118,  374,  126,  382,
      582,  838,  590,  846,  614,  870,  622,  878,  598,  854,  606,  862,  630,  886,  638,  894},
    { 134,  390,  142,  398,  166,  422,  174,  430,  150,  406,  158,  414,  182,  438,  190,  446,
      646,  902,  654,  910,  678,  934,  686,  942,  662,  918,  670,  926,  694,  950,  702,  958},
    { 198,  454,  206,  462,  230,  486,  238,  494,  214,  470,  222,  478,  246,  502,  254,  510,
      710,  966,  718,  974,  742,  998,  750, 1006,  726,  982,  734,  990,  758, 1014,  766, 1022},
    {   7,  263,   15,  271,   39,  295,   47,  303,   23,  279,   31,  287,   55,  311,   63,  319,
      519,  775,  527,  783,  551,  807,  559,  815,  535,  791,  543,  799,  567,  823,  575,  831},
    {  71,  327,   79,  335,  103,  359,  111,  367,   87,  343,   95,  351,  119,  375,  127,  383,
      583,  839,  591,  847,  615,  871,  623,  879,  599,  855,  607,  863,  631,  887,  639,  895},
    { 135,  391,  143,  399,  167,  423,  175,  431,  151,  407,  159,  415,  183,  439,  191,  447,
      647,  903,  655,  911,  679,  935,  687,  943,  663,  919,  671,  927,  695,  951,  703,  959},
    { 199,  455,  207,  463,  231,  487,  239,  495,  215,  471,  223,  479,  247,  503,  255,  511,
      711,  967,  719,  975,  743,  999,  751, 1007,  727,  983,  735,  991,  759, 1015,  767, 1023},
};

/* Step 2 and 3 for thread 0: the ids it uses, before and after the interleave. */
static const int doc_thread0_before[8] = {0, 32, 256, 288, 8, 40, 264, 296};
static const int doc_thread0_after[8] = {0, 256, 8, 264, 32, 288, 40, 296};

/* The interleave of step 3: after[i] = before[interleave[i]] (lop3 extracts (b0,b4),
 * (b1,b5), ... so nibbles 0..3 hold the even fragment entries). */
static const int interleave[8] = {0, 2, 4, 6, 1, 3, 5, 7};

/* IST Marlin's scale_perm: [i + 8 * j for i in range(8) for j in range(8)]. */
static const int marlin_scale_perm[64] = {
    0, 8,  16, 24, 32, 40, 48, 56, 1, 9,  17, 25, 33, 41, 49, 57,
    2, 10, 18, 26, 34, 42, 50, 58, 3, 11, 19, 27, 35, 43, 51, 59,
    4, 12, 20, 28, 36, 44, 52, 60, 5, 13, 21, 29, 37, 45, 53, 61,
    6, 14, 22, 30, 38, 46, 54, 62, 7, 15, 23, 31, 39, 47, 55, 63};

/* Thread t's m16n8k16 B-fragment entries for a 16x16 tile, in register order (PTX ISA:
 * k = 2*(t%4) + (r&1) + 8*(r>>1) for entry r of an n8 block, n = t/4), both n8 blocks. */
static void fragment_ids(int t, int tile_k0, int tile_n0, int ids[8]) {
  for (int i = 0; i < 8; i++) {
    int r = i & 3, half = i >> 2;
    int k = tile_k0 + 2 * (t % 4) + (r & 1) + 8 * (r >> 1);
    int n = tile_n0 + t / 4 + 8 * half;
    ids[i] = k * 32 + n;
  }
}

static void test_doc_example(void) {
  /* Every entry of the document's final table. */
  for (int t = 0; t < 32; t++)
    for (int j = 0; j < 4; j++)
      for (int b = 0; b < 8; b++) {
        int k, n;
        mgen__w4_source(32, 4 * t + j, b, &k, &n);
        CHECK(k * 32 + n == doc_final[t][8 * j + b], "thread %d tile %d nibble %d: id %d, doc %d",
              t, j, b, k * 32 + n, doc_final[t][8 * j + b]);
      }

  /* Thread 0: fragment order, then the interleave, then nibbles b0..b7 of word 0. */
  int before[8];
  fragment_ids(0, 0, 0, before);
  for (int i = 0; i < 8; i++) {
    CHECK(before[i] == doc_thread0_before[i], "before[%d] = %d, doc %d", i, before[i],
          doc_thread0_before[i]);
    CHECK(before[interleave[i]] == doc_thread0_after[i], "after[%d] = %d, doc %d", i,
          before[interleave[i]], doc_thread0_after[i]);
    int k, n;
    mgen__w4_source(32, 0, i, &k, &n);
    CHECK(k * 32 + n == doc_thread0_after[i], "word 0 nibble %d = %d, doc %d", i, k * 32 + n,
          doc_thread0_after[i]);
  }

  /* The same construction for every thread and tile gives the whole table. */
  for (int t = 0; t < 32; t++)
    for (int j = 0; j < 4; j++) {
      int ids[8];
      fragment_ids(t, 16 * (j / 2), 16 * (j % 2), ids);
      for (int b = 0; b < 8; b++)
        CHECK(ids[interleave[b]] == doc_final[t][8 * j + b], "t=%d j=%d b=%d", t, j, b);
    }
}

/* Step 4: nibble b of the int32 holds byte/int4 b, b0 the lowest; little-endian bytes. */
static void test_nibble_order(void) {
  uint8_t codes[32 * 32];
  uint16_t scales[32], packed_scales[32];
  uint32_t q[32 * MGEN_LAYOUT_K_PAD / 8]; /* k = 32 is padded; the document's words come first */
  for (int k = 0; k < 32; k++)
    for (int n = 0; n < 32; n++) codes[n * 32 + k] = (uint8_t)(((k * 32 + n) / 8) % 16);
  for (int n = 0; n < 32; n++) scales[n] = 0x3c00;
  ref_pack(MGEN_ACT_F16, codes, scales, 32, 32, 0, q, packed_scales);
  /* ids [0,256,8,264,32,288,40,296] / 8 % 16 = [0,0,1,1,4,4,5,5], b7 first: 0x55441100 */
  CHECK(q[0] == 0x55441100u, "word 0 = 0x%08x, expected 0x55441100", q[0]);
  uint8_t bytes[4];
  memcpy(bytes, &q[0], 4);
  const uint16_t probe = 1;
  if (*(const uint8_t *)&probe == 1) { /* little-endian host: byte 0 = (b1 << 4) | b0 */
    CHECK(bytes[0] == 0x00 && bytes[1] == 0x11 && bytes[2] == 0x44 && bytes[3] == 0x55,
          "bytes %02x %02x %02x %02x", bytes[0], bytes[1], bytes[2], bytes[3]);
  }
  /* The doc's legend: b7 = {296}, b0 = {0}. */
  CHECK(((q[0] >> 28) & 0xf) == (296 / 8) % 16, "b7");
  CHECK((q[0] & 0xf) == 0, "b0");
}

/* Every (k, n) of larger shapes is packed exactly once, where mgen__w4_position says. */
static void test_bijection(int n_total, int k_total) {
  const int words = n_total * k_total / 8;
  unsigned char *hit = calloc((size_t)n_total * k_total, 1);
  int out_of_range = 0, twice = 0;
  for (int w = 0; w < words; w++)
    for (int b = 0; b < 8; b++) {
      int k, n;
      mgen__w4_source(n_total, w, b, &k, &n);
      if (k < 0 || k >= k_total || n < 0 || n >= n_total) {
        out_of_range++;
        continue;
      }
      twice += hit[(size_t)k * n_total + n]++ != 0;
      int w2 = -1, b2 = -1; /* mgen__w4_position is the inverse */
      mgen__w4_position(n_total, k, n, &w2, &b2);
      CHECK(w2 == w && b2 == b, "n=%d k=%d: position(%d, %d) = (%d, %d), source of (%d, %d)",
            n_total, k_total, k, n, w2, b2, w, b);
    }
  CHECK(out_of_range == 0 && twice == 0, "n=%d k=%d: %d out of range, %d twice", n_total,
        k_total, out_of_range, twice);
  free(hit);
}

static void test_scales(void) {
  for (int p = 0; p < 64; p++) {
    CHECK(mgen__scale_source_col(p) == marlin_scale_perm[p], "p=%d: %d, marlin %d", p,
          mgen__scale_source_col(p), marlin_scale_perm[p]);
    int c = p >> 3, j = (p >> 1) & 3, h = p & 1; /* the contract: p = 8c + 2j + h */
    CHECK(mgen__scale_source_col(p) == 16 * j + 8 * h + c, "p=%d contract formula", p);
  }
  for (int p = 0; p < 1024; p++) {
    int col = mgen__scale_source_col(p);
    CHECK(col / 64 == p / 64, "p=%d leaves its chunk", p);
    CHECK(mgen__scale_packed_pos(col) == p, "p=%d: inverse gives %d", p, mgen__scale_packed_pos(col));
  }
}

/* ---------------------------------------------------------------- K padding */

/* The pad values of layout.h are what the references make of zero weights. */
static void test_pad_values(void) {
  CHECK(MGEN_LAYOUT_K_PAD % MGEN_LAYOUT_K_TILE == 0 && MGEN_LAYOUT_K_PAD % MGEN_LAYOUT_DIM == 0,
        "the padding is whole tiles and whole per-channel steps");
  uint8_t code = MGEN_U4B8_PAD_CODE;
  uint16_t one = MGEN_U4B8_PAD_SCALE_F16;
  double w;
  ref_dequantize(MGEN_ACT_F16, &code, &one, 1, 1, 0, &w);
  CHECK(w == 0.0, "u4b8 pad code %d dequantizes to %g", MGEN_U4B8_PAD_CODE, w);
  CHECK(MGEN_U4B8_PAD_SCALE_F16 == ref_group_scale(MGEN_ACT_F16, 0.0f) &&
            MGEN_U4B8_PAD_SCALE_BF16 == ref_group_scale(MGEN_ACT_BF16, 0.0f),
        "u4b8 pad scales are an all-zero group's");
  CHECK(act_to_double(MGEN_ACT_F16, MGEN_U4B8_PAD_SCALE_F16) == 1.0 &&
            act_to_double(MGEN_ACT_BF16, MGEN_U4B8_PAD_SCALE_BF16) == 1.0, "1.0");
  CHECK(MGEN_FE2M1_PAD_CODE == fp4_e2m1_encode(0.0) && fp4_e2m1_value(MGEN_FE2M1_PAD_CODE) == 0.0,
        "fe2m1 pad code");
  CHECK(MGEN_FE2M1_PAD_SCALE == fp4_e4m3_encode(0.0) && MGEN_FE2M1_PAD_SCALE == fp4_e8m0_shared(0.0f),
        "fe2m1 pad scale: a zero block's E4M3 and E8M0");
  for (int k = 16; k <= 1024; k += 16) {
    const int kp = (int)mgen__k_packed(k);
    CHECK(kp >= k && kp - k < MGEN_LAYOUT_K_PAD && kp % MGEN_LAYOUT_K_PAD == 0, "k_packed(%d)", k);
    CHECK(mgen__scale_rows(k, 32) == kp / 32 && mgen__scale_rows(k, 0) == 1, "scale rows");
  }
}

/* u4b8: ref_pack of a padded k holds the codes where mgen__w4_position says, all of them in the
 * first n * k / 8 words; the rest holds the pad code, and the scale rows past k / group the
 * pad scale of the act. */
static void test_u4b8_padding(rng *r, int act, int n, int k, int group) {
  const int kp = (int)mgen__k_packed(k), rows = ref_scale_rows(k, group);
  const int prows = mgen__scale_rows(k, group), words = n * kp / 8;
  CHECK(ref_packed_rows(k, group) == prows, "ref_packed_rows");
  uint8_t *codes = malloc((size_t)n * k);
  uint16_t *scales = malloc(sizeof *scales * rows * n), *ps = malloc(sizeof *ps * prows * n);
  uint32_t *q = malloc(sizeof *q * words);
  for (size_t i = 0; i < (size_t)n * k; i++) codes[i] = (uint8_t)rng_below(r, 16);
  for (size_t i = 0; i < (size_t)rows * n; i++) scales[i] = (uint16_t)(1 + rng_below(r, 0x7bff));
  ref_pack(act, codes, scales, n, k, group, q, ps);
  long bad = 0, outside = 0;
  for (int kk = 0; kk < k; kk++)
    for (int nn = 0; nn < n; nn++) {
      int word, nibble;
      mgen__w4_position(n, kk, nn, &word, &nibble);
      bad += ((q[word] >> (4 * nibble)) & 15u) != codes[(size_t)nn * k + kk];
      outside += word >= n * k / 8;
    }
  for (int word = n * k / 8; word < words; word++)
    bad += q[word] != MGEN_U4B8_PAD_CODE * 0x11111111u;
  const uint16_t pad = act == MGEN_ACT_BF16 ? MGEN_U4B8_PAD_SCALE_BF16 : MGEN_U4B8_PAD_SCALE_F16;
  for (int g = 0; g < prows; g++)
    for (int p = 0; p < n; p++) {
      const int col = group ? mgen__scale_source_col(p) : p;
      bad += ps[(size_t)g * n + p] != (g < rows ? scales[(size_t)g * n + col] : pad);
    }
  CHECK(bad == 0 && outside == 0, "u4b8 %s n=%d k=%d g=%d: %ld wrong, %ld codes in the padding",
        act_name(act), n, k, group, bad, outside);
  uint8_t *back = malloc((size_t)n * k);
  uint16_t *back_s = malloc(sizeof *back_s * rows * n);
  ref_unpack(q, ps, n, k, group, back, back_s);
  CHECK(memcmp(back, codes, (size_t)n * k) == 0 &&
            memcmp(back_s, scales, sizeof *scales * rows * n) == 0, "u4b8 n=%d k=%d: round trip", n, k);
  free(codes), free(scales), free(ps), free(q), free(back), free(back_s);
}

/* fe2m1: each activation type's map permutes the 32 bits of a word (what its dequantization
 * reads back: tests/runtime/test_fp4.c), and the word functions apply it. */
static void test_fe2m1_word_bits(void) {
  for (int act = MGEN_ACT_F16; act <= MGEN_ACT_BF16; act++) {
    uint32_t seen = 0;
    for (int i = 0; i < 32; i++) {
      const int b = mgen__fe2m1_bit(act == MGEN_ACT_BF16, i);
      CHECK(b >= 0 && b < 32 && !(seen >> b & 1u), "act %d: bit %d -> %d: not a permutation", act, i,
            b);
      if (b >= 0 && b < 32) seen |= 1u << b;
      const uint32_t w = mgen__fe2m1_word(act == MGEN_ACT_BF16, 1u << i);
      CHECK(w == 1u << (b & 31), "act %d: word of bit %d", act, i);
    }
  }
}

/* The word in the nibble order that packed word w of activations `act` holds. */
static uint32_t fe2m1_nibble_word(int act, uint32_t w) {
  uint32_t out = 0;
  for (int i = 0; i < 32; i++) out |= (w >> mgen__fe2m1_bit(act == MGEN_ACT_BF16, i) & 1u) << i;
  return out;
}

/* fe2m1: fp4_pack of a padded k, as above: codes 0 in the tail words, padded scale rows
 * MGEN_FE2M1_PAD_SCALE (NVFP4) or u = e_max - MGEN_FE2M1_PAD_SCALE (MXFP4), the column
 * factors after the padded rows and unchanged by the padding. NVFP4 scales of either sign
 * (bytes 1..200): stored without it, the codes of a negative one's block with their sign
 * flipped (mgen__nvfp4_stored_code / _scale). */
static void test_fe2m1_padding(rng *r, int act, int scheme, int n, int k) {
  const int group = scheme == MGEN_SCHEME_NVFP4 ? FP4_NVFP4_GROUP : FP4_MXFP4_GROUP;
  const int kp = (int)mgen__k_packed(k), groups = k / group, prows = mgen__scale_rows(k, group);
  const size_t qb = fp4_qbytes(n, k), sb = fp4_sbytes(scheme, n, k);
  CHECK(qb == (size_t)n * kp / 2 && sb == (size_t)mgen__fe2m1_column_offset(n, k, group) + 4u * n,
        "fe2m1 n=%d k=%d sizes %zu %zu", n, k, qb, sb);
  uint8_t *codes = malloc((size_t)n * k), *scales = malloc((size_t)n * groups), *sbuf = malloc(sb);
  uint32_t *q = malloc(qb);
  for (size_t i = 0; i < (size_t)n * k; i++) codes[i] = (uint8_t)rng_below(r, 16);
  for (size_t i = 0; i < (size_t)n * groups; i++) scales[i] = (uint8_t)(1 + rng_below(r, 200));
  fp4_pack(act, scheme, codes, scales, 1.0f, n, k, q, sbuf);
  for (size_t i = 0; i < qb / 4; i++) q[i] = fe2m1_nibble_word(act, q[i]);
  long bad = 0;
  for (int kk = 0; kk < k; kk++)
    for (int nn = 0; nn < n; nn++) {
      int word, nibble;
      mgen__w4_position(n, kk, nn, &word, &nibble); /* fe2m1: nibble ^ 3 */
      const uint32_t code = codes[(size_t)nn * k + kk], scale = scales[(size_t)nn * groups + kk / group];
      const uint32_t want = scheme == MGEN_SCHEME_NVFP4 ? code ^ (scale & 0x80u ? 8u : 0u) : code;
      bad += word >= n * k / 8 || ((q[word] >> (4 * (nibble ^ 3))) & 15u) != want;
    }
  for (int word = n * k / 8; word < n * kp / 8; word++)
    bad += q[word] != MGEN_FE2M1_PAD_CODE * 0x11111111u;
  const float *factors = (const float *)(sbuf + mgen__fe2m1_column_offset(n, k, group));
  for (int nn = 0; nn < n; nn++) {
    unsigned e_max = 0;
    for (int g = 0; g < groups; g++) e_max = scales[nn * groups + g] > e_max ? scales[nn * groups + g] : e_max;
    const int p = mgen__scale_packed_pos(nn);
    if (scheme == MGEN_SCHEME_NVFP4)
      for (int g = 0; g < groups; g++) bad += sbuf[(size_t)g * n + p] != (scales[nn * groups + g] & 0x7fu);
    for (int g = groups; g < prows; g++)
      bad += sbuf[(size_t)g * n + p] !=
             (scheme == MGEN_SCHEME_NVFP4 ? MGEN_FE2M1_PAD_SCALE : e_max - MGEN_FE2M1_PAD_SCALE);
    if (scheme == MGEN_SCHEME_MXFP4) bad += factors[nn] != ldexpf(1.0f, (int)e_max - 127);
  }
  CHECK(bad == 0, "fe2m1 %s %s n=%d k=%d: %ld wrong", act == MGEN_ACT_BF16 ? "bf16" : "f16",
        mgen__scheme_name(scheme), n, k, bad);
  free(codes), free(scales), free(sbuf), free(q);
}

static void test_padding(void) {
  rng r;
  rng_seed(&r, rng_test_seed("test_layout"));
  static const int groups[] = {0, 32, 64, 128};
  static const int ks[] = {64, 1376, 2752, 3696, 4096, 4160};
  for (int a = 0; a < 2; a++)
    for (size_t gi = 0; gi < sizeof groups / sizeof groups[0]; gi++)
      for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        if (ks[ki] % mgen__layout_k_step(groups[gi]) == 0)
          test_u4b8_padding(&r, a ? MGEN_ACT_BF16 : MGEN_ACT_F16, 192, ks[ki], groups[gi]);
  for (int a = 0; a < 2; a++)
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
      const int act = a ? MGEN_ACT_BF16 : MGEN_ACT_F16;
      test_fe2m1_padding(&r, act, MGEN_SCHEME_NVFP4, 128, ks[ki]);
      if (ks[ki] % FP4_MXFP4_GROUP == 0) test_fe2m1_padding(&r, act, MGEN_SCHEME_MXFP4, 128, ks[ki]);
    }
}

int main(void) {
  test_doc_example();
  test_nibble_order();
  test_bijection(32, 32);
  test_bijection(256, 128);
  test_bijection(64, 1024);
  test_bijection(4096, 64);
  test_scales();
  test_pad_values();
  test_padding();
  test_fe2m1_word_bits();
  return check_exit("test_layout");
}
