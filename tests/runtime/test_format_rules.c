/* test_format_rules.c -- the format table (templates/formats.lua, as this build's generated
 * mgen_formats.h) keeps its invariants, checked by rule rather than against a snapshot, so that
 * a wrong row fails here whatever the generated files say:
 * - names are kernel-name fields (lower-case letters and digits, no '_') and, like the enum
 *   values, unique per list; references resolve (scheme -> wfmt, wfmt -> layouts);
 * - every weight format has a scheme; a (wfmt, group) pair has at most one; groups are 0 (per
 *   column) or positive;
 * - a scale's storage is one this test can decode, with its byte count;
 * - the safe scale byte (the tuner fills its scratch scale buffers with it: tune_timer.c)
 *   decodes to a finite positive scale for every (scheme, activation type), is not one that
 *   packing rejects as non-finite, and repeated over an FP32 column factor gives a finite
 *   positive factor;
 * and, over kernel manifests (manifest.tsv: the committed default set and this build's):
 * - every kernel's (act, wfmt, scheme, group, layout) is weights the table describes, its
 *   group divides its tile K or is a multiple of it (a scale group never straddles a stage),
 *   and, in the default set, every (act, format) of the table has a kernel.
 * Run: test_format_rules [DEFAULT_MANIFEST [BUILD_MANIFEST]] (defaults: set by CMake). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "fp4.h"
#include "formats/formats.h"

struct act_row { const char *name; int value, bytes; };
struct wfmt_row { const char *name; int value, bits, layout; };
struct scheme_row {
  const char *name, *storage;
  int value, wfmt, bytes, global, columns;
  unsigned nonfinite, safe;
};
struct layout_row { const char *name, *family; int value; };
struct group_row { int scheme, group; };
struct wfmt_layout_row { int wfmt, layout; };

#define ACT_(id, name, value, c_type, bytes, nonfinite) {name, value, bytes},
#define WFMT_(id, name, value, bits, layout) {name, value, bits, MGEN_LAYOUT_##layout},
#define SCHEME_(id, name, value, wfmt, storage, bytes, global, columns, nonfinite, safe) \
  {name, storage, value, MGEN_WFMT_##wfmt, bytes, global, columns, nonfinite, safe},
#define LAYOUT_(id, name, value, family) {name, family, value},
#define GROUP_(scheme, group) {MGEN_SCHEME_##scheme, group},
#define WFMT_LAYOUT_(wfmt, layout) {MGEN_WFMT_##wfmt, MGEN_LAYOUT_##layout},
static const struct act_row acts[] = {MGEN_ACT_LIST(ACT_)};
static const struct wfmt_row wfmts[] = {MGEN_WFMT_LIST(WFMT_)};
static const struct scheme_row schemes[] = {MGEN_SCHEME_LIST(SCHEME_)};
static const struct layout_row layouts[] = {MGEN_LAYOUT_LIST(LAYOUT_)};
static const struct group_row groups[] = {MGEN_SCHEME_GROUP_LIST(GROUP_)};
static const struct wfmt_layout_row wfmt_layouts[] = {MGEN_WFMT_LAYOUT_LIST(WFMT_LAYOUT_)};
#define COUNT(a) (int)(sizeof(a) / sizeof((a)[0]))

/* A kernel-name field: [a-z0-9]+ (names are split at '_'). */
static int is_field(const char *s) {
  if (!*s) return 0;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'))) return 0;
  return 1;
}

#define UNIQUE_(list, what)                                                                   \
  for (int i = 0; i < COUNT(list); i++) {                                                     \
    CHECK(is_field(list[i].name), "%s '%s' is not a kernel-name field ([a-z0-9]+)", what,     \
          list[i].name);                                                                      \
    for (int j = 0; j < i; j++)                                                               \
      CHECK(strcmp(list[i].name, list[j].name) != 0 && list[i].value != list[j].value,        \
            "%s rows '%s' and '%s' share a name or an enum value (%d, %d)", what, list[j].name, \
            list[i].name, list[j].value, list[i].value);                                      \
  }

