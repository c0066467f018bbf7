/* ref_u4.c -- CPU reference for u4 weights: see ref_u4.h. */
#include "ref_u4.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "formats/layout.h"
#include "ref.h"

enum { SCALE_BYTES = 2 }; /* scales of the activation type */

void ref_u4_scale_zero(int act, float lo, float hi, uint16_t *scale, uint8_t *zero) {
  /* (hi - lo) / 15 as (hi/2 - lo/2) / 7.5: halving FP16 and BF16 values is exact, so the same
   * correctly rounded quotient, without FP32 overflow for BF16 weights near FLT_MAX. */
  uint16_t s = act_from_float(act, (hi * 0.5f - lo * 0.5f) / 7.5f);
  if ((s & 0x7fff) == 0) s = act_from_float(act, 1.0f);
  *scale = s;
  *zero = (uint8_t)fminf(fmaxf(nearbyintf(-lo / act_to_float(act, s)), 0.0f), 15.0f);
}

void ref_u4_quantize(int act, const uint16_t *w, int n, int k, int group, uint8_t *codes,
                     uint16_t *scales, uint8_t *zeros) {
  const int gsize = group ? group : k, rows = ref_scale_rows(k, group);
  for (int g = 0; g < rows; g++)
    for (int j = 0; j < n; j++) {
      const uint16_t *src = w + (size_t)j * k + (size_t)g * gsize;
      float lo = act_to_float(act, src[0]), hi = lo;
      for (int i = 1; i < gsize; i++) {
        const float v = act_to_float(act, src[i]);
        lo = fminf(lo, v), hi = fmaxf(hi, v);
      }
      uint16_t s_bits;
      uint8_t z;
      ref_u4_scale_zero(act, lo, hi, &s_bits, &z);
      scales[(size_t)g * n + j] = s_bits, zeros[(size_t)g * n + j] = z;
      const float s = act_to_float(act, s_bits);
      for (int i = 0; i < gsize; i++) {
        const float q = nearbyintf(act_to_float(act, src[i]) / s) + (float)z;
        codes[(size_t)j * k + (size_t)g * gsize + i] = (uint8_t)fminf(fmaxf(q, 0.0f), 15.0f);
      }
    }
}

size_t ref_u4_sbytes(int n, int k, int group) {
  return (size_t)mgen__zero_offset(n, k, group, SCALE_BYTES) +
         (size_t)ref_packed_rows(k, group) * (size_t)n / 2;
}

void ref_u4_pack(int act, const uint8_t *codes, const uint16_t *scales, const uint8_t *zeros,
                 int n, int k, int group, uint32_t *q, uint8_t *sbuf) {
  const int rows = ref_scale_rows(k, group), rows_p = ref_packed_rows(k, group);
  memset(sbuf, 0, ref_u4_sbytes(n, k, group));
  /* Codes and scales are u4b8's, its padding (code 8, scale 1.0) included. */
  uint16_t *ps = malloc(sizeof *ps * (size_t)rows_p * n);
  ref_pack(act, codes, scales, n, k, group, q, ps);
  memcpy(sbuf, ps, sizeof *ps * (size_t)rows_p * n);
  free(ps);
  uint32_t *zw = (uint32_t *)(sbuf + mgen__zero_offset(n, k, group, SCALE_BYTES));
  for (int r = 0; r < rows_p; r++)
    for (int col = 0; col < n; col++) {
      int word, nibble;
      mgen__zero_place(col, &word, &nibble);
      const uint32_t z = r < rows ? zeros[(size_t)r * n + col] & 0xfu : MGEN_U4_PAD_ZERO;
      zw[(size_t)r * (n / 8) + word] |= z << (4 * nibble);
    }
}

void ref_u4_unpack(const uint32_t *q, const uint8_t *sbuf, int n, int k, int group,
                   uint8_t *codes, uint16_t *scales, uint8_t *zeros) {
  ref_unpack(q, (const uint16_t *)sbuf, n, k, group, codes, scales);
  const uint32_t *zw = (const uint32_t *)(sbuf + mgen__zero_offset(n, k, group, SCALE_BYTES));
  for (int r = 0; r < ref_scale_rows(k, group); r++)
    for (int col = 0; col < n; col++) {
      int word, nibble;
      mgen__zero_place(col, &word, &nibble);
      zeros[(size_t)r * n + col] = (uint8_t)((zw[(size_t)r * (n / 8) + word] >> (4 * nibble)) & 0xf);
    }
}

void ref_u4_dequantize(int act, const uint8_t *codes, const uint16_t *scales,
                       const uint8_t *zeros, int n, int k, int group, double *w_dq) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < k; i++) {
      const size_t at = (size_t)(group ? i / group : 0) * n + j;
      w_dq[(size_t)j * k + i] =
          ((int)codes[(size_t)j * k + i] - (int)zeros[at]) * act_to_double(act, scales[at]);
    }
}

void ref_u4_dequantize_packed(int act, const uint32_t *q, const uint8_t *sbuf, int n, int k,
                              int group, double *w_dq) {
  const int kp = ref_k_packed(k);
  const uint16_t *ps = (const uint16_t *)sbuf;
  const uint32_t *zw = (const uint32_t *)(sbuf + mgen__zero_offset(n, k, group, SCALE_BYTES));
  for (int j = 0; j < n; j++)
    for (int i = 0; i < kp; i++) {
      int word, nibble, zword, znibble;
      mgen__w4_position(n, i, j, &word, &nibble);
      mgen__zero_place(j, &zword, &znibble);
      const int r = group ? i / group : 0;
      const int code = (int)((q[word] >> (4 * nibble)) & 0xf);
      const int zero = (int)((zw[(size_t)r * (n / 8) + zword] >> (4 * znibble)) & 0xf);
      const uint16_t s = ps[(size_t)r * n + (group ? mgen__scale_packed_pos(j) : j)];
      w_dq[(size_t)j * kp + i] = (code - zero) * act_to_double(act, s);
    }
}
