/* cache.c -- the in-memory choice cache: open addressing with linear probing over a packed
 * 128-bit key, no deletions (only clear), so no tombstones. A lookup is one hash and, at 70%
 * load, about two probes: tens of nanoseconds, well inside mgen_gemm's host budget.
 */
#include "cache/cache.h"

#include <stdlib.h>
#include <string.h>

#include "formats/formats.h"

/* Packed key. k0 = n << 32 | k. k1 = 1 << 63 (occupied) | op << 60 | layout << 56 |
 * act << 52 | wfmt << 44 | bucket << 36 | scheme << 32 | (slabs - 1) << 16 | group. The
 * callers' validation keeps every field in range (op < 8; act, layout, scheme < 16; wfmt,
 * bucket < 256; n, k non-negative ints; group one of the format table's, below 2^16; slabs
 * 1..MGEN__MOE_MAX_EXPERTS). A dense key (slabs 1) packs as it did before the moe op had
 * slabs, so cache files keep their keys. */
#define FITS_3_BITS_(id, name, value, ...) \
  _Static_assert(value >= 0 && value < 8, "cache.c: " name " outgrew its 3-bit key field");
#define FITS_4_BITS_(id, name, value, ...) \
  _Static_assert(value >= 0 && value < 16, "cache.c: " name " outgrew its 4-bit key field");
#define FITS_8_BITS_(id, name, value, ...) \
  _Static_assert(value >= 0 && value < 256, "cache.c: " name " outgrew its 8-bit key field");
MGEN_ACT_LIST(FITS_4_BITS_)
MGEN_LAYOUT_LIST(FITS_4_BITS_)
MGEN_SCHEME_LIST(FITS_4_BITS_)
MGEN_WFMT_LIST(FITS_8_BITS_)
MGEN_OP_LIST(FITS_3_BITS_)
#define GROUP_FITS_16_BITS_(scheme, group) \
  _Static_assert(group >= 0 && group < 65536, "cache.c: a group outgrew its 16-bit key field");
MGEN_SCHEME_GROUP_LIST(GROUP_FITS_16_BITS_)
#undef GROUP_FITS_16_BITS_
#undef FITS_3_BITS_
#undef FITS_4_BITS_
#undef FITS_8_BITS_

void mgen__choice_key_pack(const mgen__choice_key *ck, uint64_t *k0, uint64_t *k1) {
  *k0 = (uint64_t)(uint32_t)ck->n << 32 | (uint32_t)ck->k;
  *k1 = (uint64_t)1 << 63 | (uint64_t)(ck->key.op & 0x7) << 60 |
        (uint64_t)(ck->key.layout & 0xf) << 56 |
        (uint64_t)(ck->key.act & 0xf) << 52 | (uint64_t)(ck->key.wfmt & 0xff) << 44 |
        (uint64_t)(ck->bucket & 0xff) << 36 | (uint64_t)(ck->key.scheme & 0xf) << 32 |
        (uint64_t)((ck->slabs > 1 ? ck->slabs - 1 : 0) & 0xffff) << 16 |
        (uint64_t)(ck->key.group & 0xffff);
}

void mgen__choice_key_unpack(uint64_t k0, uint64_t k1, mgen__choice_key *ck) {
  ck->n = (int)(uint32_t)(k0 >> 32);
  ck->k = (int)(uint32_t)k0;
  ck->key.op = (int)(k1 >> 60 & 0x7);
  ck->key.layout = (int)(k1 >> 56 & 0xf);
  ck->key.act = (int)(k1 >> 52 & 0xf);
  ck->key.wfmt = (int)(k1 >> 44 & 0xff);
  ck->bucket = (int)(k1 >> 36 & 0xff);
  ck->key.scheme = (int)(k1 >> 32 & 0xf);
  ck->slabs = (int)(k1 >> 16 & 0xffff) + 1;
  ck->key.group = (int)(k1 & 0xffff);
}

