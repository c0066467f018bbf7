/* shape_rule.h -- which weight shapes (n, k) a key's kernels can multiply, derived from the
 * table: the one statement of the shape rule that mgen_weights_bytes, quantize, pack, import,
 * GEMM and tuning check (formats/weights.c), that messages print, and that README's table and
 * tests/runtime/test_shape_rules.c compare with. Pure C over mgen_kernel_desc data.
 *
 * A kernel d implements (n, k) iff n % mgen__n_multiple(d) == 0 (its tile_n, or a family's
 * partial-tile step: 64 in both families), n >= mgen__n_min(d) (the mma family's tile_n) and
 * k % mgen__k_multiple(d) == 0
 * (mgen__can_implement): k a multiple of the group, or of 64 per channel. Its tile_k adds
 * nothing, as the packed layout pads k to a multiple of every tile_k (formats/layout.h, "K
 * padding"). A shape is supported iff some kernel of the key that runs on the device implements
 * it, so the rule is a union over kernels: "n a multiple of a_i and k a multiple of b_i" for
 * some alternative i (and n at least lo_i). The rule keeps the alternatives no other one
 * implies (b | k, a | n and its lo at most the other's):
 * the weakest statement that is exactly right. Every key's kernels share one k step, so today a
 * rule is "n a multiple of the narrowest n step and k a multiple of the group"; a union of
 * several alternatives needs kernels of one key that differ in k (a fake table's, in
 * tests/runtime/test_shape_rules.c).
 */
#ifndef MGEN_SHAPE_RULE_H
#define MGEN_SHAPE_RULE_H

#include <stddef.h>

#include "dispatch/select.h"

/* mgen__shape_rule_of's sm for "the kernels of every architecture" (mgen_weights_bytes, which
 * has no device: every kernel of a family this library knows). */
#define MGEN__SM_ANY 0
/* Alternatives a rule holds. Tiles are multiples of 64 up to a few hundred, so a handful is
 * ever needed; past this the rule is marked `overflow` and accepts every shape (never refusing
 * one a kernel runs: the GEMM's selection still names the tile that fails). */
#define MGEN__RULE_MAX 16

typedef struct mgen__shape_rule {
  int count;                 /* alternatives; 0: no kernel of the key runs there */
  int n[MGEN__RULE_MAX];     /* alternative i: n a multiple of n[i] ... */
  int lo[MGEN__RULE_MAX];    /* ... at least lo[i] (>= n[i]: no bound of its own where equal) ... */
  int k[MGEN__RULE_MAX];     /* ... and k a multiple of k[i]; sorted by n, then k */
  int overflow;              /* more than MGEN__RULE_MAX alternatives (accepts everything) */
} mgen__shape_rule;

/* The rule of the kernels of `table` matching `key` that run on compute capability `sm`
 * (mgen__kernel_runs), or of every kernel of a known family for MGEN__SM_ANY. Thread-safe;
 * remembers the last few rules of each thread, so `table` must not change while it exists. */
void mgen__shape_rule_of(const mgen_table *table, const mgen__key *key, int sm,
                         mgen__shape_rule *rule);

/* 1 if some alternative of `rule` takes (n, k) (n, k >= 1), else 0; 0 for an empty rule. */
int mgen__shape_rule_accepts(const mgen__shape_rule *rule, int n, int k);

/* The rule as text: "n a multiple of 64 and k a multiple of 128, or n a multiple of 64 (at
 * least 256) and k a multiple of 64"; "no kernel" for an empty rule, "any n and k" for an
 * overflowed one. */
void mgen__shape_rule_text(const mgen__shape_rule *rule, char *buf, size_t size);

#endif /* MGEN_SHAPE_RULE_H */
