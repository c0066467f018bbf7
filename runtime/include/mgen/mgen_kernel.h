/* mgen_kernel.h -- the kernel ABI: the one thing generated code and the runtime share.
 *
 * marlin-gen emits a table (`mgen_table.c`) of `mgen_kernel_desc`, one per generated kernel,
 * sorted by functional key (op, act, wfmt, group, then tile; scheme and layout follow from the
 * format table, templates/formats.lua). Each kernel file defines an
 * `extern "C"` launcher `<name>_launch` and a `<name>_prepare` hook with the signatures below.
 * The runtime never knows a kernel by anything but this descriptor: it selects over the data,
 * never through a chain of branches.
 *
 * Plain C99 so that C translation units (runtime, tests, bench) and CUDA ones include it alike.
 */
#ifndef MGEN_KERNEL_H
#define MGEN_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The enums below are public ABI, written by hand; their names and values are those of the
 * format table (templates/formats.lua, generated as mgen_formats.h), which
 * tests/runtime/test_formats.c checks. */

/* Weight formats. Values are stable: they appear in cache files. */
typedef enum mgen_wfmt {
  MGEN_WFMT_U4B8 = 1,  /* GPTQ symmetric int4, stored as q + 8 (0..15) */
  MGEN_WFMT_FE2M1 = 2, /* FP4 E2M1 (NVFP4 / MXFP4) */
  MGEN_WFMT_U4 = 3     /* asymmetric int4: codes 0..15, a zero point per group and column,
                          value (q - z) * s (AWQ, GPTQ sym=false, compressed-tensors asym) */
} mgen_wfmt;

/* Activation (and output) types. */
typedef enum mgen_act {
  MGEN_ACT_F16 = 1,
  MGEN_ACT_BF16 = 2
} mgen_act;

/* Scale schemes. Values are stable: they appear in cache files. */
typedef enum mgen_scheme {
  MGEN_SCHEME_GROUP = 0,  /* u4b8: scales of the activation type per group of 32/64/128 K
                             elements, or per output column (group MGEN_GROUP_CHANNEL) */
  MGEN_SCHEME_NVFP4 = 1,  /* fe2m1: FP8 E4M3 scale per 16 K elements + FP32 global scale */
  MGEN_SCHEME_MXFP4 = 2,  /* fe2m1: E8M0 (power of two) scale per 32 K elements (OCP MX) */
  MGEN_SCHEME_ASYM = 3    /* u4: scales of the activation type and 4-bit zero points per group
                             of 32/64/128 K elements, or per output column */
} mgen_scheme;

/* Packed weight layouts: how codes and scales sit in memory for a kernel family to read.
 * Layouts are per family: a family's kernels read weights in that family's layout only (the
 * layout follows its MMA fragments and load pattern), and weights are packed for one layout,
 * so serving two families means packing twice (twice the memory). Every format has a default
 * layout (the first the format table, templates/formats.lua, lists for it). */
typedef enum mgen_layout {
  MGEN_LAYOUT_DEFAULT = 0, /* mgen_weights only: the format's default layout */
  MGEN_LAYOUT_MMA = 1,     /* mma.sync m16n8k16 B fragments, Marlin's interleave
                              (runtime/src/formats/layout.h): the mma family */
  MGEN_LAYOUT_E4M3 = 2     /* W4A8 words (u4b8): the FP8 A fragments of wgmma k32
                              (layout.h, "W4A8 words"), read by the wgmma family's W4A8 kernels
                              (FP8 E4M3 activations: mgen_gemm_a8) */
} mgen_layout;

/* Kernel families: how the main loop multiplies. */
typedef enum mgen_family {
  MGEN_FAMILY_MMA = 1,   /* mma.sync.aligned.m16n8k16, sm_80+ */
  MGEN_FAMILY_WGMMA = 2  /* Hopper warpgroup MMA (wgmma.mma_async), sm_90a */
} mgen_family;

/* Operations: what a kernel computes from its operands. Values are stable: they appear in
 * cache files. 0 is the plain GEMM, so a descriptor, key or launch that leaves the op zero is
 * dense. Kernel names spell out every op but dense, right after the architecture token
 * (README "Kernel names"). */
