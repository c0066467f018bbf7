/* layer_run.c -- bench_layer's decoder layer (layer_run.h): buffers, the nine kernels of a layer
 * in each variant, their timing and the check against cuBLAS. */
#include "layer_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "layer_kernels.h"
#include "mgen_internal.h"

#define die bench_die
#define STAND(call) CUDA_CHECK((cudaError_t)(call))

const char *const layer_gemm_names[NGEMM] = {"qkv", "o", "gate_up", "down"};
const char *const layer_variant_names[NVAR] = {"standins", "cublas", "mgen_plain", "mgen_pdl"};
const char *const layer_trigger_names[NTRIG] = {"start", "end"};
/* Relative L2 error allowed against cuBLAS: both multiply exactly the same weights, so only
 * accumulation order and 16-bit rounding differ (~1e-3 in FP16, a few 1e-3 in BF16). One lost
 * 128-deep K tile gives sqrt(128 / K), 0.094 at the largest K (14336); a lost column tile, or an
 * input read before it was written, a NaN (the activations are poisoned). */
const double layer_check_tol = 0.05;

void layer_gemm_shape(const layer_model *md, int g, int *n, int *k) {
  const int n_of[NGEMM] = {md->q_dim + 2 * md->kv_dim, md->hidden, 2 * md->inter, md->hidden};
  const int k_of[NGEMM] = {md->hidden, md->q_dim, md->hidden, md->inter};
  *n = n_of[g], *k = k_of[g];
}

size_t layer_kv_bytes(const layer_model *md, int ctx) { return 2 * (size_t)md->kv_dim * ctx * 2; }

// --------------------------------------------------------------------------- one layer

/* One variant at one M and trigger: what enqueue_layer needs. */
typedef struct run {
  layer_bench *b;
  layer_set *s;
  int variant, m;
  layer_launch ll;
  double host_us_last; /* the host time of the last pass's enqueue */
} run;

static void gemm(run *r, int g, int l, const void *a, void *c) {
  const layer_weight *w = &r->s->w[l * NGEMM + g];
  if (r->variant == V_CUBLAS) {
    bench_cublas_gemm_act(r->b->cublas, r->s->act, r->m, w->q.n, w->q.k, a, w->w16, c);
  } else if (r->variant != V_STANDINS) {
    mgen_ctx *ctx = r->b->ctx[r->variant == V_MGEN_PDL];
    MGEN_CHECK(ctx, mgen_gemm(ctx, r->s->act, r->m, a, &w->q, c, r->b->stream));
  }
}

