/* bench_util.c -- benchmark helpers: checked calls that exit, random FP16/BF16 data, event
 * timing, the cuBLAS FP16/BF16 baselines and the measured ceilings. Public API only (the demo
 * links it against libmgen itself). */
#include "bench_util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void bench_die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s: ", cli_prog());
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(CLI_EXIT_ERROR);
}

void bench_device_name(char *dst, size_t size, struct cudaDeviceProp *prop) {
  int dev;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaGetDeviceProperties(prop, dev));
  snprintf(dst, size, "%s", prop->name);
  for (char *p = dst; *p; p++)
    if (*p == ',') *p = ' ';
}

void *bench_dmalloc(size_t bytes) {
  void *p;
  CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}

// --------------------------------------------------------------------------- FP16/BF16 data

static uint16_t bench_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000, man = x & 0x7fffff;
  int e = (int)((x >> 23) & 0xff) - 127 + 15;
  if (e >= 31) return (uint16_t)(sign | (isnan(f) ? 0x7e00 : 0x7c00));
  if (e <= 0) { /* subnormal half: h * 2^-24 */
    if (e < -10) return (uint16_t)sign;
    man |= 0x800000;
    int shift = 14 - e;
    uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    h += rem > half || (rem == half && (h & 1));
    return (uint16_t)(sign | h);
  }
  uint32_t h = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fff;
  h += rem > 0x1000 || (rem == 0x1000 && (h & 1)); /* a carry into the exponent is right */
  return (uint16_t)(sign | h);
}

float bench_f16_to_f32(uint16_t h) {
  uint32_t e = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v = e == 31 ? (man ? NAN : INFINITY)
          : e ? ldexpf((float)(man | 0x400), (int)e - 25) : ldexpf((float)man, -24);
  return (h & 0x8000) ? -v : v;
}

static uint16_t bench_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if (isnan(f)) return (uint16_t)((x >> 16) | 0x40); /* quiet, keeps the sign */
  return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16); /* a carry into the exponent is right */
}