typedef enum mgen_op {
  MGEN_OP_DENSE = 0, /* C = A * W^T, one weight matrix per call (mgen_gemm) */
  MGEN_OP_MOE = 1    /* grouped GEMM over experts (mgen_moe_gemm): op_args mgen_moe_op_args */
} mgen_op;

/* What a MGEN_OP_MOE kernel reads beyond mgen_launch_args (its op_args; device pointers, the
 * struct itself in host memory: the launcher passes it by value). Rows of the call are the
 * route's sorted list (mgen.h, "Mixture of experts"): mgen_launch_args.m is the list's
 * capacity, a multiple of tile_m; its slab s (tile_m rows) belongs to expert block_experts[s]
 * (-1: none, skipped whole), and only slabs below *num_padded / tile_m are computed. Row r
 * holds pair id sorted_ids[r]; ids >= pairs are padding (A zero-filled, C not written). The
 * pair's A row is id / a_div, or with a_sorted r itself (A permuted into the list's order:
 * mgen_moe_permute; a padding row's A is whatever is there: it reaches only its own C row,
 * which is not written); its C row is id, times topk_weights[id] where that is set. */
typedef struct mgen_moe_op_args {
  const int32_t *sorted_ids;    /* [m] pair ids grouped by expert */
  const int32_t *block_experts; /* [m / tile_m] expert (index into the weights) of each slab */
  const int32_t *num_padded;    /* [1] rows of the list in use, a multiple of tile_m */
  const float *topk_weights;    /* [pairs] router weights, or NULL: no multiply */
  int pairs;                    /* tokens * topk: the first id that is padding */
  int a_div;                    /* topk (A per token) or 1 (A per pair) */
  int a_sorted;                 /* 1: A is [m, k] in the list's order (row r for row r) */
  long long q_stride;           /* bytes from one expert's packed codes to the next's */
  long long s_stride;           /* and from one expert's packed scales to the next's */
  int experts;                  /* experts in the weights (their allocation's extent: the wgmma
                                   family's tensor maps span them all) */
  /* unsorted (only kernels of a family with mgen__family.moe_unsorted): no sorted list; slab s
   * is pair s alone (row s * tile_m holds id s, its other rows are padding), of the local
   * expert of topk_ids[s] (through expert_map where that is set; an id outside 0..num_experts-1
   * or a map entry outside 0..experts-1: none, the slab is skipped); m = pairs * tile_m;
   * sorted_ids, block_experts and num_padded are not read. */
  int unsorted;
  const int32_t *topk_ids;      /* unsorted: [pairs] the pairs' expert ids */
  const int32_t *expert_map;    /* unsorted: [num_experts] expert -> local expert or -1; NULL:
                                   the identity */
  int num_experts;              /* unsorted: the ids' range */
} mgen_moe_op_args;

/* Group size 0 means one scale per output channel (the whole K); name field "gc". */
#define MGEN_GROUP_CHANNEL 0

/* Everything a launcher needs. The runtime fills it; the launcher derives the grid (at most
 * sm_count * blocks_per_sm blocks). All pointers are device pointers. `partials`/`counters` are
 * the context's workspace: for every kernel of the table `partials` holds at least
 * 2 * sm_count * blocks_per_sm * tile_m * tile_n floats and `counters` at least
 * sm_count * blocks_per_sm ints, all zero before the first launch (each launch leaves the
 * counters zero again). */
