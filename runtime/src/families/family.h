/* family.h -- what the runtime needs to know of a kernel family beyond its descriptors: the
 * per-family hooks. One file per family implements them (families/mma.c); registry.c lists the
 * families, family.c looks them up. Selection, tuning and the cache stay family-blind: they work on descriptors and call
 * these hooks through mgen__family_of().
 */
#ifndef MGEN_FAMILY_H
#define MGEN_FAMILY_H

#include <stddef.h>

#include "base/device.h"
#include "base/tools_api.h"
#include "mgen/mgen_kernel.h"

typedef struct mgen__family {
  int id;           /* mgen_family */
  const char *name; /* the templates/<name>/ folder and the manifest's family column */
  /* Predicted time in ns (> 0) of one launch of `d` (a kernel of this family) on the shape,
   * which `d` can implement: the default choice's cost model. Pure, thread-safe. */
  double (*cost_ns)(const mgen_kernel_desc *d, int m, int n, int k, const mgen__device *dev);
  /* The cross-block workspace one launch of `d` needs on `sm_count` SMs: FP32 partial-sum
   * floats and int counters (mgen_launch_args.partials / counters). */
  void (*workspace)(const mgen_kernel_desc *d, int sm_count, size_t *floats, size_t *ints);
  /* Extra conditions for `d` to run on a device of compute capability `sm`, beyond
   * mgen_kernel_runs_on (the descriptor's architecture range); NULL: none. */
  int (*runs_on)(const mgen_kernel_desc *d, int sm);
  /* What n must be a multiple of for `d` to implement it, where the kernel runs a partial
   * last column tile (e.g. the wgmma family's consumers past n idle); NULL: its tile_n. */
  int (*n_multiple)(const mgen_kernel_desc *d);
  /* The least n `d` runs (e.g. the mma family's tile_n: its last column tile is shifted to end
   * at n, which needs a whole tile of columns); NULL: any n >= 1. */
  int (*n_min)(const mgen_kernel_desc *d);
  /* The names of params[0..], NULL-terminated (the manifest's params column, in order). */
  const char *const *param_names;
  /* 1: its moe kernels read A given in the route's order (MGEN_MOE_A_SORTED) by whole boxes
   * of rows, not a gather; 0: as gathered rows (no gain to pay mgen_moe_permute back). */
  int moe_a_boxed;
  /* 1: its moe kernels run an unsorted route (mgen_moe_op_args.unsorted: every pair its own
   * slab, its expert read from the tokens' ids); 0: they need the sorted list. */
  int moe_unsorted;
} mgen__family;

/* The memory floor of one launch of `d` (either family): the packed weights and their scales
 * over the K it reads (k_read, the K padding included), read once per block row (row_blocks of
 * them) unless they fit half the L2, plus A (m x k: never read past k) and C, at bandwidth `bw`
 * (bytes/s) times the share of the SMs that `grid` blocks occupy (idle SMs do not pull their
 * share). 0 where bw <= 0. */
double mgen__memory_ns(const mgen_kernel_desc *d, int m, int n, int k, double k_read, double row_blocks,
                       double grid, double bw, const mgen__device *dev);

/* The registry (registry.c: one line per family; a test may link its own). */
extern const mgen__family *const mgen__families[];
extern const size_t mgen__family_count;

/* The family `id`, or NULL if this library does not know it. */
MGEN__TOOLS_API const mgen__family *mgen__family_of(int id);

/* 1 if kernel `d` runs on a device of compute capability `sm`: its architecture range and its
 * family's own conditions; 0 for a kernel of an unknown family. */
int mgen__kernel_runs(const mgen_kernel_desc *d, int sm);

/* Where `d` runs, for messages: "sm_80 and later", "sm_90 only", "sm_80 to sm_89"; a kernel of
 * an unknown family says so. */
void mgen__arch_range(const mgen_kernel_desc *d, char *buf, size_t size);

#endif /* MGEN_FAMILY_H */
