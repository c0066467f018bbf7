/* import.h -- the device side of int4 checkpoint import (import.cu), called by
 * formats/import.c. Two halves meet here, so that a checkpoint format and a packed layout are
 * added independently:
 *   - the checkpoint side, mgen__int4_src: where a checkpoint keeps code (k, n), scale (g, n),
 *     its zeros and g_idx (strides into the tensors as stored; import.c fills one per format);
 *   - the layout side, mgen__int4_import's `layout`: where they go (import.cu packs each
 *     layout with its own kernels; today MGEN_LAYOUT_MMA, layout.h's index math).
 * Each function returns a cudaError_t value (0 on success). Arguments are checked by the
 * caller: shapes agree with n, k, group (layout.h's preconditions; group 0 = per channel),
 * 16-byte aligned outputs of mgen_weights_bytes() size (K padding included), sources aligned
 * to their elements.
 */
#ifndef MGEN_PREPARE_IMPORT_H
#define MGEN_PREPARE_IMPORT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An int4 checkpoint as stored. Offsets are in elements of the tensor's type. */
typedef struct mgen__int4_src {
  /* code (k, n) = (words[(k / 8) * word_k + n * word_n] >> 4 (k % 8)) & 15 */
  const uint32_t *words;
  long long word_k, word_n;
  /* scale of group row g, column n: scales[g * scale_g + n * scale_n], of type scale_dtype
   * (mgen_dtype: F16, BF16 or F32) */
  const void *scales;
  int scale_dtype;
  long long scale_g, scale_n;
  const uint32_t *zeros;  /* zero_words packed zeros (GPTQ qzeros), eight per word; or NULL */
  long long zero_words;
  const int32_t *g_idx;   /* k entries, or NULL */
} mgen__int4_src;

#define MGEN__NONE 0xffffffffu /* no such index */

/* What the check kernel found (mgen__int4_check). Indices are the first in memory order. */
typedef struct mgen__int4_findings {
  uint32_t zero_values;  /* bit v set: some stored zero is v (0..15) */
  uint32_t first_not7;   /* first zeros word holding a value other than 7, or MGEN__NONE */
  uint32_t first_not8;   /* ... other than 8 */
  uint32_t first_bad_gidx;  /* first k with g_idx[k] != k / group (group k per channel) */
  uint32_t first_bad_scale; /* first scale, as g * n + col, not finite once converted to act */
} mgen__int4_findings;

/* Runs the data checks of `src` (rows = k / group, or 1) with d_scratch (>= sizeof findings,
 * 16-byte aligned: the output scale buffer) as the findings' device copy, copies them to *out
 * and synchronizes `stream`. */
int mgen__int4_check(const mgen__int4_src *src, int act, int n, int k, int group,
                     void *d_scratch, mgen__int4_findings *out, void *stream);

/* Writes the codes and scales of `src` (scales converted to `act`, round to nearest even) into
 * d_q and d_scales in `layout` (a resolved mgen_layout). Asynchronous. */
int mgen__int4_import(const mgen__int4_src *src, int act, int layout, int n, int k, int group,
                      void *d_q, void *d_scales, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_PREPARE_IMPORT_H */
