/* test_multi_device_gpu.c -- contexts on two devices in one process (issue #54):
 *   1. a context per device (mgen_ctx_opts.device), weights quantized on each, GEMMs on both at
 *      once from two threads, each with its own stream: every result within the FP64
 *      reference's bound (test_gemm_gpu's: 2u|c| + (2u + K 2^-22) sum|a w|), and the two
 *      devices' results bit-identical where they are the same model;
 *   2. the wrong device: a call from a thread whose current device is the other one, and a
 *      GEMM given a stream of the other device, return ERR_WRONG_DEVICE (the second naming the
 *      stream's device; ERR_CUDA where libmgen was built before CUDA 13) and write nothing;
 *   3. one cache file for the node: the tuning of device 0, saved, applied by device 1's
 *      context (same model), or refused with ERR_CACHE_MISMATCH naming both devices (another
 *      model).
 * Weights, A or C of another device are not tried: without peer access the kernel faults,
 * which ends the process's CUDA context (mgen.h says what to expect).
 * Needs 2 GPUs: exits 77 (skipped) with fewer.
 * Run: build/tests/test_multi_device_gpu */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "gpu_util.h"
#include "half.h"
#include "ref.h"
#include "rng.h"

enum { N = 512, K = 1024, M = 7, GROUP = 128, REPS = 200, DEVICES = 2 };

typedef struct device_job {
  int device;
  mgen_ctx *ctx;
  cudaStream_t stream;
  mgen_weights w;
  void *a, *c;
  uint16_t out[M * N]; /* the last GEMM's result */
  mgen_status status;
  char error[256];
} device_job;

/* REPS GEMMs on the job's device and stream, then its result. */
static void *run_gemms(void *p) {
  device_job *j = p;
  j->status = cudaSetDevice(j->device) == cudaSuccess ? MGEN_OK : MGEN_ERR_CUDA;
  for (int r = 0; r < REPS && j->status == MGEN_OK; r++)
    j->status = mgen_gemm(j->ctx, MGEN_ACT_F16, M, j->a, &j->w, j->c, j->stream);
  if (j->status != MGEN_OK) {
    snprintf(j->error, sizeof j->error, "%s", mgen_ctx_last_error(j->ctx));
    return NULL;
  }
  if (cudaMemcpyAsync(j->out, j->c, sizeof j->out, cudaMemcpyDeviceToHost, j->stream) !=
          cudaSuccess ||
      cudaStreamSynchronize(j->stream) != cudaSuccess)
    j->status = MGEN_ERR_CUDA;
  return NULL;
}

static void setup(device_job *j, int device, const uint16_t *w_host, const uint16_t *a_host) {
  memset(j, 0, sizeof *j);
  j->device = device;
  CUDA_CHECK(cudaSetDevice(device));
  mgen_ctx_opts opts;
  memset(&opts, 0, sizeof opts);
  opts.device = device;
  MGEN_CHECK(NULL, mgen_ctx_create(&j->ctx, mgen_builtin_table(), &opts));
  CUDA_CHECK(cudaStreamCreate(&j->stream));
  j->w = (mgen_weights){.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_GROUP,
                        .group = GROUP, .n = N, .k = K};
  gpu_quantize(j->ctx, &j->w, w_host); /* on the current device: this one */
  j->a = gpu_alloc((size_t)M * K * 2);
  j->c = gpu_alloc((size_t)M * N * 2);
  gpu_upload(j->a, a_host, (size_t)M * K * 2);
}

