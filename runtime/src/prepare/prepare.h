/* prepare.h -- the device side of weight preparation (prepare.cu), called by weights.c.
 * Each returns a cudaError_t value (0 on success) and only enqueues work on `stream`.
 * Arguments are checked by the caller: n and k as layout.h's preconditions, group 0 (per
 * channel) or a divisor of k, 16-byte aligned outputs of mgen_weights_bytes() size. The
 * outputs are the packed layout of layout.h, K padding included.
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

/* d_codes: n x k bytes (codes 0..15: mgen__check_u4b8_inputs first), d_scales_src:
 * (k/group or 1) x n 16-bit scales of type `act` (the padded rows' 1.0) -> packed codes d_q
 * and packed scales d_scales. */
int mgen__pack_u4b8(const uint8_t *d_codes, const void *d_scales_src, int act, int n, int k,
                    int group, void *d_q, void *d_scales, void *stream);

/* The inputs of mgen__pack_u4b8 checked on the GPU: first[0] = the index of the first code
 * above 15, first[1] = the index of the first non-finite scale of type `act` (all ones: none).
 * d_scratch: 16 bytes of device memory, 8-byte aligned, overwritten. Blocks until the stream
 * has run the check (one 16-byte read-back); not while the stream is being captured. */
int mgen__check_u4b8_inputs(const uint8_t *d_codes, const void *d_scales_src, int act, int n,
                            int k, int group, void *d_scratch, void *stream,
                            unsigned long long first[2]);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_PREPARE_H */
