/* u4b8.c -- the u4b8 weight format's description (format.h): GPTQ symmetric int4 stored as
 * q + 8, group scales of the activation type. The cost models were fitted on it: its
 * dequantization factor is 1 (no rows). Its GPU hooks are u4b8_ops.c.
 */
#include "formats/format.h"
#include "formats/formats.h"
#include "formats/layout.h"

static long long k_padded(int k) { return mgen__k_packed(k); }

/* 4-bit codes over the padded K; rows x n scales of the activation type (layout.h). */
static void sizes(const mgen_weights *w, size_t *qbytes, size_t *sbytes) {
  const size_t rows = (size_t)mgen__scale_rows(w->k, w->group);
  *qbytes = (size_t)w->n * (size_t)k_padded(w->k) * (size_t)mgen__wfmt_bits((int)w->wfmt) / 8;
  *sbytes = rows * (size_t)w->n * (size_t)mgen__scheme_scale_bytes((int)w->scheme, (int)w->act);
}

const mgen__format mgen__format_u4b8 = {
    .wfmt = MGEN_WFMT_U4B8,
    .name = "u4b8",
    .cost_code_bits = 4.0,
    .cost_scale_bytes = 2.0, /* FP16 / BF16 */
    .dequant_costs = NULL,   /* the reference: 1 */
    .k_padded = k_padded,
    .sizes = sizes,
};
