// fence.cu -- the end of every call that writes packed weights (quantize, pack, import).
//
// The GEMM kernels copy their first stages of weights before the grid-dependency wait
// (templates/common/mgen_launch.cuh): launched programmatically (sm_90 and later), a GEMM's
// blocks may start once every block of the stream's previous kernel has exited, before that
// kernel's writes are guaranteed visible. Were that kernel the one packing the weights, the
// early copies could read stale words. An empty kernel launched after the packing, as an
// ordinary launch, starts only once the packing has completed and its writes are visible; a
// GEMM's early copies start only once the empty kernel's block has exited.
#include <cuda_runtime.h>

#include "prepare/fence.h"

namespace {
__global__ void weights_fence() {}
}  // namespace

extern "C" int mgen__fence_weights(void *stream) {
  weights_fence<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>();
  return (int)cudaGetLastError();
}
