/* layer_weights.c -- bench_layer's weights (layer_weights.h): a random checkpoint of one format,
 * packed by libmgen, and its exact dequantization for cuBLAS. */
#include "layer_weights.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "layer_kernels.h"

/* How a scheme's checkpoint stores its scales, and what its codes are worth. */
enum { STORE_ACT16, STORE_E4M3, STORE_E8M0 };
typedef struct scheme_gen {
  int scheme;
  int store;        /* STORE_* */
  int zeros;        /* 1: 4-bit zero points per (group, column) (u4's ASYM) */
  int global_log2;  /* NVFP4's global scale 2^global_log2; 0 (a factor 1) for the others */
  double code_rms;  /* RMS of (value(code) - zero) over uniform codes (and zeros) */
  int fe2m1;        /* value(code): E2M1 (sign bit 3) instead of the integer code */
  int bias;         /* value(code) = code - bias for the integer formats */
} scheme_gen;

/* RMS of code - 8 over 0..15: sqrt(344/16); of q - z over independent uniform q, z:
 * sqrt(2 * 255/12); of E2M1 over its 16 codes: sqrt(68.5/8). */
static const scheme_gen kGens[] = {
    {MGEN_SCHEME_GROUP, STORE_ACT16, 0, 0, 4.637, 0, 8},
    {MGEN_SCHEME_NVFP4, STORE_E4M3, 0, -8, 2.926, 1, 0},
    {MGEN_SCHEME_MXFP4, STORE_E8M0, 0, 0, 2.926, 1, 0},
    {MGEN_SCHEME_ASYM, STORE_ACT16, 1, 0, 6.519, 0, 0},
};

static const scheme_gen *gen_of(int scheme) {
  for (size_t i = 0; i < sizeof kGens / sizeof *kGens; i++)
    if (kGens[i].scheme == scheme) return &kGens[i];
  return NULL;
}

int layer_weight_scheme_known(int scheme) { return gen_of(scheme) != NULL; }

static uint64_t next64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* The stored bits of the scale (1 + j/8) * 2^e; exits if the format cannot hold it (the
 * shapes bench_layer runs never come near). */
static unsigned encode_scale(int store, mgen_act act, int e, int j) {
  if (store == STORE_E8M0) {
    if (j || e < -127 || e > 127) bench_die("scale 2^%d outside E8M0", e);
    return (unsigned)(e + 127);
  }
  if (store == STORE_E4M3) {
    if (e < -6 || e > 8 || (e == 8 && j == 7)) bench_die("scale exponent %d outside E4M3", e);
    return (unsigned)((e + 7) << 3 | j);
  }
  if (act == MGEN_ACT_BF16) return (unsigned)((e + 127) << 7 | j << 4);
  if (e < -14 || e > 15) bench_die("scale exponent %d outside FP16", e);
  return (unsigned)((e + 15) << 10 | j << 7);
}

/* The host side of one weight: codes (n x k, one per byte) and, per (row, group), the scale's
 * value and zero point (the reference's order), with the checkpoint's tensors beside them. */
typedef struct host_ckpt {
  uint8_t *codes, *packed;  /* packed: fe2m1's two codes per byte (n x k/2), else NULL */
  float *scale;             /* [n][groups] */
  uint8_t *zero;            /* [n][groups], u4 only */
  uint8_t *ck_scales;       /* the checkpoint's scales: 16-bit [groups][n], or bytes [n][groups] */
  uint8_t *ck_zeros;        /* [groups][n], u4 only */
  size_t ck_scales_bytes;
} host_ckpt;

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) bench_die("out of host memory (%zu bytes)", bytes);
  return p;
}

static void make_host(host_ckpt *h, const scheme_gen *g, mgen_act act, int n, int k, int groups,
                      uint64_t seed) {
  const size_t nk = (size_t)n * k, ng = (size_t)n * groups;
  *h = (host_ckpt){.codes = xmalloc(nk), .scale = xmalloc(ng * sizeof(float))};
  for (size_t i = 0; i < nk; i += 16) {
    uint64_t r = next64(&seed);
    for (size_t j = 0; j < 16 && i + j < nk; j++, r >>= 4) h->codes[i + j] = (uint8_t)(r & 15);
  }
  if (g->fe2m1) {
    h->packed = xmalloc(nk / 2);
    for (size_t i = 0; i < nk / 2; i++)
      h->packed[i] = (uint8_t)(h->codes[2 * i] | h->codes[2 * i + 1] << 4); /* low nibble first */
  }
  /* Scale exponent e0 so that RMS(weight) ~ 1/sqrt(k): scale * global ~ 1/(code_rms sqrt(k)). */
  const int e0 = (int)floor(log2(1.0 / (g->code_rms * sqrt((double)k)))) - g->global_log2;
  const int wide = g->store == STORE_ACT16; /* 16-bit scales, [groups][n] */
  h->ck_scales_bytes = wide ? ng * 2 : ng;
  h->ck_scales = xmalloc(h->ck_scales_bytes);
  if (g->zeros) h->zero = xmalloc(ng), h->ck_zeros = xmalloc(ng);
  for (int r = 0; r < n; r++)
    for (int gi = 0; gi < groups; gi++) {
      const uint64_t x = next64(&seed);
      const int e = e0 - (int)(x & 1), j = g->store == STORE_E8M0 ? 0 : (int)(x >> 1 & 7);
      const size_t at = (size_t)r * groups + gi, ck = (size_t)gi * n + r;
      h->scale[at] = ldexpf(1.0f + j / 8.0f, e);
      const unsigned bits = encode_scale(g->store, act, e, j);
      if (wide) memcpy(h->ck_scales + 2 * ck, &(uint16_t){(uint16_t)bits}, 2); /* little endian */
      else h->ck_scales[at] = (uint8_t)bits;
      if (g->zeros) h->zero[at] = h->ck_zeros[ck] = (uint8_t)(x >> 4 & 15);
    }
}

