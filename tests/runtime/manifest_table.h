/* manifest_table.h -- a generated folder's manifest.tsv as kernel descriptors (the cost-model
 * tests' tables: test_cost_sweep, test_moe_choice), and the small CSV/TSV field helpers their
 * readers share. */
#ifndef MGEN_TESTS_MANIFEST_TABLE_H
#define MGEN_TESTS_MANIFEST_TABLE_H

#include <stddef.h>

#include "mgen/mgen_kernel.h"

enum { MANIFEST_NAME_SIZE = 96 };

/* Reads the manifest (its header names the columns) into kernels[] and names[] (the
 * descriptors' name pointers point into names), at most cap rows, every family's kernels;
 * returns the count. A bad row, an unknown family or a params column that is not its
 * family's parameter names in order fails a CHECK. */
size_t manifest_read(const char *path, mgen_kernel_desc *kernels, char (*names)[MANIFEST_NAME_SIZE],
                     size_t cap);

/* Splits a line (its newline dropped) in place at every `sep`, keeping empty fields; returns
 * the field count, at most `max`. */
int split_fields(char *line, char sep, char **field, int max);

/* The index of the header field `name`, or -1. */
int column_of(char *const *field, int nf, const char *name);

/* col[w] = the header's index of want[w] for each of the nwant names; 0 (and a failed CHECK per
 * missing name) if any is missing. */
int find_columns(char *const *field, int nf, const char *const *want, int nwant, int *col,
                 const char *path);

#endif
