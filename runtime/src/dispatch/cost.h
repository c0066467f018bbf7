/* cost.h -- the cost model behind the default kernel choice: a predicted time for kernel `d`
 * on C[m,n] = A[m,k] * W^T, from the descriptor's fields and a few device numbers. Pure C (no
 * CUDA), so the CPU tests check it over fake tables. The formula and its calibration are in
 * cost.c; bench/notes/cost-model.md compares it with measurements.
 */
#ifndef MGEN_COST_H
#define MGEN_COST_H

#include "base/device.h"
#include "mgen/mgen_kernel.h"

/* Predicted time in nanoseconds (> 0) of one launch of `d` on the shape; the caller has
 * checked that `d` can implement it. Thread-safe, allocation-free. */
double mgen__cost_ns(const mgen_kernel_desc *d, int m, int n, int k, const mgen__device *dev);

/* The same for `slabs` GEMMs of (m, n, k) that one launch runs side by side (the moe op's
 * active experts of m rows on average, dispatch/select.h): each expert's rows spread about m
 * and run in whole slabs of d's tile_m, so the model's time for (min(m, tile_m), n x slabs x
 * the expected slabs per expert, k); slabs <= 1 (one expert: no spread) is mgen__cost_ns. */
double mgen__cost_slabs_ns(const mgen_kernel_desc *d, int m, int n, int k, int slabs,
                           const mgen__device *dev);

#endif /* MGEN_COST_H */