/* splitmix64's finalizer over both words. */
static uint64_t mix(uint64_t k0, uint64_t k1) {
  uint64_t x = k0 ^ (k1 * 0x9e3779b97f4a7c15ULL);
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static mgen__entry *probe(const mgen__cache *c, uint64_t k0, uint64_t k1) {
  size_t mask = c->cap - 1, i = (size_t)mix(k0, k1) & mask;
  for (;;) {
    mgen__entry *e = &c->slots[i];
    if (e->k1 == 0 || (e->k0 == k0 && e->k1 == k1)) return e;
    i = (i + 1) & mask;
  }
}

mgen_status mgen__cache_init(mgen__cache *c, size_t cap) {
  size_t p = 16;
  while (p < cap) p *= 2;
  memset(c, 0, sizeof *c);
  c->slots = calloc(p, sizeof *c->slots);
  if (c->slots == NULL) return MGEN_ERR_NO_MEMORY;
  c->cap = p;
  return MGEN_OK;
}

void mgen__cache_free(mgen__cache *c) {
  free(c->slots);
  memset(c, 0, sizeof *c);
}

void mgen__cache_clear(mgen__cache *c) {
  if (c->slots != NULL) memset(c->slots, 0, c->cap * sizeof *c->slots);
  c->used = c->measured = 0;
}

mgen__entry *mgen__cache_find(mgen__cache *c, const mgen__choice_key *ck) {
  if (c->slots == NULL) return NULL;
  uint64_t k0, k1;
  mgen__choice_key_pack(ck, &k0, &k1);
  mgen__entry *e = probe(c, k0, k1);
  return e->k1 != 0 ? e : NULL;
}

static int grow(mgen__cache *c) {
  mgen__cache bigger;
  if (mgen__cache_init(&bigger, c->cap * 2) != MGEN_OK) return -1;
  for (size_t i = 0; i < c->cap; i++)
    if (c->slots[i].k1 != 0) *probe(&bigger, c->slots[i].k0, c->slots[i].k1) = c->slots[i];
  bigger.used = c->used;
  bigger.measured = c->measured;
  free(c->slots);
  *c = bigger;
  return 0;
}

mgen__entry *mgen__cache_upsert(mgen__cache *c, const mgen__choice_key *ck, int may_grow) {
  if (c->slots == NULL) return NULL;
  uint64_t k0, k1;
  mgen__choice_key_pack(ck, &k0, &k1);
  mgen__entry *e = probe(c, k0, k1);
  if (e->k1 != 0) return e;
  if ((c->used + 1) * 10 > c->cap * 7) {
    if (!may_grow || grow(c) != 0) return NULL;
    e = probe(c, k0, k1);
  }
  memset(e, 0, sizeof *e);
  e->k0 = k0;
  e->k1 = k1;
  e->kernel = e->default_kernel = -1;
  c->used++;
  return e;
}

int mgen__cache_put_measured(mgen__cache *c, const mgen__choice_key *ck, int kernel, uint64_t ns,
                             int default_kernel, uint64_t default_ns, int how) {
  mgen__entry *e = mgen__cache_upsert(c, ck, 1);
  if (e == NULL) return -1;
  if (e->flags & MGEN__ENTRY_MEASURED) {
    int better = ns < e->ns || (ns == e->ns && kernel < e->kernel);
    if (how == MGEN__PUT_FILL) return 0;
    if (how == MGEN__PUT_MERGE && (!better || (e->flags & MGEN__ENTRY_TUNED))) return 0;
  } else {
    c->measured++;
  }
  e->flags = (e->flags & ~(MGEN__ENTRY_TUNE_FAILED)) | MGEN__ENTRY_MEASURED |
             (how == MGEN__PUT_TUNED ? MGEN__ENTRY_TUNED : 0);
  e->kernel = kernel;
  e->ns = ns;
  if (default_kernel >= 0) e->default_kernel = default_kernel;
  e->default_ns = default_ns;
  return 1;
}

void mgen__cache_each_measured(const mgen__cache *c, void (*fn)(void *self, const mgen__entry *e),
                               void *self) {
  for (size_t i = 0; i < c->cap; i++)
    if (c->slots[i].k1 != 0 && (c->slots[i].flags & MGEN__ENTRY_MEASURED)) fn(self, &c->slots[i]);
}