static void test_rows(void) {
  UNIQUE_(acts, "activation type");
  UNIQUE_(wfmts, "weight format");
  UNIQUE_(schemes, "scheme");
  UNIQUE_(layouts, "layout");
  for (int w = 0; w < COUNT(wfmts); w++) {
    int n_schemes = 0, default_listed = 0;
    for (int s = 0; s < COUNT(schemes); s++) n_schemes += schemes[s].wfmt == wfmts[w].value;
    CHECK(n_schemes > 0, "weight format %s has no scale scheme", wfmts[w].name);
    for (int i = 0; i < COUNT(wfmt_layouts); i++)
      if (wfmt_layouts[i].wfmt == wfmts[w].value) {
        default_listed |= wfmt_layouts[i].layout == wfmts[w].layout;
        CHECK(mgen__layout_valid(wfmt_layouts[i].layout), "%s: unknown layout", wfmts[w].name);
      }
    CHECK(default_listed, "weight format %s: default layout not among its layouts", wfmts[w].name);
    CHECK(wfmts[w].bits == 4, "weight format %s: %d-bit codes (the kernels read 4-bit codes)",
          wfmts[w].name, wfmts[w].bits);
  }
  for (int s = 0; s < COUNT(schemes); s++) {
    CHECK(mgen__wfmt_valid(schemes[s].wfmt), "scheme %s: unknown weight format", schemes[s].name);
    int n = 0;
    for (int i = 0; i < COUNT(groups); i++)
      if (groups[i].scheme == schemes[s].value) {
        n++;
        CHECK(groups[i].group >= 0, "scheme %s: group %d", schemes[s].name, groups[i].group);
      }
    CHECK(n > 0, "scheme %s has no group size", schemes[s].name);
  }
  for (int i = 0; i < COUNT(groups); i++)
    for (int j = 0; j < i; j++) {
      const int wi = mgen__scheme_wfmt(groups[i].scheme), wj = mgen__scheme_wfmt(groups[j].scheme);
      CHECK(!(wi == wj && groups[i].group == groups[j].group),
            "weight format %s, group %d has two rows (schemes %s and %s): a kernel name "
            "carries wfmt and group only", mgen__wfmt_name(wi), groups[i].group,
            mgen__scheme_name(groups[j].scheme), mgen__scheme_name(groups[i].scheme));
    }
}

/* The value of a stored scale: `bytes` copies of byte `b` read as `storage` for `act`. */
static double scale_value(const char *storage, int act, unsigned b) {
  if (strcmp(storage, "e4m3") == 0) return fp4_e4m3_value(b);
  if (strcmp(storage, "e8m0") == 0) return fp4_e8m0_value(b);
  return act_to_double(act, (uint16_t)(b << 8 | b));
}

static void test_scales(void) {
  for (int s = 0; s < COUNT(schemes); s++) {
    const struct scheme_row *r = &schemes[s];
    const int is_act = strcmp(r->storage, "act") == 0;
    CHECK(is_act || strcmp(r->storage, "e4m3") == 0 || strcmp(r->storage, "e8m0") == 0,
          "scheme %s: scale storage '%s' is none of act, e4m3, e8m0", r->name, r->storage);
    CHECK(r->safe <= 0xff, "scheme %s: safe scale byte 0x%x is not a byte", r->name, r->safe);
    for (int a = 0; a < COUNT(acts); a++) {
      const int act = acts[a].value;
      const int bytes = mgen__scheme_scale_bytes(r->value, act);
      CHECK(bytes == (is_act ? acts[a].bytes : 1) && r->bytes == bytes,
            "scheme %s, act %s: %d bytes per %s scale", r->name, acts[a].name, bytes, r->storage);
      const double v = scale_value(r->storage, act, r->safe);
      CHECK(isfinite(v) && v > 0, "scheme %s, act %s: safe scale byte 0x%02x is the %s scale %g, "
            "not finite and positive", r->name, acts[a].name, r->safe, r->storage, v);
      const unsigned bits = mgen__scheme_nonfinite_bits(r->value, act);
      const unsigned pattern = bytes == 2 ? (r->safe << 8 | r->safe) : r->safe;
      CHECK(bits != 0 && (pattern & bits) != bits, "scheme %s, act %s: packing would reject the "
            "safe scale 0x%x (non-finite bits 0x%x)", r->name, acts[a].name, pattern, bits);
    }
    if (r->columns) {
      const uint32_t u = r->safe * 0x01010101u;
      float f;
      memcpy(&f, &u, sizeof f);
      CHECK(isfinite(f) && f > 0, "scheme %s: safe byte 0x%02x as an FP32 column factor is %g",
            r->name, r->safe, (double)f);
    }
  }
}

/* ---------------------------------------------------------------- manifests */

