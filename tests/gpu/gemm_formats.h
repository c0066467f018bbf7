/* gemm_formats.h -- the rows of the GEMM test (test_gemm_gpu.c): one per (act, wfmt, scheme,
 * group, weight source), each with its format's hooks (gemm_formats.c). Adding a format adds
 * rows here and a dequantization in ref_gemm.cu, not a test program. */
#ifndef MGEN_TEST_GEMM_FORMATS_H
#define MGEN_TEST_GEMM_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_util.h"
#include "ref_gemm.h"
#include "rng.h"

/* What the hooks run on: the test's context and (non-blocking) stream. */
typedef struct gemm_env {
  mgen_ctx *ctx;
  cudaStream_t stream;
} gemm_env;

/* Makes random weights of w's description (wfmt, act, scheme, group, n, k) and writes w's
 * buffers (allocated and poisoned by gemm_weights_alloc) through the row's library path, and
 * the exact weights and their slack (n x k FP64, device; gpu_dequant) for the reference.
 * Complete on return. */
typedef void (*gemm_prepare_fn)(const gemm_env *env, rng *r, mgen_weights *w, double *d_w,
                                double *d_slack);
/* The error bound of the format's kernels for activation type act and depth k (ref_gemm.h). */
typedef void (*gemm_bound_fn)(int act, int k, gemm_bound *bound);
/* The format's own checks (argument checks, packing and quantization against the CPU
 * reference), run once before the GEMMs; quick as in --quick. */
typedef void (*gemm_checks_fn)(const gemm_env *env, rng *r, int quick);

#define GEMM_TABLE_GROUPS (-1) /* a row's group: each group of the table's (act, wfmt) kernels */

typedef struct gemm_format {
  int act, wfmt, scheme; /* mgen_act, mgen_wfmt, mgen_scheme */
  int group;             /* the kernels' group (0: per channel), or GEMM_TABLE_GROUPS */
  int small_only;        /* 1: not on the two big shapes (CPU-side preparation is slow there) */
  const char *name;      /* "u4b8", "fe2m1/nvfp4": messages */
  const char *source;    /* the library path that makes the weights: messages */
  gemm_prepare_fn prepare;
  gemm_bound_fn bound;
  gemm_checks_fn checks; /* NULL: none; rows that share it run it once */
} gemm_format;

extern const gemm_format gemm_formats[];
extern const size_t gemm_format_count;

/* u4's rows (gemm_u4.c): through mgen_pack_weights and mgen_quantize; their bound is u4b8's
 * (gemm_formats.c). */
void gemm_prepare_u4_pack(const gemm_env *env, rng *r, mgen_weights *w, double *d_w,
                          double *d_slack);
void gemm_prepare_u4_quantize(const gemm_env *env, rng *r, mgen_weights *w, double *d_w,
                              double *d_slack);
void gemm_bound_u4b8(int act, int k, gemm_bound *bound);

/* Allocates w's buffers (mgen_weights_bytes) and fills them with 0xAB, garbage that the
 * preparation must overwrite; gemm_weights_free frees them. */
void gemm_weights_alloc(const gemm_env *env, mgen_weights *w);
void gemm_weights_free(mgen_weights *w);
/* Overwrites the K padding of w's packed buffers (where k is not a multiple of 128) with codes
 * and scales whose weights are not zero: a GEMM is then right only if the kernel zero-fills A
 * past k, as it must (the packers' padding, zeros, is checked bit for bit elsewhere). */
void gemm_poison_padding(const mgen_weights *w);

/* The bias of a test's GEMM (mgen_weights.d_bias): rows x n values of type act, uniform in
 * [-2 rms, 2 rms], rms that of `d_ref_row` (n outputs of the problem's FP64 reference, device),
 * into d_bias (device, rows x n elements) and `host` (NULL: none). As large as the outputs and
 * of either sign: a bias lost, doubled, of another column or expert, or added after a moe
 * router weight moves most outputs by about their RMS, and the bounds are fractions of it. */
void gemm_make_bias(rng *r, int act, const double *d_ref_row, int n, int rows, uint16_t *host,
                    void *d_bias);

/* Synchronizes env's stream; a failure (a device fault poisons the context) ends the test
 * (exit 1) naming `what`. */
void gemm_sync(const gemm_env *env, const char *what);

#endif /* MGEN_TEST_GEMM_FORMATS_H */
