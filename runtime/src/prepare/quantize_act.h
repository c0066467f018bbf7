/* quantize_act.h -- the FP8 activation quantizer's kernel (quantize_act.cu) behind
 * mgen_quantize_act (activations.c): rows of FP16 or BF16 to E4M3 codes with one FP32 scale
 * per row, by mgen.h's rule. Enqueues one ordinary kernel on `stream` and returns a
 * cudaError_t value (0 on success). Arguments are checked by the caller: act MGEN_ACT_F16 or
 * MGEN_ACT_BF16, 1 <= m < 2^31, k a positive multiple of 16, x and q 16-byte aligned, scales
 * 4-byte aligned.
 */
#ifndef MGEN_QUANTIZE_ACT_H
#define MGEN_QUANTIZE_ACT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int mgen__quantize_act_launch(int act, int m, int k, const void *x, uint8_t *q, float *scales,
                              void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_QUANTIZE_ACT_H */
