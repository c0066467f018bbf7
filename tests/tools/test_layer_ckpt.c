/* test_layer_ckpt.c -- bench_layer's random checkpoint (bench/layer_ckpt.c), decoded by the test
 * references (tests/common: act.h, fp4.h) instead of its own tables: the stored scales,
 * zero points and packed codes say exactly what the values bench_layer hands its cuBLAS
 * reference say, every weight is exact in the activation type (so cuBLAS and libmgen multiply
 * the same numbers), weights have RMS ~ 1/sqrt(k), and a seed gives the same bytes. Each
 * format of the table, both activation types, at the layer shapes' K. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "formats/formats.h"
#include "fp4.h"
#include "layer_ckpt.h"
#include "mgen/mgen.h"

typedef struct fmt {
  const char *name;
  int scheme, group;
} fmt;

static const fmt kFmts[] = {
    {"u4b8 g128", MGEN_SCHEME_GROUP, 128},  {"u4b8 gc", MGEN_SCHEME_GROUP, MGEN_GROUP_CHANNEL},
    {"u4b8 g32", MGEN_SCHEME_GROUP, 32},    {"nvfp4", MGEN_SCHEME_NVFP4, 16},
    {"mxfp4", MGEN_SCHEME_MXFP4, 32},       {"u4 g128", MGEN_SCHEME_ASYM, 128},
    {"u4 gc", MGEN_SCHEME_ASYM, MGEN_GROUP_CHANNEL},
};

/* What the stored scale of (row r, group g) is worth, decoded from the checkpoint tensor. */
static double stored_scale(const layer_ckpt *c, const fmt *f, int act, int r, int g) {
  if (f->scheme == MGEN_SCHEME_NVFP4) return fp4_e4m3_value(c->ck_scales[(size_t)r * c->groups + g]);
  if (f->scheme == MGEN_SCHEME_MXFP4) return fp4_e8m0_value(c->ck_scales[(size_t)r * c->groups + g]);
  const size_t at = 2 * ((size_t)g * c->n + r); /* 16-bit, [groups][n], little endian */
  return act_to_double(act, (uint16_t)(c->ck_scales[at] | c->ck_scales[at + 1] << 8));
}

/* A code's worth by the format's own definition. */
static double code_value(const fmt *f, unsigned q) {
  if (f->scheme == MGEN_SCHEME_NVFP4 || f->scheme == MGEN_SCHEME_MXFP4) return fp4_e2m1_value(q);
  return f->scheme == MGEN_SCHEME_GROUP ? (double)q - 8 : (double)q; /* u4: minus its zero */
}