/* The index of column `want` in the tab-separated header `line`, or -1. */
static int column(const char *line, const char *want) {
  int i = 0;
  for (const char *p = line;; i++) {
    const size_t n = strcspn(p, "\t\n");
    if (n == strlen(want) && strncmp(p, want, n) == 0) return i;
    if (p[n] != '\t') return -1;
    p += n + 1;
  }
}

/* Field `i` of `line` copied into `out` (empty past the end). */
static void field(const char *line, int i, char *out, size_t size) {
  const char *p = line;
  for (; i > 0; i--) {
    p += strcspn(p, "\t\n");
    if (*p != '\t') break;
    p++;
  }
  size_t n = i > 0 ? 0 : strcspn(p, "\t\n");
  if (n >= size) n = size - 1;
  memcpy(out, p, n);
  out[n] = 0;
}

enum { COL_NAME, COL_ACT, COL_WFMT, COL_GROUP, COL_SCHEME, COL_LAYOUT, COL_TILE_K, COLS };
static const char *const col_names[COLS] = {"name", "act", "wfmt", "group", "scheme", "layout",
                                             "tile_k"};

/* Checks every kernel of `path`; with `all`, every (act, format) of the table must have one. */
static void test_manifest(const char *path, int all) {
  FILE *f = fopen(path, "r");
  CHECK(f != NULL, "cannot read %s", path);
  if (!f) return;
  char line[4096], v[COLS][128];
  int col[COLS], kernels = 0, have_header = 0;
  int seen[8][64] = {{0}}; /* [act index][format index] */
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#') continue;
    if (!have_header) {
      for (int c = 0; c < COLS; c++) {
        col[c] = column(line, col_names[c]);
        CHECK(col[c] >= 0, "%s: no column '%s'", path, col_names[c]);
        if (col[c] < 0) goto out;
      }
      have_header = 1;
      continue;
    }
    for (int c = 0; c < COLS; c++) field(line, col[c], v[c], sizeof v[c]);
    kernels++;
    const int act = mgen__act_parse(v[COL_ACT], strlen(v[COL_ACT]));
    const int wfmt = mgen__wfmt_parse(v[COL_WFMT], strlen(v[COL_WFMT]));
    const int scheme = mgen__scheme_parse(v[COL_SCHEME], strlen(v[COL_SCHEME]));
    const int layout = mgen__layout_parse(v[COL_LAYOUT], strlen(v[COL_LAYOUT]));
    const int group = atoi(v[COL_GROUP]), tile_k = atoi(v[COL_TILE_K]);
    CHECK(act >= 0 && wfmt >= 0 && scheme >= 0 && layout >= 0 &&
              mgen__format_valid(act, wfmt, scheme, group, layout) &&
              mgen__scheme_of(wfmt, group) == scheme,
          "%s: kernel %s: %s/%s/g%d/%s in layout %s is not weights of the format table", path,
          v[COL_NAME], v[COL_ACT], v[COL_WFMT], group, v[COL_SCHEME], v[COL_LAYOUT]);
    CHECK(tile_k > 0 && (group == 0 || tile_k % group == 0 || group % tile_k == 0),
          "%s: kernel %s: group %d neither divides tile K %d nor is a multiple of it", path,
          v[COL_NAME], group, tile_k);
    for (int a = 0, w, s, g; a < 8 && mgen__act_at(a) >= 0; a++)
      for (int i = 0; i < 64 && mgen__format_at(i, &w, &s, &g); i++)
        if (mgen__act_at(a) == act && w == wfmt && s == scheme && g == group) seen[a][i]++;
  }
  CHECK(have_header && kernels > 0, "%s: no kernels", path);
  printf("%s: %d kernels\n", path, kernels);
  if (all)
    for (int a = 0, w, s, g; a < 8 && mgen__act_at(a) >= 0; a++)
      for (int i = 0; i < 64 && mgen__format_at(i, &w, &s, &g); i++)
        CHECK(seen[a][i] > 0, "%s: no kernel for %s/%s/g%d/%s", path,
              mgen__act_name(mgen__act_at(a)), mgen__wfmt_name(w), g, mgen__scheme_name(s));
out:
  fclose(f);
}

int main(int argc, char **argv) {
  test_rows();
  test_scales();
  test_manifest(argc > 1 ? argv[1] : MGEN_DEFAULT_MANIFEST, 1);
  test_manifest(argc > 2 ? argv[2] : MGEN_BUILD_MANIFEST, 0);
  return check_exit("test_format_rules");
}
