// trap_kernel.cu -- a kernel that executes `trap` (a device-side abort) for test_sticky_gpu.c:
// its failure is sticky, the process's CUDA context is lost for good.
#include <cuda_runtime.h>

static __global__ void trap_kernel(void) { __trap(); }

// Launches it on `stream`; returns the launch's cudaError_t (success: the trap comes later).
extern "C" int gpu_launch_trap(void *stream) {
  trap_kernel<<<1, 32, 0, (cudaStream_t)stream>>>();
  return (int)cudaGetLastError();
}
