/* test_quantize_act_gpu.c -- mgen_quantize_act on the GPU (mgen.h): FP16 and BF16 rows to
 * E4M3 codes and FP32 row scales, against a CPU reference of mgen.h's rule entry for entry
 * (scale = amax / 448 in FP32, code = e4m3(x / scale) in FP32, nearest-even, saturating; the
 * sign of -0 kept), on random rows of several magnitudes (down to BF16 values whose scale is
 * an FP32 subnormal), rows of zeros, odd m, k from 16 to 28672; outputs poisoned before each
 * run and two runs bit for bit; every code's value times its scale within half an E4M3 step
 * of x (the rule's own error); and the refusals that reach the device check. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "fp4.h"
#include "gpu_util.h"
#include "rng.h"

/* The reference: mgen.h's rule in FP32, encoding by fp4.h (exact in double). */
static void reference(int act, int m, int k, const uint16_t *x, uint8_t *q, float *scales) {
  for (int i = 0; i < m; i++) {
    float amax = 0.0f;
    for (int j = 0; j < k; j++) amax = fmaxf(amax, fabsf(act_to_float(act, x[(size_t)i * k + j])));
    const float s = amax > 0.0f ? amax / 448.0f : 1.0f;
    scales[i] = s;
    for (int j = 0; j < k; j++) {
      const float y = act_to_float(act, x[(size_t)i * k + j]) / s;
      q[(size_t)i * k + j] = (uint8_t)(fp4_e4m3_encode(fabs((double)y)) | (signbit(y) ? 0x80u : 0u));
    }
  }
}

/* Row i's magnitude: 2^e with e from a row-dependent spread (tiny rows included). */
static void fill(rng *r, int act, int m, int k, uint16_t *x) {
  for (int i = 0; i < m; i++) {
    const int kind = i % 5;
    const double mag = kind == 0 ? 1.0 : kind == 1 ? 1e-3 : kind == 2 ? 300.0
                       : kind == 3 ? (act == MGEN_ACT_BF16 ? 0x1p-130 : 0x1p-14) : 0.0;
    for (int j = 0; j < k; j++) {
      double v = mag * rng_uniform(r, -1.0, 1.0);
      if (kind == 4) v = (j % 7 == 0) ? -0.0 : 0.0; /* a row of zeros, some negative */
      x[(size_t)i * k + j] = act_from_double(act, v);
    }
  }
}

