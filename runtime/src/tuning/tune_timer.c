/* tune_timer.c -- the tuner's CUDA timer: every candidate of a problem timed with CUDA events
 * on scratch buffers of the problem's size, never the caller's.
 *
 * Method (as bench/bench_gemm.c):
 * - A (m x k) random activations of the call's type, weights as random codes with valid
 *   scales, in enough copies that copies x size >= 2 x L2 (at most 64, fewer when memory is
 *   short), so no run finds its weights in L2 from the run before;
 * - `warmup` rounds, then `reps` timed rounds; a round runs every candidate once (interleaved,
 *   so clock and thermal drift hit all alike), each launch between two events, in the
 *   order p->order gives (tuning shuffles), each timed launch after p->prime untimed ones of
 *   the same kernel (after ~20 other kernels a kernel's code has left the SMs and its start
 *   is up to ~2 us slower: bench/notes/v31.md);
 * - the first timing of a context starts with ~50 ms of memsets, so the GPU is at its working
 *   clock before the first sample;
 * - a spacer of memsets precedes the timed rounds so that the host has queued them before the
 *   GPU reaches them (launch latency stays out of short kernels' samples);
 * - the result per candidate is the median of its `reps` samples.
 * Everything is enqueued on the caller's stream after its earlier work, through a workspace of
 * that stream, and freed before returning. No GPU, no tuning: the CPU tests install a fake.
 */
#include <stdlib.h>
#include <string.h>

#include "core/ctx.h"
#include "formats/formats.h"
#include "tuning/tune.h"

#define MAX_COPIES 64
#define SPACER_BYTES ((size_t)32 << 20)
#define HEADROOM_BYTES ((size_t)256 << 20)

int mgen__gpu_capturing(mgen_ctx *ctx, void *stream, cudaError_t *err) {
  (void)ctx;
  int capturing = mgen__stream_capturing(stream, err);
  if (capturing < 0) (void)cudaGetLastError();
  return capturing;
}

static size_t round_up(size_t x) { return (x + 255) & ~(size_t)255; }

/* The timer's data (tune.h); bench_tune_method fills its buffers with it too. */
cudaError_t mgen__fill_random(void *d, size_t bytes, int act, uint64_t seed, cudaStream_t s,
                              uint16_t *pattern) {
  uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
  for (size_t i = 0; i < MGEN__FILL_PATTERN_BYTES / 2; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint16_t r = (uint16_t)(x >> 24), sign = (uint16_t)(x >> 40 & 0x8000);
    if (act == MGEN_ACT_F16) pattern[i] = sign | (uint16_t)((10 + r % 5) << 10) | (r >> 6 & 0x3ff);
    else if (act == MGEN_ACT_BF16) pattern[i] = sign | (uint16_t)((122 + r % 5) << 7) | (r >> 9 & 0x7f);
    else pattern[i] = r;
  }
  size_t first = bytes < MGEN__FILL_PATTERN_BYTES ? bytes : MGEN__FILL_PATTERN_BYTES;
  /* cudaMemcpy, not Async: the pattern is rewritten for the next buffer at once. */
  cudaError_t err = cudaMemcpy(d, pattern, first, cudaMemcpyHostToDevice);
  for (size_t done = first; err == cudaSuccess && done < bytes; done *= 2) {
    size_t n = done < bytes - done ? done : bytes - done;
    err = cudaMemcpyAsync((char *)d + done, d, n, cudaMemcpyDeviceToDevice, s);
  }
  return err;
}

static int cmp_float(const void *a, const void *b) {
  float x = *(const float *)a, y = *(const float *)b;
  return x < y ? -1 : x > y;
}

typedef struct scratch {
  void *a, *c, *w, *spacer;
  cudaEvent_t *ev;
  float *samples;
  uint16_t *pattern;
  int *perm;
  int nev;
} scratch;

static void scratch_free(scratch *s) {
  for (int i = 0; i < s->nev; i++) (void)cudaEventDestroy(s->ev[i]);
  if (s->a) (void)cudaFree(s->a);
  if (s->c) (void)cudaFree(s->c);
  if (s->w) (void)cudaFree(s->w);
  if (s->spacer) (void)cudaFree(s->spacer);
  free(s->ev);
  free(s->samples);
  free(s->pattern);
  free(s->perm);
}

