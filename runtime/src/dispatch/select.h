/* select.h -- kernel selection over a table: functional key -> candidates -> can_implement
 * -> the default by the cost model (cost.h). Pure C over mgen_kernel_desc data (no CUDA), so
 * the CPU tests drive it with fake tables. The cache and tuning sit on top (tune.h).
 */
#ifndef MGEN_SELECT_H
#define MGEN_SELECT_H

#include <stddef.h>

#include "base/key.h"
#include "dispatch/cost.h"
#include "formats/formats.h"
#include "mgen/mgen.h"

/* Short text of a key, mgen__format_text's "f16/u4b8/g128", "f16/fe2m1/g16/nvfp4", behind the
 * op's name as kernel names have it: none for dense, "moe/f16/u4b8/g128" ("?" for values
 * outside the table). */
void mgen__key_str(const mgen__key *key, char *buf, size_t size);

/* The functional key a kernel computes: its (act, wfmt, scheme, group, layout, op). */
mgen__key mgen__desc_key(const mgen_kernel_desc *d);
/* Whether kernel `d` computes calls with this key (its functional fields equal the key's). */
int mgen__key_matches(const mgen_kernel_desc *d, const mgen__key *key);

/* What k must be a multiple of for `d` to implement it: the packed layout's k step of its
 * group (formats/layout.h: the group, or 64 per channel). A tile_k that divides
 * MGEN_LAYOUT_K_PAD asks nothing more, as the layout pads k to a multiple of it; a deeper
 * tile_k that is a multiple of the padding (the 256-deep tiles of `--space full`) asks k to be
 * a multiple of it (such k are not padded); 0 for any other tile_k (or a bad group): the kernel
 * can run no shape. The shape rule is built on it. */
int mgen__k_multiple(const mgen_kernel_desc *d);

/* What n must be a multiple of for `d` to implement it: its family's n_multiple hook (a
 * family whose kernels run a partial last tile), else its tile_n; 0 for a bad descriptor. */
int mgen__n_multiple(const mgen_kernel_desc *d);
/* The least n `d` runs: its family's n_min hook, else 1. */
int mgen__n_min(const mgen_kernel_desc *d);

/* Whether `d` can run a call of shape (m, n, k): m, n, k >= 1, n % mgen__n_multiple(d),
 * n >= mgen__n_min(d) and k % mgen__k_multiple(d). Returns 1, or 0 and writes the failed constraint to `why` (may be
 * NULL), e.g. "n=1000 is not a multiple of 128 (tile_n)". */
int mgen__can_implement(const mgen_kernel_desc *d, int m, int n, int k, char *why, size_t why_size);

/* Picks the default kernel for (key, m, n, k) on device `dev`: candidates are the table's
 * kernels matching the key that run on dev->sm (mgen__kernel_runs); of those that can
 * implement the shape, the one with the lowest mgen__cost_ns (ties: lower default_rank, then table order). Writes
 * *index on MGEN_OK. Statuses: OK; ERR_UNSUPPORTED_FORMAT (no kernel for the key);
 * ERR_NO_KERNEL (kernels for the key, none for this sm); ERR_UNSUPPORTED_SHAPE (none can
 * implement the shape); ERR_NULL_POINTER. On failure `why` (may be NULL) names the constraint
 * that failed. Thread-safe. */
mgen_status mgen__select(const mgen_table *table, const mgen__device *dev, const mgen__key *key,
                         int m, int n, int k, int *index, char *why, size_t why_size);

/* As mgen__select, for `slabs` GEMMs of (m, n, k) run side by side by one launch (the moe
 * op: mgen__moe_choice_key_of): each kernel must implement (m, n, k), and its cost is the
 * model's for (m, n x slabs, k). slabs <= 1: mgen__select. */
mgen_status mgen__select_slabs(const mgen_table *table, const mgen__device *dev,
                               const mgen__key *key, int m, int n, int k, int slabs, int *index,
                               char *why, size_t why_size);

/* The candidates mgen__select chooses among, best predicted first: writes up to `cap` table
 * indexes to `out` and returns how many there are in all (may exceed cap; 0 = none). */
int mgen__candidates(const mgen_table *table, const mgen__device *dev, const mgen__key *key,
                     int m, int n, int k, int *out, int cap);
/* mgen__candidates of mgen__select_slabs. */
int mgen__candidates_slabs(const mgen_table *table, const mgen__device *dev, const mgen__key *key,
                           int m, int n, int k, int slabs, int *out, int cap);

/* The generated table (mgen_table.c, or table_empty.c). */
extern const mgen_table mgen__builtin_table;

/* The choice key of a call (bucket of m). */
mgen__choice_key mgen__choice_key_of(const mgen_weights *w, int m);

/* The grouped GEMM's (moe op's) choice key for `pairs` (token, expert) pairs over
 * num_experts experts of which this rank holds local_experts (all >= 1), w one expert's
 * weights. Its kernels stripe the units of every slab of the route (one expert's rows each)
 * over the same persistent grid as a dense GEMM's row blocks, and every slab streams its
 * expert's weights: the call costs as `slabs` GEMMs side by side, one per active expert, of
 * their mean rows. P = pairs x local / num_experts pairs come here; they hit
 * A = L (1 - (1 - 1/L)^P) of the L local experts when the router spreads them evenly: slabs
 * is A on a ladder of 1, 2, 3, 4, 6, 8, 12 ... (so that a model's calls make a few cache
 * keys, not one per M), at most L; m (its bucket) P / slabs, an expert's mean rows (the cost
 * takes their spread about it: cost.h mgen__cost_slabs_ns); n and k the expert's. */
mgen__choice_key mgen__moe_choice_key_of(const mgen_weights *w, long long pairs, int num_experts,
                                         int local_experts);

/* The choice key of the moe call without a sorted list (mgen_moe_route.unsorted): P pairs come
 * here (as mgen__moe_choice_key_of), each a slab of its own with one row: m 1, slabs P on the
 * same ladder. */
mgen__choice_key mgen__moe_unsorted_key_of(const mgen_weights *w, long long pairs, int num_experts,
                                           int local_experts);

/* 1 where moe kernel d, chosen for an unsorted route of m tokens' topk pairs over
 * local_experts of num_experts experts (mgen__moe_unsorted_key_of), runs it (its family's
 * moe_unsorted) and the experts its pairs are expected to read twice (uniform routing), each
 * n x k in d's format, cost at most MOE_UNSORTED_GEMM_BYTES: half of what a decode GEMM streams
 * in the route's time (mgen_moe_unsorted_pays; the rule in choice_key.c); else 0. */
int mgen__moe_unsorted_pays(const mgen_kernel_desc *d, int m, int topk, int num_experts,
                            int local_experts, int n, int k);

/* 1 where moe kernel d, chosen for `pairs` pairs over local_experts of num_experts experts n
 * wide, reads A in the route's order (MGEN_MOE_A_SORTED) faster than gathered by more than
 * mgen_moe_permute costs (mgen_moe_gemm_a_sorted; the rule and its measure in choice_key.c);
 * else 0. */
int mgen__moe_a_sorted_pays(const mgen_kernel_desc *d, long long pairs, int num_experts,
                            int local_experts, int n);

#endif /* MGEN_SELECT_H */
