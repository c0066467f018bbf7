/* wgmma_rate_kernels.h -- bench_wgmma_rate's kernels (wgmma_rate_kernels.cu). */
#ifndef MGEN_BENCH_WGMMA_RATE_KERNELS_H
#define MGEN_BENCH_WGMMA_RATE_KERNELS_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One launch: `blocks` blocks of `warpgroups` warpgroups, each running `iters` groups of four
 * m64n{n}k16 FP16 wgmma (n = 8, 16, 32, 64, 128 or 256; A in registers if rs, else in shared
 * memory), waiting for all but `pending` (0 or 1) groups after each. A cudaError_t value. */
int wgmma_rate_launch(int n, int rs, int pending, int warpgroups, int blocks, int iters, float *sink,
                      cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MGEN_BENCH_WGMMA_RATE_KERNELS_H */