/* Layer l's nine kernels (five without the GEMMs) on the stream. */
static void enqueue_layer(run *r, int l) {
  layer_set *s = r->s;
  const layer_model *md = s->md;
  const layer_launch *ll = &r->ll;
  const int m = r->m;
  void **B = s->buf;
  STAND(layer_rmsnorm(ll, m, md->hidden, B[B_X], NULL, s->gamma, NULL, B[B_XN]));
  gemm(r, G_QKV, l, B[B_XN], B[B_QKV]);
  STAND(layer_attention(ll, m, md->q_dim, s->width[B_QKV], B[B_QKV], s->kv[l], s->kv_bytes,
                        s->attn_blocks, B[B_AO], s->sink));
  gemm(r, G_O, l, B[B_AO], B[B_OO]);
  STAND(layer_rmsnorm(ll, m, md->hidden, B[B_X], B[B_OO], s->gamma, B[B_H], B[B_HN]));
  gemm(r, G_GATE_UP, l, B[B_HN], B[B_GU]);
  STAND(layer_silu_mul(ll, m, md->inter, B[B_GU], B[B_ACT]));
  gemm(r, G_DOWN, l, B[B_ACT], B[B_D]);
  STAND(layer_add(ll, m, md->hidden, B[B_H], B[B_D], B[B_X]));
  CUDA_CHECK(cudaGetLastError());
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

/* bench_launch_fn: events time one pass over the L layers; graphs capture layer i % L. */
static int launch_pass(void *self, int i) {
  run *r = self;
  (void)i;
  const double t0 = now_us();
  for (int l = 0; l < r->s->layers; l++) enqueue_layer(r, l);
  r->host_us_last = now_us() - t0;
  return 0;
}
static int launch_layer(void *self, int i) {
  run *r = self;
  enqueue_layer(r, i % r->s->layers);
  return 0;
}
/* bench_pre_fn before each timed pass: the GPU spins until the host has enqueued the pass
 * (twice the last pass's enqueue + 20 us), so that the host's launch rate stays out of the
 * time. The last pass, not the longest: the probe pass's first launches (module loading, the
 * stream's workspace) can take milliseconds, and a rare slow enqueue costs one sample, which
 * the median drops. */
static void spin(void *self) {
  const run *r = self;
  const double us = fmin(2 * r->host_us_last + 20, 100e3);
  STAND(layer_spin((long long)(us * 1e3), r->b->stream));
}

/* The stand-ins are PDL wherever PDL exists (sm_90 on), whatever the variant. */
static run run_of(layer_bench *b, layer_set *s, int variant, int m, int trigger_start) {
  return (run){.b = b, .s = s, .variant = variant, .m = m,
               .ll = {.stream = b->stream, .bf16 = s->act == MGEN_ACT_BF16, .pdl = b->sm >= 90,
                      .trigger_start = trigger_start}};
}

double layer_time(layer_bench *b, layer_set *s, int variant, int m, int trigger_start, int graph) {
  run r = run_of(b, s, variant, m, trigger_start);
  /* The residual stream starts where the check's does (it drifts over many passes). */
  CUDA_CHECK(cudaMemcpyAsync(s->buf[B_X], s->x0, (size_t)m * s->width[B_X] * 2,
                             cudaMemcpyDeviceToDevice, b->stream));
  if (graph) return bench_time_graph_us(&b->timer, launch_layer, &r, s->layers);
  b->timer.pre = spin, b->timer.pre_self = &r;
  const double us = bench_time_us(&b->timer, launch_pass, &r);
  b->timer.pre = NULL, b->timer.pre_self = NULL;
  return us / s->layers;
}

void layer_kernel_names(layer_bench *b, const layer_set *s, int variant, int m, char *buf,
                        size_t size) {
  buf[0] = '\0';
  if (variant == V_CUBLAS) snprintf(buf, size, "cublasGemmEx");
  if (variant != V_MGEN_PLAIN && variant != V_MGEN_PDL) return;
  mgen_ctx *ctx = b->ctx[variant == V_MGEN_PDL];
  for (int g = 0; g < NGEMM; g++) {
    const char *name;
    MGEN_CHECK(ctx, mgen_gemm_choice(ctx, s->act, m, &s->w[g].q, &name));
    snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", g ? ";" : "", name);
  }
}

// --------------------------------------------------------------------------- a model's buffers

void layer_set_make(layer_bench *b, layer_set *s, const layer_model *md, mgen_act act,
                    const layer_fmt *f, int mmax, int ctx, int layers, uint64_t seed) {
  *s = (layer_set){.md = md, .fmt = f, .act = act, .mmax = mmax, .layers = layers,
                   .attn_blocks = b->sms, .kv_bytes = layer_kv_bytes(md, ctx)};
  for (int g = 0, n, k; g < NGEMM; g++) {
    mgen_weights w = {.wfmt = (mgen_wfmt)f->wfmt, .act = act, .scheme = (mgen_scheme)f->scheme,
                      .group = f->group};
    size_t qb, sb;
    layer_gemm_shape(md, g, &n, &k);
    w.n = n, w.k = k;
    mgen_status st = mgen_weights_bytes(&w, &qb, &sb);
    if (st != MGEN_OK)
      die("%s %s %s: %dx%d: %s", md->name, layer_gemm_names[g], f->name, n, k, mgen_status_str(st));
    s->wbytes4 += qb + sb;
    s->wbytes16 += (size_t)n * k * 2;
  }
  if (!s->layers) { /* one pass over the 4-bit weights >= 3x L2, and at least 4 layers */
    s->layers = (int)((3 * b->l2 + s->wbytes4 - 1) / s->wbytes4);
    s->layers = s->layers < 4 ? 4 : s->layers;
  } else if (s->layers * s->wbytes4 < 3 * b->l2) {
    fprintf(stderr,
            "bench_layer: warning: %d layers of %s hold %.0f MB of 4-bit weights, < 3x L2\n",
            s->layers, md->name, s->layers * s->wbytes4 / 1e6);
  }
  const size_t per_layer = s->wbytes4 + s->wbytes16 + s->kv_bytes;
  size_t free_b, total_b;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (s->layers * per_layer + ((size_t)1 << 30) > free_b)
    die("%s: %d layers need %.2f GiB (+1 GiB spare), %.2f GiB free: "
        "fewer --layers or a smaller --ctx",
        md->name, s->layers, s->layers * per_layer / 0x1p30, free_b / 0x1p30);
  fprintf(stderr,
          "%s %s %s: %d layers of %.0f MB 4-bit weights, %.0f MB 16-bit, %.1f MB KV cache\n",
          md->name, mgen__act_name(act), f->name, s->layers, s->wbytes4 / 1e6, s->wbytes16 / 1e6,
          s->kv_bytes / 1e6);

  if (!(s->w = calloc((size_t)s->layers * NGEMM, sizeof *s->w)) ||
      !(s->kv = calloc((size_t)s->layers, sizeof *s->kv)))
    die("out of host memory");
  for (int g = 0, n, k; g < NGEMM; g++) {
    layer_gemm_shape(md, g, &n, &k);
    layer_weight_make(&s->w[g], b->ctx[1], b->stream, act, f->wfmt, f->scheme, f->group, n, k,
                      seed + (uint64_t)g);
  }
  for (int l = 1; l < s->layers; l++)
    for (int g = 0; g < NGEMM; g++) layer_weight_clone(&s->w[l * NGEMM + g], &s->w[g], b->stream);
  for (int l = 0; l < s->layers; l++) {
    s->kv[l] = bench_dmalloc(s->kv_bytes);
    if (l == 0) bench_fill_random_act(s->kv[0], s->kv_bytes / 2, seed + 5, act);
    else CUDA_CHECK(cudaMemcpyAsync(s->kv[l], s->kv[0], s->kv_bytes, cudaMemcpyDeviceToDevice,
                                    b->stream));
  }
  const int widths[NBUF] = {md->hidden, md->hidden, md->q_dim + 2 * md->kv_dim, md->q_dim,
                            md->hidden, md->hidden, md->hidden, 2 * md->inter, md->inter,
                            md->hidden}; /* in B_* order */
  for (int i = 0; i < NBUF; i++) {
    s->width[i] = widths[i];
    s->buf[i] = bench_dmalloc((size_t)mmax * widths[i] * 2);
    /* Rows past M are read by tiles taller than M (their outputs dropped): keep them defined. */
    CUDA_CHECK(cudaMemsetAsync(s->buf[i], 0, (size_t)mmax * widths[i] * 2, b->stream));
  }
  s->x0 = bench_dmalloc((size_t)mmax * md->hidden * 2);
  bench_fill_random_act(s->x0, (size_t)mmax * md->hidden, seed + 3, act);
  uint16_t *ones = malloc((size_t)md->hidden * 2);
  if (!ones) die("out of host memory");
  for (int i = 0; i < md->hidden; i++) ones[i] = act == MGEN_ACT_BF16 ? 0x3f80 : 0x3c00;
  s->gamma = bench_dmalloc((size_t)md->hidden * 2);
  CUDA_CHECK(cudaMemcpy(s->gamma, ones, (size_t)md->hidden * 2, cudaMemcpyHostToDevice));
  free(ones);
  s->sink = bench_dmalloc(sizeof(unsigned) * (size_t)s->attn_blocks);
  /* The pageable copies above may return before their DMA lands, and the stream is
   * non-blocking (no order with the legacy stream): wait for the device. */
  CUDA_CHECK(cudaDeviceSynchronize());
}

void layer_set_free(layer_set *s) {
  for (int i = 0; i < s->layers * NGEMM; i++) layer_weight_free(&s->w[i]);
  for (int l = 0; l < s->layers; l++) CUDA_CHECK(cudaFree(s->kv[l]));
  for (int i = 0; i < NBUF; i++) CUDA_CHECK(cudaFree(s->buf[i]));
  CUDA_CHECK(cudaFree(s->x0));
  CUDA_CHECK(cudaFree(s->gamma));
  CUDA_CHECK(cudaFree(s->sink));
  free(s->w);
  free(s->kv);
}

// --------------------------------------------------------------------------- the check

/* What the check compares: the four GEMMs' outputs and the layer's. */
static const int kCheckBufs[NCHECK] = {B_QKV, B_OO, B_GU, B_D, B_X};
static const char *const kCheckNames[NCHECK] = {"qkv", "o", "gate_up", "down", "layer"};

void layer_check_init(layer_check *c, size_t rows, size_t width) {
  *c = (layer_check){0};
  for (int i = 0; i < NCHECK; i++)
    if (!(c->ref[i] = malloc(rows * width * 2)) || !(c->got[i] = malloc(rows * width * 2)))
      die("out of host memory");
}

void layer_check_free(layer_check *c) {
  for (int i = 0; i < NCHECK; i++) free(c->ref[i]), free(c->got[i]);
}

/* Layer 0 once (from a graph if `graph`) on the input x0, every other activation poisoned
 * first (0xffff is a NaN in FP16 and BF16: an element read before it is written, or never
 * written, ends as a NaN); the compared outputs into out. */
static void run_once(run *r, int graph, uint16_t *out[NCHECK]) {
  layer_set *s = r->s;
  const cudaStream_t st = r->b->stream;
  const size_t m = (size_t)r->m;
  CUDA_CHECK(
      cudaMemcpyAsync(s->buf[B_X], s->x0, m * s->width[B_X] * 2, cudaMemcpyDeviceToDevice, st));
  for (int i = 0; i < NBUF; i++)
    if (i != B_X) CUDA_CHECK(cudaMemsetAsync(s->buf[i], 0xff, m * s->width[i] * 2, st));
  if (graph) {
    cudaGraph_t g;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    enqueue_layer(r, 0);
    CUDA_CHECK(cudaStreamEndCapture(st, &g));
    CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
    CUDA_CHECK(cudaGraphLaunch(exec, st));
    CUDA_CHECK(cudaStreamSynchronize(st));
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(g));
  } else {
    enqueue_layer(r, 0);
  }
  for (int c = 0; c < NCHECK; c++)
    CUDA_CHECK(cudaMemcpyAsync(out[c], s->buf[kCheckBufs[c]], m * s->width[kCheckBufs[c]] * 2,
                               cudaMemcpyDeviceToHost, st));
  CUDA_CHECK(cudaStreamSynchronize(st));
}

