/* cost.h -- the cost model behind the default kernel choice: a predicted time for kernel `d`
 * on C[m,n] = A[m,k] * W^T, from the descriptor's fields and a few device numbers. Pure C (no
 * CUDA), so the CPU tests check it over fake tables. The formula and its calibration are in
 * cost.c; bench/notes.md ("Cost model") compares it with measurements.
 */
#ifndef MGEN_COST_H
#define MGEN_COST_H

#include "mgen/mgen_kernel.h"

/* What the model needs to know about the device. Zero fields take the defaults of the
 * device's architecture row in cost.c (so a context built by hand in a test still works). */
typedef struct mgen__device {
  int sm;          /* compute capability, 10*major + minor */
  int sm_count;    /* multiprocessors (0: 1) */
  double clock_hz; /* SM clock */
  double mem_bw;   /* achievable DRAM bandwidth, bytes/s (read + written) */
  double l2_bytes; /* L2 size */
} mgen__device;

/* The model of a device from what CUDA reports: SM clock and memory clock in kHz, memory bus
 * width in bits, L2 bytes (zeros take the architecture's defaults). One place for the
 * conversion, used by the context (ctx.c) and by the tests that model a known GPU. */
mgen__device mgen__device_model(int sm, int sm_count, int clock_khz, int mem_khz, int bus_bits,
                                int l2_bytes);

/* The memory floor of one launch of `d` (either family): the packed weights and their scales
 * over the K it reads (k_read, the K padding included), read once per block row (row_blocks of
 * them) unless they fit half the L2, plus A (m x k: never read past k) and C, at bandwidth `bw`
 * (bytes/s) times the share of the SMs that `grid` blocks occupy (idle SMs do not pull their
 * share). 0 where bw <= 0. */
double mgen__memory_ns(const mgen_kernel_desc *d, int m, int n, int k, double k_read, double row_blocks,
                       double grid, double bw, const mgen__device *dev);

/* Predicted time in nanoseconds (> 0) of one launch of `d` on the shape; the caller has
 * checked that `d` can implement it. Thread-safe, allocation-free. */
double mgen__cost_ns(const mgen_kernel_desc *d, int m, int n, int k, const mgen__device *dev);

#endif /* MGEN_COST_H */
