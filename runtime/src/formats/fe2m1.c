/* fe2m1.c -- the fe2m1 weight format's description (format.h): FP4 E2M1 codes, NVFP4 (E4M3
 * per 16 + FP32 global) or MXFP4 (E8M0 per 32) scales, whose packed scale buffer ends with n
 * FP32 column factors. Its GPU hooks are fe2m1_ops.c.
 */
#include "formats/format.h"
#include "formats/formats.h"
#include "formats/layout.h"

static long long k_padded(int k) { return mgen__k_packed(k); }

/* 4-bit codes over the padded K; rows x n one-byte scales padded to 16 bytes, then n FP32
 * column factors (layout.h, mgen__fe2m1_column_offset). */
static void sizes(const mgen_weights *w, size_t *qbytes, size_t *sbytes) {
  const size_t rows = (size_t)mgen__scale_rows(w->k, w->group);
  *qbytes = (size_t)w->n * (size_t)k_padded(w->k) * (size_t)mgen__wfmt_bits((int)w->wfmt) / 8;
  const size_t scales =
      rows * (size_t)w->n * (size_t)mgen__scheme_scale_bytes((int)w->scheme, (int)w->act);
  *sbytes = (scales + 15) / 16 * 16 + (size_t)w->n * 4;
}

/* What its dequantization costs in each family's model, over u4b8's (fitted on the H200
 * sweeps with the models: bench/fit_cost_models.py searches these #defines too; history in bench/notes/cost-model.md).
 *   mma    f = 1.25: the FP4 bit moves and scale conversions cost more than u4b8's magic
 *          number; 1.75 for MXFP4 tiles that multiply every weight by its 16-bit E8M0
 *          multiplier (acc_scales 0) rather than scale their FP32 sums once per group
 *   wgmma  F = 1.142 per stage: its scale bytes converted per step, the FP4 bit moves
 *          (fe2m1 over u4b8 g32 kernels of the same tile: 1.19 in the version 3 sweep, 1.12 in
 *          version 4's; version 5's search: 1.067) */
#define FE2M1_DEQUANT 1.25 /* mma f */
#define MXFP4_SCALED 1.75  /* mma f, MXFP4 scaling every weight */
#define FE2M1_STAGE 1.142  /* wgmma F */
static const mgen__dequant_cost kDequantCosts[] = {
    {MGEN_FAMILY_MMA, MGEN_SCHEME_MXFP4, 0, MXFP4_SCALED},
    {MGEN_FAMILY_MMA, MGEN__ANY, MGEN__ANY, FE2M1_DEQUANT},
    {MGEN_FAMILY_WGMMA, MGEN__ANY, MGEN__ANY, FE2M1_STAGE},
    {0, 0, 0, 0.0},
};

const mgen__format mgen__format_fe2m1 = {
    .wfmt = MGEN_WFMT_FE2M1,
    .name = "fe2m1",
    .cost_code_bits = 4.0,
    /* The models' memory floor was fitted counting 2 bytes per group scale, as u4b8's (stored:
     * 1 byte, plus the column factors); counting 1 would move default choices: refit first. */
    .cost_scale_bytes = 2.0,
    .dequant_costs = kDequantCosts,
    .k_padded = k_padded,
    .sizes = sizes,
};
