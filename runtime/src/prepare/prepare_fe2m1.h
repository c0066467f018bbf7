/* prepare_fe2m1.h -- the device side of fe2m1 (FP4 E2M1) weight preparation (prepare_fe2m1.cu),
 * called by weights.c. Each returns a cudaError_t value (0 on success) and only enqueues work on
 * `stream`; nothing is allocated. Arguments are checked by the caller: n, k as layout.h's
 * preconditions, scheme MGEN_SCHEME_NVFP4 (group 16) or MGEN_SCHEME_MXFP4 (group 32), 16-byte
 * aligned outputs of mgen_weights_bytes() size (d_scales: mgen__scale_rows x n bytes, then n
 * FP32 column factors at mgen__fe2m1_column_offset; K padding included).
 */
#ifndef MGEN_PREPARE_FE2M1_H
#define MGEN_PREPARE_FE2M1_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* NVFP4's per-tensor scale: amax / (6 * 448), the largest E2M1 value times the largest E4M3. */
#define MGEN_NVFP4_GLOBAL_DIVISOR 2688.0f

/* d_w: n x k of type `act` (mgen_act: FP16 or BF16), row-major -> packed codes d_q and the
 * packed scale buffer d_scales, in `layout` (a resolved mgen_layout: MGEN_LAYOUT_MMA, or
 * MGEN_LAYOUT_E4M3 with MXFP4 only). The recipes are in prepare_fe2m1.cu. */
int mgen__quantize_fe2m1(int act, int scheme, int layout, const void *d_w, int n, int k, void *d_q,
                         void *d_scales, void *stream);

/* Checkpoint repack for activations `act` (mgen_act: the words' bit order, layout.h) in
 * `layout` (as mgen__quantize_fe2m1's).
 * d_packed: n x k/2 bytes, two codes per byte, low nibble first;
 * d_block_scales: n x (k/group) E4M3 (NVFP4) or E8M0 (MXFP4) bytes, row = output column, none
 * NaN (mgen__check_pack_inputs first).
 * column_factor: NVFP4's FP32 column factor (global_scale * 2^7), the same for every column;
 * ignored for MXFP4, whose factors come from the scales. */
int mgen__pack_fe2m1(int act, int scheme, int layout, const uint8_t *d_packed,
                     const uint8_t *d_block_scales, float column_factor, int n, int k, void *d_q,
                     void *d_scales, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_PREPARE_FE2M1_H */