static void run_case(mgen_ctx *ctx, cudaStream_t stream, rng *r, int act, int m, int k) {
  const size_t n = (size_t)m * k;
  uint16_t *x = malloc(2 * n);
  uint8_t *q = malloc(n), *q_ref = malloc(n), *q2 = malloc(n);
  float *s = malloc(4 * (size_t)m), *s_ref = malloc(4 * (size_t)m), *s2 = malloc(4 * (size_t)m);
  fill(r, act, m, k, x);
  reference(act, m, k, x, q_ref, s_ref);
  void *d_x = gpu_alloc(2 * n);
  uint8_t *d_q = gpu_alloc(n);
  float *d_s = gpu_alloc(4 * (size_t)m);
  gpu_upload(d_x, x, 2 * n);
  for (int run = 0; run < 2; run++) {
    gpu_fill(d_q, run ? 0x7f : 0xa5, n); /* poison: a code left unwritten shows */
    gpu_fill(d_s, run ? 0xff : 0x5a, 4 * (size_t)m);
    MGEN_CHECK(ctx, mgen_quantize_act(ctx, (mgen_act)act, m, k, d_x, d_q, d_s, stream));
    gpu_sync(stream, "mgen_quantize_act");
    CUDA_CHECK(cudaMemcpy(run ? q2 : q, d_q, n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(run ? s2 : s, d_s, 4 * (size_t)m, cudaMemcpyDeviceToHost));
  }
  size_t bad_q = 0, bad_s = 0, far = 0;
  for (int i = 0; i < m; i++) {
    if (memcmp(&s[i], &s_ref[i], 4) != 0 && bad_s++ < 3)
      CHECK(0, "%s m=%d k=%d: row %d scale %a, reference %a", act_name(act), m, k, i, s[i], s_ref[i]);
    for (int j = 0; j < k; j++) {
      const size_t at = (size_t)i * k + j;
      if (q[at] != q_ref[at] && bad_q++ < 3)
        CHECK(0, "%s m=%d k=%d: (%d, %d) x=%a code 0x%02x, reference 0x%02x", act_name(act), m, k,
              i, j, act_to_double(act, x[at]), q[at], q_ref[at]);
      /* The rule's own error: half a step of the code's binade (2^-9 below 2^-6), relative to
       * the scale; saturation cannot happen (|x| / s <= 448). */
      const double y = act_to_double(act, x[at]) / (double)s_ref[i];
      const double v = fp4_e4m3_value(q_ref[at] & 0x7f) * (q_ref[at] & 0x80 ? -1.0 : 1.0);
      const double ay = fabs(y), step = ay < 0x1p-6 ? 0x1p-9 : ldexp(1.0, (int)floor(log2(ay)) - 3);
      if (fabs(v - y) > 0.5 * step * (1 + 1e-6) + 448.0 * 0x1p-24 && far++ < 3)
        CHECK(0, "%s: the reference itself: y=%a coded %a", act_name(act), y, v);
    }
  }
  CHECK(bad_q == 0 && bad_s == 0, "%s m=%d k=%d: %zu codes and %zu scales differ from the "
        "reference", act_name(act), m, k, bad_q, bad_s);
  CHECK(memcmp(q, q2, n) == 0 && memcmp(s, s2, 4 * (size_t)m) == 0,
        "%s m=%d k=%d: two runs differ", act_name(act), m, k);
  CUDA_CHECK(cudaFree(d_x));
  CUDA_CHECK(cudaFree(d_q));
  CUDA_CHECK(cudaFree(d_s));
  free(x), free(q), free(q_ref), free(q2), free(s), free(s_ref), free(s2);
}

int main(int argc, char **argv) {
  gpu_require_device("test_quantize_act_gpu");
  const int quick = gpu_quick_mode(argc, argv);
  rng r;
  rng_seed(&r, rng_test_seed("test_quantize_act_gpu"));
  mgen_ctx *ctx = NULL;
  MGEN_CHECK(ctx, mgen_ctx_create(&ctx, mgen_builtin_table(), NULL));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  static const struct { int m, k; } shapes[] = {
    {1, 16}, {3, 48}, {7, 4096}, {17, 2880}, {33, 7168}, {100, 256}, {5, 28672}, {1, 14336},
  };
  const int count = quick ? 3 : (int)(sizeof shapes / sizeof shapes[0]);
  int cases = 0;
  for (int act = MGEN_ACT_F16; act <= MGEN_ACT_BF16; act++)
    for (int i = 0; i < count; i++, cases++) run_case(ctx, stream, &r, act, shapes[i].m, shapes[i].k);
  /* A refusal leaves the outputs alone. */
  uint8_t *d_q = gpu_alloc(64);
  float *d_s = gpu_alloc(64);
  void *d_x = gpu_alloc(128);
  gpu_fill(d_q, 0x33, 64);
  gpu_expect_refused(ctx, mgen_quantize_act(ctx, MGEN_ACT_F16, 1, 24, d_x, d_q, d_s, stream),
                     MGEN_ERR_INVALID_ARG, "k=24", "k not a multiple of 16", d_q, 64, 0x33);
  gpu_expect_refused(ctx, mgen_quantize_act(ctx, MGEN_ACT_F16, 1, 16, (char *)d_x + 8, d_q, d_s,
                                            stream),
                     MGEN_ERR_MISALIGNED, "d_x", "misaligned x", d_q, 64, 0x33);
  CUDA_CHECK(cudaFree(d_q));
  CUDA_CHECK(cudaFree(d_s));
  CUDA_CHECK(cudaFree(d_x));
  CUDA_CHECK(cudaStreamDestroy(stream));
  mgen_ctx_destroy(ctx);
  printf("test_quantize_act_gpu: %d cases%s\n", cases, quick ? " (--quick)" : "");
  return check_exit("test_quantize_act_gpu");
}
