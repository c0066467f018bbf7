/* test_fp4.c -- fe2m1 (FP4 E2M1, NVFP4 and MXFP4) on the CPU, everything a GPU run rests on:
 *   - the value tables (E2M1 codes against marlin-bitwise-dequant.md's table, E4M3 edges:
 *     zero, subnormals, 448, NaN; E8M0 extremes) and the encoders of tests/common/fp4.c:
 *     round to nearest even at the ties (0.25, 0.75, 2.5, 5 ...), saturation, signs; then
 *     C transcriptions of prepare_fe2m1.cu's rint formulations against them on every tie, its
 *     neighbours and ~2M other floats, so the GPU's arithmetic is checked before a GPU run;
 *   - the kernels' FP4 bit trick (templates/formats/fe2m1/mma_{f16,bf16}.cuh),
 *     emulated on 32-bit words: all 16 codes in all 8 nibbles, FP16 (shift 3, value * 2^-14)
 *     and BF16 (shift 6, value * 2^-126); the in-register multipliers of
 *     templates/formats/mgen_scales.cuh (ScalesE4M3, ScalesE8M0 for both types) for every
 *     scale byte, and the 16-bit weights they make for every (code, scale), exact or within
 *     fp4_weight_slack, including the MXFP4 clamp of u (FP16 past 28, BF16 past 252); the
 *     paired E4M3 conversions (the bit moves, and from sm_89 cvt.rn.f16x2.e4m3x2) against the
 *     per-byte one, and ScalesE8M0's FP32 multipliers (group_f32) for every u. The
 *     expressions emulated here are read back from the templates' text: if a template
 *     changes, this test says which emulation to update;
 *   - the quantization rules (fp4_quantize) on crafted blocks (ties, saturation, zero blocks,
 *     extremes) and their error on random weights;
 *   - the whole kernel path emulated: fp4_pack's buffers read back the way the kernels read
 *     them (m16n8k16 B-fragment positions from the PTX ISA, not from layout.h), dequantized,
 *     scaled, summed in FP32, times the column factor, rounded to the act, against the FP64
 *     GEMM of fp4_dequantize's weights under fp4_bound (the GPU test's bound).
 * Run: build/tests/test_fp4   (MGEN_TEST_SEED=<seed> repeats a run) */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "bf16.h"
#include "bits.h"
#include "check.h"
#include "formats/formats.h"
#include "formats/layout.h"
#include "fp4.h"
#include "half.h"
#include "mgen/mgen.h"
#include "mgen_dequant_consts.h"
#include "rng.h"

#ifndef MGEN_TEMPLATES_DIR
#error "MGEN_TEMPLATES_DIR (the source tree's templates/) must be defined by the build"
#endif

static const int acts[] = {MGEN_ACT_F16, MGEN_ACT_BF16};
static const int schemes[] = {MGEN_SCHEME_NVFP4, MGEN_SCHEME_MXFP4};

static float f32(uint32_t b) { float f; memcpy(&f, &b, sizeof f); return f; }
static uint32_t bits32(float f) { uint32_t b; memcpy(&b, &f, sizeof b); return b; }

/* ---------------------------------------------------------------- prepare_fe2m1.cu, transcribed
 * The device encoders, line for line in C (rintf is round-to-nearest-even here as there). */
static unsigned dev_e2m1_magnitude(float a) {
  if (!(a < 6.0f)) return 7u;
  if (a < 2.0f) return (unsigned)rintf(a * 2.0f);
  if (a < 4.0f) return (unsigned)rintf(a) + 2u;
  return (unsigned)rintf(a * 0.5f) + 4u;
}
static unsigned dev_e4m3_encode(float v) {
  if (!(v < 448.0f)) return 0x7eu;
  if (v < 0x1p-6f) return (unsigned)rintf(v * 0x1p9f);
  const int e = (int)((bits32(v) >> 23) & 0xffu) - 127;
  const float q = rintf(v * f32((uint32_t)(127 + 3 - e) << 23));
  return ((unsigned)(e + 7) << 3) + (unsigned)q - 8u;
}
static unsigned dev_e8m0_shared(float bmax) {
  const unsigned field = (bits32(bmax) >> 23) & 0xffu;
  return field > 2u ? field - 2u : 0u;
}

/* ---------------------------------------------------------------- values and encoders */

static void test_values(void) {
  /* marlin-bitwise-dequant.md section 1.1, codes 0000 .. 1111 */
  static const double doc[16] = {0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6};
  for (unsigned c = 0; c < 16; c++)
    CHECK(fp4_e2m1_value(c) == doc[c] && !signbit(fp4_e2m1_value(c)) == (c < 8), "e2m1 %u", c);
  CHECK(fp4_e4m3_value(0x00) == 0.0 && fp4_e4m3_value(0x01) == 0x1p-9 &&
            fp4_e4m3_value(0x07) == 7 * 0x1p-9 && fp4_e4m3_value(0x08) == 0x1p-6,
        "e4m3 zero, subnormals, smallest normal");
  CHECK(fp4_e4m3_value(0x38) == 1.0 && fp4_e4m3_value(0x7e) == 448.0 &&
            fp4_e4m3_value(0xfe) == -448.0 && signbit(fp4_e4m3_value(0x80)),
        "e4m3 one, 448, -448, -0");
  CHECK(isnan(fp4_e4m3_value(0x7f)) && isnan(fp4_e4m3_value(0xff)), "e4m3 NaN");
  for (unsigned b = 1; b <= 0x7e; b++)
    CHECK(fp4_e4m3_value(b) > fp4_e4m3_value(b - 1), "e4m3 increasing at 0x%02x", b);
  CHECK(fp4_e8m0_value(0) == 0x1p-127 && fp4_e8m0_value(127) == 1.0 &&
            fp4_e8m0_value(254) == 0x1p127 && isnan(fp4_e8m0_value(255)), "e8m0 extremes");
}

