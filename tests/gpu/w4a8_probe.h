/* w4a8_probe.h -- the W4A8 wgmma core on one warpgroup (tests/gpu/w4a8_probe.cu). */
#ifndef MGEN_TEST_W4A8_PROBE_H
#define MGEN_TEST_W4A8_PROBE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  W4A8_PROBE_N = 64,
  W4A8_PROBE_M = 8,
  W4A8_PROBE_K = 128,
  W4A8_PROBE_TILES = W4A8_PROBE_K / 16,
  W4A8_PROBE_BLOCKS = W4A8_PROBE_K / 32
};

/* C^T = W A^T on the GPU by wgmma.mma_async.m64n8k32 .e4m3 over the words' E4M3 fragments
 * (formats/<wfmt>/mma_e4m3.cuh; fe2m1 != 0: DequantFe2m1E4m3, else DequantU4b8E4m3):
 * words[t][kb]: thread t's (warp t / 32 the 16 rows 16 (t / 32) ..) W4A8 word of 16-deep tile kb,
 * u[n][b] the E8M0 offset of row n's 32-deep block b (fe2m1, MXFP4: 0..11; unread for u4b8),
 * a [M][K] E4M3 bytes row-major, c_t [N][M] the FP32 sums as the fragments read (times
 * 2^kLog2: the partial's). The output buffer is poisoned (NaN) before the launch. Returns the
 * CUDA error (0: done, synchronized). */
int w4a8_probe_run(int fe2m1, const uint32_t words[128][W4A8_PROBE_TILES],
                   const uint8_t u[W4A8_PROBE_N][W4A8_PROBE_BLOCKS], const uint8_t a[W4A8_PROBE_M][W4A8_PROBE_K],
                   float c_t[W4A8_PROBE_N][W4A8_PROBE_M]);

#ifdef __cplusplus
}
#endif
#endif
