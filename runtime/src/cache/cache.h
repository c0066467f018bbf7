/* cache.h -- the context's in-memory kernel-choice cache: an open-addressing hash map from the
 * packed choice key (op, act, wfmt, scheme, group, layout, n, k, M bucket) to a table index. It holds measured
 * records (tuned here or loaded from a file; what mgen_cache_save writes) and remembered
 * defaults (the cost model's choice, kept so that mgen_gemm predicts once per key; never
 * saved). Pure C, not thread-safe by itself: the context's lock guards every call.
 */
#ifndef MGEN_CACHE_H
#define MGEN_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "base/key.h"
#include "mgen/mgen.h"

enum {
  MGEN__ENTRY_MEASURED = 1,      /* `kernel` won a timing (here or in a loaded file) */
  MGEN__ENTRY_TUNE_FAILED = 2,   /* tuning failed once; not retried until mgen_cache_clear */
  MGEN__ENTRY_CAPTURE_LOGGED = 4, /* "not tuned: capturing" was logged for this key */
  MGEN__ENTRY_TUNED = 8           /* `kernel` was timed by this context (not loaded) */
};

typedef struct mgen__entry {
  uint64_t k0, k1;         /* packed key; k1 == 0: empty slot */
  int flags;               /* MGEN__ENTRY_* */
  int kernel;              /* table index: the measured winner, or -1 */
  int default_kernel;      /* the cost model's choice, or -1 if not computed yet */
  uint64_t ns, default_ns; /* measured medians (MEASURED only); default_ns 0 = unknown */
} mgen__entry;

typedef struct mgen__cache {
  mgen__entry *slots; /* capacity a power of two, at most 70% full */
  size_t cap, used, measured;
} mgen__cache;

/* Allocates `cap` (rounded up to a power of two, at least 16) empty slots. ERR_NO_MEMORY. */
mgen_status mgen__cache_init(mgen__cache *c, size_t cap);
void mgen__cache_free(mgen__cache *c);
/* Empties the map (keeps its capacity). */
void mgen__cache_clear(mgen__cache *c);

void mgen__choice_key_pack(const mgen__choice_key *ck, uint64_t *k0, uint64_t *k1);
void mgen__choice_key_unpack(uint64_t k0, uint64_t k1, mgen__choice_key *ck);

/* The entry for the key, or NULL. The pointer is valid until the next insert or clear. */
mgen__entry *mgen__cache_find(mgen__cache *c, const mgen__choice_key *ck);

/* The entry for the key, inserted empty (kernel = default_kernel = -1) if absent. With
 * may_grow == 0 a full map returns NULL instead of allocating (mgen_gemm's path), as does an
 * allocation failure. */
mgen__entry *mgen__cache_upsert(mgen__cache *c, const mgen__choice_key *ck, int may_grow);

/* How mgen__cache_put_measured treats a key that already has a measured record. */
enum {
  /* Loaded records: the lower `ns` wins (ties: the lower table index), so that merging files is
   * order-independent; a record this context tuned (MGEN__ENTRY_TUNED) is never displaced. */
  MGEN__PUT_MERGE = 0,
  /* A fresh tuning: stored regardless, and marked MGEN__ENTRY_TUNED. */
  MGEN__PUT_TUNED = 1,
  /* Stored only if the key has no measured record yet. */
  MGEN__PUT_FILL = 2
};

/* Stores a measured record by `how` (MGEN__PUT_*). Returns 1 if stored, 0 if the stored record
 * was kept, -1 on allocation failure. */
int mgen__cache_put_measured(mgen__cache *c, const mgen__choice_key *ck, int kernel, uint64_t ns,
                             int default_kernel, uint64_t default_ns, int how);

/* Calls fn for every measured entry, in slot order. */
void mgen__cache_each_measured(const mgen__cache *c, void (*fn)(void *self, const mgen__entry *e),
                               void *self);

#endif /* MGEN_CACHE_H */
