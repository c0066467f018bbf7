/* main.c -- examples/c: a 4-bit weight GEMM with libmgen from C, as a program of yours would
 * call it: make a context, quantize random FP16 weights on the GPU, run one GEMM, and compare
 * it with the CPU's product of the unquantized weights. Build and run: README.md beside it.
 * Exit status: 0 done; 1 an error, named on stderr ("no CUDA GPU here" among them). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>
#include <mgen/mgen.h>

/* C[M, N] = A[M, K] * W^T, with W an nn.Linear weight: N x K (out_features x in_features). */
enum { M = 16, N = 4096, K = 4096, GROUP = 128 };

/* 4-bit weights (16 levels per group of 128, spaced by the group's largest magnitude / 7.5)
 * give ~6.5% relative error on these uniform random data (mgen_quantize's rule, simulated); a
 * wrong layout or scale gives 100% or more. */
#define MAX_RELATIVE_ERROR 0.1

/* Every call is checked; a failure names the call and the library's message, then cleans up. */
#define CUDA_TRY(call)                                                                         \
  do {                                                                                         \
    cudaError_t e_ = (call);                                                                   \
    if (e_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "example: %s: %s\n", #call, cudaGetErrorString(e_));                    \
      goto out;                                                                                \
    }                                                                                          \
  } while (0)
#define MGEN_TRY(call)                                                                         \
  do {                                                                                         \
    mgen_status s_ = (call);                                                                   \
    if (s_ != MGEN_OK) {                                                                       \
      fprintf(stderr, "example: %s: %s: %s\n", #call, mgen_status_str(s_),                     \
              mgen_ctx_last_error(ctx));                                                       \
      goto out;                                                                                \
    }                                                                                          \
  } while (0)

/* FP16 on the host, which C has no type for: to_half rounds to nearest even (|x| < 65504). */
static uint16_t to_half(float x) {
  const uint16_t sign = signbit(x) ? 0x8000 : 0;
  const float a = fabsf(x);
  int e;
  frexpf(a, &e); /* a = f * 2^e, f in [0.5, 1) */
  if (a == 0 || e < -13) return sign | (uint16_t)rintf(a * 0x1p24f); /* subnormal: 2^-24 units */
  /* exponent field e + 14; a carry out of the 10 mantissa bits rounds into the exponent */
  return sign | (uint16_t)(((e + 14) << 10) + (int)rintf(ldexpf(a, 11 - e)) - 1024);
}
static float from_half(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const float a = e == 31 ? INFINITY : ldexpf((float)(e ? m + 1024 : m), (e ? e : 1) - 25);
  return h >> 15 ? -a : a;
}

/* Uniform in [-1, 1) from a fixed seed, so that every run sees the same data. */
static float uniform(uint64_t *state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (float)(*state >> 40) / (float)(1 << 23) - 1.0f;
}

