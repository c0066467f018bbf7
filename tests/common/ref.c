/* ref.c -- CPU reference for u4b8 weights: see ref.h. */
#include "ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "formats/layout.h"

int ref_scale_rows(int k, int group) { return group ? k / group : 1; }

int ref_k_packed(int k) { return (int)mgen__k_packed(k); }

int ref_packed_rows(int k, int group) { return ref_scale_rows(ref_k_packed(k), group); }

uint16_t ref_group_scale(int act, float max_abs) {
  const float t = max_abs / 7.5f; /* == (2 * max_abs) / 15 whenever 2 * max_abs is finite */
  const uint16_t s = act_from_float(act, t);
  return (s & 0x7fff) == 0 ? act_from_float(act, 1.0f) : s;
}

void ref_quantize(int act, const uint16_t *w, int n, int k, int group, uint8_t *codes,
                  uint16_t *scales) {
  const int gsize = group ? group : k, rows = ref_scale_rows(k, group);
  for (int g = 0; g < rows; g++) {
    for (int j = 0; j < n; j++) {
      const uint16_t *src = w + (size_t)j * k + (size_t)g * gsize;
      float max_abs = 0.0f;
      for (int i = 0; i < gsize; i++) max_abs = fmaxf(max_abs, fabsf(act_to_float(act, src[i])));
      const uint16_t s_bits = ref_group_scale(act, max_abs);
      const float s = act_to_float(act, s_bits);
      scales[(size_t)g * n + j] = s_bits;
      for (int i = 0; i < gsize; i++) {
        float v = act_to_float(act, src[i]) / s;
        float q = fminf(fmaxf(nearbyintf(v) + 8.0f, 0.0f), 15.0f);
        codes[(size_t)j * k + (size_t)g * gsize + i] = (uint8_t)q;
      }
    }
  }
}

/* The padded weight (K padding, ref.h): codes n x kp, zero columns' code 8 past k; scales
 * ref_packed_rows x n, the all-zero group's scale in the rows past k's. Caller frees both. */
static void pad(int act, const uint8_t *codes, const uint16_t *scales, int n, int k, int group,
                int kp, uint8_t **codes_p, uint16_t **scales_p) {
  const size_t rows = (size_t)ref_scale_rows(k, group), rows_p = (size_t)ref_scale_rows(kp, group);
  uint8_t *c = malloc((size_t)n * kp);
  uint16_t *s = malloc(sizeof *s * rows_p * n);
  for (int j = 0; j < n; j++) {
    memcpy(c + (size_t)j * kp, codes + (size_t)j * k, (size_t)k);
    memset(c + (size_t)j * kp + k, 8, (size_t)(kp - k)); /* (8 - 8) * s = 0 */
  }
  memcpy(s, scales, sizeof *s * rows * n);
  for (size_t i = rows * n; i < rows_p * n; i++) s[i] = ref_group_scale(act, 0.0f);
  *codes_p = c, *scales_p = s;
}

void ref_pack(int act, const uint8_t *codes, const uint16_t *scales, int n, int k, int group,
              uint32_t *q, uint16_t *packed_scales) {
  const int kp = ref_k_packed(k);
  if (kp != k) {
    uint8_t *codes_p;
    uint16_t *scales_p;
    pad(act, codes, scales, n, k, group, kp, &codes_p, &scales_p);
    ref_pack(act, codes_p, scales_p, n, kp, group, q, packed_scales);
    free(codes_p), free(scales_p);
    return;
  }
  const int words = (int)((long long)n * k / MGEN_W4_NIBBLES);
  for (int w = 0; w < words; w++) {
    uint32_t out = 0;
    for (int b = 0; b < MGEN_W4_NIBBLES; b++) {
      int kk, nn;
      mgen__w4_source(n, w, b, &kk, &nn);
      out |= (uint32_t)(codes[(size_t)nn * k + kk] & 0xf) << (4 * b);
    }
    q[w] = out;
  }
  const int rows = ref_scale_rows(k, group);
  for (int r = 0; r < rows; r++)
    for (int p = 0; p < n; p++)
      packed_scales[(size_t)r * n + p] =
          scales[(size_t)r * n + (group ? mgen__scale_source_col(p) : p)];
}

void ref_unpack(const uint32_t *q, const uint16_t *packed_scales, int n, int k, int group,
                uint8_t *codes, uint16_t *scales) {
  const int words = (int)((long long)n * ref_k_packed(k) / MGEN_W4_NIBBLES);
  for (int w = 0; w < words; w++) {
    for (int b = 0; b < MGEN_W4_NIBBLES; b++) {
      int kk, nn;
      mgen__w4_source(n, w, b, &kk, &nn);
      if (kk < k) codes[(size_t)nn * k + kk] = (uint8_t)((q[w] >> (4 * b)) & 0xf);
    }
  }
  const int rows = ref_scale_rows(k, group);
  for (int r = 0; r < rows; r++)
    for (int p = 0; p < n; p++)
      scales[(size_t)r * n + (group ? mgen__scale_source_col(p) : p)] =
          packed_scales[(size_t)r * n + p];
}

uint16_t ref_scale_of(const uint16_t *scales, int n_total, int group, int n, int k) {
  return scales[(size_t)(group ? k / group : 0) * n_total + n];
}

void ref_dequantize(int act, const uint8_t *codes, const uint16_t *scales, int n, int k,
                    int group, double *w_dq) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < k; i++)
      w_dq[(size_t)j * k + i] = ((int)codes[(size_t)j * k + i] - 8) *
                                act_to_double(act, ref_scale_of(scales, n, group, j, i));
}

void ref_gemm(int act, int m, int n, int k, const uint16_t *a, const double *w_dq, double *c,
              double *c_abs) {
  for (int i = 0; i < m; i++) {
    for (int j = 0; j < n; j++) {
      double sum = 0.0, sum_abs = 0.0;
      const uint16_t *ar = a + (size_t)i * k;
      const double *wr = w_dq + (size_t)j * k;
      for (int kk = 0; kk < k; kk++) {
        double p = act_to_double(act, ar[kk]) * wr[kk];
        sum += p;
        sum_abs += fabs(p);
      }
      c[(size_t)i * n + j] = sum;
      if (c_abs != NULL) c_abs[(size_t)i * n + j] = sum_abs;
    }
  }
}