/* ||x - ref|| / ||ref||; NaN where either holds one, or where ref is all zeros. */
static double rel_err(mgen_act act, const uint16_t *x, const uint16_t *ref, size_t count) {
  double num = 0, den = 0;
  for (size_t i = 0; i < count; i++) {
    const double a = bench_act_to_f32(act, x[i]), e = bench_act_to_f32(act, ref[i]);
    num += (a - e) * (a - e);
    den += e * e;
  }
  return den > 0 ? sqrt(num / den) : NAN;
}

void layer_check_m(layer_bench *b, layer_set *s, int m, int trig_mask, layer_check *c) {
  run r = run_of(b, s, V_CUBLAS, m, 0);
  run_once(&r, 0, c->ref);
  for (int t = 0; t < NTRIG; t++) {
    if (!(trig_mask & (1 << t))) continue;
    for (int v = V_MGEN_PLAIN; v <= V_MGEN_PDL; v++)
      for (int graph = 0; graph <= (v == V_MGEN_PDL); graph++) {
        r = run_of(b, s, v, m, t == TRIG_START);
        run_once(&r, graph, c->got);
        for (int i = 0; i < NCHECK; i++) {
          const double e =
              rel_err(s->act, c->got[i], c->ref[i], (size_t)m * s->width[kCheckBufs[i]]);
          c->runs++;
          if (e > c->max_err || isnan(e)) c->max_err = e;
          if (e <= layer_check_tol) continue;
          c->failed++;
          fprintf(stderr,
                  "bench_layer: CHECK FAIL %s %s %s M=%d %s trigger %s%s: %s output's relative "
                  "error %.3g "
                  "vs cuBLAS (tolerance %.2f)\n",
                  s->md->name, mgen__act_name(s->act), s->fmt->name, m, layer_variant_names[v],
                  layer_trigger_names[t], graph ? " (graph)" : "", kCheckNames[i], e,
                  layer_check_tol);
        }
      }
  }
}
