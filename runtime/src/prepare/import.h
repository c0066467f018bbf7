/* import.h -- the device side of int4 checkpoint import (import.cu), called by
 * prepare/import.c. Two halves meet here, so that a checkpoint format and a packed layout are
 * added independently:
 *   - the checkpoint side, mgen__int4_src: where a checkpoint keeps code (k, n), scale (g, n),
 *     its zeros and g_idx (strides into the tensors as stored; import.c fills one per format);
 *   - the layout side, the weight format's import hook (format_ops.h): where they go (import.cu
 *     packs each layout with its own kernels; today MGEN_LAYOUT_MMA, layout.h's index math).
 * Each function returns a cudaError_t value (0 on success). Arguments are checked by the
 * caller: shapes agree with n, k, group (layout.h's preconditions; group 0 = per channel),
 * 16-byte aligned outputs of mgen_weights_bytes() size (K padding included), sources aligned
 * to their elements.
 */
#ifndef MGEN_PREPARE_IMPORT_H
#define MGEN_PREPARE_IMPORT_H

#include <stdint.h>

#include "formats/layout.h"
#include "mgen/mgen.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A tensor of 4-bit values packed eight to an int32 word, as a checkpoint stores its codes
 * (rows k) or zero points (rows g), columns n. A word holds eight consecutive columns
 * (packed_n: AWQ, GPTQ qzeros, compressed-tensors weight_zero_point) or eight consecutive rows
 * (GPTQ qweight, compressed-tensors weight_packed); element (r, n) is in word
 *   packed_n:  (r    ) * stride_r + (n / 8) * stride_n
 *   else:      (r / 8) * stride_r + (n    ) * stride_n
 * at nibble (order >> 4 o) & 15, o = n % 8 (packed_n) or r % 8: MGEN__NIBBLES_IN_ORDER, or
 * AutoAWQ's interleaved MGEN__NIBBLES_AWQ. Offsets are in words. */
typedef struct mgen__nibbles {
  const uint32_t *words;
  long long stride_r, stride_n;
  int packed_n;
  uint32_t order;
} mgen__nibbles;

#define MGEN__NIBBLES_IN_ORDER 0x76543210u /* offset o at nibble o */
/* AutoAWQ's order_map [0, 2, 4, 6, 1, 3, 5, 7]: nibble i holds offset order_map[i], so offset
 * o sits at nibble 0, 4, 1, 5, 2, 6, 3, 7 (o = 0..7). */
#define MGEN__NIBBLES_AWQ 0x73625140u

static inline MGEN_HD unsigned mgen__nibble(const mgen__nibbles *t, long long r, long long n) {
  const long long o = t->packed_n ? n & 7 : r & 7;
  const long long word = t->packed_n ? r * t->stride_r + (n >> 3) * t->stride_n
                                     : (r >> 3) * t->stride_r + n * t->stride_n;
  return (t->words[word] >> (4 * ((t->order >> (4 * o)) & 15u))) & 15u;
}

/* An int4 checkpoint as stored. Offsets are in elements of the tensor's type. */
typedef struct mgen__int4_src {
  mgen__nibbles codes; /* code (k, n), 0..15 as stored */
  /* scale of group row g, column n: scales[g * scale_g + n * scale_n], of type scale_dtype
   * (mgen_dtype: F16, BF16 or F32) */
  const void *scales;
  int scale_dtype;
  long long scale_g, scale_n;
  /* The stored zero of (g, n) (zeros.words NULL: none), its tensor's zero_words words, and
   * what the stored value means: zero point = stored + zero_add (GPTQ's v1 "gptq" format
   * stores z - 1: 1; everything else 0). */
  mgen__nibbles zeros;
  long long zero_words;
  unsigned zero_add;
  const int32_t *g_idx; /* k entries, or NULL */
} mgen__int4_src;

/* The zero point of (g, n) (zeros present). */
static inline MGEN_HD unsigned mgen__int4_zero(const mgen__int4_src *s, long long g, long long n) {
  return mgen__nibble(&s->zeros, g, n) + s->zero_add;
}

/* Word `word` (0..n/8-1) of packed zero row `row` of u4 weights (layout.h, "Zero points") with
 * `rows` real rows: nibble b holds the zero of column mgen__zero_source_col(word, b); rows past
 * `rows` (K padding) hold MGEN_U4_PAD_ZERO. */
static inline MGEN_HD uint32_t mgen__u4_zero_word(const mgen__int4_src *s, int rows, int row,
                                                  int word) {
  uint32_t out = 0;
  for (int b = 0; b < 8; b++) {
    const int col = mgen__zero_source_col(word, b);
    const unsigned z = row < rows ? mgen__int4_zero(s, row, col) : MGEN_U4_PAD_ZERO;
    out |= (uint32_t)(z & 15u) << (4 * b);
  }
  return out;
}

/* The source of each checkpoint format's tensors (import.c; data pointers as given, shapes
 * checked by the caller) for weights n x k in groups of `group` (0: per channel); for GPTQ
 * the zero convention `zeros` (MINUS_ONE: zero_add 1). */
void mgen__awq_src(const mgen_awq *a, int n, int k, int group, mgen__int4_src *out);
void mgen__gptq_src(const mgen_gptq *g, int n, int k, int group, mgen__int4_src *out);
void mgen__ct_src(const mgen_ct *c, int n, int k, int group, mgen__int4_src *out);

#define MGEN__NONE 0xffffffffu /* no such index */

/* What the check kernel found (mgen__int4_check). Indices are the first in memory order. */
typedef struct mgen__int4_findings {
  uint32_t zero_values;  /* bit v set: some stored zero is v (0..15) */
  uint32_t first_not7;   /* first zeros word holding a value other than 7, or MGEN__NONE */
  uint32_t first_not8;   /* ... other than 8 */
  uint32_t first_15;     /* ... holding a 15 */
  uint32_t first_bad_gidx;  /* first k with g_idx[k] != k / group (group k per channel) */
  uint32_t first_bad_scale; /* first scale, as g * n + col, not finite once converted to act */
} mgen__int4_findings;

/* Runs the data checks of `src` (rows = k / group, or 1) with d_scratch (>= sizeof findings,
 * 16-byte aligned: the output scale buffer) as the findings' device copy, copies them to *out
 * and synchronizes `stream`. */
int mgen__int4_check(const mgen__int4_src *src, int act, int n, int k, int group,
                     void *d_scratch, mgen__int4_findings *out, void *stream);

/* The import hooks (format_ops.h's import_int4) of u4b8 and u4: write the codes and scales of
 * `src` (scales converted to `act`, round to nearest even) into d_q and d_scales in `layout`
 * (a resolved mgen_layout), u4 also its zero points (src->zeros present, every zero point
 * 0..15: import.c's checks). Asynchronous. */
int mgen__int4_import(const mgen__int4_src *src, int act, int layout, int n, int k, int group,
                      void *d_q, void *d_scales, void *stream);
int mgen__int4_import_u4(const mgen__int4_src *src, int act, int layout, int n, int k, int group,
                         void *d_q, void *d_scales, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_PREPARE_IMPORT_H */
