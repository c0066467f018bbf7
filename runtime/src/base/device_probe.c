/* device_probe.c -- see device_probe.h; and mgen_device_count (mgen.h), the probe's public face. */
#include "base/device_probe.h"

#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#include "mgen/mgen.h"

mgen__probe mgen__probe_classify(cudaError_t err, int count, int driver_installed) {
  if (err == cudaSuccess) return count > 0 ? MGEN__PROBE_DEVICE : MGEN__PROBE_NONE;
  if (err == cudaErrorNoDevice) return MGEN__PROBE_NONE;
  if (err == cudaErrorInsufficientDriver && !driver_installed) return MGEN__PROBE_NONE;
  return MGEN__PROBE_BROKEN;
}

/* The driver's user-space library or its control device: either means a driver is installed. */
static int driver_installed(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib != NULL) {
    dlclose(lib);
    return 1;
  }
  return access("/dev/nvidiactl", F_OK) == 0;
}

mgen__probe mgen__device_probe(int *count, char *why, size_t why_size) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  const int driver = err == cudaErrorInsufficientDriver ? driver_installed() : 1;
  mgen__probe verdict = mgen__probe_classify(err, n, driver);
  *count = verdict == MGEN__PROBE_DEVICE ? n : 0;
  if (why == NULL || why_size == 0) return verdict;
  if (verdict == MGEN__PROBE_DEVICE)
    snprintf(why, why_size, "%d CUDA device(s)", n);
  else if (verdict == MGEN__PROBE_NONE && err == cudaErrorInsufficientDriver)
    snprintf(why, why_size, "no NVIDIA driver installed (libcuda.so.1 not found, no "
             "/dev/nvidiactl)");
  else if (verdict == MGEN__PROBE_NONE)
    snprintf(why, why_size, "no CUDA device (%s)", err == cudaSuccess ? "0 devices" :
             cudaGetErrorName(err));
  else
    snprintf(why, why_size, "CUDA is broken on this machine: cudaGetDeviceCount: %s (%s)%s",
             cudaGetErrorName(err), cudaGetErrorString(err),
             err == cudaErrorInsufficientDriver ? " although an NVIDIA driver is installed: "
             "it is older than this CUDA runtime, or damaged" : "");
  return verdict;
}

mgen_status mgen_device_count(int *count, char *why, size_t why_size) {
  if (count == NULL) return MGEN_ERR_NULL_POINTER;
  int n = 0;
  if (mgen__device_probe(&n, why, why_size) == MGEN__PROBE_BROKEN) return MGEN_ERR_CUDA;
  *count = n;
  return MGEN_OK;
}
