/* layer_kernels.h -- bench_layer's stand-in kernels (layer_kernels.cu): the kernels of a
 * decoder layer at decode that are not GEMMs (RMSNorm, attention, SiLU * mul, residual add),
 * each doing the memory traffic of the real one, launched as engines launch them; plus the
 * reference weights' dequantization and a spin kernel for event timing.
 *
 * Every stand-in is a programmatic dependent launch where layer_launch.pdl is set (PDL exists
 * from sm_90 on; before, the wait and trigger compile to nothing): all its threads call griddepcontrol.wait before their
 * first global access, and griddepcontrol.launch_dependents right after it (trigger_start, as
 * engines' kernels often do so that the next kernel's prologue overlaps this one) or after
 * their last write. Data is FP16 or BF16 (bf16), row-major, rows of a multiple of 8 elements,
 * 16-byte aligned. Each entry point returns a cudaError_t value (the launch's).
 */
#ifndef MGEN_BENCH_LAYER_KERNELS_H
#define MGEN_BENCH_LAYER_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct layer_launch {
  cudaStream_t stream;
  int bf16;          /* 0: FP16 data, 1: BF16 */
  int pdl;           /* 1: programmatic dependent launch */
  int trigger_start; /* 1: launch_dependents right after the wait; 0: after the last write */
} layer_launch;

/* y[m, hidden] = rmsnorm(s) * gamma, s = x, or s = x + add written to sum (add non-NULL: the
 * fused residual add + RMSNorm). One block per row. */
int layer_rmsnorm(const layer_launch *l, int m, int hidden, const void *x, const void *add,
                  const void *gamma, void *sum, void *y);
/* Attention at decode: `blocks` blocks stream kv_bytes of KV cache (16-byte loads; kv_bytes a
 * multiple of 16) and write o[m, q_dim] = the q columns of qkv (row stride qkv_ld elements),
 * so that the O projection reads defined values. sink: `blocks` words, written only if a
 * block's checksum of the cache is one value random data never gives. */
int layer_attention(const layer_launch *l, int m, int q_dim, int qkv_ld, const void *qkv,
                    const void *kv, size_t kv_bytes, int blocks, void *o, unsigned *sink);
/* out[m, inter] = silu(gate) * up, with gate_up[m, 2 inter] = [gate | up] per row. */
int layer_silu_mul(const layer_launch *l, int m, int inter, const void *gate_up, void *out);
/* out[m, hidden] = a + b (the residual add; out may be a). */
int layer_add(const layer_launch *l, int m, int hidden, const void *a, const void *b, void *out);

/* One thread that spins for `ns` nanoseconds of the GPU's global timer: queued before a timed
 * run, it keeps the GPU busy while the host enqueues the run's launches. */
int layer_spin(long long ns, cudaStream_t stream);

/* The reference weights: w[n, k] (row-major, FP16 or BF16) =
 *   act((values[codes[r, c]] - (zeros ? zeros[r, g] : 0)) * scales[r, g] * global)
 * with g = c / group (group = k: one scale per row), scales and zeros [n, k / group], one
 * code 0..15 per byte. FP32 arithmetic, one rounding. */
int layer_dequant(int bf16, int n, int k, int group, const uint8_t *codes, const float values[16],
                  const float *scales, const uint8_t *zeros, float global, void *w,
                  cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MGEN_BENCH_LAYER_KERNELS_H */