static void test_e2m1_encode(rng *r) {
  static const struct { double x; unsigned code; } cases[] = {
      {0.25, 0}, {0.75, 2}, {1.25, 2}, {1.75, 4}, {2.5, 4}, {3.5, 6}, {5.0, 6},  /* ties */
      {0.2500001, 1}, {0.7499999, 1}, {2.5000001, 5}, {4.9999999, 6}, {5.0000001, 7},
      {6.0, 7}, {6.5, 7}, {7.0, 7}, {100.0, 7}, {1e30, 7}, {INFINITY, 7},        /* saturation */
      {-0.0, 8}, {-0.2, 8}, {-0.25, 8}, {-5.0, 14}, {-100.0, 15}, {0.1, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    CHECK(fp4_e2m1_encode(cases[i].x) == cases[i].code, "e2m1(%g) = %u, expected %u", cases[i].x,
          fp4_e2m1_encode(cases[i].x), cases[i].code);
  for (unsigned c = 0; c < 16; c++) CHECK(fp4_e2m1_encode(fp4_e2m1_value(c)) == c, "round trip %u", c);
  /* The device formulation: every tie and its float neighbours, a sweep, random floats. */
  long n = 0;
  for (unsigned c = 0; c < 7; c++) {
    const float mid = (float)((fp4_e2m1_value(c) + fp4_e2m1_value(c + 1)) / 2);
    const float xs[] = {mid, nextafterf(mid, 0.0f), nextafterf(mid, 8.0f), (float)fp4_e2m1_value(c)};
    for (int i = 0; i < 4; i++, n++)
      CHECK(dev_e2m1_magnitude(xs[i]) == fp4_e2m1_encode(xs[i]), "device e2m1(%a)", xs[i]);
  }
  for (uint32_t b = 0; b <= 0x41000000u; b += 997, n++) /* every 997th float in [0, 8] */
    CHECK(dev_e2m1_magnitude(f32(b)) == fp4_e2m1_encode(f32(b)), "device e2m1(%a)", f32(b));
  for (int i = 0; i < 200000; i++, n++) {
    const float x = (float)rng_uniform(r, 0.0, 7.0);
    CHECK(dev_e2m1_magnitude(x) == fp4_e2m1_encode(x), "device e2m1(%a)", x);
  }
  CHECK(n > 1000000, "%ld values", n);
}

static void test_e4m3_encode(rng *r) {
  for (unsigned b = 0; b <= 0x7e; b++) {
    const double v = fp4_e4m3_value(b);
    CHECK(fp4_e4m3_encode(v) == b && dev_e4m3_encode((float)v) == b, "e4m3 round trip 0x%02x", b);
    if (b == 0x7e) break;
    /* the midpoint to the next code: ties to the even code; its neighbours to the nearer */
    const float mid = (float)((v + fp4_e4m3_value(b + 1)) / 2);
    const unsigned even = b % 2 ? b + 1 : b;
    CHECK(fp4_e4m3_encode(mid) == even && dev_e4m3_encode(mid) == even, "tie 0x%02x", b);
    const float lo = nextafterf(mid, 0.0f), hi = nextafterf(mid, 1000.0f);
    CHECK(fp4_e4m3_encode(lo) == b && dev_e4m3_encode(lo) == b, "below tie 0x%02x", b);
    CHECK(fp4_e4m3_encode(hi) == b + 1 && dev_e4m3_encode(hi) == b + 1, "above tie 0x%02x", b);
  }
  static const float sat[] = {448.0f, 450.0f, 463.99f, 464.0f, 480.0f, 1e6f, FLT_MAX, INFINITY};
  for (size_t i = 0; i < sizeof sat / sizeof sat[0]; i++)
    CHECK(fp4_e4m3_encode(sat[i]) == 0x7e && dev_e4m3_encode(sat[i]) == 0x7e, "saturate %g", sat[i]);
  CHECK(fp4_e4m3_encode(0x1p-10) == 0 && fp4_e4m3_encode(0x1p-11) == 0 &&
            fp4_e4m3_encode(0x1p-149) == 0 && dev_e4m3_encode(0x1p-149f) == 0, "underflow to 0");
  for (int i = 0; i < 1000000; i++) {
    const float v = (float)ldexp(rng_uniform(r, 1.0, 2.0), (int)rng_below(r, 24) - 14);
    CHECK(dev_e4m3_encode(v) == fp4_e4m3_encode(v), "device e4m3(%a)", v);
  }
}

static void test_e8m0_shared(rng *r) {
  static const struct { float bmax; unsigned e; } cases[] = {
      {0.0f, 0}, {1.0f, 125}, {4.0f, 127}, {6.0f, 127}, {7.99f, 127}, {8.0f, 128},
      {FLT_MAX, 252}, {0x1p-126f, 0}, {0x1p-125f, 0}, {0x1p-124f, 1}, {0x1p-149f, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    CHECK(fp4_e8m0_shared(cases[i].bmax) == cases[i].e && dev_e8m0_shared(cases[i].bmax) == cases[i].e,
          "e8m0(%a) = %u, expected %u", cases[i].bmax, fp4_e8m0_shared(cases[i].bmax), cases[i].e);
  for (int i = 0; i < 1000000; i++) {
    const float b = (float)ldexp(rng_uniform(r, 1.0, 2.0), (int)rng_below(r, 278) - 150);
    const unsigned e = fp4_e8m0_shared(b);
    CHECK(e == dev_e8m0_shared(b), "device e8m0(%a)", b);
    const double x = b / fp4_e8m0_value(e); /* the block max in units of the scale */
    CHECK(e == 0 ? x < 8.0 : (x >= 4.0 && x < 8.0), "bmax %a / 2^(%u-127) = %g", b, e, x);
  }
  CHECK(fp4_nvfp4_global(2688.0f) == 1.0f && fp4_nvfp4_global(0.0f) == 1.0f &&
            fp4_nvfp4_global(448.0f) == 448.0f / 2688.0f, "nvfp4 global");
}

/* ---------------------------------------------------------------- the kernels, emulated */

static uint32_t emu_byte_perm(uint32_t x, uint32_t y, uint32_t sel) { /* __byte_perm */
  const uint64_t both = (uint64_t)y << 32 | x;
  uint32_t r = 0;
  for (int i = 0; i < 4; i++) r |= (uint32_t)(both >> (8 * ((sel >> (4 * i)) & 7)) & 0xffu) << (8 * i);
  return r;
}

/* DequantFe2m1{F16,Bf16}::dequant of a packed word q: frag[r / 2][r % 2] = lane pair r,
 * r = 0..3. FP16 converts a byte at a time, BF16 a register at a time by rotations, each from
 * the word permuted for it (layout.h, mgen__fe2m1_word: as_packed()). */
static void emu_dequant(int act, uint32_t q, uint32_t frag[4]) {
  if (act == MGEN_ACT_F16) {
    const uint32_t kSign = MGEN_FE2M1_F16_SIGN_BYTES, kExpMant = MGEN_FE2M1_F16_EXP_MANT_BYTES;
    const uint32_t kHigh = MGEN_FE2M1_F16_HIGH_BYTES, kLowToHigh = MGEN_FE2M1_F16_LOW_TO_HIGH;
    const int kShift = MGEN_FE2M1_F16_SHIFT;
    const uint32_t b = ((q >> kShift) & kExpMant) | ((q << MGEN_FE2M1_F16_B_SIGN_SHIFT) & kSign);
    frag[0] = q & MGEN_FE2M1_F16_A_HIGH;
    frag[1] = emu_byte_perm(q & MGEN_FE2M1_F16_A_LOW, 0u, kLowToHigh);
    frag[2] = b & kHigh;
    frag[3] = emu_byte_perm(b, 0u, kLowToHigh);
    return;
  }
  const uint32_t kLanes = MGEN_FE2M1_BF16_LANES, kE1 = MGEN_FE2M1_BF16_E1;
  frag[0] = q & kLanes;
  frag[1] = rotl(q, MGEN_FE2M1_BF16_ROT1) & kLanes;
  frag[2] = rotl(q, MGEN_FE2M1_BF16_ROT2) & kLanes;
  frag[3] = (rotl(q, MGEN_FE2M1_BF16_ROT3) & (kLanes & ~kE1)) | (rotl(q, MGEN_FE2M1_BF16_ROT3_E1) & kE1);
}

/* The packed word of activation type `act` that holds the codes of a word in the nibble order. */
static uint32_t as_packed(int act, uint32_t nibbles) {
  return mgen__fe2m1_word(act == MGEN_ACT_BF16, nibbles);
}

/* ScalesE4M3<Act>::group and ScalesE8M0<Act>::group: the 16-bit multiplier of a scale byte. */
static uint16_t emu_e4m3(int act, uint32_t b) {
  if (act == MGEN_ACT_F16)
    return half_mul((uint16_t)(((b & 0x80u) << 8) | ((b & 0x7fu) << 7)), 0x7800);
  const float s = f32(((b & 0x80u) << 24) | ((b & 0x7fu) << 20)) * 0x1p120f;
  const float m = s * 0x1p119f;
  return bf16_from_float(m);
}
/* ScalesE4M3<__half>::pair: scale bytes b0, b1 of one 32-bit word (byte positions p, p + 1,
 * p = 0 or 2) converted together; lane 0 (bits 0..15) must equal emu_e4m3(b0), lane 1 b1's. */
static uint32_t emu_e4m3_pair_f16(uint32_t word, int high_half) {
  const uint32_t x = emu_byte_perm(word, 0u, high_half ? 0x3424u : 0x1404u);
  const uint32_t s = (x & 0x80008000u) | ((x >> 1) & 0x3f803f80u);
  return half_mul((uint16_t)s, 0x7800) | (uint32_t)half_mul((uint16_t)(s >> 16), 0x7800) << 16;
}
/* ScalesE4M3<__half>::pair from sm_89: cvt.rn.f16x2.e4m3x2 of the two bytes (byte p to the low
 * lane; the PTX ISA: exact, every E4M3 value is an FP16 one), then times 2^7 in FP16. */
static uint32_t emu_e4m3_pair_f16_cvt(uint32_t word, int high_half) {
  const uint32_t bytes = high_half ? word >> 16 : word & 0xffffu;
  const uint16_t lo = half_from_double(fp4_e4m3_value(bytes & 0xffu));
  const uint16_t hi = half_from_double(fp4_e4m3_value(bytes >> 8));
  return half_mul(lo, 0x5800) | (uint32_t)half_mul(hi, 0x5800) << 16;
}
/* ScalesE4M3<__nv_bfloat16>::pair: the same bytes moved to BF16 bits (s * 2^-120, BF16
 * subnormals for the E4M3 subnormals), then times 2^120 and 2^119 in BF16 arithmetic. For the
 * stored scales only, which have no sign (layout.h, mgen__nvfp4_stored_scale). */
static uint32_t emu_e4m3_pair_bf16(uint32_t word, int high_half) {
  const uint32_t x = emu_byte_perm(word, 0u, high_half ? 0x3424u : 0x1404u);
  const uint32_t s = x >> 4;
  const uint16_t lo = bf16_mul(bf16_mul((uint16_t)s, 0x7b80), 0x7b00);
  const uint16_t hi = bf16_mul(bf16_mul((uint16_t)(s >> 16), 0x7b80), 0x7b00);
  return lo | (uint32_t)hi << 16;
}
static uint16_t emu_e8m0(int act, uint32_t u) {
  if (act == MGEN_ACT_F16) return (uint16_t)(u <= 28 ? (29u - u) << 10 : 0u);
  return (uint16_t)(u <= 252 ? (253u - u) << 7 : 0u);
}
static uint16_t emu_multiplier(int act, int scheme, uint32_t byte) {
  return scheme == MGEN_SCHEME_NVFP4 ? emu_e4m3(act, byte) : emu_e8m0(act, byte);
}

static char *read_text(const char *rel) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", MGEN_TEMPLATES_DIR, rel);
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL, "cannot read %s", path);
  if (f == NULL) return NULL;
  char *buf = malloc(1 << 17);
  size_t n = fread(buf, 1, (1 << 17) - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

/* The expressions emulated above, as the templates spell them (their constants come from
 * mgen_dequant_consts.h, which this file includes too). */
static void test_templates_text(void) {
  static const struct { const char *file, *text; } uses[] = {
      {"formats/fe2m1/mma_f16.cuh",
       "kSign = MGEN_FE2M1_F16_SIGN_BYTES, kExpMant = MGEN_FE2M1_F16_EXP_MANT_BYTES"},
      {"formats/fe2m1/mma_f16.cuh",
       "kHigh = MGEN_FE2M1_F16_HIGH_BYTES, kLowToHigh = MGEN_FE2M1_F16_LOW_TO_HIGH"},
      {"formats/fe2m1/mma_f16.cuh", "kShift = MGEN_FE2M1_F16_SHIFT"},
      {"formats/fe2m1/mma_f16.cuh",
       "const uint32_t b = ((q >> kShift) & kExpMant) | ((q << MGEN_FE2M1_F16_B_SIGN_SHIFT) & kSign);"},
      {"formats/fe2m1/mma_f16.cuh", "frag[0][0] = q & MGEN_FE2M1_F16_A_HIGH;"},
      {"formats/fe2m1/mma_f16.cuh",
       "frag[0][1] = __byte_perm(q & MGEN_FE2M1_F16_A_LOW, 0u, kLowToHigh);"},
      {"formats/fe2m1/mma_f16.cuh", "frag[1][0] = b & kHigh;"},
      {"formats/fe2m1/mma_f16.cuh", "frag[1][1] = __byte_perm(b, 0u, kLowToHigh);"},
      {"formats/fe2m1/mma_bf16.cuh",
       "kLanes = MGEN_FE2M1_BF16_LANES, kE1 = MGEN_FE2M1_BF16_E1;"},
      {"formats/fe2m1/mma_bf16.cuh", "frag[0][0] = q & kLanes;"},
      {"formats/fe2m1/mma_bf16.cuh",
       "frag[0][1] = __funnelshift_l(q, q, MGEN_FE2M1_BF16_ROT1) & kLanes;"},
      {"formats/fe2m1/mma_bf16.cuh",
       "frag[1][0] = __funnelshift_l(q, q, MGEN_FE2M1_BF16_ROT2) & kLanes;"},
      {"formats/fe2m1/mma_bf16.cuh",
       "frag[1][1] = (__funnelshift_l(q, q, MGEN_FE2M1_BF16_ROT3) & (kLanes & ~kE1)) |"},
      {"formats/fe2m1/mma_bf16.cuh",
       "(__funnelshift_l(q, q, MGEN_FE2M1_BF16_ROT3_E1) & kE1);"},
      {"formats/mgen_scales.cuh", "((b & 0x80u) << 8) | ((b & 0x7fu) << 7)"},
      {"formats/mgen_scales.cuh", "return __hmul(s, __ushort_as_half(0x7800));"},
      {"formats/mgen_scales.cuh",
       "const uint32_t x = __byte_perm(j < 2 ? v.x : v.y, 0u, (j & 1) ? 0x3424u : 0x1404u);"},
      {"formats/mgen_scales.cuh",
       "const uint32_t s = (x & 0x80008000u) | ((x >> 1) & 0x3f803f80u);"},
      {"formats/mgen_scales.cuh",
       "return as_u32(__hmul2(as_half2(s), __half2half2(__ushort_as_half(0x7800))));"},
      {"formats/mgen_scales.cuh", "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890"},
      {"formats/mgen_scales.cuh",
       "const uint16_t bytes = static_cast<uint16_t>((j & 1) ? w >> 16 : w);"},
      {"formats/mgen_scales.cuh", "asm(\"cvt.rn.f16x2.e4m3x2 %0, %1;\\n\" : \"=r\"(s) : \"h\"(bytes));"},
      {"formats/mgen_scales.cuh",
       "return as_u32(__hmul2(as_half2(s), __half2half2(__ushort_as_half(0x5800))));  // 2^7"},
      {"formats/mgen_scales.cuh", "return __uint_as_float((field0 - min(u, field0)) << 23);"},
      {"formats/mgen_scales.cuh", "return exponent_f32<141>(byte_of(v, i));"},
      {"formats/mgen_scales.cuh", "return exponent_f32<253>(byte_of(v, i));"},
      {"formats/mgen_scales.cuh", "return __byte_perm(static_cast<uint32_t>(i < 4 ? v.x : v.y), 0u, 0x4440u | (i & 3));"},
      {"formats/mgen_scales.cuh",
       "__uint_as_float(((b & 0x80u) << 24) | ((b & 0x7fu) << 20)) * 0x1p120f;"},
      {"formats/mgen_scales.cuh", "return __float2bfloat16_rn(s * 0x1p119f);"},
      {"formats/mgen_scales.cuh", "const uint32_t s = x >> 4;"},
      {"formats/mgen_scales.cuh",
       "__hmul2(as_bf162(s), __bfloat162bfloat162(__ushort_as_bfloat16(0x7b80)));"},
      {"formats/mgen_scales.cuh",
       "return as_u32(__hmul2(m, __bfloat162bfloat162(__ushort_as_bfloat16(0x7b00))));"},
      {"formats/mgen_scales.cuh", "u <= 28 ? (29u - u) << 10 : 0u"},
      {"formats/mgen_scales.cuh", "u <= 252 ? (253u - u) << 7 : 0u"},
      {"formats/mgen_scales.cuh",
       "const size_t offset = ((size_t)(k_packed / group) * n + 15) / 16 * 16;"},
      {"mma/include/mgen_mma_body.cuh", "Scales::column(scales, p.n, p.k_packed, kSGroup, col, f);"},
  };
  const char *file = NULL; /* uses[] is grouped by file: each is read once */
  char *text = NULL;
  for (size_t i = 0; i < sizeof uses / sizeof uses[0]; i++) {
    if (file == NULL || strcmp(file, uses[i].file) != 0) {
      free(text);
      text = read_text(file = uses[i].file);
    }
    CHECK(text == NULL || strstr(text, uses[i].text) != NULL,
          "templates/%s no longer contains '%s': update test_fp4.c's emulation (and its proof)",
          uses[i].file, uses[i].text);
  }
  free(text);
}

/* The paired E4M3 conversions the kernels use (FP16 and BF16) equal the per-byte ones for
 * every pair of scale bytes but the NaNs (which mgen_pack_fp4 refuses), in both byte
 * positions of the word; BF16's for every pair of bytes a packer stores (no sign bit:
 * mgen__nvfp4_stored_scale), FP16's for every pair. */
static void test_e4m3_pair(void) {
  long cvt_mismatches = 0;
  for (int act = MGEN_ACT_F16; act <= MGEN_ACT_BF16; act++) {
    long mismatches = 0;
    for (uint32_t b0 = 0; b0 < 256; b0++)
      for (uint32_t b1 = 0; b1 < 256; b1++)
        for (int high = 0; high < 2; high++) {
          const int stored = b0 == mgen__nvfp4_stored_scale(b0) && b1 == mgen__nvfp4_stored_scale(b1);
          if (act == MGEN_ACT_BF16 && (isnan(fp4_e4m3_value(b0)) || isnan(fp4_e4m3_value(b1)) || !stored))
            continue;
          const uint32_t noise = 0x5a00u + b0 * 0x01010101u; /* the other two bytes */
          const uint32_t word = high ? (b0 << 16 | b1 << 24 | (noise & 0xffffu))
                                     : (b0 | b1 << 8 | (noise & 0xffff0000u));
          const uint32_t got = act == MGEN_ACT_F16 ? emu_e4m3_pair_f16(word, high) : emu_e4m3_pair_bf16(word, high);
          const uint32_t want = emu_e4m3(act, b0) | (uint32_t)emu_e4m3(act, b1) << 16;
          mismatches += got != want;
          if (act == MGEN_ACT_F16 && !isnan(fp4_e4m3_value(b0)) && !isnan(fp4_e4m3_value(b1)))
            cvt_mismatches += emu_e4m3_pair_f16_cvt(word, high) != want;
        }
    CHECK(mismatches == 0, "%s: %ld paired E4M3 conversions differ from the per-byte one", act_name(act),
          mismatches);
  }
  CHECK(cvt_mismatches == 0, "f16: %ld sm_89 (cvt.rn.f16x2.e4m3x2) pairs differ from the per-byte multiplier",
        cvt_mismatches);
}

/* ScalesE8M0<Act>::group_f32 (exponent_f32<field0>(u): field0 - min(u, field0) in the FP32
 * exponent field), the FP32 multiplier of the tiles that scale their FP32 sums: exactly
 * 2^(14 - u) (FP16) / 2^(126 - u) (BF16) down to 2^-126, +0 below; where the 16-bit
 * multiplier is not flushed, the same value. */
static float emu_exponent_f32(uint32_t field0, uint32_t u) {
  return f32((field0 - (u < field0 ? u : field0)) << 23);
}
static void test_e8m0_f32(void) {
  long bad = 0;
  for (uint32_t u = 0; u < 256; u++) {
    const float f16_m = emu_exponent_f32(141, u), bf16_m = emu_exponent_f32(253, u);
    bad += f16_m != (u <= 140 ? ldexpf(1.0f, 14 - (int)u) : 0.0f) || signbit(f16_m);
    bad += bf16_m != (u <= 252 ? ldexpf(1.0f, 126 - (int)u) : 0.0f) || signbit(bf16_m);
    if (u <= 28) bad += f16_m != half_to_float(emu_e8m0(MGEN_ACT_F16, u));
    bad += bf16_m != bf16_to_float(emu_e8m0(MGEN_ACT_BF16, u));
  }
  CHECK(bad == 0, "E8M0 FP32 multipliers: %ld wrong", bad);
}

/* All 16 codes in all 8 nibbles: lane pair r holds nibbles 3 - r (bits 0..15) and 7 - r of
 * the word in the nibble order (BF16: dequantized from its permuted word). */
static void test_dequant_trick(rng *r) {
  for (size_t ai = 0; ai < 2; ai++) {
    const int act = acts[ai];
    const double unit = act == MGEN_ACT_F16 ? 0x1p-14 : 0x1p-126; /* value * 2^(1 - bias) */
    for (int t = 0; t < 2000; t++) {
      const uint32_t q = t < 16 ? 0x11111111u * (uint32_t)t : (uint32_t)rng_next(r);
      uint32_t frag[4];
      emu_dequant(act, as_packed(act, q), frag);
      for (int b = 0; b < 8; b++) {
        const int pair = b < 4 ? 3 - b : 7 - b, hi = b >= 4;
        const uint16_t lane = (uint16_t)(frag[pair] >> (16 * hi));
        const unsigned code = (q >> (4 * b)) & 15u;
        CHECK(act_to_double(act, lane) == fp4_e2m1_value(code) * unit &&
                  !signbit(act_to_double(act, lane)) == (code < 8),
              "%s: q=0x%08x nibble %d (code %u) -> 0x%04x", act_name(act), q, b, code, lane);
      }
    }
  }
}

/* Multipliers for every scale byte, and the 16-bit weights for every (code, byte). */
static void test_multipliers(void) {
  for (size_t ai = 0; ai < 2; ai++) {
    const int act = acts[ai];
    const int bias_fix = act == MGEN_ACT_F16 ? 14 : 126; /* the dequant's 2^-bias_fix */
    for (uint32_t b = 0; b < 256; b++) {
      const double s = fp4_e4m3_value(b), m = act_to_double(act, emu_e4m3(act, b));
      if (isnan(s)) /* 0x7f, 0xff: the kernels read +-480, finite (never produced) */
        CHECK(m == (b & 0x80u ? -480.0 : 480.0) * ldexp(1.0, bias_fix - 7), "%s e4m3 0x%02x",
              act_name(act), b);
      else
        CHECK(m == s * ldexp(1.0, bias_fix - 7), "%s e4m3 0x%02x: %g", act_name(act), b, m);
      const int clamp = act == MGEN_ACT_F16 ? 28 : 252;
      const double me = act_to_double(act, emu_e8m0(act, b));
      CHECK(me == ((int)b <= clamp ? ldexp(1.0, bias_fix - (int)b) : 0.0), "%s e8m0 u=%u: %g",
            act_name(act), b, me);
      for (unsigned c = 0; c < 16; c++) {
        uint32_t frag[4];
        emu_dequant(act, as_packed(act, c << 12), frag); /* code at nibble 3: lane pair 0, low half */
        const uint16_t dq = (uint16_t)frag[0];
        /* NVFP4: e2m1 * s * 2^-7, exact for every finite scale (at most 6 significant bits,
         * lowest bit 2^-17 >= the subnormal spacings 2^-24, 2^-133; at most 21 in magnitude) */
        if (!isnan(s)) {
          const double w16 = act_to_double(act, act_mul(act, dq, emu_e4m3(act, b)));
          CHECK(w16 == fp4_e2m1_value(c) * s * 0x1p-7, "%s nvfp4 code %u byte 0x%02x: %g",
                act_name(act), c, b, w16);
        }
        /* MXFP4: e2m1 * 2^-u, exact or within the slack (u <= 254) */
        if (b <= 254) {
          const double w16 = act_to_double(act, act_mul(act, dq, emu_e8m0(act, b)));
          const double exact = fp4_e2m1_value(c) * ldexp(1.0, -(int)b);
          const double slack = fp4_weight_slack(act, MGEN_SCHEME_MXFP4, b);
          CHECK(slack == 0.0 ? w16 == exact : fabs(w16 - exact) <= slack,
                "%s mxfp4 code %u u=%u: %g vs %g", act_name(act), c, b, w16, exact);
          if ((int)b > clamp) CHECK(w16 == 0.0, "%s: past the clamp u=%u gives 0", act_name(act), b);
        }
      }
    }
  }
}

/* ---------------------------------------------------------------- quantization rules */

static void quantize_one(int act, int scheme, const uint16_t *w, int n, int k, uint8_t *codes,
                         uint8_t *scales, float *global) {
  fp4_quantize(act, scheme, w, n, k, codes, scales, global);
}

/* Crafted rows (n = 64 rows of k = 64) where the scale unit is a power of two, so that the
 * element ratios are the ties themselves. */
static void test_quantize_rules(void) {
  enum { N = 64, K = 64 };
  /* ties, the block max 6, then values whose sign survives rounding to zero */
  static const double ties[] = {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0, -0.25, -2.5, -5.0};
  static const unsigned tie_codes[] = {0, 2, 2, 4, 4, 6, 6, 7, 8, 12, 14};
  enum { NT = sizeof ties / sizeof ties[0] };
  uint16_t *w = calloc((size_t)N * K, sizeof *w);
  uint8_t codes[N * K], scales[N * K / 16];
  float global;
  for (size_t ai = 0; ai < 2; ai++) {
    const int act = acts[ai];
    /* NVFP4: amax 2688 gives global 1; a block with max 6 gets s = 1 (0x38), so x = w. */
    memset(w, 0, sizeof *w * N * K);
    w[5 * K] = act_from_double(act, 2688.0);
    for (int i = 0; i < NT; i++) w[i] = act_from_double(act, ties[i]);
    w[16] = act_from_double(act, 7.0); /* block 1 (max 7): s = e4m3(7/6) rounds to 1.125 */
    quantize_one(act, MGEN_SCHEME_NVFP4, w, N, K, codes, scales, &global);
    CHECK(global == 1.0f && scales[0] == 0x38 && scales[1] == 0x39,
          "nvfp4 %s: global %g, s 0x%02x 0x%02x", act_name(act), global, scales[0], scales[1]);
    for (int i = 0; i < NT; i++)
      CHECK(codes[i] == tie_codes[i], "nvfp4 %s: %g -> %u", act_name(act), ties[i], codes[i]);
    CHECK(codes[16] == 7, "7 / 1.125 = 6.2 saturates to 6");
    CHECK(scales[2] == 0 && codes[32] == 0, "an all-zero block: scale 0, codes 0");
    CHECK(scales[5 * K / 16] == 0x7e && codes[5 * K] == 7, "the tensor max: s = 448, code 6");
    /* MXFP4: a block with max 6 * 2^3 has e = 130 (scale 8); the ties at 8x. */
    memset(w, 0, sizeof *w * N * K);
    for (int i = 0; i < NT; i++) w[i] = act_from_double(act, ties[i] * 8.0);
    w[NT] = act_from_double(act, 56.0); /* 7 * 8 < 2^6: the same exponent, and saturates */
    quantize_one(act, MGEN_SCHEME_MXFP4, w, N, K, codes, scales, &global);
    CHECK(scales[0] == 130, "mxfp4 %s: e = %u", act_name(act), scales[0]);
    for (int i = 0; i < NT; i++)
      CHECK(codes[i] == tie_codes[i], "mxfp4 %s: %g -> %u", act_name(act), ties[i] * 8, codes[i]);
    CHECK(codes[NT] == 7, "mxfp4 %s: 56 / 8 = 7 saturates to 6", act_name(act));
    CHECK(scales[1] == 0 && codes[32] == 0, "an all-zero block: e = 0 (2^-127), codes 0");
    /* Extremes: the largest finite value and the smallest subnormal of the act. */
    w[64] = act == MGEN_ACT_F16 ? 0x7bff : 0x7f7f;
    w[96] = 0x0001;
    quantize_one(act, MGEN_SCHEME_MXFP4, w, N, K, codes, scales, &global);
    const int f16 = act == MGEN_ACT_F16;
    CHECK(scales[2] == (f16 ? 140 : 252) && codes[64] == 7, "mxfp4 %s max: e %u code %u",
          act_name(act), scales[2], codes[64]);
    CHECK(scales[3] == (f16 ? 101 : 0), "mxfp4 %s smallest: e %u", act_name(act), scales[3]);
    CHECK(codes[96] == (f16 ? 6 : 0), "mxfp4 %s smallest: code %u", act_name(act), codes[96]);
  }
  free(w);
}

/* Random weights: |w - dq| <= |w| / 4 + unit / 4 with unit the block's scale (E2M1 keeps
 * 2 significant bits; below 1 unit the step is 0.5), plus the saturation slack of NVFP4 (its
 * E4M3 scale is rounded to 4 bits: x <= 6 (1 + 2^-4)) in blocks with a normal E4M3 scale. */
static void test_quantize_error(rng *r) {
  enum { N = 64, K = 256 };
  uint16_t w[N * K];
  uint8_t codes[N * K], scales[N * K / 16];
  double dq[N * K];
  float global;
  for (size_t ai = 0; ai < 2; ai++)
    for (size_t si = 0; si < 2; si++) {
      const int act = acts[ai], scheme = schemes[si], group = si ? 32 : 16;
      for (int j = 0; j < N; j++) {
        const double row_scale = ldexp(1.0, (int)rng_below(r, 12) - 8);
        for (int i = 0; i < K; i++)
          w[j * K + i] = act_from_double(act, rng_uniform(r, -1, 1) * row_scale);
      }
      quantize_one(act, scheme, w, N, K, codes, scales, &global);
      fp4_dequantize(scheme, codes, scales, global, N, K, dq);
      long checked = 0;
      for (int j = 0; j < N; j++)
        for (int i = 0; i < K; i++) {
          const unsigned s = scales[j * (K / group) + i / group];
          if (scheme == MGEN_SCHEME_NVFP4 && s < 0x08) continue;
          const double unit =
              scheme == MGEN_SCHEME_NVFP4 ? fp4_e4m3_value(s) * global : fp4_e8m0_value(s);
          const double v = act_to_double(act, w[j * K + i]);
          const double slack = scheme == MGEN_SCHEME_NVFP4 ? 0.5 * unit : 0.0;
          CHECK(fabs(v - dq[j * K + i]) <= fabs(v) / 4 + unit / 4 + slack, "%s %s (%d,%d): %g -> %g",
                act_name(act), mgen__scheme_name(scheme), j, i, v, dq[j * K + i]);
          checked++;
        }
      CHECK(checked > N * K / 2, "%s %s: %ld elements checked", act_name(act),
            mgen__scheme_name(scheme), checked);
    }
}

/* ---------------------------------------------------------------- the kernel path, emulated */

/* The 16-bit weights the kernels compute from fp4_pack's buffers, and the column factors;
 * returns how many weights of the K padding (k up to k_packed) are not exactly zero.
 * Word w of the packed codes: chunk w/128 of four 16x16 tiles of B = W^T (row-major over
 * (k/16) x (n/16)), thread t = (w/4) % 32, tile j = w % 4. From the PTX ISA's m16n8k16
 * B fragment (t = 4 * groupID + threadID_in_group): register i (0, 1) of the n8 half h holds
 * B[2 tig + 8 i + {0, 1}][groupID + 8 h]; the kernel passes frag[h][i], i.e. lane pair 2h + i.
 * The multiplier of column n = 64 W + 16 j + 8 h + c sits at byte 64 W + 8 c + 2 j + h of its
 * scale row (the kernel loads 8 bytes at lane/4 = c and takes byte 2j + h). The column factors
 * follow k_packed / group scale rows. */
static long emulate_kernel_weights(int act, int scheme, const uint32_t *q, const uint8_t *sbuf,
                                   int n, int k, uint16_t *w16, float *cf) {
  const int group = scheme == MGEN_SCHEME_NVFP4 ? 16 : 32, tiles_n = n / 16;
  const int k_packed = (int)mgen__k_packed(k); /* what the kernel gets in mgen_launch_args */
  long pad_nonzero = 0;
  memcpy(cf, sbuf + ((size_t)(k_packed / group) * n + 15) / 16 * 16, sizeof *cf * n);
  for (int word = 0; word < n * k_packed / 8; word++) {
    const int j = word % 4, t = (word / 4) % 32, tile = (word / 128) * 4 + j;
    const int kb = tile / tiles_n, nt = tile % tiles_n, gid = t / 4, tig = t % 4;
    uint32_t frag[4];
    emu_dequant(act, q[word], frag);
    for (int pair = 0; pair < 4; pair++)
      for (int half = 0; half < 2; half++) {
        const int h = pair / 2, i = pair % 2;
        const int kk = 16 * kb + 2 * tig + 8 * i + half, nn = 16 * nt + gid + 8 * h;
        const int cw = nn % 64, pos = nn - cw + 8 * (cw % 8) + 2 * (cw / 16) + (cw % 16) / 8;
        const uint8_t byte = sbuf[(size_t)(kk / group) * n + pos];
        const uint16_t v =
            act_mul(act, (uint16_t)(frag[pair] >> (16 * half)), emu_multiplier(act, scheme, byte));
        if (kk < k) w16[(size_t)nn * k + kk] = v;
        else pad_nonzero += (v & 0x7fff) != 0;
      }
  }
  return pad_nonzero;
}

/* Random checkpoint data: NVFP4 finite E4M3 bytes (subnormals and 0 included) and a global
 * scale; MXFP4 per column an e_max and u = e_max - e mostly small, some past the FP16 clamp. */
static void random_checkpoint(rng *r, int scheme, int n, int k, uint8_t *codes, uint8_t *scales,
                              float *global) {
  const int groups = k / (scheme == MGEN_SCHEME_NVFP4 ? 16 : 32);
  for (size_t i = 0; i < (size_t)n * k; i++) codes[i] = (uint8_t)rng_below(r, 16);
  *global = (float)ldexp(rng_uniform(r, 1.0, 2.0), -(int)rng_below(r, 6) - 8);
  for (int j = 0; j < n; j++) {
    const unsigned e_max = 112 + rng_below(r, 16); /* factors 2^-15 .. 2^0: FP16 outputs */
    for (int g = 0; g < groups; g++) {
      unsigned v;
      if (scheme == MGEN_SCHEME_NVFP4) /* either sign: the packer moves a negative one into the codes */
        v = rng_below(r, 0x7f) | (rng_below(r, 2) << 7);
      else {
        const unsigned u = g == 0 ? 0 : rng_below(r, 8) == 0 ? rng_below(r, 40) : rng_below(r, 4);
        v = e_max - (u < e_max ? u : e_max);
      }
      scales[(size_t)j * groups + g] = (uint8_t)v;
    }
  }
}

/* K = 544 is not a multiple of the layout's K padding: the kernels' weights past it are zero. */
static void test_emulated_gemm(rng *r) {
  enum { N = 128, K = 544, M = 5 };
  uint8_t *codes = malloc((size_t)N * K), *scales = malloc((size_t)N * K / 16);
  uint32_t *q = malloc(fp4_qbytes(N, K));
  uint16_t *w16 = malloc(sizeof *w16 * N * K), a[M * K];
  double *wd = malloc(sizeof *wd * N * K), *slack = malloc(sizeof *slack * N * K);
  float cf[N];
  for (size_t ai = 0; ai < 2; ai++)
    for (size_t si = 0; si < 2; si++) {
      const int act = acts[ai], scheme = schemes[si], group = si ? 32 : 16;
      uint8_t *sbuf = malloc(fp4_sbytes(scheme, N, K));
      float global;
      random_checkpoint(r, scheme, N, K, codes, scales, &global);
      fp4_pack(act, scheme, codes, scales, global, N, K, q, sbuf);
      fp4_dequantize(scheme, codes, scales, global, N, K, wd);
      for (size_t i = 0; i < (size_t)N * K; i++) w16[i] = 0xffff;
      const long pad_nonzero = emulate_kernel_weights(act, scheme, q, sbuf, N, K, w16, cf);
      CHECK(pad_nonzero == 0, "%s %s: %ld weights of the K padding are not zero", act_name(act),
            mgen__scheme_name(scheme), pad_nonzero);
      long exact = 0, bad = 0;
      for (int j = 0; j < N; j++) {
        const int groups = K / group;
        unsigned e_max = 0;
        for (int g = 0; g < groups; g++)
          e_max = scales[j * groups + g] > e_max ? scales[j * groups + g] : e_max;
        for (int i = 0; i < K; i++) {
          const unsigned u = e_max - scales[j * groups + i / group]; /* MXFP4's u */
          const double got = act_to_double(act, w16[j * K + i]) * cf[j], want = wd[j * K + i];
          slack[j * K + i] = fp4_weight_slack(act, scheme, u) * cf[j];
          exact += got == want;
          bad += !(slack[j * K + i] == 0.0 ? got == want : fabs(got - want) <= slack[j * K + i]);
        }
      }
      CHECK(bad == 0, "%s %s: %ld kernel weights differ from the dequantized reference",
            act_name(act), mgen__scheme_name(scheme), bad);
      CHECK(scheme == MGEN_SCHEME_MXFP4 || exact == (long)N * K, "nvfp4 weights all exact");
      /* The GEMM: FP32 sums of a * w16 in K order, times the factor, rounded to the act. */
      for (int i = 0; i < M * K; i++) a[i] = act_from_double(act, rng_uniform(r, -1.0, 1.0));
      long over = 0;
      double worst = 0.0;
      for (int mi = 0; mi < M; mi++)
        for (int j = 0; j < N; j++) {
          float acc = 0.0f;
          double ref = 0.0, abs = 0.0, werr = 0.0;
          for (int i = 0; i < K; i++) {
            const float av = act_to_float(act, a[mi * K + i]);
            acc += av * act_to_float(act, w16[j * K + i]);
            ref += (double)av * wd[j * K + i];
            abs += fabs((double)av * wd[j * K + i]);
            werr += fabs((double)av) * slack[j * K + i];
          }
          const double c = act_to_double(act, act_from_float(act, acc * cf[j]));
          const double bound = fp4_bound(act, K, ref, abs, werr);
          over += !(fabs(c - ref) <= bound);
          worst = fmax(worst, fabs(c - ref) / bound);
        }
      CHECK(over == 0, "%s %s: %ld outputs over the bound (worst ratio %.3g)", act_name(act),
            mgen__scheme_name(scheme), over, worst);
      printf("test_fp4: %s %s emulated GEMM: worst error / bound %.3g, %ld of %d weights exact\n",
             act_name(act), mgen__scheme_name(scheme), worst, exact, N * K);
      free(sbuf);
    }
  free(codes), free(scales), free(q), free(w16), free(wd), free(slack);
}

int main(void) {
  rng r;
  rng_seed(&r, rng_test_seed("test_fp4"));
  test_values();
  test_e2m1_encode(&r);
  test_e4m3_encode(&r);
  test_e8m0_shared(&r);
  test_templates_text();
  test_e4m3_pair();
  test_e8m0_f32();
  test_dequant_trick(&r);
  test_multipliers();
  test_quantize_rules();
  test_quantize_error(&r);
  test_emulated_gemm(&r);
  return check_exit("test_fp4");
}
