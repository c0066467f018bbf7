/* device_probe.h -- "is there a CUDA device to run on?", telling a machine without a GPU (GPU
 * tests skip, the demo skips) from a GPU machine whose CUDA stack is broken (they fail loudly).
 * Used by the context (its "CUDA cannot start" message) and tests/gpu; programs outside the
 * library ask mgen_device_count (mgen.h), which is built on it.
 */
#ifndef MGEN_DEVICE_PROBE_H
#define MGEN_DEVICE_PROBE_H

#include <stddef.h>

#include <cuda_runtime_api.h>

typedef enum mgen__probe {
  MGEN__PROBE_DEVICE = 0, /* at least one device */
  MGEN__PROBE_NONE = 1,   /* no device here: cudaErrorNoDevice, 0 devices, or no driver at all */
  MGEN__PROBE_BROKEN = 2  /* anything else, e.g. a driver installed but older than the runtime */
} mgen__probe;

/* The verdict for cudaGetDeviceCount's result: `err`, `count`, and whether an NVIDIA driver is
 * installed (libcuda.so.1 loads or /dev/nvidiactl exists). cudaErrorInsufficientDriver means
 * "no driver" only where none is installed; where one is, that driver is too old or damaged.
 * Pure: tests/runtime/test_device_probe.c checks every case. */
mgen__probe mgen__probe_classify(cudaError_t err, int count, int driver_installed);

/* Runs cudaGetDeviceCount and classifies it; *count gets the device count (0 unless DEVICE)
 * and `why` (may be NULL) the reason, e.g. "no NVIDIA driver installed (libcuda.so.1 not
 * found)" or "cudaGetDeviceCount: cudaErrorInsufficientDriver (...) although an NVIDIA driver
 * is installed". */
mgen__probe mgen__device_probe(int *count, char *why, size_t why_size);

#endif /* MGEN_DEVICE_PROBE_H */
