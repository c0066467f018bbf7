/* bench_wgmma_rate.c -- how fast wgmma m64nNk16 (FP16, FP32 accumulate) runs on this GPU at each
 * n the wgmma family's tiles use, A in registers ("rs": the family's dequantized weights) or in
 * shared memory ("ss"), for 1-4 warpgroups per SM, beside cuBLAS FP16 8192^3 measured in the
 * same run (wgmma_rate_kernels.cu says what runs). The tensor-core ceiling of a tile with n rows
 * of activations: at short M the family's tiles run n = 8 .. 64. One CSV row per configuration:
 *
 *   bench_wgmma_rate [--n 8,16,32,64,128,256] [--warpgroups 1,2,4] [--mode rs,ss]
 *                    [--pending 0,1] [--iters 4096] [--reps 20] [--warmup 3]
 *
 * One block per SM; n >= 128 runs at most two warpgroups. `over_cublas` is the rate (2 x
 * multiply-adds per second) over cuBLAS's; ns_per_wgmma the time per instruction of one
 * warpgroup's sequence. Needs sm_90 (exits 0 with a message elsewhere). Exit status 0; 1 on a
 * CUDA error; 2 on a usage error. */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "bench_util.h"
#include "cli.h"
#include "wgmma_rate_kernels.h"

enum { kMaxList = 8 };  /* at most this many values per option (bench_list holds more) */

typedef struct job {
  int n, rs, pending, warpgroups, blocks, iters;
  float *sink;
  cudaStream_t stream;
} job;

static int launch(void *self, int i) {
  const job *j = self;
  const int rc = wgmma_rate_launch(j->n, j->rs, j->pending, j->warpgroups, j->blocks, j->iters, j->sink, j->stream);
  if (rc != cudaSuccess && i == 0) return 1;
  CUDA_CHECK((cudaError_t)rc);
  return 0;
}

static const char kUsage[] =
    "usage: bench_wgmma_rate [--n LIST] [--warpgroups LIST] [--mode rs,ss] [--pending 0,1]\n"
    "                        [--iters N] [--reps N] [--warmup N]\n"
    "The rate of wgmma m64nNk16 (FP16) per n, A in registers or shared memory, beside cuBLAS\n"
    "FP16 8192^3 in the same run. Exit status: 0; 1 CUDA error; 2 usage error.\n";

int main(int argc, char **argv) {
  enum { OPT_N = CLI_OPT_FIRST_FREE, OPT_WG, OPT_MODE, OPT_PENDING, OPT_ITERS, OPT_REPS, OPT_WARMUP };
  static const struct option opts[] = {{"n", required_argument, NULL, OPT_N},
                                       {"warpgroups", required_argument, NULL, OPT_WG},
                                       {"mode", required_argument, NULL, OPT_MODE},
                                       {"pending", required_argument, NULL, OPT_PENDING},
                                       {"iters", required_argument, NULL, OPT_ITERS},
                                       {"reps", required_argument, NULL, OPT_REPS},
                                       {"warmup", required_argument, NULL, OPT_WARMUP},
                                       CLI_STD_OPTIONS,
                                       {NULL, 0, NULL, 0}};
  cli_begin("bench_wgmma_rate", kUsage);
  bench_list ns = {{8, 16, 32, 64, 128, 256}, 6}, wgs = {{1, 2, 4}, 3}, modes = {{1, 0}, 2}, pend = {{0, 1}, 2};
  int iters = 4096, reps = 20, warmup = 3, c;
  while ((c = cli_next(argc, argv, "h", opts)) != -1) {
    switch (c) {
    case OPT_N: ns.n = cli_int_list("--n", optarg, ns.v, kMaxList, 8, 256); break;
    case OPT_WG: wgs.n = cli_int_list("--warpgroups", optarg, wgs.v, kMaxList, 1, 4); break;
    case OPT_MODE: {
      cli_item items[kMaxList];
      modes.n = cli_list("--mode", optarg, items, kMaxList);
      for (int i = 0; i < modes.n; ++i) modes.v[i] = cli_choice("--mode", items[i], "ss,rs");  // 1 = rs
      break;
    }
    case OPT_PENDING: pend.n = cli_int_list("--pending", optarg, pend.v, kMaxList, 0, 1); break;
    case OPT_ITERS: iters = cli_int("--iters", optarg, 1, 1 << 24); break;
    case OPT_REPS: reps = cli_int("--reps", optarg, 1, 10000); break;
    case OPT_WARMUP: warmup = cli_int("--warmup", optarg, 0, 1000); break;
    default: cli_usage_error("unexpected operand", optarg);
    }
  }
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  struct cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  if (prop.major != 9) {
    printf("bench_wgmma_rate: %s is not sm_90; wgmma is Hopper's\n", prop.name);
    return 0;
  }
  job j = {.blocks = prop.multiProcessorCount, .iters = iters};
  j.sink = bench_dmalloc(sizeof(float) * (size_t)j.blocks);
  CUDA_CHECK(cudaStreamCreate(&j.stream));
  bench_timer t;
  bench_timer_init(&t, j.stream, reps, warmup, 64u << 20);
  cublasHandle_t h;
  CUBLAS_CHECK(cublasCreate(&h));
  CUBLAS_CHECK(cublasSetStream(h, j.stream));
  const double peak = bench_gemm_peak(&t, h, MGEN_ACT_F16);
  printf("# %s: %d SMs; cuBLAS f16 8192^3 %.1f TFLOP/s; median of %d\n", prop.name, j.blocks, peak / 1e12, reps);
  printf("gpu,n,mode,warpgroups,pending,iters,us,tflops,over_cublas,ns_per_wgmma\n");
  for (int a = 0; a < ns.n; ++a)
    for (int b = 0; b < modes.n; ++b)
      for (int d = 0; d < wgs.n; ++d)
        for (int e = 0; e < pend.n; ++e) {
          j.n = ns.v[a], j.rs = modes.v[b], j.warpgroups = wgs.v[d], j.pending = pend.v[e];
          if (j.n >= 128 && j.warpgroups > 2) continue;
          const double us = bench_time_us(&t, launch, &j);
          if (us < 0) {
            printf("# n %d %s %d warpgroups: cannot run\n", j.n, j.rs ? "rs" : "ss", j.warpgroups);
            continue;
          }
          const double fma = (double)j.blocks * j.warpgroups * iters * 4.0 * 64.0 * j.n * 16.0;
          const double flops = 2.0 * fma / (us * 1e-6);
          printf("%s,%d,%s,%d,%d,%d,%.2f,%.1f,%.3f,%.2f\n", prop.name, j.n, j.rs ? "rs" : "ss", j.warpgroups,
                 j.pending, iters, us, flops / 1e12, flops / peak, us * 1e3 / (iters * 4.0));
          fflush(stdout);
        }
  CUBLAS_CHECK(cublasDestroy(h));
  bench_timer_free(&t);
  CUDA_CHECK(cudaFree(j.sink));
  CUDA_CHECK(cudaStreamDestroy(j.stream));
  return 0;
}
