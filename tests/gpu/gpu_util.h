/* gpu_util.h -- shared plumbing of the GPU tests: skip without a device (exit 77, ctest's
 * SKIP_RETURN_CODE), checked CUDA and mgen calls, the --quick mode for compute-sanitizer. */
#ifndef MGEN_TEST_GPU_UTIL_H
#define MGEN_TEST_GPU_UTIL_H

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "mgen/mgen.h"

#define SKIP_EXIT 77

/* Every CUDA call of the tests goes through this: a failure ends the test (exit 1). */
#define CUDA_CHECK(call)                                                                    \
  do {                                                                                      \
    cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) {                                                                \
      fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call,                   \
              cudaGetErrorString(e_), cudaGetErrorName(e_));                                \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

/* An mgen call that must succeed (exit 1 with its status and last_error otherwise). */
#define MGEN_CHECK(ctx, call)                                                               \
  do {                                                                                      \
    mgen_status s_ = (call);                                                                \
    if (s_ != MGEN_OK) {                                                                    \
      fprintf(stderr, "%s:%d: %s: %s: %s\n", __FILE__, __LINE__, #call, mgen_status_str(s_), \
              mgen_ctx_last_error(ctx));                                                    \
      exit(1);                                                                              \
    }                                                                                       \
  } while (0)

/* Exits with SKIP_EXIT where this machine has no GPU (no device, or no NVIDIA driver at all),
 * and with 1, loudly, where CUDA is broken (e.g. a driver older than the runtime): a GPU
 * machine with a broken driver must not show the GPU tests as skipped (device_probe.h). */
void gpu_require_device(const char *name);

/* --quick on the command line or MGEN_TEST_QUICK=1: small shapes only (compute-sanitizer). */
int gpu_quick_mode(int argc, char **argv);

/* Whether the environment's MGEN_TEST_KERNELS (a glob or a comma-separated list of globs)
 * selects kernel `name`; every kernel when it is unset or empty. For running a subset under
 * the slower compute-sanitizer tools (racecheck). */
int gpu_kernel_selected(const char *name);

/* Whether kernel d reads weights packed in its format's default layout, the layout the tests
 * pack unless they say otherwise (the e4m3 layout's W4A8 kernels are test_w4a8_gpu's). */
int gpu_default_layout(const mgen_kernel_desc *d);

/* The distinct groups (at most `max`) of the builtin table's kernels of (act, wfmt) for which
 * runs(d) is true, in table order, into groups; returns their count. */
int gpu_table_groups(int act, int wfmt, int (*runs)(const mgen_kernel_desc *d), int *groups, int max);

/* cudaMalloc that exits on failure. */
void *gpu_alloc(size_t bytes);

/* Host-to-device copy and byte fill that are complete on return, for every stream: plain
 * cudaMemcpy from pageable memory may return before its DMA lands and cudaMemset runs on the
 * legacy stream, neither of which a cudaStreamNonBlocking stream waits for. */
/* Synchronizes `stream`; a failure (a device fault poisons the context) ends the test (exit 1)
 * naming `what`. */
void gpu_sync(cudaStream_t stream, const char *what);

void gpu_upload(void *dst, const void *src, size_t bytes);
void gpu_fill(void *dst, int byte, size_t bytes);

/* A refused call (its status `got`) against the expected status and a text its message must
 * contain; the `bytes` of its output `out` (packed weights, C), filled with `fill` before the
 * call, must be untouched. Failures are counted as CHECK counts them (check.h), named by
 * `what`. */
void gpu_expect_refused(mgen_ctx *ctx, mgen_status got, mgen_status status, const char *text,
                        const char *what, const void *out, size_t bytes, int fill);

/* Quantizes `host` (w->n x w->k values of w->act, row-major) on the GPU into w, whose format
 * fields are set: allocates w->d_q and w->d_scales (mgen_weights_bytes; the caller frees them),
 * and returns once they are written. Exits on failure. */
void gpu_quantize(mgen_ctx *ctx, mgen_weights *w, const uint16_t *host);

/* Seconds since an arbitrary origin (wall clock). */
double gpu_seconds(void);

/* The array of a test's mode, --race, --quick or the full run (race_a, quick_a, full_a: arrays
 * of one element type): its first element, and its length into *n. */
#define GPU_MODE_ARRAY(race, quick, race_a, quick_a, full_a, n)                               \
  ((race)    ? (*(n) = sizeof(race_a) / sizeof(race_a)[0], (race_a))                           \
   : (quick) ? (*(n) = sizeof(quick_a) / sizeof(quick_a)[0], (quick_a))                        \
             : (*(n) = sizeof(full_a) / sizeof(full_a)[0], (full_a)))

#endif /* MGEN_TEST_GPU_UTIL_H */
