/* test_fp4_args.c -- the fe2m1 argument checks (fp4_bad_inputs.c) without a GPU, over a
 * context built by hand: every call must fail before any CUDA call, so CI (no device) covers
 * them; tests/gpu/test_gemm_gpu.c runs the same checks on a real context. Then a valid
 * mgen_pack_fp4 must get past them to the GPU check of its block scales, which a faked
 * capturing stream refuses (the NaN scales themselves: tests/gpu/test_import_gpu.c). */
#include <math.h>
#include <string.h>

#include "check.h"
#include "fake_table.h"
#include "fp4_bad_inputs.h"
#include "context/internal.h"

static _Alignas(16) char buf[64];
static struct mgen_ctx ctx;

static int fake_capturing(mgen_ctx *c, void *stream, cudaError_t *err) {
  (void)c, (void)stream;
  *err = cudaSuccess;
  return 1;
}

/* Without the block-scale check a valid call would go on to launch the packer (ERR_CUDA here,
 * no device); with it, the check's read-back refuses the capturing stream first. MXFP4 takes
 * any global scale (NaN included). */
static void pack_fp4_checks_scales_on_gpu(void) {
  ctx.current_device = fake_current_device;
  ctx.capturing = fake_capturing;
  for (int si = 0; si < 2; si++) {
    const int nv = si == 0, group = nv ? 16 : 32, n = 256, k = 512;
    mgen_weights w = {.wfmt = MGEN_WFMT_FE2M1, .act = MGEN_ACT_BF16,
                      .scheme = nv ? MGEN_SCHEME_NVFP4 : MGEN_SCHEME_MXFP4, .group = group,
                      .n = n, .k = k, .d_q = buf, .d_scales = buf};
    const mgen_status st = mgen_pack_fp4(&ctx, (const uint8_t *)buf, (size_t)n * k / 2,
                                         (const uint8_t *)buf, (size_t)n * k / group,
                                         nv ? 0.5f : NAN, &w, NULL);
    CHECK(st == MGEN_ERR_STREAM_CAPTURING &&
              strstr(mgen_ctx_last_error(&ctx), "mgen_pack_fp4: the stream is being captured") !=
                  NULL,
          "%s: %s (%s), expected the input check's capture refusal", nv ? "nvfp4" : "mxfp4",
          mgen_status_str(st), mgen_ctx_last_error(&ctx));
  }
}

int main(void) {
  ctx.device = 0;
  ctx.sm = 80;
  ctx.sm_count = 4;
  ctx.table = &fake_table;
  fp4_check_bad_inputs(&ctx, buf);
  pack_fp4_checks_scales_on_gpu();
  return check_exit("test_fp4_args");
}
