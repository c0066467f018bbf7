/* bench_floor.c -- the floor under a small decode GEMM on this GPU: what an empty kernel and a
 * plain streaming read of the same bytes cost, timed as bench_gemm times GEMMs (CUDA events,
 * median, inputs rotated past L2) and under CUDA graph replay (bench_util.h). A kernel cannot
 * beat the read of its weights, and under graph replay it cannot beat an empty launch; the
 * difference between those floors and a GEMM's time is what the GEMM itself costs.
 *
 *   bench_floor [--bytes N] [--reps 50] [--warmup 5] [--graph 20]
 *
 * --bytes (default 8650752: the 4-bit weights and group-128 FP16 scales of a 4096 x 4096
 * layer) is rounded down to whole 16-byte vectors. The read runs with 1, 2, 4 and 8 blocks of
 * 512 threads per SM; the empty kernel with one block per SM. Exit status 0; 1 on a CUDA
 * error; 2 on a usage error. */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "bench_util.h"
#include "cli.h"

int floor_empty(int blocks, int threads, cudaStream_t stream);
int floor_read(const void *src, size_t bytes, unsigned *sink, int blocks, int threads, cudaStream_t stream);

typedef struct job {
  int blocks, threads, copies;
  size_t bytes;
  char *base; /* copies x bytes, rotated so that no launch finds its input in L2 */
  unsigned *sink;
  cudaStream_t stream;
} job;

static int launch_empty(void *self, int i) {
  const job *j = self;
  (void)i;
  CUDA_CHECK((cudaError_t)floor_empty(j->blocks, j->threads, j->stream));
  return 0;
}
static int launch_read(void *self, int i) {
  const job *j = self;
  CUDA_CHECK((cudaError_t)floor_read(j->base + (size_t)(i % j->copies) * j->bytes, j->bytes, j->sink, j->blocks,
                                     j->threads, j->stream));
  return 0;
}

static const char kUsage[] =
    "usage: bench_floor [--bytes N] [--reps N] [--warmup N] [--graph N]\n"
    "The floor under a small decode GEMM: an empty kernel and a streaming read of N bytes\n"
    "(default 8650752: a 4096 x 4096 layer's 4-bit weights and group-128 scales), by CUDA\n"
    "events and under graph replay. Exit status: 0; 1 CUDA error; 2 usage error.\n";

int main(int argc, char **argv) {
  enum { OPT_BYTES = CLI_OPT_FIRST_FREE, OPT_REPS, OPT_WARMUP, OPT_GRAPH };
  static const struct option opts[] = {{"bytes", required_argument, NULL, OPT_BYTES},
                                       {"reps", required_argument, NULL, OPT_REPS},
                                       {"warmup", required_argument, NULL, OPT_WARMUP},
                                       {"graph", required_argument, NULL, OPT_GRAPH},
                                       CLI_STD_OPTIONS,
                                       {NULL, 0, NULL, 0}};
  cli_begin("bench_floor", kUsage);
  size_t bytes = 8650752;
  int reps = 50, warmup = 5, graph = 20, c;
  while ((c = cli_next(argc, argv, "h", opts)) != -1) {
    switch (c) {
    case OPT_BYTES: bytes = (size_t)cli_int("--bytes", optarg, 16, 1 << 30); break;
    case OPT_REPS: reps = cli_int("--reps", optarg, 1, 10000); break;
    case OPT_WARMUP: warmup = cli_int("--warmup", optarg, 0, 1000); break;
    case OPT_GRAPH: graph = cli_int("--graph", optarg, 1, 1000); break;
    default: cli_usage_error("unexpected operand", optarg);
    }
  }
  bytes -= bytes % 16;
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  struct cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  const int sms = prop.multiProcessorCount, l2 = prop.l2CacheSize;
  job j = {.threads = 512, .bytes = bytes};
  j.copies = (int)((4 * (size_t)l2) / bytes + 2); /* > 4x L2 in all */
  j.base = bench_dmalloc((size_t)j.copies * bytes);
  bench_fill_random(j.base, (size_t)j.copies * bytes / 2, 7);
  j.sink = bench_dmalloc(sizeof(unsigned) * 8 * (size_t)sms);
  CUDA_CHECK(cudaStreamCreate(&j.stream));
  bench_timer t;
  bench_timer_init(&t, j.stream, reps, warmup, 64u << 20);

  printf("%s: %d SMs, L2 %.1f MB; %zu bytes rotated over %d copies; median of %d, graphs of %d launches\n",
         prop.name, sms, l2 / 1e6, bytes, j.copies, reps, graph);
  j.blocks = sms, j.threads = 128;
  printf("empty kernel (%d x %d): events %.2f us, graph replay %.2f us per launch\n", j.blocks, j.threads,
         bench_time_us(&t, launch_empty, &j), bench_time_graph_us(&t, launch_empty, &j, graph));
  j.threads = 512;
  for (int per = 1; per <= 8; per *= 2) {
    j.blocks = per * sms;
    const double ev = bench_time_us(&t, launch_read, &j), gr = bench_time_graph_us(&t, launch_read, &j, graph);
    printf("read %zu bytes (%d x %d): events %.2f us (%.0f GB/s), graph replay %.2f us per launch (%.0f GB/s)\n",
           bytes, j.blocks, j.threads, ev, bytes / ev / 1e3, gr, bytes / gr / 1e3);
  }
  bench_timer_free(&t);
  CUDA_CHECK(cudaFree(j.base));
  CUDA_CHECK(cudaFree(j.sink));
  CUDA_CHECK(cudaStreamDestroy(j.stream));
  return 0;
}
