/* marlin_tune.h -- the parts of the marlin-tune CLI (marlin_tune.c: tuning; tune_show.c: --show). */
#ifndef MARLIN_TUNE_H
#define MARLIN_TUNE_H

#include "mgen/mgen.h"

/* Prints the records of cache FILE with the winner's speedup over the default; 0 or 1. */
int marlin_tune_show(const char *path);

#endif /* MARLIN_TUNE_H */
