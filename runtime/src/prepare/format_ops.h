/* format_ops.h -- a weight format's GPU hooks: quantize, pack, import (the description the
 * cost models and sizes use is format.h: pure C, apart so that the CPU tests of selection link
 * without CUDA). One file per format implements them (prepare/u4b8_ops.c, fe2m1_ops.c);
 * registry_ops.c lists them. weights.c and import.c call them through mgen__format_ops_of()
 * and never branch on the format.
 */
#ifndef MGEN_FORMAT_OPS_H
#define MGEN_FORMAT_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "core/ctx.h"
#include "prepare/import.h"

/* What a packing call was given, with its arguments' names for messages (the public entry
 * points name their own: mgen_pack's "d_codes", mgen_pack_fp4's "d_packed", ...). */
typedef struct mgen__pack_src {
  const char *call;                     /* "mgen_pack_weights" */
  const char *codes_name, *scales_name; /* "src->codes", "src->scales" */
  /* The sizes' names; NULL where the call passes no sizes (mgen_pack: the format's own). */
  const char *codes_bytes_name, *scales_bytes_name;
  const void *codes;
  size_t codes_bytes;
  const void *scales;
  size_t scales_bytes;
  float global_scale;
  /* Zero points (a scheme with zeros: mgen__scheme_zero_bits), their names as above; NULL
   * elsewhere (the shared check refuses them for a scheme without zeros). */
  const char *zeros_name, *zeros_bytes_name; /* "src->zeros", "src->zeros_bytes" */
  const void *zeros;
  size_t zeros_bytes;
} mgen__pack_src;

typedef struct mgen__format_ops {
  int wfmt; /* mgen_wfmt */
  /* Quantizes the n x k weight d_w (of type w->act) into w's buffers on `stream`: the CUDA
   * error (0: launched). w and its buffers are checked, the device is the context's. */
  int (*quantize)(const mgen_weights *w, const void *d_w, void *stream);
  /* Packs src's codes and scales (and zero points) into w's buffers: the format's checks of
   * them (sizes, alignment, values; mgen__check_device before anything touches the device)
   * with messages naming src's arguments, then the launch. w, its buffers and src's codes and
   * scales (not NULL) are checked, and src->zeros is NULL unless w's scheme has zeros. */
  mgen_status (*pack)(mgen_ctx *ctx, const mgen__pack_src *src, mgen_weights *w, void *stream);
  /* Packs an int4 checkpoint (GPTQ, compressed-tensors: import.h) into w's buffers, its data
   * checked (prepare/import.h's mgen__int4_import); NULL: the format imports none. */
  int (*import_int4)(const mgen__int4_src *src, int act, int layout, int n, int k, int group,
                     void *d_q, void *d_scales, void *stream);
  /* How messages name this format's inputs and the old entry point that packs them: "u4b8
   * codes and scales", "mgen_pack" (NULL: mgen_pack_weights only). */
  const char *inputs, *legacy_pack;
} mgen__format_ops;

/* The registry (registry_ops.c: one line per format; a test may link its own). */
extern const mgen__format_ops *const mgen__format_ops_list[];
extern const size_t mgen__format_ops_count;

/* The GPU hooks of format `wfmt`, or NULL if this library has none. */
const mgen__format_ops *mgen__format_ops_of(int wfmt);

/* The pack hooks' shared pieces (weights.c). The GPU check of codes above 15 (`ncodes` one per
 * byte at d_codes; NULL, 0: none) and non-finite scales (w's scheme and act) with w->d_q as its
 * scratch, refused while `stream` is being captured: first[] the first bad code's and scale's
 * indices (all ones: none). */
mgen_status mgen__check_pack_values(mgen_ctx *ctx, const char *call, const mgen_weights *w,
                                    const uint8_t *d_codes, long long ncodes, const void *d_scales,
                                    void *stream, unsigned long long first[2]);
/* The checks of a pack hook whose codes are one per byte and whose scales are of w's scheme
 * (u4b8, u4), after its size checks (mgen__check_pack_sizes), in order: the scales'
 * alignment, the device, the GPU check of codes and scales (mgen__check_pack_values) and its
 * refusal (mgen__pack_values_refused). MGEN_OK: the format's own checks, then its launch. */
mgen_status mgen__check_codes_scales(mgen_ctx *ctx, const mgen__pack_src *src,
                                     const mgen_weights *w, const char *fmt, void *stream);
/* The sizes src passes (none where src->codes_bytes_name is NULL: mgen_pack), one code per
 * byte (n x k) and (k/group, or 1 per channel) x n scales of w's scheme, refused naming src's
 * sizes and the format `fmt` ("u4b8"); the formats whose pack takes codes one per byte. */
mgen_status mgen__check_pack_sizes(mgen_ctx *ctx, const mgen__pack_src *src,
                                   const mgen_weights *w, const char *fmt);
/* The refusal of the first bad input mgen__check_pack_values found in src (first[0] a code
 * above 15, first[1] a non-finite scale), naming src's arguments and the format `fmt` ("u4b8"),
 * or MGEN_OK where it found none. */
mgen_status mgen__pack_values_refused(mgen_ctx *ctx, const mgen__pack_src *src,
                                      const mgen_weights *w, const char *fmt,
                                      const unsigned long long first[2]);
/* 1 if p is not a multiple of `align` (a power of two). */
int mgen__misaligned(const void *p, size_t align);
/* An enumerator's suffix from a table name: "nvfp4" -> "NVFP4" (MGEN_SCHEME_NVFP4). */
const char *mgen__upper(const char *name, char *buf, size_t size);

#endif /* MGEN_FORMAT_OPS_H */
