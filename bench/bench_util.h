/* bench_util.h -- benchmark helpers: checked calls that exit, random FP16/BF16 data, event
 * timing, the cuBLAS FP16/BF16 baselines and the measured ceilings (copy bandwidth, dense
 * FP16 and BF16 rates).
 *
 * For bench/ only: these exit on failure, which the library never does (house style).
 */
#ifndef MGEN_BENCH_UTIL_H
#define MGEN_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <mgen/mgen.h>

/* Prints "<prog>: <message>" (cli_begin's name) on stderr and exits with status 1; usage
 * errors go through cli.h (status 2). */
void bench_die(const char *fmt, ...);
/* The current device's name as a CSV field (commas become spaces) into dst, and its properties. */
void bench_device_name(char *dst, size_t size, struct cudaDeviceProp *prop);

#define CUDA_CHECK(call)                                                                       \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess)                                                                     \
      bench_die("%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_));           \
  } while (0)
#define CUBLAS_CHECK(call)                                                                     \
  do {                                                                                         \
    cublasStatus_t s_ = (call);                                                                \
    if (s_ != CUBLAS_STATUS_SUCCESS)                                                           \
      bench_die("%s:%d: %s: %s", __FILE__, __LINE__, #call, cublasGetStatusString(s_));        \
  } while (0)
#define MGEN_CHECK(ctx, call)                                                                  \
  do {                                                                                         \
    mgen_status s_ = (call);                                                                   \
    if (s_ != MGEN_OK)                                                                         \
      bench_die("%s:%d: %s: %s: %s", __FILE__, __LINE__, #call, mgen_status_str(s_),           \
                mgen_ctx_last_error(ctx));                                                     \
  } while (0)

/* An option's list of integers (cli_int_list fills v, returns n). */
enum { BENCH_LIST_MAX = 16 };
typedef struct bench_list {
  int v[BENCH_LIST_MAX];
  int n;
} bench_list;

/* cudaMalloc that exits on failure. */
void *bench_dmalloc(size_t bytes);

/* IEEE half to float (host side; no cuda_fp16.h in C). */
float bench_f16_to_f32(uint16_t h);
/* A 16-bit value of type `act` (MGEN_ACT_F16 or MGEN_ACT_BF16) as a float. */
float bench_act_to_f32(mgen_act act, uint16_t x);

/* Fills `count` FP16 values at device pointer d with draws of ~N(0,1), from `seed`
 * (deterministic). Synchronous: returns when the data is on the device. Never zeros: zeros hide bugs and run faster than real data. */
void bench_fill_random(void *d, size_t count, uint64_t seed);
/* The same for values of type `act`; the same seed gives the same draws in either type. */
void bench_fill_random_act(void *d, size_t count, uint64_t seed, mgen_act act);

/* Work enqueued, untimed, before every warm-up and timed run of bench_time_us (bench_gemm
 * --cold: other kernels between runs). */
typedef void (*bench_pre_fn)(void *self);

/* Event timing on one stream: the median of `reps` timed runs after `warmup` untimed ones.
 * Before each batch a memset of `spacer` keeps the GPU busy while the host queues the runs,
 * so launch latency stays out of the first samples of short kernels. */
typedef struct bench_timer {
  cudaStream_t stream;
  int reps, warmup;
  bench_pre_fn pre;     /* NULL: none */
  void *pre_self;
  cudaEvent_t *ev;      /* 2 * reps */
  float *times;         /* reps */
  void *spacer;
  size_t spacer_bytes;
} bench_timer;

void bench_timer_init(bench_timer *t, cudaStream_t stream, int reps, int warmup,
                      size_t spacer_bytes);
void bench_timer_free(bench_timer *t);

/* Enqueues run number i (i selects the rotated input copy) on the timer's stream. Returns 0,
 * or nonzero when the operation cannot run this call at all (then only for i == 0); exits on
 * any other failure. */
typedef int (*bench_launch_fn)(void *self, int i);

/* The median of n event times in milliseconds (sorted in place), in microseconds. */
double bench_median_us(float *ms, int n);

/* Median time of launch(self, i) in microseconds, or -1 when its first run says it cannot run.
 * With t->pre set, t->pre(t->pre_self) runs before every warm-up and timed run (untimed). */
double bench_time_us(bench_timer *t, bench_launch_fn launch, void *self);
/* The same under CUDA graph replay, as engines run decode: launch(self, 1..launches) captured
 * into one graph (after the probe run 0, outside the capture), then the median over the
 * timer's reps replays of replay time / launches. Launch gaps inside a graph are the GPU's
 * own, not the host's, so this is the per-launch time an engine replaying graphs sees. */
double bench_time_graph_us(bench_timer *t, bench_launch_fn launch, void *self, int launches);

/* Row-major FP16 C[m,n] = A[m,k] * W^T (W n x k, as nn.Linear) through cublasGemmEx with
 * FP32 accumulation and the default algorithm, on the handle's stream. */
void bench_cublas_gemm(cublasHandle_t h, int m, int n, int k, const void *a, const void *w,
                       void *c);
/* The same with A, W and C of type `act`: CUDA_R_16F or CUDA_R_16BF, CUBLAS_COMPUTE_32F. */
void bench_cublas_gemm_act(cublasHandle_t h, mgen_act act, int m, int n, int k, const void *a,
                           const void *w, void *c);

/* The roofline's two ceilings, measured on the timer's stream: device-to-device copy bandwidth
 * in bytes/s (bytes read + written, copying from the timer's spacer) and the cuBLAS FP16
 * 8192^3 rate in FLOP/s on random data. `h` must run on the timer's stream. */
void bench_ceilings(bench_timer *t, cublasHandle_t h, double *bw, double *peak);
/* The cuBLAS 8192^3 rate in FLOP/s for inputs and output of type `act` (FP32 accumulation). */
double bench_gemm_peak(bench_timer *t, cublasHandle_t h, mgen_act act);

#endif /* MGEN_BENCH_UTIL_H */
