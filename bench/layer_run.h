/* layer_run.h -- bench_layer's decoder layer (layer_run.c): a model's L layers of weights, KV
 * caches and activations on the device, the nine kernels of one layer in a variant (stand-ins
 * alone, cuBLAS, libmgen plain or PDL), their timing per layer by events or graph replay, and
 * the check of libmgen's layer against cuBLAS's. bench_layer.c owns the command line, the
 * models and the report. For bench/ only: failures exit (bench_util.h).
 */
#ifndef MGEN_BENCH_LAYER_RUN_H
#define MGEN_BENCH_LAYER_RUN_H

#include <stddef.h>
#include <stdint.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <mgen/mgen.h>

#include "bench_util.h"
#include "layer_weights.h"

/* One GPU's share of a decoder layer (heads of 128). */
typedef struct layer_model {
  const char *name;
  int hidden, q_dim, kv_dim, inter;
} layer_model;

enum { G_QKV, G_O, G_GATE_UP, G_DOWN, NGEMM };
extern const char *const layer_gemm_names[NGEMM];   /* "qkv", "o", "gate_up", "down" */
/* GEMM g of md as an NxK weight (N = out_features, K = in_features). */
void layer_gemm_shape(const layer_model *md, int g, int *n, int *k);
/* K and V of one layer's KV heads over ctx tokens, 16-bit. */
size_t layer_kv_bytes(const layer_model *md, int ctx);

enum { V_STANDINS, V_CUBLAS, V_MGEN_PLAIN, V_MGEN_PDL, NVAR };
extern const char *const layer_variant_names[NVAR]; /* the CSV's: "standins", "cublas", ... */
enum { TRIG_START, TRIG_END, NTRIG };
extern const char *const layer_trigger_names[NTRIG]; /* "start", "end" */

/* The device, its stream, the cuBLAS handle and libmgen's two contexts. */
typedef struct layer_bench {
  cudaStream_t stream;
  cublasHandle_t cublas;
  mgen_ctx *ctx[2]; /* [0] plain launches, [1] default (PDL) */
  bench_timer timer;
  int sm, sms;
  size_t l2;
  char gpu[256];
} layer_bench;

typedef struct layer_fmt {
  int wfmt, scheme, group;
  char name[32]; /* bench_gemm's CSV name: "u4b8_g128" */
} layer_fmt;

/* The activations of one layer, as widths of M rows. B_X is the residual stream: the layer's
 * input and (by the last add) its output, as in a model. */
enum { B_X, B_XN, B_QKV, B_AO, B_OO, B_H, B_HN, B_GU, B_ACT, B_D, NBUF };

/* One (model, act, format): L layers of weights and KV caches, and the activations. */
typedef struct layer_set {
  const layer_model *md;
  const layer_fmt *fmt;
  mgen_act act;
  int layers, mmax, attn_blocks;
  layer_weight *w; /* [layers * NGEMM] */
  void **kv, *buf[NBUF], *x0, *gamma;
  int width[NBUF];
  size_t kv_bytes, wbytes4, wbytes16; /* per layer: KV cache, packed and 16-bit weights */
  unsigned *sink;
} layer_set;

/* Allocates and fills s for M up to mmax, a KV cache of ctx tokens per layer and `layers`
 * layers (0: at least 4, and one pass over the 4-bit weights >= 3x L2); exits where device
 * memory is short. `seed` draws the weights. */
void layer_set_make(layer_bench *b, layer_set *s, const layer_model *md, mgen_act act,
                    const layer_fmt *f, int mmax, int ctx, int layers, uint64_t seed);
void layer_set_free(layer_set *s);

/* Microseconds per layer of `variant` at M = m in a pass over s's layers: by events (graph 0)
 * or under graph replay. Every stand-in is a PDL; trigger_start says where it triggers. */
double layer_time(layer_bench *b, layer_set *s, int variant, int m, int trigger_start, int graph);

/* libmgen's kernel choices for the four GEMMs of `variant` at M, "qkv;o;gate_up;down"
 * ("cublasGemmEx" for cuBLAS, "" for the stand-ins). */
void layer_kernel_names(layer_bench *b, const layer_set *s, int variant, int m, char *buf,
                        size_t size);

/* The check: outputs compared, their names, and the tally. */
enum { NCHECK = 5 }; /* qkv, o, gate_up, down outputs and the layer's */
extern const double layer_check_tol;
typedef struct layer_check {
  uint16_t *ref[NCHECK], *got[NCHECK]; /* host, rows x width each */
  int runs, failed;
  double max_err;
} layer_check;

void layer_check_init(layer_check *c, size_t rows, size_t width);
void layer_check_free(layer_check *c);
/* Layer 0 at M = m: cuBLAS's outputs (trigger end) against each libmgen variant's under every
 * trigger of trig_mask (bit TRIG_*), mgen_pdl also replayed from a graph; every activation but
 * the input poisoned first. Failures are counted and said on stderr. */
void layer_check_m(layer_bench *b, layer_set *s, int m, int trig_mask, layer_check *c);

#endif /* MGEN_BENCH_LAYER_RUN_H */
