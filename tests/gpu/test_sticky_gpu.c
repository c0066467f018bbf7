/* test_sticky_gpu.c -- libmgen after a sticky CUDA error (a kernel that traps: the process's
 * CUDA context is lost for good): its calls return MGEN_ERR_CUDA with the CUDA error's name in
 * mgen_ctx_last_error, and do not crash; mgen_ctx_destroy returns.
 * The error cannot be cleared in the process that has it, so the test runs in a child forked
 * before any CUDA call (a CUDA context does not survive fork) and the parent, which never
 * touches CUDA, judges its exit: a signal is a crash, 77 a skip. The trapping kernel stands in
 * for the default f16/u4b8/g128 kernel of the built-in table (a copy with its launcher replaced,
 * as in test_faults_gpu.c). A trap ends only this process's context (not so under MPS, where a
 * fatal fault reaches every client: do not run it there), and it is not for compute-sanitizer,
 * which would report the trap.
 * Run: build/tests/test_sticky_gpu */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "gpu_util.h"

enum { N = 4096, K = 4096, M = 64 };

int gpu_launch_trap(void *stream); /* trap_kernel.cu */

static int trap_launch(const mgen_launch_args *args, void *stream) {
  (void)args;
  return gpu_launch_trap(stream);
}

/* An mgen call that must fail with ERR_CUDA naming `error`. */
static void expect_sticky(mgen_ctx *ctx, const char *call, mgen_status st, const char *error) {
  CHECK(st == MGEN_ERR_CUDA, "%s after the trap: %s (%s), expected MGEN_ERR_CUDA", call,
        mgen_status_str(st), mgen_ctx_last_error(ctx));
  CHECK(strstr(mgen_ctx_last_error(ctx), error) != NULL, "%s: the message lacks %s: '%s'", call,
        error, mgen_ctx_last_error(ctx));
}

static int child(void) {
  gpu_require_device("test_sticky_gpu");
  mgen_ctx *ctx;
  const mgen_table *builtin = mgen_builtin_table();
  mgen_weights w = {.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_GROUP,
                    .group = 128, .n = N, .k = K};
  const char *victim = NULL, *other = NULL;
  MGEN_CHECK(ctx, mgen_ctx_create(&ctx, builtin, NULL));
  MGEN_CHECK(ctx, mgen_gemm_choice(ctx, MGEN_ACT_F16, M, &w, &victim));
  mgen_ctx_destroy(ctx);
  int device = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  const int sm = 10 * major + minor;

  /* The victim's launcher traps; another kernel of the key stays real. */
  mgen_kernel_desc *kernels = malloc(builtin->count * sizeof *kernels);
  memcpy(kernels, builtin->kernels, builtin->count * sizeof *kernels);
  for (size_t i = 0; i < builtin->count; i++) {
    const mgen_kernel_desc *d = &kernels[i];
    if (strcmp(d->name, victim) == 0) {
      kernels[i].launch = trap_launch;
    } else if (other == NULL && d->op == MGEN_OP_DENSE && d->act == MGEN_ACT_F16 &&
               d->wfmt == MGEN_WFMT_U4B8 && gpu_default_layout(d) &&
               d->group == 128 && mgen_kernel_runs_on(d, sm)) {
      other = d->name;
    }
  }
  const mgen_table table = {kernels, builtin->count, builtin->hash, "sticky"};
  MGEN_CHECK(ctx, mgen_ctx_create(&ctx, &table, NULL));
  uint16_t *host = malloc((size_t)N * K * 2);
  for (size_t i = 0; i < (size_t)N * K; i++) host[i] = (uint16_t)(0x3000 + i % 977); /* finite */
  gpu_quantize(ctx, &w, host);
  void *a = gpu_alloc((size_t)M * K * 2), *c = gpu_alloc((size_t)M * N * 2);
  void *dense = gpu_alloc((size_t)N * K * 2); /* mgen_quantize's input after the trap */
  gpu_upload(a, host, (size_t)M * K * 2);
  gpu_upload(dense, host, (size_t)N * K * 2);
  if (other != NULL) MGEN_CHECK(ctx, mgen_gemm_kernel(ctx, other, MGEN_ACT_F16, M, a, &w, c, NULL));
  CUDA_CHECK(cudaDeviceSynchronize());

  /* The trap: its launch succeeds; the error shows at the next synchronization, and stays. */
  MGEN_CHECK(ctx, mgen_gemm_kernel(ctx, victim, MGEN_ACT_F16, M, a, &w, c, NULL));
  const cudaError_t sticky = cudaDeviceSynchronize();
  CHECK(sticky != cudaSuccess, "the trapping kernel ran without an error");
  const char *name = cudaGetErrorName(sticky);
  printf("test_sticky_gpu: %s trapped: %s (%s)\n", victim, name, cudaGetErrorString(sticky));
  (void)cudaGetLastError();
  CHECK(cudaDeviceSynchronize() == sticky, "the error is not sticky: %s",
        cudaGetErrorName(cudaDeviceSynchronize()));

  /* Every kind of call after it: a real kernel, the default choice, quantize, tuning. */
  if (other != NULL)
    expect_sticky(ctx, other, mgen_gemm_kernel(ctx, other, MGEN_ACT_F16, M, a, &w, c, NULL), name);
  expect_sticky(ctx, "mgen_gemm", mgen_gemm(ctx, MGEN_ACT_F16, M, a, &w, c, NULL), name);
  expect_sticky(ctx, "mgen_quantize", mgen_quantize(ctx, dense, &w, NULL), name);
  mgen_tune_result r;
  expect_sticky(ctx, "mgen_tune", mgen_tune(ctx, M, &w, NULL, &r), name);
  mgen_ctx *again = NULL;
  mgen_status st = mgen_ctx_create(&again, mgen_builtin_table(), NULL);
  CHECK(st == MGEN_ERR_CUDA && again == NULL, "mgen_ctx_create after the trap: %s",
        mgen_status_str(st));
  if (again != NULL) mgen_ctx_destroy(again);
  mgen_ctx_destroy(ctx); /* frees what it can; must return */
  free(host);
  free(kernels);
  return check_exit("test_sticky_gpu");
}

int main(void) {
  fflush(stdout);
  const pid_t pid = fork();
  if (pid < 0) {
    perror("test_sticky_gpu: fork");
    return 1;
  }
  if (pid == 0) _exit(child());
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) {
    perror("test_sticky_gpu: waitpid");
    return 1;
  }
  if (WIFSIGNALED(status)) {
    fprintf(stderr, "test_sticky_gpu: FAIL: the child crashed (signal %d) after the sticky error\n",
            WTERMSIG(status));
    return 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
