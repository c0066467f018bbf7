/* ckpt.c -- see ckpt.h. */
#include "ckpt.h"

#include <string.h>

#include "act.h"
#include "bf16.h"
#include "half.h"
#include "mgen/mgen.h"

void ckpt_gptq_qweight(const uint8_t *codes, int n, int k, uint32_t *qweight) {
  memset(qweight, 0, sizeof *qweight * (size_t)(k / 8) * n);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < k; i++)
      qweight[(size_t)(i / 8) * n + j] |= (uint32_t)(codes[(size_t)j * k + i] & 15u) << 4 * (i % 8);
}

void ckpt_gptq_qzeros(const uint8_t *zeros, int rows, int n, uint32_t *qzeros) {
  memset(qzeros, 0, sizeof *qzeros * (size_t)rows * (n / 8));
  for (int g = 0; g < rows; g++)
    for (int j = 0; j < n; j++)
      qzeros[(size_t)g * (n / 8) + j / 8] |= (uint32_t)(zeros[(size_t)g * n + j] & 15u) << 4 * (j % 8);
}

void ckpt_ct_packed(const uint8_t *codes, int n, int k, uint32_t *packed) {
  memset(packed, 0, sizeof *packed * (size_t)n * (k / 8));
  for (int j = 0; j < n; j++)
    for (int i = 0; i < k; i++)
      packed[(size_t)j * (k / 8) + i / 8] |= (uint32_t)(codes[(size_t)j * k + i] & 15u) << 4 * (i % 8);
}

unsigned ckpt_gptq_code(const uint32_t *qweight, int n, int kk, int nn) {
  return (qweight[(size_t)(kk / 8) * n + nn] >> 4 * (kk % 8)) & 15u;
}

unsigned ckpt_ct_code(const uint32_t *packed, int k, int kk, int nn) {
  return (packed[(size_t)nn * (k / 8) + kk / 8] >> 4 * (kk % 8)) & 15u;
}

size_t ckpt_scale_bytes(int dtype) { return dtype == MGEN_DTYPE_F32 ? 4 : 2; }

float ckpt_scale_value(const void *scales, int dtype, size_t i) {
  if (dtype == MGEN_DTYPE_F32) {
    float f;
    memcpy(&f, (const char *)scales + 4 * i, 4);
    return f;
  }
  const uint16_t b = ((const uint16_t *)scales)[i];
  return dtype == MGEN_DTYPE_BF16 ? bf16_to_float(b) : half_to_float(b);
}

void ckpt_scale_store(void *scales, int dtype, size_t i, float x) {
  if (dtype == MGEN_DTYPE_F32) memcpy((char *)scales + 4 * i, &x, 4);
  else ((uint16_t *)scales)[i] = dtype == MGEN_DTYPE_BF16 ? bf16_from_float(x) : half_from_float(x);
}

void ckpt_scales_to_act(const void *scales, int dtype, int nk, int rows, int n, int act,
                        uint16_t *out) {
  for (int g = 0; g < rows; g++)
    for (int j = 0; j < n; j++) {
      const size_t src = nk ? (size_t)j * rows + g : (size_t)g * n + j;
      out[(size_t)g * n + j] = act_from_float(act, ckpt_scale_value(scales, dtype, src));
    }
}