static void free_host(host_ckpt *h) {
  free(h->codes), free(h->packed), free(h->scale), free(h->zero);
  free(h->ck_scales), free(h->ck_zeros);
}

/* What a code is worth before its zero point and scale. */
static void code_values(const scheme_gen *g, float v[16]) {
  static const float kE2M1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (int c = 0; c < 16; c++)
    v[c] = g->fe2m1 ? (c & 8 ? -kE2M1[c & 7] : kE2M1[c & 7]) : (float)(c - g->bias);
}

static void *upload(const void *h, size_t bytes) {
  if (!h) return NULL;
  void *d = bench_dmalloc(bytes);
  CUDA_CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
  return d;
}

void layer_weight_make(layer_weight *w, mgen_ctx *ctx, cudaStream_t stream, mgen_act act, int wfmt,
                       int scheme, int group, int n, int k, uint64_t seed) {
  const scheme_gen *g = gen_of(scheme);
  if (!g) bench_die("no random weights for scale scheme %d (layer_weights.c's kGens)", scheme);
  const int groups = group == MGEN_GROUP_CHANNEL ? 1 : k / group;
  *w = (layer_weight){.q = {.wfmt = (mgen_wfmt)wfmt, .act = act, .scheme = (mgen_scheme)scheme,
                            .group = group, .n = n, .k = k}};
  MGEN_CHECK(ctx, mgen_weights_bytes(&w->q, &w->qbytes, &w->sbytes));
  w->q.d_q = bench_dmalloc(w->qbytes);
  w->q.d_scales = bench_dmalloc(w->sbytes);
  w->w16 = bench_dmalloc((size_t)n * k * 2);

  host_ckpt h;
  make_host(&h, g, act, n, k, groups, seed);
  const size_t nk = (size_t)n * k, ng = (size_t)n * groups;
  uint8_t *d_codes = upload(h.codes, nk), *d_packed = upload(h.packed, nk / 2);
  uint8_t *d_zero = upload(h.zero, ng), *d_ck_zeros = upload(h.ck_zeros, ng);
  void *d_ck_scales = upload(h.ck_scales, h.ck_scales_bytes);
  float *d_scale = upload(h.scale, ng * sizeof(float));
  /* A pageable copy may return before its DMA lands, and `stream` may be non-blocking (no
   * order with the legacy stream): wait for the device before the stream reads them. */
  CUDA_CHECK(cudaDeviceSynchronize());
  mgen_pack_src src = {.codes = d_packed ? d_packed : d_codes,
                       .codes_bytes = d_packed ? nk / 2 : nk,
                       .scales = d_ck_scales, .scales_bytes = h.ck_scales_bytes,
                       .global_scale = ldexpf(1.0f, g->global_log2), .zeros = d_ck_zeros,
                       .zeros_bytes = d_ck_zeros ? ng : 0};
  MGEN_CHECK(ctx, mgen_pack_weights(ctx, &src, &w->q, stream));
  float values[16];
  code_values(g, values);
  CUDA_CHECK((cudaError_t)layer_dequant(act == MGEN_ACT_BF16, n, k, k / groups, d_codes, values,
                                        d_scale, d_zero, ldexpf(1.0f, g->global_log2), w->w16,
                                        stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  void *tmp[] = {d_codes, d_packed, d_zero, d_ck_zeros, d_ck_scales, d_scale};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; i++)
    if (tmp[i]) CUDA_CHECK(cudaFree(tmp[i]));
  free_host(&h);
}

void layer_weight_clone(layer_weight *dst, const layer_weight *src, cudaStream_t stream) {
  const size_t w16_bytes = (size_t)src->q.n * src->q.k * 2;
  *dst = *src;
  dst->q.d_q = bench_dmalloc(src->qbytes);
  dst->q.d_scales = bench_dmalloc(src->sbytes);
  dst->w16 = bench_dmalloc(w16_bytes);
  CUDA_CHECK(
      cudaMemcpyAsync(dst->q.d_q, src->q.d_q, src->qbytes, cudaMemcpyDeviceToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(dst->q.d_scales, src->q.d_scales, src->sbytes,
                             cudaMemcpyDeviceToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(dst->w16, src->w16, w16_bytes, cudaMemcpyDeviceToDevice, stream));
}

void layer_weight_free(layer_weight *w) {
  CUDA_CHECK(cudaFree(w->q.d_q));
  CUDA_CHECK(cudaFree(w->q.d_scales));
  CUDA_CHECK(cudaFree(w->w16));
  *w = (layer_weight){0};
}
