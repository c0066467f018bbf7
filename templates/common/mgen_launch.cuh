// mgen_launch.cuh -- how every family's kernel is launched and how it meets the launches beside
// it on the stream: programmatic dependent launch (PDL) where mgen_launch_args.pdl says so.
//
// With PDL (sm_90 and later) a kernel's blocks may start while the stream's previous kernel is
// still draining. Every thread of a kernel calls grid_dependency_wait() before its first access
// to A, C or the workspace: it returns once the previous kernel has finished and its writes are
// visible, so the results and their order are those of an ordinary launch. The packed weights
// may be read before it: they are read-only from their preparation to their last GEMM, and the
// library's preparing calls end with a fence kernel (mgen.h "Weights are read-only", runtime
// prepare/fence.cu); so the first stage's weights stream while the previous kernel drains.
// A block calls launch_dependents() where its work ends
// (or triggers by exiting), which lets the stream's next kernel start its blocks the same way.
// Not earlier: triggered at a block's start, the next kernel's blocks sat waiting beside the
// running ones and decode under graph replay ran 12-16% slower (H200, bench/notes.md "v15");
// triggered at the end, 1.5-2% faster. Without PDL both are no-ops.
#pragma once
#include <cuda_runtime.h>

#include <utility>

namespace mgen {

__device__ __forceinline__ void grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// The rows of a moe launch's sorted list in use (mgen_kernel.h mgen_moe_op_args): the route
// kernel before it on the stream writes *num_padded, so a kernel reads it after
// grid_dependency_wait(); held within 0..capacity, so that a bad count reads no slab past the
// list. Both families divide it by their tile_m (their m_slabs_of).
__device__ __forceinline__ int moe_live_rows(const int* num_padded, int capacity) {
  const int rows = *num_padded;
  return rows < 0 ? 0 : rows < capacity ? rows : capacity;
}

// Whether row id `id` of a moe launch's sorted list is a pair (0 <= id < pairs) or padding
// (the route's fill value, or any id a bad route wrote): padding rows read zeros and store nothing.
__device__ __forceinline__ bool moe_is_pair(int id, int pairs) { return (unsigned)id < (unsigned)pairs; }

// The local expert of pair `pair` (-1: an id out of range, or an expert the map does not route
// here): topk_ids[pair] through the optional map (global expert -> local, -1 for another
// device's). The route kernel counts and sorts by it; an unsorted moe GEMM finds a slab's expert.
__device__ __forceinline__ int moe_local_expert(const int* topk_ids, const int* expert_map, int experts,
                                                int local, int pair) {
  const int e = topk_ids[pair];
  if ((unsigned)e >= (unsigned)experts) return -1;
  const int l = expert_map != nullptr ? expert_map[e] : e;
  return (unsigned)l < (unsigned)local ? l : -1;
}

// kernel<<<grid, block, smem, stream>>>(args...), as a programmatic dependent launch when pdl.
template <class... Params, class... Args>
inline cudaError_t launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                          bool pdl, Args&&... args) {
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = smem;
  config.stream = stream;
  config.attrs = attr;
  config.numAttrs = pdl ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace mgen
