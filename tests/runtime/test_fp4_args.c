/* test_fp4_args.c -- the fe2m1 argument checks (fp4_bad_inputs.c) without a GPU, over a
 * context built by hand: every call must fail before any CUDA call, so CI (no device) covers
 * them; tests/gpu/test_gemm_gpu.c runs the same checks on a real context. */
#include <string.h>

#include "check.h"
#include "fake_table.h"
#include "fp4_bad_inputs.h"
#include "context/internal.h"

static _Alignas(16) char buf[64];
static struct mgen_ctx ctx;

int main(void) {
  ctx.device = 0;
  ctx.sm = 80;
  ctx.sm_count = 4;
  ctx.table = &fake_table;
  fp4_check_bad_inputs(&ctx, buf);
  return check_exit("test_fp4_args");
}