int main(void) {
  gpu_require_device("test_multi_device_gpu");
  int count = 0;
  CUDA_CHECK(cudaGetDeviceCount(&count));
  if (count < DEVICES) {
    printf("test_multi_device_gpu: SKIP: needs %d GPUs, %d visible\n", DEVICES, count);
    return SKIP_EXIT;
  }
  rng r;
  rng_seed(&r, rng_test_seed("test_multi_device_gpu"));
  uint16_t *w = malloc((size_t)N * K * 2), *a = malloc((size_t)M * K * 2);
  for (size_t i = 0; i < (size_t)N * K; i++) w[i] = half_from_double(rng_uniform(&r, -0.1, 0.1));
  for (size_t i = 0; i < (size_t)M * K; i++) a[i] = half_from_double(rng_uniform(&r, -1, 1));

  /* The FP64 reference of the weights as mgen_quantize quantizes them (ref.h's rule). */
  const int rows = ref_scale_rows(K, GROUP);
  uint8_t *codes = malloc((size_t)N * K);
  uint16_t *scales = malloc((size_t)rows * N * 2);
  double *w_dq = malloc((size_t)N * K * sizeof(double));
  double *ref = malloc((size_t)M * N * sizeof(double)), *ref_abs = malloc((size_t)M * N * sizeof(double));
  ref_quantize(MGEN_ACT_F16, w, N, K, GROUP, codes, scales);
  ref_dequantize(MGEN_ACT_F16, codes, scales, N, K, GROUP, w_dq);
  ref_gemm(MGEN_ACT_F16, M, N, K, a, w_dq, ref, ref_abs);

  /* 1. both devices at once, a thread each */
  device_job jobs[DEVICES];
  for (int d = 0; d < DEVICES; d++) setup(&jobs[d], d, w, a);
  pthread_t threads[DEVICES];
  for (int d = 0; d < DEVICES; d++)
    CHECK(pthread_create(&threads[d], NULL, run_gemms, &jobs[d]) == 0, "pthread_create");
  for (int d = 0; d < DEVICES; d++) CHECK(pthread_join(threads[d], NULL) == 0, "pthread_join");
  const double u = ldexp(1.0, -11);
  for (int d = 0; d < DEVICES; d++) {
    CHECK(jobs[d].status == MGEN_OK, "device %d: %s (%s)", d, mgen_status_str(jobs[d].status),
          jobs[d].error);
    double worst = 0;
    for (size_t i = 0; i < (size_t)M * N; i++) {
      const double bound = 2 * u * fabs(ref[i]) + (2 * u + K * ldexp(1.0, -22)) * ref_abs[i];
      const double e = fabs(half_to_double(jobs[d].out[i]) - ref[i]) / bound;
      worst = e > worst || isnan(e) ? e : worst;
    }
    CHECK(worst <= 1.0, "device %d: max |error| / bound %.3g", d, worst);
    printf("device %d: %d GEMMs from its own thread, max |error| / bound %.3g\n", d, REPS, worst);
  }
  struct cudaDeviceProp p0, p1;
  CUDA_CHECK(cudaGetDeviceProperties(&p0, 0));
  CUDA_CHECK(cudaGetDeviceProperties(&p1, 1));
  const int same_model = strcmp(p0.name, p1.name) == 0 && p0.multiProcessorCount ==
                         p1.multiProcessorCount && p0.major == p1.major && p0.minor == p1.minor;
  if (same_model)
    CHECK(memcmp(jobs[0].out, jobs[1].out, sizeof jobs[0].out) == 0,
          "two %s: the same GEMM differs between devices", p0.name);

  /* 2. the wrong device: this thread's current device, then another device's stream */
  device_job *j0 = &jobs[0];
  CUDA_CHECK(cudaSetDevice(0));
  gpu_fill(j0->c, 0xFF, (size_t)M * N * 2);
  CUDA_CHECK(cudaSetDevice(1));
  gpu_expect_refused(j0->ctx, mgen_gemm(j0->ctx, MGEN_ACT_F16, M, j0->a, &j0->w, j0->c, NULL),
                     MGEN_ERR_WRONG_DEVICE, "current CUDA device is 1, the context's is 0",
                     "device 0's context called on device 1", j0->c, (size_t)M * N * 2, 0xFF);
  CUDA_CHECK(cudaSetDevice(0));
#if CUDART_VERSION >= 13000
  gpu_expect_refused(j0->ctx, mgen_gemm(j0->ctx, MGEN_ACT_F16, M, j0->a, &j0->w, j0->c,
                                        jobs[1].stream),
                     MGEN_ERR_WRONG_DEVICE, "belongs to device 1, the context's is 0",
                     "device 0's context given device 1's stream", j0->c, (size_t)M * N * 2, 0xFF);
#else
  gpu_expect_refused(j0->ctx, mgen_gemm(j0->ctx, MGEN_ACT_F16, M, j0->a, &j0->w, j0->c,
                                        jobs[1].stream),
                     MGEN_ERR_CUDA, "", "device 0's context given device 1's stream", j0->c,
                     (size_t)M * N * 2, 0xFF);
#endif

  /* 3. one cache file for the node */
  char path[] = "/tmp/mgen_multi_device_XXXXXX";
  const int fd = mkstemp(path);
  CHECK(fd >= 0, "mkstemp");
  if (fd >= 0) close(fd);
  mgen_tune_result tuned;
  MGEN_CHECK(j0->ctx, mgen_tune(j0->ctx, M, &j0->w, j0->stream, &tuned));
  MGEN_CHECK(j0->ctx, mgen_cache_save(j0->ctx, path, MGEN_CACHE_REPLACE));
  CUDA_CHECK(cudaSetDevice(1));
  int applied = -1;
  const mgen_status st = mgen_cache_load(jobs[1].ctx, path, &applied);
  if (same_model) {
    CHECK(st == MGEN_OK && applied >= 1, "device 1 loading device 0's cache: %s, %d applied (%s)",
          mgen_status_str(st), applied, mgen_ctx_last_error(jobs[1].ctx));
    const char *k0 = NULL, *k1 = NULL;
    MGEN_CHECK(jobs[1].ctx, mgen_gemm_choice(jobs[1].ctx, MGEN_ACT_F16, M, &jobs[1].w, &k1));
    CUDA_CHECK(cudaSetDevice(0));
    MGEN_CHECK(j0->ctx, mgen_gemm_choice(j0->ctx, MGEN_ACT_F16, M, &j0->w, &k0));
    CHECK(strcmp(k0, tuned.kernel) == 0 && strcmp(k1, tuned.kernel) == 0,
          "the tuned kernel %s: device 0 chooses %s, device 1 %s", tuned.kernel, k0, k1);
  } else {
    CHECK(st == MGEN_ERR_CACHE_MISMATCH && strstr(mgen_ctx_last_error(jobs[1].ctx), p1.name),
          "device 1 (%s) loading device 0's (%s) cache: %s (%s)", p1.name, p0.name,
          mgen_status_str(st), mgen_ctx_last_error(jobs[1].ctx));
  }
  remove(path);

  for (int d = 0; d < DEVICES; d++) {
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaFree(jobs[d].a));
    CUDA_CHECK(cudaFree(jobs[d].c));
    CUDA_CHECK(cudaFree(jobs[d].w.d_q));
    CUDA_CHECK(cudaFree(jobs[d].w.d_scales));
    CUDA_CHECK(cudaStreamDestroy(jobs[d].stream));
    mgen_ctx_destroy(jobs[d].ctx);
  }
  free(w), free(a), free(codes), free(scales), free(w_dq), free(ref), free(ref_abs);
  return check_exit("test_multi_device_gpu");
}
