/* mgen_demo.c -- the quick start's demo: quantize one random Llama-7B-sized layer to u4b8 on the
 * GPU, multiply a batch through libmgen and through cuBLAS FP16, and print the kernel chosen, both
 * times and the relative difference (4-bit quantization noise, about 0.1 on random weights).
 *
 * Run: build/bench/mgen_demo [M]          (default M = 16; exits 0 with a note where no GPU exists)
 * Exit status: 0; 1 on a runtime error; 2 on a usage error (found before CUDA is touched).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"
#include "cli.h"

typedef struct demo {
  mgen_ctx *ctx;
  cublasHandle_t blas;
  cudaStream_t stream;
  int m;
  mgen_weights w;
  void *d_a, *d_w, *d_c;
} demo;

static int run_mgen(void *self, int i) {
  demo *d = self;
  (void)i;
  return mgen_gemm(d->ctx, d->w.act, d->m, d->d_a, &d->w, d->d_c, (void *)d->stream) != MGEN_OK;
}

static int run_cublas(void *self, int i) {
  demo *d = self;
  (void)i;
  bench_cublas_gemm(d->blas, d->m, d->w.n, d->w.k, d->d_a, d->d_w, d->d_c);
  return 0;
}

/* ||x - y|| / ||y|| over two FP16 device arrays of `count` values. */
static double rel_diff(const void *d_x, const void *d_y, size_t count) {
  uint16_t *x = malloc(count * 2), *y = malloc(count * 2);
  if (!x || !y) bench_die("out of host memory");
  CUDA_CHECK(cudaMemcpy(x, d_x, count * 2, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(y, d_y, count * 2, cudaMemcpyDeviceToHost));
  double num = 0, den = 0;
  for (size_t i = 0; i < count; ++i) {
    const double a = bench_f16_to_f32(x[i]), b = bench_f16_to_f32(y[i]);
    num += (a - b) * (a - b);
    den += b * b;
  }
  free(x);
  free(y);
  return sqrt(num / den);
}

static const char kUsage[] =
    "usage: mgen_demo [M]\n"
    "Quantizes a random 11008x4096 layer to u4b8 and multiplies an M-row batch (default 16,\n"
    "1 to 65536) through libmgen and cuBLAS FP16. Exit status: 0; 1 runtime error; 2 usage.\n";

/* M, the one operand; usage errors exit here, before CUDA. */
static int parse_m(int argc, char **argv) {
  static const struct option options[] = {CLI_STD_OPTIONS, {NULL, 0, NULL, 0}};
  int m = 0, c;
  cli_begin("mgen_demo", kUsage);
  while ((c = cli_next(argc, argv, "h", options)) != -1)
    if (m) cli_usage_error("unexpected argument", optarg);
    else m = cli_int("M", optarg, 1, 65536);
  return m ? m : 16;
}

int main(int argc, char **argv) {
  const int m = parse_m(argc, argv);
  int devices = 0;
  char why[256];
  if (mgen_device_count(&devices, why, sizeof why) != MGEN_OK) { /* a driver, but no CUDA */
    fprintf(stderr, "mgen_demo: %s\n", why);
    return 1;
  }
  if (devices == 0) { /* a build machine: README's command 1 still succeeds */
    printf("mgen_demo: %s; the library and kernels are built, the demo is skipped\n", why);
    return 0;
  }
  demo d = {.m = m};
  CUDA_CHECK(cudaStreamCreate(&d.stream));
  MGEN_CHECK(NULL, mgen_ctx_create(&d.ctx, mgen_builtin_table(), NULL));
  CUBLAS_CHECK(cublasCreate(&d.blas));
  CUBLAS_CHECK(cublasSetStream(d.blas, d.stream));

  d.w = (mgen_weights){.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .group = 128, .n = 11008, .k = 4096};
  size_t qbytes, sbytes;
  MGEN_CHECK(d.ctx, mgen_weights_bytes(&d.w, &qbytes, &sbytes));
  d.w.d_q = bench_dmalloc(qbytes);
  d.w.d_scales = bench_dmalloc(sbytes);
  d.d_w = bench_dmalloc((size_t)d.w.n * d.w.k * 2);
  d.d_a = bench_dmalloc((size_t)d.m * d.w.k * 2);
  d.d_c = bench_dmalloc((size_t)d.m * d.w.n * 2);
  void *d_ref = bench_dmalloc((size_t)d.m * d.w.n * 2);
  bench_fill_random(d.d_w, (size_t)d.w.n * d.w.k, 1);
  bench_fill_random(d.d_a, (size_t)d.m * d.w.k, 2);
  MGEN_CHECK(d.ctx, mgen_quantize(d.ctx, d.d_w, &d.w, (void *)d.stream));

  const char *kernel = NULL;
  MGEN_CHECK(d.ctx, mgen_gemm_choice(d.ctx, d.w.act, d.m, &d.w, &kernel));
  bench_timer t;
  bench_timer_init(&t, d.stream, 20, 5, (size_t)64 << 20);
  const double us_blas = bench_time_us(&t, run_cublas, &d);
  CUDA_CHECK(cudaMemcpyAsync(d_ref, d.d_c, (size_t)d.m * d.w.n * 2, cudaMemcpyDeviceToDevice, d.stream));
  const double us_mgen = bench_time_us(&t, run_mgen, &d);
  CUDA_CHECK(cudaStreamSynchronize(d.stream));

  printf("C[%d,%d] = A[%d,%d] * W^T, u4b8 group 128\n", d.m, d.w.n, d.m, d.w.k);
  printf("  kernel      %s\n", kernel);
  printf("  libmgen     %8.2f us\n  cuBLAS FP16 %8.2f us  (speedup %.2fx)\n", us_mgen, us_blas, us_blas / us_mgen);
  printf("  ||C - C_fp16|| / ||C_fp16|| = %.3f (4-bit quantization noise)\n",
         rel_diff(d.d_c, d_ref, (size_t)d.m * d.w.n));

  bench_timer_free(&t);
  cudaFree(d_ref);
  cudaFree(d.d_c);
  cudaFree(d.d_a);
  cudaFree(d.d_w);
  cudaFree(d.w.d_scales);
  cudaFree(d.w.d_q);
  cublasDestroy(d.blas);
  mgen_ctx_destroy(d.ctx);
  cudaStreamDestroy(d.stream);
  return 0;
}
