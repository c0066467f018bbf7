/* fence.h -- mgen__fence_weights (fence.cu): enqueued on `stream` after every call that writes
 * packed weights, so that a GEMM launched next on the stream, which copies weights before its
 * grid-dependency wait, reads them complete. Returns a cudaError_t value (0 on success).
 */
#ifndef MGEN_FENCE_H
#define MGEN_FENCE_H

#ifdef __cplusplus
extern "C" {
#endif

int mgen__fence_weights(void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_FENCE_H */
