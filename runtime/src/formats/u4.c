/* u4.c -- the u4 weight format's description (format.h): asymmetric int4 (AWQ, GPTQ
 * sym=false, compressed-tensors asymmetric), codes 0..15 stored as the checkpoint's q, group
 * scales of the activation type and a 4-bit zero point per (group, column): w = (q - z) * s.
 * Its GPU hooks are u4_ops.c.
 */
#include "formats/format.h"
#include "formats/formats.h"
#include "formats/layout.h"

static long long k_padded(int k) { return mgen__k_packed(k); }

/* 4-bit codes over the padded K, as u4b8's; rows x n scales of the activation type padded to 16
 * bytes, then rows x n zero points of zero_bits each (layout.h, "Zero points"). */
static void sizes(const mgen_weights *w, size_t *qbytes, size_t *sbytes) {
  const size_t rows = (size_t)mgen__scale_rows(w->k, w->group);
  const int scale_bytes = mgen__scheme_scale_bytes((int)w->scheme, (int)w->act);
  *qbytes = (size_t)w->n * (size_t)k_padded(w->k) * (size_t)mgen__wfmt_bits((int)w->wfmt) / 8;
  *sbytes = (size_t)mgen__zero_offset(w->n, w->k, w->group, scale_bytes) +
            rows * (size_t)w->n * (size_t)mgen__scheme_zero_bits((int)w->scheme) / 8;
}

const mgen__format mgen__format_u4 = {
    .wfmt = MGEN_WFMT_U4,
    .name = "u4",
    .cost_code_bits = 4.0,
    /* A group's 2-byte scale and its half-byte zero point, both read per (group, column). */
    .cost_scale_bytes = 2.5,
    /* No rows: the zero is subtracted inside u4b8's magic-number sequence (the same
     * instruction count per weight: templates/formats/u4/mma_f16.cuh's comment), so its
     * dequantization costs what u4b8's does. */
    .dequant_costs = NULL,
    .k_padded = k_padded,
    .sizes = sizes,
};