mgen_status mgen__gpu_timer(mgen_ctx *ctx, const mgen__tune_problem *p, double *us) {
  mgen_status st = MGEN_OK;
  scratch s;
  memset(&s, 0, sizeof s);
  int previous = -1, leased = 0, spacers = 0, copies = 0;
  const int total = p->reps * p->count;
  cudaStream_t stream = (cudaStream_t)p->stream;
  mgen__lease lease;
  size_t qbytes = 0, sbytes = 0, free_b = 0, total_b = 0;
  mgen_weights w = {.wfmt = (mgen_wfmt)p->ck.key.wfmt, .act = (mgen_act)p->ck.key.act,
                    .scheme = (mgen_scheme)p->ck.key.scheme, .group = p->ck.key.group,
                    .n = p->ck.n, .k = p->ck.k, .layout = (mgen_layout)p->ck.key.layout};
  if ((st = mgen_weights_bytes(&w, &qbytes, &sbytes)) != MGEN_OK)
    return mgen__fail(ctx, st, "tuning: the weights n=%d k=%d group=%d: %s", w.n, w.k, w.group,
                      mgen_status_str(st));
  const size_t a_bytes = (size_t)p->m * p->ck.k * 2, c_bytes = (size_t)p->m * p->ck.n * 2;
  const size_t stride = round_up(qbytes) + round_up(sbytes);

  MGEN_CUDA_TRY(ctx, cudaGetDevice(&previous));
  if (previous != ctx->device) MGEN_CUDA_TRY(ctx, cudaSetDevice(ctx->device));
  MGEN_CUDA_TRY(ctx, cudaMemGetInfo(&free_b, &total_b));
  copies = (int)((2 * (size_t)ctx->model.l2_bytes + stride - 1) / stride);
  copies = copies < 1 ? 1 : copies > MAX_COPIES ? MAX_COPIES : copies;
  const size_t fixed = a_bytes + c_bytes + SPACER_BYTES + HEADROOM_BYTES;
  while (copies > 1 && fixed + copies * stride > free_b) copies--;
  if (fixed + stride > free_b) {
    st = mgen__fail(ctx, MGEN_ERR_NO_MEMORY, "tuning needs %zu MB of scratch, %zu MB are free",
                    (fixed + stride) >> 20, free_b >> 20);
    goto out;
  }
  if ((size_t)copies * stride < 2 * (size_t)ctx->model.l2_bytes)
    mgen__log(ctx, MGEN_LOG_WARN, "mgen: tuning n=%d k=%d: %d weight copies (%zu MB) do not "
              "exceed 2x L2: memory is short, timings may flatter large kernels",
              p->ck.n, p->ck.k, copies, copies * stride >> 20);

  s.pattern = malloc(MGEN__FILL_PATTERN_BYTES);
  s.ev = calloc((size_t)total * 2, sizeof *s.ev);
  s.samples = malloc((size_t)total * sizeof *s.samples);
  s.perm = malloc((size_t)p->count * sizeof *s.perm);
  if (s.pattern == NULL || s.ev == NULL || s.samples == NULL || s.perm == NULL) {
    st = mgen__fail(ctx, MGEN_ERR_NO_MEMORY, "tuning: out of host memory");
    goto out;
  }
  MGEN_CUDA_TRY(ctx, cudaMalloc(&s.a, a_bytes));
  MGEN_CUDA_TRY(ctx, cudaMalloc(&s.c, c_bytes));
  MGEN_CUDA_TRY(ctx, cudaMalloc(&s.w, copies * stride));
  MGEN_CUDA_TRY(ctx, cudaMalloc(&s.spacer, SPACER_BYTES));
  if (!ctx->tuner_warm) {
    /* The first timing of a context may find the GPU idling at a low clock: keep it busy for
     * ~50 ms (memsets over the weight scratch) so that the first candidates are not
     * penalized while the clock ramps up. */
    const double bw = ctx->model.mem_bw > 0 ? ctx->model.mem_bw : 2e12;
    size_t sweeps = (size_t)(0.05 * bw / (double)(copies * stride)) + 1;
    for (size_t i = 0; i < sweeps && i < 4096; i++)
      MGEN_CUDA_TRY(ctx, cudaMemsetAsync(s.w, (int)i, copies * stride, stream));
    ctx->tuner_warm = 1;
  }
  MGEN_CUDA_TRY(ctx, mgen__fill_random(s.a, a_bytes, p->ck.key.act, 1, stream, s.pattern));
  MGEN_CUDA_TRY(ctx, mgen__fill_random(s.w, copies * stride, 0, 2, stream, s.pattern));
  /* Scales: the scheme's safe byte everywhere (formats.h: valid finite positive scales of
   * either activation type, and FP32 column factors, for every scheme). */
  const int safe = mgen__scheme_safe_scale_byte(p->ck.key.scheme);
  for (int i = 0; i < copies; i++)
    MGEN_CUDA_TRY(ctx, cudaMemsetAsync((char *)s.w + i * stride + round_up(qbytes), safe, sbytes,
                                       stream));

  for (; s.nev < total * 2; s.nev++) MGEN_CUDA_TRY(ctx, cudaEventCreate(&s.ev[s.nev]));

  MGEN_TRY(mgen__ws_acquire(ctx, stream, &lease));
  leased = 1;
  for (int i = 0; i < p->count; i++) us[i] = 0;
  for (int r = 0, run = 0; r < p->warmup + p->reps; r++) {
    if (r == p->warmup) {
      spacers = total / 2 < 4 ? 4 : total / 2 > 64 ? 64 : total / 2;
      for (int i = 0; i < spacers; i++)
        MGEN_CUDA_TRY(ctx, cudaMemsetAsync(s.spacer, i, SPACER_BYTES, stream));
    }
    for (int step = 0; step < p->count; step++) {
      const int i = mgen__tune_candidate_at(p, r, step, s.perm);
      /* p->prime untimed launches of the candidate, then the one timed in a timed round:
       * each on the next weight copy. */
      for (int launch = 0; launch <= p->prime && us[i] >= 0; launch++, run++) {
        w.d_q = (char *)s.w + (size_t)(run % copies) * stride;
        w.d_scales = (char *)w.d_q + round_up(qbytes);
        const int timed = r >= p->warmup && launch == p->prime;
        const int e = 2 * ((r - p->warmup) * p->count + i);
        if (timed) MGEN_CUDA_TRY(ctx, cudaEventRecord(s.ev[e], stream));
        mgen_status ls = mgen__launch(ctx, &ctx->table->kernels[p->candidates[i]], p->m, s.a,
                                      &w, s.c, stream, &lease);
        if (ls != MGEN_OK) {
          us[i] = -1; /* a launch error (e.g. too much shared memory): skip it, go on */
          mgen__log(ctx, MGEN_LOG_WARN, "mgen: tuning: %s", mgen_ctx_last_error(ctx));
          break;
        }
        if (timed) MGEN_CUDA_TRY(ctx, cudaEventRecord(s.ev[e + 1], stream));
      }
    }
  }
  mgen__ws_release(ctx, stream, &lease);
  leased = 0;
  MGEN_CUDA_TRY(ctx, cudaStreamSynchronize(stream));
  for (int i = 0; i < p->count; i++) {
    if (us[i] < 0) continue;
    for (int r = 0; r < p->reps; r++) {
      const int e = 2 * (r * p->count + i);
      MGEN_CUDA_TRY(ctx, cudaEventElapsedTime(&s.samples[r], s.ev[e], s.ev[e + 1]));
    }
    qsort(s.samples, (size_t)p->reps, sizeof *s.samples, cmp_float);
    us[i] = 1000.0 * (p->reps % 2 ? s.samples[p->reps / 2]
                                  : 0.5 * (s.samples[p->reps / 2 - 1] + s.samples[p->reps / 2]));
  }
out:
  if (leased) mgen__ws_release(ctx, stream, &lease);
  if (st != MGEN_OK) (void)cudaStreamSynchronize(stream); /* before freeing what it may use */
  scratch_free(&s);
  if (previous >= 0 && previous != ctx->device) (void)cudaSetDevice(previous);
  return st;
}
