/* ring_kernels.h -- bench_ring's kernel (ring_kernels.cu): a copy ring with no work behind it. */
#ifndef MGEN_BENCH_RING_KERNELS_H
#define MGEN_BENCH_RING_KERNELS_H

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a stage's weights are fetched (ring_kernels.cu says what each does). */
enum { RING_TMA_2D = 0, RING_BULK_ROWS = 1, RING_BULK_TILE = 2 };

typedef struct ring_config {
  int n, k_steps;   /* the packed weights: k_steps rows of n 8-byte columns */
  int tile_n;       /* columns per tile (divides n; at most 256) */
  int steps;        /* rows per stage (divides k_steps) */
  int stages;       /* the ring's depth */
  int consumers;    /* consumer warpgroups (1..4) */
  int method;       /* RING_* */
  int a_rows;       /* rows of an A box per stage (multiple of 8, 0 = none) */
  int producers;    /* producer threads (1..4, dividing stages): stage i to producer i % producers */
} ring_config;

int ring_smem_bytes(const ring_config *cfg);
/* Blocks of this configuration one SM holds (cudaOccupancy...), after allowing its shared
 * memory; a cudaError_t value. */
int ring_blocks_per_sm(const ring_config *cfg, int *blocks);
/* One run over all of w (n x k_steps x 8 bytes) with `grid` blocks; `a` is an a_rows x
 * (16 k_steps) FP16 matrix where a_rows > 0. A cudaError_t value. */
int ring_launch(const ring_config *cfg, const void *w, const void *a, unsigned *sink, int grid, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MGEN_BENCH_RING_KERNELS_H */
