/* marlin_tune.h -- the parts of the marlin-tune CLI (marlin_tune.c: tuning; tune_show.c: --show). */
#ifndef MARLIN_TUNE_H
#define MARLIN_TUNE_H

#include <stddef.h>
#include <stdio.h>

#include "mgen/mgen.h"
#include "mgen_internal.h"

/* Prints the records of cache FILE with the winner's speedup over the default, as a table or
 * (json) as one JSON object (tune_json.c); 0, or 1 if the file is refused. */
int marlin_tune_show(const char *path, int json);

/* tune_family.c: the kernel family (families/<family>.c's name: "mma", "wgmma") of the kernel
 * so named in this build's table, or "?" for a name the table lacks (a file from another
 * build). */
const char *marlin_tune_family(const char *kernel);

/* Writes cache file `path` (its header and records, as parsed) as one JSON object on `out`:
 * {"file", "format", "library", "table", "this_build_table", "device", "sms", "sm",
 *  "cuda_runtime", "cuda_driver", "records": [{"key", "n", "k", "m_lo", "m_hi", "kernel",
 *  "family", "ns", "default_kernel", "default_ns", "speedup"}, ...]} (family: the winner's,
 *  marlin_tune_family): times in integer nanoseconds as in
 * the file, m_hi null for the open bucket, speedup = default_ns / ns (null if a time is 0). */
void marlin_tune_json(FILE *out, const char *path, const mgen__cache_header *h,
                      const mgen__cache_record *records, size_t count, int this_build_table);

#endif /* MARLIN_TUNE_H */
