/* mgen_wgmma_split.h -- how a wgmma launch splits K: the launcher's rule (kernel.cu.tpl) and
 * the one the family's cost model (runtime/src/families/wgmma.c) predicts with. Plain C, for
 * both. */
#ifndef MGEN_WGMMA_SPLIT_H
#define MGEN_WGMMA_SPLIT_H

/* K pieces per output tile for a grid of `tiles` tiles on `sm_count` SMs and `k_tiles` 64-deep
 * stages: where the tiles leave SMs idle, as many as fill the SMs once, at most `max_splits`,
 * each at least `min_split_tiles` stages deep; else 1. At most sm_count blocks in all, which
 * the workspace rule counts on (one FP32 slot per block, one counter per tile). */
static inline long long mgen_wgmma_splits(long long tiles, long long sm_count, long long k_tiles,
                                          int max_splits, int min_split_tiles) {
  if (tiles >= sm_count || max_splits <= 1 || min_split_tiles < 1) return 1;
  long long splits = sm_count / tiles;
  const long long deep = k_tiles / min_split_tiles;
  if (splits > deep) splits = deep;
  if (splits > max_splits) splits = max_splits;
  return splits < 1 ? 1 : splits;
}

#endif /* MGEN_WGMMA_SPLIT_H */