static void one(const fmt *f, int act, int n, int k) {
  layer_ckpt c;
  char why[160] = "";
  const int rc = layer_ckpt_make(&c, act, f->scheme, f->group, n, k, 7, why, sizeof why);
  CHECK(rc == 0, "%s %s %dx%d: %s", f->name, act_name(act), n, k, why);
  if (rc) return;
  const int group = f->group == MGEN_GROUP_CHANNEL ? k : f->group;
  CHECK(c.groups == k / group, "%s: %d groups per row, expected %d", f->name, c.groups, k / group);
  const int nvfp4 = f->scheme == MGEN_SCHEME_NVFP4, fe2m1 = nvfp4 || f->scheme == MGEN_SCHEME_MXFP4;
  const int u4 = f->scheme == MGEN_SCHEME_ASYM;
  CHECK(c.ck_scales_bytes == (size_t)n * c.groups * (fe2m1 ? 1 : 2), "%s: scale bytes %zu", f->name,
        c.ck_scales_bytes);
  CHECK(!!c.packed == fe2m1 && !!c.zero == u4 && !!c.ck_zeros == u4, "%s: tensors present", f->name);
  /* NVFP4's global scale: a power of two, so that it adds no rounding; 1 for the others. */
  int e;
  CHECK(frexp(c.global, &e) == 0.5 && (nvfp4 || c.global == 1.0f), "%s: global %g", f->name, c.global);
  for (unsigned q = 0; q < 16; q++)
    CHECK(c.values[q] == code_value(f, q), "%s: value of code %u: %g", f->name, q, c.values[q]);

  long bad_scale = 0, bad_zero = 0, inexact = 0, bad_code = 0, bad_nibble = 0;
  double sum2 = 0;
  for (int r = 0; r < n; r++)
    for (int g = 0; g < c.groups; g++) {
      const size_t at = (size_t)r * c.groups + g;
      bad_scale += stored_scale(&c, f, act, r, g) != c.scale[at];
      if (u4) bad_zero += c.ck_zeros[(size_t)g * n + r] != c.zero[at] || c.zero[at] > 15;
      for (int i = 0; i < group; i++) {
        const size_t x = (size_t)r * k + (size_t)g * group + i;
        bad_code += c.codes[x] > 15;
        const double w = (code_value(f, c.codes[x]) - (u4 ? c.zero[at] : 0)) *
                         stored_scale(&c, f, act, r, g) * (nvfp4 ? c.global : 1.0);
        inexact += act_to_double(act, act_from_double(act, w)) != w;
        sum2 += w * w;
      }
    }
  for (size_t i = 0; fe2m1 && i < (size_t)n * k / 2; i++)
    bad_nibble += c.packed[i] != (c.codes[2 * i] | c.codes[2 * i + 1] << 4);
  CHECK(bad_scale == 0, "%s %s K=%d: %ld stored scales differ from their values", f->name,
        act_name(act), k, bad_scale);
  CHECK(bad_zero == 0, "%s K=%d: %ld zero points differ", f->name, k, bad_zero);
  CHECK(bad_code == 0, "%s K=%d: %ld codes above 15", f->name, k, bad_code);
  CHECK(bad_nibble == 0, "%s K=%d: %ld packed bytes differ from their two codes", f->name, k, bad_nibble);
  CHECK(inexact == 0, "%s %s K=%d: %ld weights not exact in the act", f->name, act_name(act), k, inexact);
  const double rms = sqrt(sum2 / ((double)n * k)) * sqrt((double)k);
  CHECK(rms > 0.68 && rms < 1.47, "%s %s K=%d: RMS * sqrt(k) = %.3f, not ~1", f->name, act_name(act), k, rms);

  /* The same seed, the same bytes; another seed, other codes. */
  layer_ckpt d;
  CHECK(layer_ckpt_make(&d, act, f->scheme, f->group, n, k, 7, why, sizeof why) == 0, "%s", why);
  CHECK(memcmp(c.codes, d.codes, (size_t)n * k) == 0 && memcmp(c.ck_scales, d.ck_scales, c.ck_scales_bytes) == 0,
        "%s: seed 7 twice gave different bytes", f->name);
  layer_ckpt_free(&d);
  CHECK(layer_ckpt_make(&d, act, f->scheme, f->group, n, k, 8, why, sizeof why) == 0, "%s", why);
  CHECK(memcmp(c.codes, d.codes, (size_t)n * k) != 0, "%s: seeds 7 and 8 gave the same codes", f->name);
  layer_ckpt_free(&d);
  layer_ckpt_free(&c);
  CHECK(c.codes == NULL && c.scale == NULL, "layer_ckpt_free leaves the struct empty");
}

int main(void) {
  /* Every K of bench_layer's models (hidden 4096 and 8192, q 2048 and 4096, inter 7168 and
   * 14336): the scale exponents depend on K. */
  static const int kKs[] = {2048, 4096, 7168, 8192, 14336};
  const int acts[] = {MGEN_ACT_F16, MGEN_ACT_BF16};
  for (size_t f = 0; f < sizeof kFmts / sizeof *kFmts; f++)
    for (int a = 0; a < 2; a++)
      for (size_t i = 0; i < sizeof kKs / sizeof *kKs; i++) one(&kFmts[f], acts[a], 16, kKs[i]);
  /* Every scheme of the format table has a generator (bench_layer --fmt all runs them all). */
  for (int i = 0, w, s, g; mgen__format_at(i, &w, &s, &g); i++)
    CHECK(layer_ckpt_scheme_known(s), "format %d (scheme %d) has no generator", i, s);
  CHECK(!layer_ckpt_scheme_known(99), "an unknown scheme is refused");
  layer_ckpt c;
  char why[160] = "";
  CHECK(layer_ckpt_make(&c, MGEN_ACT_F16, 99, 128, 16, 256, 1, why, sizeof why) == -1 &&
            strstr(why, "scheme 99") != NULL,
        "an unknown scheme is refused with its number: '%s'", why);
  return check_exit("test_layer_ckpt");
}
