/* prepare.h -- the device side of u4b8 weight preparation (prepare.cu), called by weights.c,
 * and the input check both packs (mgen_pack, mgen_pack_fp4) run first. Each returns a
 * cudaError_t value (0 on success); all but the check only enqueue work on `stream`.
 * Arguments are checked by the caller: n and k as layout.h's preconditions, group 0 (per
 * channel) or a divisor of k, 16-byte aligned outputs of mgen_weights_bytes() size. The
 * outputs are the packed layout of layout.h, K padding included.
 */
#ifndef MGEN_PREPARE_H
#define MGEN_PREPARE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* d_w: n x k row-major of type `act` (MGEN_ACT_F16 or MGEN_ACT_BF16) -> packed codes d_q in
 * `layout` (a resolved mgen_layout: MGEN_LAYOUT_MMA or MGEN_LAYOUT_E4M3) and packed scales
 * d_scales of the same type (one scale layout for both). */
int mgen__quantize_u4b8(const void *d_w, int act, int layout, int n, int k, int group, void *d_q,
                        void *d_scales, void *stream);

/* d_codes: n x k bytes (codes 0..15: mgen__check_pack_inputs first), d_scales_src:
 * (k/group or 1) x n 16-bit scales of type `act` (the padded rows' 1.0) -> packed codes d_q
 * in `layout` (as above) and packed scales d_scales. */
int mgen__pack_u4b8(const uint8_t *d_codes, const void *d_scales_src, int act, int layout, int n,
                    int k, int group, void *d_q, void *d_scales, void *stream);
/* The same for u4's codes (0..15, unbiased) and scales: the mma layout's words are u4b8's, the
 * e4m3 layout's hold the codes as they are (layout.h, "W4A8 words"); the zero rows are
 * prepare_u4.cu's. */
int mgen__pack_u4_words(const uint8_t *d_codes, const void *d_scales_src, int act, int layout,
                        int n, int k, int group, void *d_q, void *d_scales, void *stream);

/* A pack's inputs as the check sees them: codes, one per byte (u4b8's; none for FP4, whose
 * two-per-byte codes are all valid), and stored scales of 1 or 2 bytes. */
typedef struct mgen__pack_inputs {
  const uint8_t *codes;  /* ncodes bytes, each to be 0..15 */
  long long ncodes;      /* 0: no codes to check */
  const void *scales;    /* nscales scales of scale_bytes (1 or 2) bytes, aligned to them */
  long long nscales;
  int scale_bytes;
  unsigned nonfinite;    /* a scale is inf or NaN when these bits are all ones in it
                            (mgen__scheme_nonfinite_bits) */
} mgen__pack_inputs;

/* The inputs of a pack checked on the GPU: first[0] = the index of the first code above 15,
 * first[1] = the index of the first non-finite scale (all ones: none). d_scratch: 16 bytes of
 * device memory, 8-byte aligned, overwritten. Blocks until the stream has run the check (one
 * 16-byte read-back); not while the stream is being captured. */
int mgen__check_pack_inputs(const mgen__pack_inputs *in, void *d_scratch, void *stream,
                            unsigned long long first[2]);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_PREPARE_H */
