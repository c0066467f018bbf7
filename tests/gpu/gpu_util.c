/* gpu_util.c -- see gpu_util.h. */
#include "gpu_util.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/device_probe.h"
#include "check.h"
#include "formats/formats.h"

void gpu_require_device(const char *name) {
  int count = 0;
  char why[256];
  switch (mgen__device_probe(&count, why, sizeof why)) {
  case MGEN__PROBE_DEVICE:
    break;
  case MGEN__PROBE_NONE:
    printf("%s: SKIP: %s\n", name, why);
    exit(SKIP_EXIT);
  case MGEN__PROBE_BROKEN:
    fprintf(stderr, "%s: FAIL: %s\n", name, why);
    exit(1);
  }
  struct cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  printf("%s: device 0: %s, sm_%d%d, %d SMs\n", name, prop.name, prop.major, prop.minor,
         prop.multiProcessorCount);
  /* A narrowed run says so before anything else (ctest's registered tests unset both). */
  static const char *const narrowing[] = {"MGEN_TEST_KERNELS", "MGEN_TEST_QUICK"};
  for (size_t i = 0; i < sizeof narrowing / sizeof narrowing[0]; i++) {
    const char *v = getenv(narrowing[i]);
    if (v != NULL && v[0] != '\0')
      printf("%s: NARROWED by %s=%s: not the whole test\n", name, narrowing[i], v);
  }
  fflush(stdout);
}

int gpu_quick_mode(int argc, char **argv) {
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--quick") == 0) return 1;
  const char *env = getenv("MGEN_TEST_QUICK");
  return env != NULL && env[0] != '\0' && strcmp(env, "0") != 0;
}

int gpu_kernel_selected(const char *name) {
  const char *env = getenv("MGEN_TEST_KERNELS");
  if (env == NULL || env[0] == '\0') return 1;
  char globs[1024];
  snprintf(globs, sizeof globs, "%s", env);
  for (char *save = NULL, *g = strtok_r(globs, ",", &save); g; g = strtok_r(NULL, ",", &save))
    if (fnmatch(g, name, 0) == 0) return 1;
  return 0;
}

int gpu_default_layout(const mgen_kernel_desc *d) {
  return d->layout == mgen__wfmt_default_layout(d->wfmt);
}

int gpu_table_groups(int act, int wfmt, int (*runs)(const mgen_kernel_desc *d), int *groups, int max) {
  const mgen_table *table = mgen_builtin_table();
  int count = 0;
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    if (d->act != act || d->wfmt != wfmt || !runs(d)) continue;
    int seen = 0;
    for (int g = 0; g < count; g++) seen |= groups[g] == d->group;
    if (!seen && count < max) groups[count++] = d->group;
  }
  return count;
}

void *gpu_alloc(size_t bytes) {
  void *p = NULL;
  CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}

void gpu_quantize(mgen_ctx *ctx, mgen_weights *w, const uint16_t *host) {
  size_t qb, sb, bytes = (size_t)w->n * (size_t)w->k * 2;
  MGEN_CHECK(ctx, mgen_weights_bytes(w, &qb, &sb));
  w->d_q = gpu_alloc(qb);
  w->d_scales = gpu_alloc(sb);
  void *d_w = gpu_alloc(bytes);
  gpu_upload(d_w, host, bytes);
  MGEN_CHECK(ctx, mgen_quantize(ctx, d_w, w, NULL));
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaFree(d_w));
}

void gpu_sync(cudaStream_t stream, const char *what) {
  cudaError_t err = cudaStreamSynchronize(stream);
  if (err != cudaSuccess) {
    fprintf(stderr, "FAIL %s: %s (%s)\n", what, cudaGetErrorString(err), cudaGetErrorName(err));
    exit(1);
  }
}

void gpu_upload(void *dst, const void *src, size_t bytes) {
  CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());
}

void gpu_fill(void *dst, int byte, size_t bytes) {
  CUDA_CHECK(cudaMemset(dst, byte, bytes));
  CUDA_CHECK(cudaDeviceSynchronize());
}

void gpu_expect_refused(mgen_ctx *ctx, mgen_status got, mgen_status status, const char *text,
                        const char *what, const void *out, size_t bytes, int fill) {
  CHECK(got == status, "%s: %s (%s), expected %s", what, mgen_status_str(got),
        mgen_ctx_last_error(ctx), mgen_status_str(status));
  CHECK(strstr(mgen_ctx_last_error(ctx), text) != NULL, "%s: message '%s' lacks '%s'", what,
        mgen_ctx_last_error(ctx), text);
  unsigned char *q = malloc(bytes);
  CUDA_CHECK(cudaMemcpy(q, out, bytes, cudaMemcpyDeviceToHost));
  size_t touched = 0;
  for (size_t i = 0; i < bytes; i++) touched += q[i] != (unsigned char)fill;
  CHECK(touched == 0, "%s: %zu bytes of its output written by a refused call", what, touched);
  free(q);
}

double gpu_seconds(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
