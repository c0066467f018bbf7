/* activations.c -- mgen_quantize_act (mgen.h): the FP8 activation quantizer's checks and its
 * one kernel (quantize_act.cu). No allocation, no synchronization. Nothing here is a weight
 * preparation: the GEMM reads the codes after its grid-dependency wait, like any A.
 */
#include "core/errors.h"
#include "prepare/format_ops.h" /* mgen__misaligned */
#include "prepare/quantize_act.h"
#include "prepare/weights.h"    /* mgen__launched */

mgen_status mgen_quantize_act(mgen_ctx *ctx, mgen_act act, int m, int k, const void *d_x,
                              uint8_t *d_q, float *d_scales, void *stream) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  mgen_status st;
  if (act != MGEN_ACT_F16 && act != MGEN_ACT_BF16)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "act=%d: MGEN_ACT_F16 or MGEN_ACT_BF16",
                      (int)act);
  if (m < 1 || k < 16 || k % 16 != 0)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "m=%d, k=%d: m >= 1 and k a positive "
                      "multiple of 16", m, k);
  if (d_x == NULL || d_q == NULL || d_scales == NULL)
    return mgen__fail(ctx, MGEN_ERR_NULL_POINTER, "d_x, d_q or d_scales is NULL");
  if (mgen__misaligned(d_x, 16) || mgen__misaligned(d_q, 16) || mgen__misaligned(d_scales, 4))
    return mgen__fail(ctx, MGEN_ERR_MISALIGNED, "d_x=%p, d_q=%p (16 bytes), d_scales=%p "
                      "(4 bytes): misaligned", d_x, (void *)d_q, (void *)d_scales);
  MGEN_TRY(mgen__check_device(ctx));
  st = mgen__launched(ctx, "mgen_quantize_act",
                      mgen__quantize_act_launch((int)act, m, k, d_x, d_q, d_scales, stream));
out:
  return st;
}
