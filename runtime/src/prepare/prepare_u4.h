/* prepare_u4.h -- the device side of u4 weight preparation (prepare_u4.cu), called by
 * u4_ops.c. Each returns a cudaError_t value (0 on success) and only enqueues work on `stream`;
 * nothing is allocated. Arguments are checked by the caller: n and k as layout.h's
 * preconditions, group 0 (per channel) or a divisor of k, 16-byte aligned outputs of
 * mgen_weights_bytes() size: d_q the codes, d_scales the scales and, at mgen__zero_offset, the
 * zero points (layout.h, "Zero points"; K padding included).
 */
#ifndef MGEN_PREPARE_U4_H
#define MGEN_PREPARE_U4_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* d_w: n x k row-major of type `act` (MGEN_ACT_F16 or MGEN_ACT_BF16) -> packed codes in
 * `layout` (a resolved mgen_layout: MGEN_LAYOUT_MMA or MGEN_LAYOUT_E4M3), scales of the same
 * type and zero points (the recipe: mgen.h, mgen_quantize; prepare_u4.cu). */
int mgen__quantize_u4(const void *d_w, int act, int layout, int n, int k, int group, void *d_q,
                      void *d_scales, void *stream);

/* d_codes: n x k bytes, d_zeros: (k/group or 1) x n bytes (codes and zeros 0..15:
 * mgen__check_pack_inputs first), d_scales_src: (k/group or 1) x n 16-bit scales of type
 * `act` -> packed codes d_q in `layout` (as above) and the packed scale buffer d_scales
 * (padded rows: scale 1.0, zero 8; padded codes 8). */
int mgen__pack_u4(const uint8_t *d_codes, const void *d_scales_src, const uint8_t *d_zeros,
                  int act, int layout, int n, int k, int group, void *d_q, void *d_scales,
                  void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_PREPARE_U4_H */
