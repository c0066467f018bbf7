/* fp4.c -- the CPU reference for fe2m1 weights: see fp4.h. Written apart from the GPU code:
 * the encoders search the value tables instead of rounding with rint, and the shared exponent
 * comes from frexp instead of the FP32 exponent field. The FP32 steps of the recipes are the
 * ones prepare_fe2m1.cu documents, one IEEE rounding each, in the same order. */
#include "fp4.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "formats/layout.h"
#include "mgen/mgen.h"

static const double e2m1_magnitudes[8] = {0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0};

double fp4_e2m1_value(unsigned code) {
  const double v = e2m1_magnitudes[code & 7u];
  return code & 8u ? -v : v;
}

double fp4_e4m3_value(unsigned byte) {
  const unsigned exp = (byte >> 3) & 15u, man = byte & 7u;
  double v;
  if (exp == 15 && man == 7) return NAN;
  if (exp == 0) v = ldexp((double)man, -9);  /* subnormal: man/8 * 2^-6 */
  else v = ldexp(8.0 + man, (int)exp - 10);  /* (1 + man/8) * 2^(exp-7) */
  return byte & 0x80u ? -v : v;
}

double fp4_e8m0_value(unsigned byte) { return byte == 255 ? NAN : ldexp(1.0, (int)byte - 127); }

/* The nearer of codes lo and lo + 1 (values a <= v <= b), ties to the even one. */
static unsigned nearer(unsigned lo, double a, double b, double v) {
  const double dl = v - a, dh = b - v;
  if (dl < dh) return lo;
  if (dh < dl) return lo + 1;
  return lo % 2 == 0 ? lo : lo + 1;
}

unsigned fp4_e2m1_encode(double x) {
  const unsigned sign = signbit(x) ? 8u : 0u;
  const double a = fabs(x);
  if (a >= 6.0) return sign | 7u;
  unsigned lo = 0;
  while (e2m1_magnitudes[lo + 1] <= a) lo++; /* e2m1_magnitudes[lo] <= a < [lo + 1] */
  return sign | nearer(lo, e2m1_magnitudes[lo], e2m1_magnitudes[lo + 1], a);
}

unsigned fp4_e4m3_encode(double v) {
  if (v >= 448.0) return 0x7e;
  unsigned lo = 0, hi = 0x7e; /* value(lo) <= v < value(hi): bisect the increasing table */
  while (hi - lo > 1) {
    const unsigned mid = (lo + hi) / 2;
    if (fp4_e4m3_value(mid) <= v) lo = mid;
    else hi = mid;
  }
  return nearer(lo, fp4_e4m3_value(lo), fp4_e4m3_value(lo + 1), v);
}

unsigned fp4_e8m0_shared(float bmax) {
  if (bmax == 0.0f) return 0;
  int ex;
  frexpf(bmax, &ex);     /* bmax = f 2^ex, f in [0.5, 1): floor(log2 bmax) = ex - 1 */
  int shared = ex - 1 - 2; /* E2M1's largest exponent is 2 */
  if (shared < -127) shared = -127;
  if (shared > 127) shared = 127;
  return (unsigned)(shared + 127);
}

float fp4_nvfp4_global(float amax) { return amax > 0.0f ? amax / 2688.0f : 1.0f; }

static int group_of(int scheme) {
  return scheme == MGEN_SCHEME_NVFP4 ? FP4_NVFP4_GROUP : FP4_MXFP4_GROUP;
}

void fp4_quantize(int act, int scheme, const uint16_t *w, int n, int k, uint8_t *codes,
                  uint8_t *scales, float *global) {
  const int group = group_of(scheme), groups = k / group;
  float amax = 0.0f;
  for (size_t i = 0; i < (size_t)n * k; i++) amax = fmaxf(amax, fabsf(act_to_float(act, w[i])));
  const float g = scheme == MGEN_SCHEME_NVFP4 ? fp4_nvfp4_global(amax) : 1.0f;
  const float unit = 6.0f * g;
  for (int j = 0; j < n; j++)
    for (int b = 0; b < groups; b++) {
      const size_t at = (size_t)j * k + (size_t)b * group;
      float bmax = 0.0f;
      for (int i = 0; i < group; i++) bmax = fmaxf(bmax, fabsf(act_to_float(act, w[at + i])));
      unsigned s;
      float d = 0.0f, inv = 0.0f;
      if (scheme == MGEN_SCHEME_NVFP4) {
        const float sf = bmax / unit;
        s = fp4_e4m3_encode((double)sf);
        d = (float)fp4_e4m3_value(s) * g;
      } else {
        s = fp4_e8m0_shared(bmax);
        inv = ldexpf(1.0f, 127 - (int)s);
      }
      scales[(size_t)j * groups + b] = (uint8_t)s;
      for (int i = 0; i < group; i++) {
        const float v = act_to_float(act, w[at + i]);
        float x;
        if (scheme == MGEN_SCHEME_NVFP4) x = d > 0.0f ? fabsf(v) / d : 0.0f;
        else x = fabsf(v) * inv;
        codes[at + i] = (uint8_t)((signbit(v) ? 8u : 0u) | (fp4_e2m1_encode((double)x) & 7u));
      }
    }
  *global = g;
}

void fp4_pack_bytes(const uint8_t *codes, int n, int k, uint8_t *packed) {
  for (size_t i = 0; i < (size_t)n * k; i += 2)
    packed[i / 2] = (uint8_t)((codes[i] & 0xfu) | (codes[i + 1] & 0xfu) << 4);
}