int main(void) {
  int status = 1, devices = 0;
  mgen_status st;
  char why[256] = "";
  mgen_ctx *ctx = NULL;
  uint16_t *a = malloc(sizeof *a * M * K), *w16 = malloc(sizeof *w16 * N * K),
           *c = malloc(sizeof *c * M * N);
  float *af = malloc(sizeof *af * M * K), *wf = malloc(sizeof *wf * N * K);
  void *d_a = NULL, *d_w = NULL, *d_c = NULL;
  size_t qbytes = 0, sbytes = 0;
  const char *kernel = NULL;
  double err2 = 0, ref2 = 0, rel;
  uint64_t seed = 1;
  /* The weights' description; d_q and d_scales are allocated below, at the sizes it needs. */
  mgen_weights w = {.wfmt = MGEN_WFMT_U4B8, .act = MGEN_ACT_F16, .scheme = MGEN_SCHEME_GROUP,
                    .group = GROUP, .n = N, .k = K};
  if (a == NULL || w16 == NULL || c == NULL || af == NULL || wf == NULL) {
    fprintf(stderr, "example: out of host memory\n");
    goto out;
  }

  /* Without a GPU there is nothing to run: say so (a library user might fall back instead). */
  st = mgen_device_count(&devices, why, sizeof why);
  if (st != MGEN_OK) {
    fprintf(stderr, "example: CUDA cannot start here: %s\n", why);
    goto out;
  }
  if (devices == 0) {
    fprintf(stderr, "example: no CUDA GPU here (%s): nothing to run\n", why);
    goto out;
  }
  /* Device 0, no log callback. Its message says "mgen_ctx_create: <status>: <why>" itself. */
  if (mgen_ctx_create(&ctx, mgen_builtin_table(), NULL) != MGEN_OK) {
    fprintf(stderr, "example: %s\n", mgen_ctx_last_error(NULL));
    goto out;
  }

  /* Random weights and activations, FP16 as the GPU reads them; af and wf keep the same
   * values as floats for the CPU's reference. */
  for (size_t i = 0; i < (size_t)N * K; i++) wf[i] = from_half(w16[i] = to_half(uniform(&seed)));
  for (size_t i = 0; i < (size_t)M * K; i++) af[i] = from_half(a[i] = to_half(uniform(&seed)));

  /* Quantize on the GPU into the packed buffers whose sizes the library gives. */
  MGEN_TRY(mgen_weights_bytes(&w, &qbytes, &sbytes));
  CUDA_TRY(cudaMalloc(&w.d_q, qbytes));
  CUDA_TRY(cudaMalloc(&w.d_scales, sbytes));
  CUDA_TRY(cudaMalloc(&d_w, sizeof *w16 * N * K));
  CUDA_TRY(cudaMalloc(&d_a, sizeof *a * M * K));
  CUDA_TRY(cudaMalloc(&d_c, sizeof *c * M * N));
  CUDA_TRY(cudaMemcpy(d_w, w16, sizeof *w16 * N * K, cudaMemcpyHostToDevice));
  CUDA_TRY(cudaMemcpy(d_a, a, sizeof *a * M * K, cudaMemcpyHostToDevice));
  MGEN_TRY(mgen_quantize(ctx, d_w, &w, NULL)); /* NULL: the default stream */
  printf("example: sm_%d; %dx%d FP16 weights quantized to u4b8/g%d (%zu + %zu bytes)\n",
         mgen_ctx_sm(ctx), N, K, GROUP, qbytes, sbytes);

  /* One GEMM; the kernel the library picks for this M and shape, by its cost model. */
  MGEN_TRY(mgen_gemm_choice(ctx, MGEN_ACT_F16, M, &w, &kernel));
  MGEN_TRY(mgen_gemm(ctx, MGEN_ACT_F16, M, d_a, &w, d_c, NULL));
  CUDA_TRY(cudaMemcpy(c, d_c, sizeof *c * M * N, cudaMemcpyDeviceToHost)); /* waits for it */
  printf("example: C = A * W^T with M = %d ran %s\n", M, kernel);

  /* Against the CPU's product of the unquantized weights. */
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double ref = 0;
      for (int k = 0; k < K; k++) ref += (double)af[(size_t)i * K + k] * wf[(size_t)j * K + k];
      const double d = from_half(c[(size_t)i * N + j]) - ref;
      err2 += d * d, ref2 += ref * ref;
      if (i == 0 && j < 3)
        printf("example: C[0][%d] = %8.3f (unquantized weights: %8.3f)\n", j,
               from_half(c[j]), ref);
    }
  rel = sqrt(err2 / ref2);
  printf("example: relative error against the unquantized weights: %.4f\n", rel);
  if (!(rel <= MAX_RELATIVE_ERROR)) {
    fprintf(stderr, "example: relative error %.4f is above %.2f: wrong results\n", rel,
            MAX_RELATIVE_ERROR);
    goto out;
  }
  printf("example: ok\n");
  status = 0;

out:
  cudaFree(d_c), cudaFree(d_a), cudaFree(d_w), cudaFree(w.d_scales), cudaFree(w.d_q);
  mgen_ctx_destroy(ctx);
  free(a), free(w16), free(c), free(af), free(wf);
  return status;
}
