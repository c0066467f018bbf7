/* format.h -- what the runtime knows of a weight format beyond the format table (formats.h):
 * its description, as hooks and figures. One file per format implements it (formats/u4b8.c,
 * fe2m1.c); registry.c lists the formats, format.c looks them up. Sizes, K padding and the
 * cost models (dispatch/cost.c, families/) call these through mgen__format_of() and never
 * branch on the format. Pure C (no CUDA), so that the CPU tests of selection link it; the GPU
 * side of a format (quantize, pack, import) is format_ops.h, kept apart for that reason.
 */
#ifndef MGEN_FORMAT_H
#define MGEN_FORMAT_H

#include <stddef.h>

#include "mgen/mgen.h"
#include "mgen/mgen_kernel.h"

/* Any value: a wildcard of mgen__dequant_cost's scheme and acc_scales. */
#define MGEN__ANY (-1)

/* One row of a format's dequantization cost in a family's cost model: the factor over u4b8's
 * (1) of the dequantization work of kernels of `family` with scheme `scheme` whose
 * acc_scales parameter is `acc_scales` (1: group scales on the FP32 sums once per group; 0:
 * on every weight). The first matching row applies; none: 1. */
typedef struct mgen__dequant_cost {
  int family;     /* mgen_family; 0 ends a list */
  int scheme;     /* mgen_scheme, or MGEN__ANY */
  int acc_scales; /* 0, 1 or MGEN__ANY */
  double factor;
} mgen__dequant_cost;

typedef struct mgen__format {
  int wfmt;         /* mgen_wfmt: the format table's row (formats.h) */
  const char *name; /* the table's name ("u4b8"), for messages */
  /* The cost models' memory floor (mgen__memory_ns): bits of one packed code and bytes of one
   * group scale, as the models were fitted with (not necessarily the stored bytes). */
  double cost_code_bits, cost_scale_bytes;
  /* Dequantization cost rows, ended by a zero family; NULL: as u4b8's everywhere. */
  const mgen__dequant_cost *dequant_costs;
  /* K as the packed layout stores it (k >= 1; K padding: layout.h). */
  long long (*k_padded)(int k);
  /* The packed buffers' sizes of weights `w` (mgen__check_desc accepted it). */
  void (*sizes)(const mgen_weights *w, size_t *qbytes, size_t *sbytes);
} mgen__format;

/* The registry (registry.c: one line per format; a test may link its own). */
extern const mgen__format *const mgen__formats[];
extern const size_t mgen__format_count;

/* The format `wfmt`, or NULL if this library does not know it. */
const mgen__format *mgen__format_of(int wfmt);

/* The dequantization cost factor of kernel `d` in its family's model (its format's rows; 1 for
 * a format without rows or unknown), given its acc_scales parameter (the family knows where
 * its descriptor keeps it). */
double mgen__dequant_factor(const mgen_kernel_desc *d, int acc_scales);

/* The packed bytes the cost models count for `n` columns of depth `k_read` in groups of
 * `group` (0: one scale per column) of format `wfmt`: codes plus scales, by the format's cost
 * figures (4 bits and 2 bytes for a format the registry does not know). */
double mgen__format_cost_bytes(int wfmt, double n, double k_read, int group);

#endif /* MGEN_FORMAT_H */