size_t fp4_qbytes(int n, int k) { return (size_t)n * mgen__k_packed(k) / 2; }

static size_t factor_offset(int scheme, int n, int k) {
  return ((size_t)(mgen__k_packed(k) / group_of(scheme)) * n + 15) / 16 * 16;
}

size_t fp4_sbytes(int scheme, int n, int k) { return factor_offset(scheme, n, k) + (size_t)n * 4; }

void fp4_pack(int act, int scheme, const uint8_t *codes, const uint8_t *scales, float global, int n,
              int k, uint32_t *q, uint8_t *sbuf) {
  const int kp = (int)mgen__k_packed(k), groups = k / group_of(scheme);
  if (kp != k) { /* the weight with zero columns appended, as these rules quantize them */
    const int groups_p = kp / group_of(scheme);
    const unsigned zero_scale =
        scheme == MGEN_SCHEME_NVFP4 ? fp4_e4m3_encode(0.0) : fp4_e8m0_shared(0.0f);
    uint8_t *codes_p = malloc((size_t)n * kp), *scales_p = malloc((size_t)n * groups_p);
    for (int j = 0; j < n; j++) {
      memcpy(codes_p + (size_t)j * kp, codes + (size_t)j * k, (size_t)k);
      memset(codes_p + (size_t)j * kp + k, (int)fp4_e2m1_encode(0.0), (size_t)(kp - k));
      memcpy(scales_p + (size_t)j * groups_p, scales + (size_t)j * groups, (size_t)groups);
      memset(scales_p + (size_t)j * groups_p + groups, (int)zero_scale, (size_t)(groups_p - groups));
    }
    fp4_pack(act, scheme, codes_p, scales_p, global, n, kp, q, sbuf);
    free(codes_p), free(scales_p);
    return;
  }
  for (int word = 0; word < n * (k / 8); word++) {
    uint32_t out = 0;
    for (int b = 0; b < MGEN_W4_NIBBLES; b++) {
      int kk, nn;
      mgen__w4_source_fe2m1(n, word, b, &kk, &nn);
      uint32_t code = codes[(size_t)nn * k + kk] & 0xfu;
      if (scheme == MGEN_SCHEME_NVFP4) /* a negative block scale's sign moves into its codes */
        code = mgen__nvfp4_stored_code(code, scales[(size_t)nn * groups + kk / group_of(scheme)]);
      out |= code << (4 * b);
    }
    q[word] = mgen__fe2m1_word(act == MGEN_ACT_BF16, out);
  }
  memset(sbuf, 0, fp4_sbytes(scheme, n, k));
  uint8_t *factors = sbuf + factor_offset(scheme, n, k);
  for (int j = 0; j < n; j++) {
    unsigned e_max = 0;
    for (int b = 0; b < groups; b++) {
      const unsigned e = scales[(size_t)j * groups + b];
      e_max = e > e_max ? e : e_max;
    }
    float f;
    if (scheme == MGEN_SCHEME_NVFP4) {
      f = global * 128.0f;
    } else if (e_max == 255) {
      const uint32_t nan_bits = 0x7fc00000u; /* the bits prepare_fe2m1.cu writes */
      memcpy(&f, &nan_bits, sizeof f);
    } else {
      f = ldexpf(1.0f, (int)e_max - 127); /* exact, 2^-127 as an FP32 subnormal */
    }
    memcpy(factors + (size_t)j * 4, &f, sizeof f);
    if (scheme == MGEN_SCHEME_MXFP4)
      for (int b = 0; b < groups; b++) /* u = e_max - e, at the permuted position */
        sbuf[(size_t)b * n + (size_t)mgen__scale_packed_pos(j)] =
            (uint8_t)(e_max - scales[(size_t)j * groups + b]);
  }
  if (scheme == MGEN_SCHEME_NVFP4)
    for (int b = 0; b < groups; b++)
      for (int p = 0; p < n; p++)
        sbuf[(size_t)b * n + p] =
            (uint8_t)mgen__nvfp4_stored_scale(scales[(size_t)mgen__scale_source_col(p) * groups + b]);
}

void fp4_dequantize(int scheme, const uint8_t *codes, const uint8_t *scales, float global, int n,
                    int k, double *w) {
  const int group = group_of(scheme), groups = k / group;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < k; i++) {
      const unsigned s = scales[(size_t)j * groups + i / group];
      const double scale = scheme == MGEN_SCHEME_NVFP4 ? fp4_e4m3_value(s) * (double)global
                                                       : fp4_e8m0_value(s);
      w[(size_t)j * k + i] = fp4_e2m1_value(codes[(size_t)j * k + i]) * scale;
    }
}

double fp4_weight_slack(int act, int scheme, unsigned u) {
  if (scheme == MGEN_SCHEME_NVFP4) return 0.0;
  if (act == MGEN_ACT_F16) return u <= 23 ? 0.0 : 0x1p-25;
  return u <= 132 ? 0.0 : 0x1p-134;
}

double fp4_bound(int act, int k, double ref, double abs, double werr) {
  const double tiny = act == MGEN_ACT_F16 ? 0x1p-24 : 0x1p-132;
  return 2.0 * act_unit_roundoff(act) * fabs(ref) + k * 0x1p-22 * abs + werr + tiny;
}
