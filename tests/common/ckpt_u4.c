/* ckpt_u4.c -- see ckpt_u4.h. Every tensor is addressed by one function per layout (word and
 * nibble of an element), so that the packer and the unpacker cannot disagree with each other;
 * tests/runtime/test_ckpt_u4.c checks those addresses against words written out by hand. */
#include "ckpt_u4.h"

#include <string.h>

#include "ckpt.h"
#include "mgen/mgen.h"

const int ckpt_awq_order[8] = {0, 2, 4, 6, 1, 3, 5, 7};

/* The nibble of a word that holds column offset o (0..7) in AWQ's order. */
static int awq_nibble(int o) {
  for (int i = 0; i < 8; i++)
    if (ckpt_awq_order[i] == o) return i;
  return -1; /* not reached: the order is a permutation */
}

int ckpt_u4_rows(int k, int group) { return group > 0 ? k / group : 1; }

static int shape_ok(int layout, int n, int k, int group) {
  if (n <= 0 || k <= 0 || k % 8 || (group > 0 && k % group)) return 0;
  return layout == CKPT_U4_CT || n % 8 == 0;
}

long ckpt_u4_weight_words(int layout, int n, int k) {
  return shape_ok(layout, n, k, 0) ? (long)n * (k / 8) : 0;
}

long ckpt_u4_zero_words(int layout, int n, int k, int group) {
  if (!shape_ok(layout, n, k, group)) return 0;
  return (long)ckpt_u4_rows(k, group) * ((n + 7) / 8);
}

/* Word and nibble of code (kk, nn). */
static long code_at(const ckpt_u4 *c, int kk, int nn, int *nibble) {
  switch (c->layout) {
  case CKPT_U4_AWQ: *nibble = awq_nibble(nn % 8); return (long)kk * (c->n / 8) + nn / 8;
  case CKPT_U4_CT: *nibble = kk % 8; return (long)nn * (c->k / 8) + kk / 8;
  default: *nibble = kk % 8; return (long)(kk / 8) * c->n + nn; /* GPTQ */
  }
}

/* Word and nibble of the zero of (group g, column nn). */
static long zero_at(const ckpt_u4 *c, int g, int nn, int *nibble) {
  const int rows = ckpt_u4_rows(c->k, c->group);
  switch (c->layout) {
  case CKPT_U4_AWQ: *nibble = awq_nibble(nn % 8); return (long)g * (c->n / 8) + nn / 8;
  case CKPT_U4_CT: *nibble = nn % 8; return (long)(nn / 8) * rows + g;
  default: *nibble = nn % 8; return (long)g * (c->n / 8) + nn / 8; /* GPTQ */
  }
}

/* Element of the scale tensor of (group g, column nn): [rows, n], or [n, rows] for CT. */
static long scale_at(const ckpt_u4 *c, int g, int nn) {
  return c->layout == CKPT_U4_CT ? (long)nn * ckpt_u4_rows(c->k, c->group) + g : (long)g * c->n + nn;
}

void ckpt_u4_pack(ckpt_u4 *c, const uint8_t *codes, const uint8_t *zeros, const float *scales) {
  const int n = c->n, k = c->k, rows = ckpt_u4_rows(k, c->group);
  memset(c->weight, 0, sizeof *c->weight * (size_t)ckpt_u4_weight_words(c->layout, n, k));
  memset(c->zeros, 0, sizeof *c->zeros * (size_t)ckpt_u4_zero_words(c->layout, n, k, c->group));
  int b;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < k; i++) {
      const long w = code_at(c, i, j, &b);
      c->weight[w] |= (uint32_t)(codes[(size_t)j * k + i] & 15u) << 4 * b;
    }
  for (int g = 0; g < rows; g++)
    for (int j = 0; j < n; j++) {
      unsigned z = zeros[(size_t)g * n + j] & 15u;
      if (c->layout == CKPT_U4_GPTQ_V1) z = (z - 1u) & 15u; /* stored zero - 1 */
      const long w = zero_at(c, g, j, &b);
      c->zeros[w] |= (uint32_t)z << 4 * b;
      ckpt_scale_store(c->scales, c->dtype, (size_t)scale_at(c, g, j), scales[(size_t)g * n + j]);
    }
}

unsigned ckpt_u4_code(const ckpt_u4 *c, int kk, int nn) {
  int b;
  const long w = code_at(c, kk, nn, &b);
  return (c->weight[w] >> 4 * b) & 15u;
}

unsigned ckpt_u4_zero(const ckpt_u4 *c, int g, int nn) {
  int b;
  const long w = zero_at(c, g, nn, &b);
  const unsigned stored = (c->zeros[w] >> 4 * b) & 15u;
  return c->layout == CKPT_U4_GPTQ_V1 ? (stored + 1u) & 15u : stored;
}

double ckpt_u4_scale(const ckpt_u4 *c, int g, int nn) {
  return ckpt_scale_value(c->scales, c->dtype, (size_t)scale_at(c, g, nn));
}

void ckpt_u4_unpack(const ckpt_u4 *c, double *w) {
  const int gsize = c->group > 0 ? c->group : c->k;
  for (int j = 0; j < c->n; j++)
    for (int i = 0; i < c->k; i++) {
      const int g = i / gsize;
      const int d = (int)ckpt_u4_code(c, i, j) - (int)ckpt_u4_zero(c, g, j);
      w[(size_t)j * c->k + i] = d * ckpt_u4_scale(c, g, j);
    }
}
