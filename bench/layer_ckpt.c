/* layer_ckpt.c -- bench_layer's random checkpoint of one weight, on the host (layer_ckpt.h). */
#include "layer_ckpt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mgen/mgen.h>

/* How a scheme's checkpoint stores its scales, and what its codes are worth. */
enum { STORE_ACT16, STORE_E4M3, STORE_E8M0 };
typedef struct scheme_gen {
  int scheme;
  int store;       /* STORE_* */
  int zeros;       /* 1: 4-bit zero points per (group, column) (u4's ASYM) */
  int global_log2; /* NVFP4's global scale 2^global_log2; 0 (a factor 1) for the others */
  double code_rms; /* RMS of value(code) - zero over uniform codes (and zeros) */
  int fe2m1;       /* value(code): E2M1 (sign bit 3) instead of the integer code */
  int bias;        /* value(code) = code - bias for the integer formats */
} scheme_gen;

/* RMS of code - 8 over 0..15: sqrt(344/16); of q - z over independent uniform q, z:
 * sqrt(2 * 255/12); of E2M1 over its 16 codes: sqrt(68.5/8). */
static const scheme_gen kGens[] = {
    {MGEN_SCHEME_GROUP, STORE_ACT16, 0, 0, 4.637, 0, 8},
    {MGEN_SCHEME_NVFP4, STORE_E4M3, 0, -8, 2.926, 1, 0},
    {MGEN_SCHEME_MXFP4, STORE_E8M0, 0, 0, 2.926, 1, 0},
    {MGEN_SCHEME_ASYM, STORE_ACT16, 1, 0, 6.519, 0, 0},
};

static const scheme_gen *gen_of(int scheme) {
  for (size_t i = 0; i < sizeof kGens / sizeof *kGens; i++)
    if (kGens[i].scheme == scheme) return &kGens[i];
  return NULL;
}

int layer_ckpt_scheme_known(int scheme) { return gen_of(scheme) != NULL; }

static uint64_t next64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* The stored bits of the scale (1 + j/8) * 2^e, or -1 where the storage cannot hold it (the
 * shapes bench_layer runs never come near). */
static long encode_scale(int store, int act, int e, int j) {
  if (store == STORE_E8M0) return j || e < -127 || e > 127 ? -1 : e + 127;
  if (store == STORE_E4M3) return e < -6 || e > 8 || (e == 8 && j == 7) ? -1 : (e + 7) << 3 | j;
  if (act == MGEN_ACT_BF16) return e < -126 || e > 127 ? -1 : (e + 127) << 7 | j << 4;
  return e < -14 || e > 15 ? -1 : (e + 15) << 10 | j << 7;
}

void layer_ckpt_free(layer_ckpt *c) {
  free(c->codes), free(c->packed), free(c->scale), free(c->zero);
  free(c->ck_scales), free(c->ck_zeros);
  *c = (layer_ckpt){0};
}

int layer_ckpt_make(layer_ckpt *c, int act, int scheme, int group, int n, int k, uint64_t seed,
                    char *why, size_t why_size) {
  const scheme_gen *g = gen_of(scheme);
  *c = (layer_ckpt){.n = n, .k = k, .groups = group == MGEN_GROUP_CHANNEL ? 1 : k / group};
  if (!g) {
    snprintf(why, why_size, "no random weights for scale scheme %d (layer_ckpt.c's kGens)", scheme);
    return -1;
  }
  const size_t nk = (size_t)n * k, ng = (size_t)n * c->groups;
  const int wide = g->store == STORE_ACT16; /* 16-bit scales, [groups][n] */
  c->codes = malloc(nk);
  c->scale = malloc(ng * sizeof *c->scale);
  c->ck_scales_bytes = wide ? ng * 2 : ng;
  c->ck_scales = malloc(c->ck_scales_bytes);
  if (g->fe2m1) c->packed = malloc(nk / 2);
  if (g->zeros) c->zero = malloc(ng), c->ck_zeros = malloc(ng);
  if (!c->codes || !c->scale || !c->ck_scales || (g->fe2m1 && !c->packed) ||
      (g->zeros && (!c->zero || !c->ck_zeros))) {
    layer_ckpt_free(c);
    snprintf(why, why_size, "out of host memory (%dx%d weights)", n, k);
    return -1;
  }
  static const float kE2M1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (int v = 0; v < 16; v++)
    c->values[v] = g->fe2m1 ? (v & 8 ? -kE2M1[v & 7] : kE2M1[v & 7]) : (float)(v - g->bias);
  c->global = ldexpf(1.0f, g->global_log2);

  for (size_t i = 0; i < nk; i += 16) {
    uint64_t r = next64(&seed);
    for (size_t j = 0; j < 16 && i + j < nk; j++, r >>= 4) c->codes[i + j] = (uint8_t)(r & 15);
  }
  for (size_t i = 0; g->fe2m1 && i < nk / 2; i++)
    c->packed[i] = (uint8_t)(c->codes[2 * i] | c->codes[2 * i + 1] << 4);
  /* A scale is (1 + j/8) * 2^(e0 - b), j uniform in 0..7 (0 for E8M0) and b in {0, 1}: its
   * RMS is 2^e0 * sqrt(mean (1 + j/8)^2 * mean 4^-b). e0 makes RMS(scale) * global nearest
   * 1/(code_rms sqrt(k)) in log2, so that RMS(weight) is within a factor sqrt(2) of 1/sqrt(k). */
  double mean2 = 0;
  const int js = g->store == STORE_E8M0 ? 1 : 8;
  for (int j = 0; j < js; j++) mean2 += (1 + j / 8.0) * (1 + j / 8.0) / js;
  const double rms1 = sqrt(mean2 * (1 + 0.25) / 2);
  const int e0 = (int)lround(log2(1.0 / (g->code_rms * sqrt((double)k) * rms1))) - g->global_log2;
  for (int r = 0; r < n; r++)
    for (int gi = 0; gi < c->groups; gi++) {
      const uint64_t x = next64(&seed);
      const int e = e0 - (int)(x & 1), j = g->store == STORE_E8M0 ? 0 : (int)(x >> 1 & 7);
      const size_t at = (size_t)r * c->groups + gi, ck = (size_t)gi * n + r;
      const long bits = encode_scale(g->store, act, e, j);
      if (bits < 0) {
        layer_ckpt_free(c);
        snprintf(why, why_size, "scale (1 + %d/8) * 2^%d does not fit scheme %d's storage", j, e,
                 scheme);
        return -1;
      }
      c->scale[at] = ldexpf(1.0f + j / 8.0f, e);
      if (wide) c->ck_scales[2 * ck] = (uint8_t)bits, c->ck_scales[2 * ck + 1] = (uint8_t)(bits >> 8);
      else c->ck_scales[at] = (uint8_t)bits;
      if (g->zeros) c->zero[at] = c->ck_zeros[ck] = (uint8_t)(x >> 4 & 15);
    }
  return 0;
}