static float bench_bf16_to_f32(uint16_t b) {
  uint32_t x = (uint32_t)b << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

float bench_act_to_f32(mgen_act act, uint16_t x) {
  return act == MGEN_ACT_BF16 ? bench_bf16_to_f32(x) : bench_f16_to_f32(x);
}

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* 65536 draws of N(0,1) (Irwin-Hall sum of 12 uniforms, within +-6), as FP16 and as BF16;
 * each element picks one with a 16-bit random index, which fills a gigabyte in well under a
 * second. */
static uint16_t normal_table[2][65536]; /* [0] FP16, [1] BF16 */
static int normal_table_ready;

void bench_fill_random(void *d, size_t count, uint64_t seed) {
  bench_fill_random_act(d, count, seed, MGEN_ACT_F16);
}

void bench_fill_random_act(void *d, size_t count, uint64_t seed, mgen_act act) {
  if (!normal_table_ready) {
    uint64_t s = 42;
    for (int i = 0; i < 65536; i++) {
      double sum = 0;
      for (int j = 0; j < 12; j++) sum += (double)(splitmix64(&s) >> 11) * 0x1p-53;
      normal_table[0][i] = bench_f32_to_f16((float)(sum - 6.0));
      normal_table[1][i] = bench_f32_to_bf16((float)(sum - 6.0));
    }
    normal_table_ready = 1;
  }
  const uint16_t *table = normal_table[act == MGEN_ACT_BF16];
  uint16_t *h = malloc(count * 2);
  if (!h) bench_die("out of host memory (%zu bytes)", count * 2);
  for (size_t i = 0; i < count; i += 4) {
    uint64_t r = splitmix64(&seed);
    for (size_t j = 0; j < 4 && i + j < count; j++)
      h[i + j] = table[(r >> (16 * j)) & 0xffff];
  }
  CUDA_CHECK(cudaMemcpy(d, h, count * 2, cudaMemcpyHostToDevice));
  /* A pageable copy may return before its DMA lands, and the timed streams are non-blocking
   * (no implicit order with the legacy stream): wait for the device. */
  CUDA_CHECK(cudaDeviceSynchronize());
  free(h);
}

// --------------------------------------------------------------------------- timing

void bench_timer_init(bench_timer *t, cudaStream_t stream, int reps, int warmup,
                      size_t spacer_bytes) {
  *t = (bench_timer){.stream = stream, .reps = reps, .warmup = warmup,
                     .spacer_bytes = spacer_bytes};
  t->ev = malloc(2 * (size_t)reps * sizeof *t->ev);
  t->times = malloc((size_t)reps * sizeof *t->times);
  if (!t->ev || !t->times) bench_die("out of host memory");
  for (int i = 0; i < 2 * reps; i++) CUDA_CHECK(cudaEventCreate(&t->ev[i]));
  t->spacer = bench_dmalloc(spacer_bytes);
}

void bench_timer_free(bench_timer *t) {
  for (int i = 0; i < 2 * t->reps; i++) CUDA_CHECK(cudaEventDestroy(t->ev[i]));
  CUDA_CHECK(cudaFree(t->spacer));
  free(t->ev);
  free(t->times);
}

static int cmp_float(const void *x, const void *y) {
  float a = *(const float *)x, b = *(const float *)y;
  return (a > b) - (a < b);
}

double bench_median_us(float *ms, int n) {
  qsort(ms, (size_t)n, sizeof *ms, cmp_float);
  const int h = n / 2;
  return 1000.0 * (n % 2 ? ms[h] : 0.5 * (ms[h - 1] + ms[h]));
}

/* The median of the timer's reps event pairs (recorded on its stream), in microseconds per
 * `per` operations. */
static double median_us(bench_timer *t, int per) {
  CUDA_CHECK(cudaStreamSynchronize(t->stream));
  for (int r = 0; r < t->reps; r++) {
    CUDA_CHECK(cudaEventElapsedTime(&t->times[r], t->ev[2 * r], t->ev[2 * r + 1]));
    t->times[r] /= (float)per;
  }
  return bench_median_us(t->times, t->reps);
}

double bench_time_us(bench_timer *t, bench_launch_fn launch, void *self) {
  if (launch(self, 0)) return -1.0; /* the probe run is also the first warm-up */
  CUDA_CHECK(cudaMemsetAsync(t->spacer, 0, t->spacer_bytes, t->stream));
  int run = 1;
  for (; run <= t->warmup; run++) {
    if (t->pre) t->pre(t->pre_self);
    launch(self, run);
  }
  for (int r = 0; r < t->reps; r++, run++) {
    if (t->pre) t->pre(t->pre_self);
    CUDA_CHECK(cudaEventRecord(t->ev[2 * r], t->stream));
    launch(self, run);
    CUDA_CHECK(cudaEventRecord(t->ev[2 * r + 1], t->stream));
  }
  return median_us(t, 1);
}

double bench_time_graph_us(bench_timer *t, bench_launch_fn launch, void *self, int launches) {
  if (launch(self, 0)) return -1.0; /* also a stream's first libmgen call: its workspace */
  CUDA_CHECK(cudaStreamSynchronize(t->stream));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CUDA_CHECK(cudaStreamBeginCapture(t->stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 1; i <= launches; i++) launch(self, i); /* the rotated copies, as unrolled */
  CUDA_CHECK(cudaStreamEndCapture(t->stream, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CUDA_CHECK(cudaMemsetAsync(t->spacer, 0, t->spacer_bytes, t->stream));
  for (int w = 0; w < (t->warmup > 0 ? t->warmup : 1); w++)  /* uploads the graph */
    CUDA_CHECK(cudaGraphLaunch(exec, t->stream));
  for (int r = 0; r < t->reps; r++) {
    CUDA_CHECK(cudaEventRecord(t->ev[2 * r], t->stream));
    CUDA_CHECK(cudaGraphLaunch(exec, t->stream));
    CUDA_CHECK(cudaEventRecord(t->ev[2 * r + 1], t->stream));
  }
  const double us = median_us(t, launches);
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  return us;
}

// --------------------------------------------------------------------------- baseline, ceilings

/* Row-major C[m,n] = A[m,k] W^T is column-major C^T[n,m] = W[n,k] A^T: the row-major W is a
 * column-major k x n matrix (ld k), hence op T; the row-major A is k x m (ld k), op N. */
void bench_cublas_gemm_act(cublasHandle_t h, mgen_act act, int m, int n, int k, const void *a,
                           const void *w, void *c) {
  const float one = 1.0f, zero = 0.0f;
  const cudaDataType t = act == MGEN_ACT_BF16 ? CUDA_R_16BF : CUDA_R_16F;
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, w, t, k, a, t, k, &zero,
                            c, t, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

void bench_cublas_gemm(cublasHandle_t h, int m, int n, int k, const void *a, const void *w,
                       void *c) {
  bench_cublas_gemm_act(h, MGEN_ACT_F16, m, n, k, a, w, c);
}

typedef struct ceiling_op {
  bench_timer *t;
  cublasHandle_t h;  /* NULL: the copy */
  mgen_act act;
  int d;
  void *a, *w, *c;
  size_t bytes;
} ceiling_op;

static int launch_ceiling(void *self, int i) {
  const ceiling_op *o = self;
  (void)i;
  if (o->h) bench_cublas_gemm_act(o->h, o->act, o->d, o->d, o->d, o->a, o->w, o->c);
  else CUDA_CHECK(cudaMemcpyAsync(o->c, o->a, o->bytes, cudaMemcpyDeviceToDevice, o->t->stream));
  CUDA_CHECK(cudaGetLastError());
  return 0;
}

void bench_ceilings(bench_timer *t, cublasHandle_t h, double *bw, double *peak) {
  ceiling_op copy = {.t = t, .a = t->spacer, .c = bench_dmalloc(t->spacer_bytes),
                     .bytes = t->spacer_bytes};
  CUDA_CHECK(cudaMemsetAsync(copy.a, 0x3c, copy.bytes, t->stream));
  *bw = 2.0 * (double)copy.bytes / (bench_time_us(t, launch_ceiling, &copy) * 1e-6);
  CUDA_CHECK(cudaFree(copy.c));
  *peak = bench_gemm_peak(t, h, MGEN_ACT_F16);
}

double bench_gemm_peak(bench_timer *t, cublasHandle_t h, mgen_act act) {
  const int d = 8192;
  size_t count = (size_t)d * d;
  ceiling_op gemm = {.t = t, .h = h, .act = act, .d = d, .a = bench_dmalloc(count * 2),
                     .w = bench_dmalloc(count * 2), .c = bench_dmalloc(count * 2)};
  bench_fill_random_act(gemm.a, count, 1, act);
  bench_fill_random_act(gemm.w, count, 2, act);
  const double peak = 2.0 * d * d * (double)d / (bench_time_us(t, launch_ceiling, &gemm) * 1e-6);
  CUDA_CHECK(cudaFree(gemm.a));
  CUDA_CHECK(cudaFree(gemm.w));
  CUDA_CHECK(cudaFree(gemm.c));
  return peak;
}
