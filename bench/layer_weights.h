/* layer_weights.h -- bench_layer's weights: random quantized weights of one format made as a
 * checkpoint stores them, packed by libmgen (mgen_pack_weights), beside their exact 16-bit
 * dequantization for cuBLAS. The two GEMMs then multiply the same numbers, so their outputs
 * differ by accumulation order only, and a broken kernel cannot pass bench_layer's check.
 *
 * The checkpoint (layer_ckpt.h) makes every weight exact in FP16 and BF16. For bench/ only:
 * failures exit (bench_util.h).
 */
#ifndef MGEN_BENCH_LAYER_WEIGHTS_H
#define MGEN_BENCH_LAYER_WEIGHTS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include <mgen/mgen.h>

typedef struct layer_weight {
  mgen_weights q;        /* packed codes and scales (device buffers this struct owns) */
  void *w16;             /* n x k dequantized, of type q.act (device) */
  size_t qbytes, sbytes; /* of q.d_q and q.d_scales */
} layer_weight;

/* Random n x k weights of format (wfmt, scheme, group) for activations `act`, drawn from
 * `seed`, packed on `stream` by ctx and dequantized into w16. Synchronous. */
void layer_weight_make(layer_weight *w, mgen_ctx *ctx, cudaStream_t stream, mgen_act act, int wfmt,
                       int scheme, int group, int n, int k, uint64_t seed);
/* A byte copy of src, packed and 16-bit, in new buffers (a model's next layer: the same
 * numbers elsewhere in memory, so that no layer finds its weights in L2). */
void layer_weight_clone(layer_weight *dst, const layer_weight *src, cudaStream_t stream);
void layer_weight_free(layer_weight *w);

#endif /* MGEN_BENCH_LAYER_WEIGHTS_H */
