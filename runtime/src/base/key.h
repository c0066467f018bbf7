/* key.h -- the kernel-choice keys: what a call's data fixes (mgen__key) and, with the shape and
 * M bucket, what the cache and tuning file a choice under (mgen__choice_key). Plain data on the
 * ground floor (LAYERS), so that every layer above names keys without depending on the one
 * that computes them (dispatch/select.h matches kernels to keys, dispatch/bucket.h buckets M,
 * cache/cache.h packs choice keys).
 */
#ifndef MGEN_KEY_H
#define MGEN_KEY_H

/* The functional key: what the caller's data fixes. Everything else (tiles, stages, warps,
 * swizzle) is a performance choice. */
typedef struct mgen__key {
  int act;    /* mgen_act */
  int wfmt;   /* mgen_wfmt */
  int scheme; /* mgen_scheme: matched explicitly, never implied by the group */
  int group;  /* group size or MGEN_GROUP_CHANNEL */
  int layout; /* mgen_layout, resolved (never MGEN_LAYOUT_DEFAULT): a kernel reads one layout */
  int op;     /* mgen_op; last, so that a key written without it is MGEN_OP_DENSE (0) */
} mgen__key;

/* The choice key: the functional key plus the shape. */
typedef struct mgen__choice_key {
  mgen__key key; /* op < 8, act, layout, scheme < 16 (cache.c packs them in 3 and 4 bits) */
  int n, k;
  int bucket; /* bucket.h */
  int slabs;  /* GEMMs of this shape one launch runs side by side: the moe op's active
               * experts (dispatch/select.h mgen__moe_choice_key_of); 1 for the dense op */
} mgen__choice_key;

#endif /* MGEN_KEY_H */