typedef struct mgen_launch_args {
  int m, n, k;            /* C[m,n] = A[m,k] * W^T, W is n x k before packing */
  int k_packed;           /* the K the packed weights and scales are laid out for: k rounded up
                           * by the layout's K padding (runtime/src/formats/layout.h; = k when k
                           * is a multiple of it). Every tile_k divides it, so a kernel runs
                           * ceil(k / tile_k) K tiles, all inside the packed buffers; A past k
                           * is zero-filled, never read */
  int group;              /* group size in K elements, or MGEN_GROUP_CHANNEL */
  const void *a;          /* m x k, row-major, 16-byte aligned */
  const void *b;          /* packed weights (layout: runtime/src/formats/layout.h) */
  const void *scales;     /* packed scales */
  void *c;                /* m x n, row-major, 16-byte aligned */
  float *partials;        /* cross-block FP32 reduction slots */
  int *counters;          /* cross-block arrival counters */
  int sm_count;           /* multiprocessors of the device */
  int pdl;                /* 1: launch as a programmatic dependent launch (sm_90 and later): the
                           * kernel may start while the stream's previous kernel finishes, waits
                           * for it (griddepcontrol.wait) before it touches memory, and lets the
                           * stream's next kernel start early the same way; 0: an ordinary launch */
  int op;                 /* mgen_op of the call: the kernel's own (mgen_kernel_desc.op) */
  const void *op_args;    /* what the op needs beyond the fields above, in a struct the op
                           * defines (its kernels read it); NULL for MGEN_OP_DENSE */
  const float *a_scales;  /* kernels of FP8 activations (layout MGEN_LAYOUT_E4M3): row i of A
                           * is A's codes times a_scales[i * a_scale_stride] (stride 1: per
                           * row, 0: one per-tensor scale); NULL: 1. Other kernels ignore it */
  int a_scale_stride;
  const void *bias;       /* [n] of the activation type, or NULL: added in FP32 to every row of
                           * C after the scales (and row factors), before MGEN_OP_MOE's router
                           * weight; MGEN_OP_MOE: [experts][n], slab's expert e's at e * n */
} mgen_launch_args;

/* Returns a cudaError_t value (0 on success). Must not synchronize or allocate. */
typedef int (*mgen_launch_fn)(const mgen_launch_args *args, void *stream);
/* One-time per-device setup (e.g. raising the dynamic shared-memory limit); cudaError_t. */
typedef int (*mgen_prepare_fn)(void);

/* sm_max of a kernel that runs on every architecture from sm_min up (its PTX JIT-compiles). */
#define MGEN_SM_NO_MAX 0
/* Family parameters a descriptor carries (params[]): what they mean is the family's own
 * (runtime/src/families/<family>.h names them); the runtime outside the family never reads them. */
#define MGEN_FAMILY_PARAMS 8

typedef struct mgen_kernel_desc {
  const char *name;       /* procedural name, the primary key (see README "kernel names") */
  int family;             /* mgen_family */
  int op;                 /* mgen_op it computes */
  int act;                /* mgen_act */
  int wfmt;               /* mgen_wfmt */
  int group;              /* group size or MGEN_GROUP_CHANNEL */
  int scheme;             /* mgen_scheme of the scales it reads */
  int layout;             /* mgen_layout of the weights it reads (never DEFAULT) */
  int tile_m, tile_n, tile_k; /* output rows x columns per tile, K depth per step */
  int sm_min, sm_max;     /* runs on compute capability sm_min..sm_max (10 * major + minor);
                           * sm_max MGEN_SM_NO_MAX: no upper limit. Code built for an arch-specific
                           * target (sm_90a) runs only there: sm_min = sm_max = 90. */
  int smem_bytes;         /* dynamic shared memory per block */
  int blocks_per_sm;      /* co-resident blocks per SM the kernel is built (and launched) for */
  int default_rank;       /* lower = preferred by the default rule among equals */
  int params[MGEN_FAMILY_PARAMS]; /* the family's own knobs (mma: stages, warps, swizzle) */
  mgen_launch_fn launch;
  mgen_prepare_fn prepare;
} mgen_kernel_desc;

/* 1 if kernel `d` runs on a device of compute capability `sm` (10 * major + minor): the one
 * statement of that rule. */
static inline int mgen_kernel_runs_on(const mgen_kernel_desc *d, int sm) {
  return sm >= d->sm_min && (d->sm_max == MGEN_SM_NO_MAX || sm <= d->sm_max);
}

/* A dispatch table: kernels sorted by (op, act, wfmt, group, family, tile_m, tile_n, tile_k),
 * then the family's own order. */
typedef struct mgen_table {
  const mgen_kernel_desc *kernels;
  size_t count;
  uint64_t hash;          /* FNV-1a over names and parameters, for cache invalidation */
  const char *generator;  /* "marlin-gen <version>" */
} mgen_table;

#ifdef __cplusplus
}
#endif
#endif /* MGEN_KERNEL_H */
