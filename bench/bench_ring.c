/* bench_ring.c -- how fast a copy ring of shared-memory stages streams packed weights on this
 * GPU, with no work behind it (ring_kernels.cu), beside a plain streaming read of the same
 * bytes (floor_kernels.cu) in the same run: the ceiling of the wgmma kernels' weight stream and
 * what it depends on. Timed as bench_gemm times GEMMs (CUDA events, median, the weights rotated
 * past L2). One CSV row per configuration:
 *
 *   bench_ring [--shape NxK]... [--method tma2d,bulk_rows,bulk_tile] [--tile-n 256] [--steps 4]
 *              [--stages 8] [--consumers 4] [--a-rows 0] [--bpsm 1] [--producers 1]
 *              [--reps 30] [--warmup 3]
 *
 * Every option but --shape, --reps and --warmup takes a comma-separated list; every
 * combination runs (those whose blocks do not fit --bpsm per SM are reported and skipped).
 * Default shapes (N x K): 57344x8192 and 4096x4096 (K, N = 8192, 57344 and 4096, 4096). GB/s counts the weights' bytes (K x N / 2).
 * Needs sm_90 (exits 0 with a message elsewhere). Exit status 0; 1 on a CUDA error; 2 on a
 * usage error. */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "bench_util.h"
#include "cli.h"
#include "ring_kernels.h"

int floor_read(const void *src, size_t bytes, unsigned *sink, int blocks, int threads, cudaStream_t stream);

enum { kMaxList = BENCH_LIST_MAX, kMaxShapes = 8 };

typedef struct job {
  ring_config cfg;
  int grid, copies, read_blocks;
  size_t bytes;
  char *w; /* copies x bytes */
  void *a;
  unsigned *sink;
  cudaStream_t stream;
} job;

static int launch_ring(void *self, int i) {
  const job *j = self;
  const int rc = ring_launch(&j->cfg, j->w + (size_t)(i % j->copies) * j->bytes, j->a, j->sink, j->grid, j->stream);
  if (rc != cudaSuccess && i == 0) return 1;
  CUDA_CHECK((cudaError_t)rc);
  return 0;
}
static int launch_read(void *self, int i) {
  const job *j = self;
  CUDA_CHECK((cudaError_t)floor_read(j->w + (size_t)(i % j->copies) * j->bytes, j->bytes, j->sink, j->read_blocks,
                                     512, j->stream));
  return 0;
}

static const char *const kMethods[] = {"tma2d", "bulk_rows", "bulk_tile"};

static const char kUsage[] =
    "usage: bench_ring [--shape NxK]... [--method LIST] [--tile-n LIST] [--steps LIST]\n"
    "                  [--stages LIST] [--consumers LIST] [--a-rows LIST] [--bpsm LIST]\n"
    "                  [--producers LIST]\n"
    "                  [--reps N] [--warmup N]\n"
    "How fast a copy ring with no work behind it streams packed weights (methods tma2d,\n"
    "bulk_rows, bulk_tile), beside a plain read of the same bytes. Exit status: 0; 1 CUDA\n"
    "error; 2 usage error.\n";

