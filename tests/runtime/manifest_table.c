/* manifest_table.c -- manifest_table.h. */
#include "manifest_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "families/family.h"
#include "formats/formats.h"
#include "formats/op.h"

/* Fills d->params from the manifest's params column ("stages=4,warps=8,..."): the names must be
 * its family's parameter names in their order (families/<family>.h; the spec writes them). */
static void read_params(mgen_kernel_desc *d, const mgen__family *f, const char *text,
                        const char *path) {
  char buf[256];
  int i = 0, count = 0;
  while (f->param_names[count] != NULL) count++;
  snprintf(buf, sizeof buf, "%s", text);
  for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save), i++) {
    char *eq = strchr(p, '=');
    const char *want = i < count ? f->param_names[i] : NULL;
    CHECK(eq != NULL && want != NULL && (size_t)(eq - p) == strlen(want) &&
              strncmp(p, want, strlen(want)) == 0,
          "%s: %s: param %d is '%s', families/%s.h says '%s'", path, d->name, i, p, f->name,
          want ? want : "(none)");
    if (eq == NULL || i >= MGEN_FAMILY_PARAMS) return;
    d->params[i] = atoi(eq + 1);
  }
  CHECK(i == count, "%s: %s has %d params, families/%s.h %d", path, d->name, i, f->name, count);
}

/* The registered family of that name (the manifest's family column), or NULL. */
static const mgen__family *family_named(const char *name) {
  for (size_t i = 0; i < mgen__family_count; i++)
    if (strcmp(mgen__families[i]->name, name) == 0) return mgen__families[i];
  return NULL;
}

/* strtok would merge empty fields and shift the columns. */
int split_fields(char *line, char sep, char **field, int max) {
  int n = 0;
  line[strcspn(line, "\r\n")] = '\0';
  for (char *p = line; n < max;) {
    field[n++] = p;
    p = strchr(p, sep);
    if (p == NULL) break;
    *p++ = '\0';
  }
  return n;
}

int column_of(char *const *field, int nf, const char *name) {
  for (int i = 0; i < nf; i++)
    if (!strcmp(field[i], name)) return i;
  return -1;
}

int find_columns(char *const *field, int nf, const char *const *want, int nwant, int *col,
                        const char *path) {
  int found = 1;
  for (int w = 0; w < nwant; w++) {
    col[w] = column_of(field, nf, want[w]);
    CHECK(col[w] >= 0, "%s: no column %s in the header", path, want[w]);
    found &= col[w] >= 0;
  }
  return found;
}

size_t manifest_read(const char *path, mgen_kernel_desc *kernels, char (*names)[MANIFEST_NAME_SIZE],
                     size_t cap) {
  size_t nkernels = 0;
  FILE *f = fopen(path, "r");
  char line[512];
  int col[32], ncol = 0;
  static const char *want[] = {"name",   "family", "act",    "wfmt",         "group",
                               "scheme", "layout", "tile_m", "tile_n",       "tile_k",
                               "sm_min", "sm_max", "blocks_per_sm", "default_rank", "params",
                               "op"};
  enum { NAME, FAMILY, ACT, WFMT, GROUP, SCHEME, LAYOUT, TM, TN, TK, SM_MIN, SM_MAX, BPS, RANK,
         PARAMS, OP, NWANT };
  CHECK(f != NULL, "cannot read %s", path);
  if (!f) return 0;
  while (fgets(line, sizeof line, f)) {
    char *field[32];
    if (line[0] == '#') continue;
    const int n = split_fields(line, '\t', field, 32);
    if (!ncol) { /* the header */
      if (!find_columns(field, n, want, NWANT, col, path)) break;
      ncol = n;
      continue;
    }
    CHECK(n == ncol, "%s: a row of %d fields (the header has %d)", path, n, ncol);
    CHECK(nkernels < cap, "%s: more than %zu kernels (the caller's capacity)", path, cap);
    if (n != ncol || nkernels == cap) break;
    const mgen__family *family = family_named(field[col[FAMILY]]);
    CHECK(family != NULL, "%s: unknown family %s", path, field[col[FAMILY]]);
    if (family == NULL) continue;
    mgen_kernel_desc *d = &kernels[nkernels];
    snprintf(names[nkernels], sizeof names[0], "%s", field[col[NAME]]);
    *d = (mgen_kernel_desc){
        .name = names[nkernels], .family = family->id,
        .op = mgen__op_parse(field[col[OP]], strlen(field[col[OP]])),
        .act = mgen__act_parse(field[col[ACT]], strlen(field[col[ACT]])),
        .wfmt = mgen__wfmt_parse(field[col[WFMT]], strlen(field[col[WFMT]])), .group = atoi(field[col[GROUP]]),
        .scheme = mgen__scheme_parse(field[col[SCHEME]], strlen(field[col[SCHEME]])),
        .layout = mgen__layout_parse(field[col[LAYOUT]], strlen(field[col[LAYOUT]])),
        .tile_m = atoi(field[col[TM]]),
        .tile_n = atoi(field[col[TN]]), .tile_k = atoi(field[col[TK]]),
        .sm_min = atoi(field[col[SM_MIN]]), .sm_max = atoi(field[col[SM_MAX]]),
        .blocks_per_sm = atoi(field[col[BPS]]), .default_rank = atoi(field[col[RANK]])};
    read_params(d, family, field[col[PARAMS]], path);
    nkernels++;
  }
  fclose(f);
  return nkernels;
}

