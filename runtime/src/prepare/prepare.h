/* prepare.h -- the device side of weight preparation (prepare.cu), called by weights.c.
 * Each returns a cudaError_t value (0 on success) and only enqueues work on `stream`.
 * Arguments are checked by the caller: n, k multiples of 64, group 0 (per channel) or a
 * divisor of k, 16-byte aligned outputs of mgen_weights_bytes() size.
 */
#ifndef MGEN_PREPARE_H
#define MGEN_PREPARE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* d_w: n x k row-major of type `act` (MGEN_ACT_F16 or MGEN_ACT_BF16) -> packed codes d_q
 * and packed scales d_scales of the same type. */
int mgen__quantize_u4b8(const void *d_w, int act, int n, int k, int group, void *d_q,
                        void *d_scales, void *stream);

/* d_codes: n x k bytes (low nibble used), d_scales_src: (k/group or 1) x n 16-bit scales ->
 * packed codes d_q and packed scales d_scales. */
int mgen__pack_u4b8(const uint8_t *d_codes, const void *d_scales_src, int n, int k, int group,
                    void *d_q, void *d_scales, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_PREPARE_H */