int main(int argc, char **argv) {
  enum { OPT_SHAPE = CLI_OPT_FIRST_FREE, OPT_METHOD, OPT_TILE_N, OPT_STEPS, OPT_STAGES, OPT_CONSUMERS, OPT_A_ROWS,
         OPT_BPSM, OPT_PRODUCERS, OPT_REPS, OPT_WARMUP };
  static const struct option opts[] = {{"shape", required_argument, NULL, OPT_SHAPE},
                                       {"method", required_argument, NULL, OPT_METHOD},
                                       {"tile-n", required_argument, NULL, OPT_TILE_N},
                                       {"steps", required_argument, NULL, OPT_STEPS},
                                       {"stages", required_argument, NULL, OPT_STAGES},
                                       {"consumers", required_argument, NULL, OPT_CONSUMERS},
                                       {"a-rows", required_argument, NULL, OPT_A_ROWS},
                                       {"bpsm", required_argument, NULL, OPT_BPSM},
                                       {"producers", required_argument, NULL, OPT_PRODUCERS},
                                       {"reps", required_argument, NULL, OPT_REPS},
                                       {"warmup", required_argument, NULL, OPT_WARMUP},
                                       CLI_STD_OPTIONS,
                                       {NULL, 0, NULL, 0}};
  cli_begin("bench_ring", kUsage);
  int shapes[kMaxShapes][2], n_shapes = 0, reps = 30, warmup = 3, c;
  bench_list methods = {{RING_TMA_2D, RING_BULK_ROWS, RING_BULK_TILE}, 3}, tile_n = {{256}, 1}, steps = {{4}, 1},
       stages = {{8}, 1}, consumers = {{4}, 1}, a_rows = {{0}, 1}, bpsm = {{1}, 1}, producers = {{1}, 1};
  while ((c = cli_next(argc, argv, "h", opts)) != -1) {
    switch (c) {
    case OPT_SHAPE: {
      int n, k;
      cli_shape_nk("--shape", optarg, &n, &k);
      if (k % 16 != 0 || k > 32768) cli_usage_error("K a multiple of 16, at most 32768 (the A matrix)", optarg);
      if (n_shapes == kMaxShapes) cli_usage_error("too many shapes", optarg);
      shapes[n_shapes][0] = k, shapes[n_shapes][1] = n, ++n_shapes;
      break;
    }
    case OPT_METHOD: {
      cli_item items[kMaxList];
      methods.n = cli_list("--method", optarg, items, kMaxList);
      for (int i = 0; i < methods.n; ++i) methods.v[i] = cli_choice("--method", items[i], "tma2d,bulk_rows,bulk_tile");
      break;
    }
    case OPT_TILE_N: tile_n.n = cli_int_list("--tile-n", optarg, tile_n.v, kMaxList, 2, 256); break;
    case OPT_STEPS: steps.n = cli_int_list("--steps", optarg, steps.v, kMaxList, 1, 256); break;
    case OPT_STAGES: stages.n = cli_int_list("--stages", optarg, stages.v, kMaxList, 2, 64); break;
    case OPT_CONSUMERS: consumers.n = cli_int_list("--consumers", optarg, consumers.v, kMaxList, 1, 4); break;
    case OPT_A_ROWS: a_rows.n = cli_int_list("--a-rows", optarg, a_rows.v, kMaxList, 0, 256); break;
    case OPT_BPSM: bpsm.n = cli_int_list("--bpsm", optarg, bpsm.v, kMaxList, 1, 8); break;
    case OPT_PRODUCERS: producers.n = cli_int_list("--producers", optarg, producers.v, kMaxList, 1, 4); break;
    case OPT_REPS: reps = cli_int("--reps", optarg, 1, 10000); break;
    case OPT_WARMUP: warmup = cli_int("--warmup", optarg, 0, 1000); break;
    default: cli_usage_error("unexpected operand", optarg);
    }
  }
  if (n_shapes == 0) {
    shapes[0][0] = 8192, shapes[0][1] = 57344, shapes[1][0] = 4096, shapes[1][1] = 4096;
    n_shapes = 2;
  }
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  struct cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  if (prop.major != 9) {
    printf("bench_ring: %s is not sm_90; the ring's copies are Hopper's\n", prop.name);
    return 0;
  }
  const int sms = prop.multiProcessorCount;
  size_t most = 0;
  for (int s = 0; s < n_shapes; ++s) {
    const size_t b = (size_t)shapes[s][0] * shapes[s][1] / 2;
    const size_t copies = 4 * (size_t)prop.l2CacheSize / b + 2;
    if (copies * b > most) most = copies * b;
  }
  job j = {0};
  j.w = bench_dmalloc(most);
  bench_fill_random(j.w, most / 2, 11);
  j.a = bench_dmalloc((size_t)256 * 32768 * 2); /* the A boxes' matrix: up to 256 rows x K <= 32768 */
  bench_fill_random(j.a, (size_t)256 * 32768, 12);
  j.sink = bench_dmalloc(sizeof(unsigned) * 8 * (size_t)sms);
  CUDA_CHECK(cudaStreamCreate(&j.stream));
  bench_timer t;
  bench_timer_init(&t, j.stream, reps, warmup, 64u << 20);
  printf("# %s: %d SMs, L2 %.1f MB; median of %d\n", prop.name, sms, prop.l2CacheSize / 1e6, reps);
  printf("gpu,k,n,method,tile_n,steps,stages,consumers,a_rows,bpsm,producers,smem,us,gbs,read_us,read_gbs,over_read\n");
  for (int s = 0; s < n_shapes; ++s) {
    const int k = shapes[s][0], n = shapes[s][1];
    j.bytes = (size_t)k * n / 2;
    j.copies = (int)(4 * (size_t)prop.l2CacheSize / j.bytes + 2);
    if (j.copies > 64) j.copies = 64;
    double read_us = 1e30;
    for (int per = 1; per <= 8; per *= 2) {
      j.read_blocks = per * sms;
      const double us = bench_time_us(&t, launch_read, &j);
      if (us < read_us) read_us = us;
    }
    for (int i0 = 0; i0 < methods.n; ++i0)
      for (int i1 = 0; i1 < tile_n.n; ++i1)
        for (int i2 = 0; i2 < steps.n; ++i2)
          for (int i3 = 0; i3 < stages.n; ++i3)
            for (int i4 = 0; i4 < consumers.n; ++i4)
              for (int i5 = 0; i5 < a_rows.n; ++i5)
                for (int i6 = 0; i6 < bpsm.n; ++i6)
                  for (int i7 = 0; i7 < producers.n; ++i7) {
                  const ring_config cfg = {.n = n, .k_steps = k / 16, .tile_n = tile_n.v[i1], .steps = steps.v[i2],
                                           .stages = stages.v[i3], .consumers = consumers.v[i4],
                                           .method = methods.v[i0], .a_rows = a_rows.v[i5],
                                           .producers = producers.v[i7]};
                  if (cfg.n % cfg.tile_n != 0 || cfg.k_steps % cfg.steps != 0 || cfg.stages % cfg.producers != 0) continue;
                  int fit = 0;
                  if (ring_blocks_per_sm(&cfg, &fit) != cudaSuccess || fit < bpsm.v[i6]) {
                    printf("# %s tile_n %d steps %d stages %d consumers %d a_rows %d: %d blocks per SM fit, not %d\n",
                           kMethods[cfg.method], cfg.tile_n, cfg.steps, cfg.stages, cfg.consumers, cfg.a_rows, fit,
                           bpsm.v[i6]);
                    (void)cudaGetLastError();
                    continue;
                  }
                  j.cfg = cfg;
                  j.grid = bpsm.v[i6] * sms;
                  const double us = bench_time_us(&t, launch_ring, &j);
                  if (us < 0) {
                    printf("# %s tile_n %d steps %d: cannot run\n", kMethods[cfg.method], cfg.tile_n, cfg.steps);
                    continue;
                  }
                  printf("%s,%d,%d,%s,%d,%d,%d,%d,%d,%d,%d,%d,%.2f,%.0f,%.2f,%.0f,%.3f\n", prop.name, k, n,
                         kMethods[cfg.method], cfg.tile_n, cfg.steps, cfg.stages, cfg.consumers, cfg.a_rows,
                         bpsm.v[i6], cfg.producers, ring_smem_bytes(&cfg), us, j.bytes / us / 1e3, read_us, j.bytes / read_us / 1e3,
                         read_us / us);
                  fflush(stdout);
                }
  }
  bench_timer_free(&t);
  CUDA_CHECK(cudaFree(j.w));
  CUDA_CHECK(cudaFree(j.a));
  CUDA_CHECK(cudaFree(j.sink));
  CUDA_CHECK(cudaStreamDestroy(j.stream));
  return 0;
}
