/* formats.c -- the format table's rules and names (formats.h), built from the X-macro lists of
 * mgen_formats.h: one row each, nothing written by hand. */
#include "formats/formats.h"

#include <stdio.h>
#include <string.h>

#include "mgen/mgen.h"

typedef struct named {
  const char *name;
  int value;
} named;

typedef struct scheme_row {
  const char *name, *storage;
  int value, wfmt, scale_bytes, global_scale, column_factors, nonfinite, safe_byte;
} scheme_row;

#define ACT_ROW_(id, name, value, c_type, bytes, nonfinite) {name, value},
#define WFMT_ROW_(id, name, value, bits, layout) {name, value},
#define LAYOUT_ROW_(id, name, value, family) {name, value},
#define SCHEME_ROW_(id, name, value, wfmt, storage, bytes, global, columns, nonfinite, safe) \
  {name, storage, value, MGEN_WFMT_##wfmt, bytes, global, columns, nonfinite, safe},
#define GROUP_ROW_(scheme, group) {MGEN_SCHEME_##scheme, group},
#define WFMT_LAYOUT_ROW_(wfmt, layout) {MGEN_WFMT_##wfmt, MGEN_LAYOUT_##layout},
#define SCHEME_LAYOUT_ROW_(scheme, layout) {MGEN_SCHEME_##scheme, MGEN_LAYOUT_##layout},

static const named kActs[] = {MGEN_ACT_LIST(ACT_ROW_)};
static const named kWfmts[] = {MGEN_WFMT_LIST(WFMT_ROW_)};
static const named kLayouts[] = {MGEN_LAYOUT_LIST(LAYOUT_ROW_)};
static const scheme_row kSchemes[] = {MGEN_SCHEME_LIST(SCHEME_ROW_)};
static const struct { int scheme, group; } kGroups[] = {MGEN_SCHEME_GROUP_LIST(GROUP_ROW_)};
/* In the table's order, so a format's first row is its default layout. */
static const struct { int wfmt, layout; } kWfmtLayouts[] = {MGEN_WFMT_LAYOUT_LIST(WFMT_LAYOUT_ROW_)};
static const struct { int scheme, layout; } kSchemeLayouts[] = {MGEN_SCHEME_LAYOUT_LIST(SCHEME_LAYOUT_ROW_)};

#define COUNT_(a) (sizeof(a) / sizeof((a)[0]))

static const named *find_value(const named *rows, size_t count, int value) {
  for (size_t i = 0; i < count; i++)
    if (rows[i].value == value) return &rows[i];
  return NULL;
}

static int find_name(const named *rows, size_t count, const char *s, size_t len) {
  if (s == NULL) return -1;
  for (size_t i = 0; i < count; i++)
    if (strlen(rows[i].name) == len && strncmp(rows[i].name, s, len) == 0) return rows[i].value;
  return -1;
}

static const scheme_row *scheme_row_of(int scheme) {
  for (size_t i = 0; i < COUNT_(kSchemes); i++)
    if (kSchemes[i].value == scheme) return &kSchemes[i];
  return NULL;
}

#define NAME_OF_(rows, value) \
  (find_value(rows, COUNT_(rows), value) ? find_value(rows, COUNT_(rows), value)->name : "?")

const char *mgen__act_name(int act) { return NAME_OF_(kActs, act); }
const char *mgen__wfmt_name(int wfmt) { return NAME_OF_(kWfmts, wfmt); }
const char *mgen__layout_name(int layout) { return NAME_OF_(kLayouts, layout); }
const char *mgen__scheme_name(int scheme) {
  const scheme_row *r = scheme_row_of(scheme);
  return r ? r->name : "?";
}

int mgen__act_parse(const char *s, size_t len) { return find_name(kActs, COUNT_(kActs), s, len); }
int mgen__wfmt_parse(const char *s, size_t len) {
  return find_name(kWfmts, COUNT_(kWfmts), s, len);
}
int mgen__layout_parse(const char *s, size_t len) {
  return find_name(kLayouts, COUNT_(kLayouts), s, len);
}
int mgen__scheme_parse(const char *s, size_t len) {
  if (s == NULL) return -1;
  for (size_t i = 0; i < COUNT_(kSchemes); i++)
    if (strlen(kSchemes[i].name) == len && strncmp(kSchemes[i].name, s, len) == 0)
      return kSchemes[i].value;
  return -1;
}

int mgen__act_valid(int act) { return find_value(kActs, COUNT_(kActs), act) != NULL; }
int mgen__wfmt_valid(int wfmt) { return find_value(kWfmts, COUNT_(kWfmts), wfmt) != NULL; }
int mgen__layout_valid(int layout) {
  return find_value(kLayouts, COUNT_(kLayouts), layout) != NULL;
}
int mgen__scheme_valid(int scheme) { return scheme_row_of(scheme) != NULL; }

int mgen__act_bytes(int act) {
#define ACT_BYTES_(id, name, value, c_type, bytes, nonfinite) if (act == value) return bytes;
  MGEN_ACT_LIST(ACT_BYTES_)
#undef ACT_BYTES_
  return 0;
}

int mgen__wfmt_bits(int wfmt) {
#define WFMT_BITS_(id, name, value, bits, layout) if (wfmt == value) return bits;
  MGEN_WFMT_LIST(WFMT_BITS_)
#undef WFMT_BITS_
  return 0;
}

int mgen__scheme_wfmt(int scheme) {
  const scheme_row *r = scheme_row_of(scheme);
  return r ? r->wfmt : 0;
}

int mgen__scheme_fits(int wfmt, int scheme) {
  return mgen__wfmt_valid(wfmt) && mgen__scheme_wfmt(scheme) == wfmt;
}

int mgen__scheme_scale_bytes(int scheme, int act) {
  const scheme_row *r = scheme_row_of(scheme);
  if (r == NULL || !mgen__act_valid(act)) return 0;
  return strcmp(r->storage, "act") == 0 ? mgen__act_bytes(act) : r->scale_bytes;
}

int mgen__scheme_global_scale(int scheme) {
  const scheme_row *r = scheme_row_of(scheme);
  return r ? r->global_scale : 0;
}

int mgen__scheme_column_factors(int scheme) {
  const scheme_row *r = scheme_row_of(scheme);
  return r ? r->column_factors : 0;
}

int mgen__scheme_zero_bits(int scheme) {
#define ZERO_BITS_(id, bits) if (scheme == MGEN_SCHEME_##id) return bits;
  MGEN_SCHEME_ZERO_LIST(ZERO_BITS_)
#undef ZERO_BITS_
  return 0;
}

unsigned mgen__scheme_nonfinite_bits(int scheme, int act) {
  const scheme_row *r = scheme_row_of(scheme);
  if (r == NULL || !mgen__act_valid(act)) return 0;
  if (r->nonfinite != 0) return (unsigned)r->nonfinite;
#define ACT_NONFINITE_(id, name, value, c_type, bytes, nonfinite) if (act == value) return nonfinite;
  MGEN_ACT_LIST(ACT_NONFINITE_)
#undef ACT_NONFINITE_
  return 0;
}

int mgen__scheme_safe_scale_byte(int scheme) {
  const scheme_row *r = scheme_row_of(scheme);
  return r ? r->safe_byte : 0;
}

const char *mgen__scheme_storage(int scheme) {
  const scheme_row *r = scheme_row_of(scheme);
  return r ? r->storage : "?";
}

int mgen__scheme_groups(int scheme, int *out, int cap) {
  int count = 0;
  for (size_t i = 0; i < COUNT_(kGroups); i++) {
    if (kGroups[i].scheme != scheme) continue;
    if (out != NULL && count < cap) out[count] = kGroups[i].group;
    count++;
  }
  return count;
}

void mgen__scheme_groups_text(int scheme, char *buf, size_t size) {
  if (buf == NULL || size == 0) return;
  buf[0] = '\0';
  int groups[16];
  const int count = mgen__scheme_groups(scheme, groups, 16), shown = count < 16 ? count : 16;
  const int channel = shown > 0 && groups[0] == MGEN_GROUP_CHANNEL;
  size_t used = 0;
  for (int i = channel; i < shown && used < size; i++) {
    const char *sep = i == channel ? "" : (i == shown - 1 && !channel) ? " or " : ", ";
    int n = snprintf(buf + used, size - used, "%s%d", sep, groups[i]);
    if (n < 0) return;
    used += (size_t)n;
  }
  if (channel && used < size)
    snprintf(buf + used, size - used, "%s0 (per channel)", shown > 1 ? " or " : "");
}

int mgen__scheme_of(int wfmt, int group) {
  for (size_t i = 0; i < COUNT_(kGroups); i++)
    if (kGroups[i].group == group && mgen__scheme_wfmt(kGroups[i].scheme) == wfmt)
      return kGroups[i].scheme;
  return -1;
}

int mgen__group_valid(int wfmt, int scheme, int group) {
  if (!mgen__scheme_fits(wfmt, scheme)) return 0;
  for (size_t i = 0; i < COUNT_(kGroups); i++)
    if (kGroups[i].scheme == scheme && kGroups[i].group == group) return 1;
  return 0;
}

int mgen__wfmt_default_layout(int wfmt) {
  for (size_t i = 0; i < COUNT_(kWfmtLayouts); i++)
    if (kWfmtLayouts[i].wfmt == wfmt) return kWfmtLayouts[i].layout;
  return 0;
}

int mgen__layout_resolve(int wfmt, int layout) {
  return layout == MGEN_LAYOUT_DEFAULT ? mgen__wfmt_default_layout(wfmt) : layout;
}

#define LAYOUT_A8_(id, a_type) if (layout == MGEN_LAYOUT_##id) return 1;
int mgen__layout_a8(int layout) {
  MGEN_LAYOUT_A_TYPE_LIST(LAYOUT_A8_)
  return 0;
}

int mgen__layout_fits(int wfmt, int layout) {
  for (size_t i = 0; i < COUNT_(kWfmtLayouts); i++)
    if (kWfmtLayouts[i].wfmt == wfmt && kWfmtLayouts[i].layout == layout) return 1;
  return 0;
}

int mgen__scheme_layout_fits(int scheme, int layout) {
  for (size_t i = 0; i < COUNT_(kSchemeLayouts); i++)
    if (kSchemeLayouts[i].scheme == scheme && kSchemeLayouts[i].layout == layout) return 1;
  return 0;
}

int mgen__format_layout_fits(int wfmt, int scheme, int layout) {
  return mgen__layout_fits(wfmt, layout) && mgen__scheme_layout_fits(scheme, layout);
}

/* group_valid implies a valid wfmt and a scheme that fits it. */
int mgen__format_valid(int act, int wfmt, int scheme, int group, int layout) {
  return mgen__act_valid(act) && mgen__group_valid(wfmt, scheme, group) &&
         mgen__format_layout_fits(wfmt, scheme, layout);
}

/* The number of schemes of `wfmt`. */
static int scheme_count(int wfmt) {
  int count = 0;
  for (size_t i = 0; i < COUNT_(kSchemes); i++) count += kSchemes[i].wfmt == wfmt;
  return count;
}

void mgen__format_text(int act, int wfmt, int scheme, int group, char *buf, size_t size) {
  if (buf == NULL || size == 0) return;
  char g[16];
  if (group == MGEN_GROUP_CHANNEL) snprintf(g, sizeof g, "gc");
  else snprintf(g, sizeof g, "g%d", group);
  const int written = scheme_count(wfmt) > 1;
  snprintf(buf, size, "%s/%s/%s%s%s", mgen__act_name(act), mgen__wfmt_name(wfmt), g,
           written ? "/" : "", written ? mgen__scheme_name(scheme) : "");
}

/* Decimal digits only, no leading zero, 1..2^30. Returns 0 or -1. */
static int parse_group(const char *s, size_t len, int *out) {
  if (len == 2 && s[0] == 'g' && s[1] == 'c') {
    *out = MGEN_GROUP_CHANNEL;
    return 0;
  }
  if (len < 2 || len > 11 || s[0] != 'g' || s[1] == '0') return -1;
  long v = 0;
  for (size_t i = 1; i < len; i++) {
    if (s[i] < '0' || s[i] > '9') return -1;
    v = v * 10 + (s[i] - '0');
    if (v > (1L << 30)) return -1;
  }
  *out = (int)v;
  return 0;
}

int mgen__format_parse(const char *text, int *act, int *wfmt, int *scheme, int *group) {
  const char *part[4];
  size_t len[4];
  int parts = 0;
  if (text == NULL) return -1;
  part[0] = text;
  for (const char *s = text;; s++) {
    if (*s == '/' || *s == '\0') {
      if (parts == 4) return -1;
      len[parts] = (size_t)(s - part[parts]);
      parts++;
      if (*s == '\0') break;
      if (parts == 4) return -1; /* a fifth part */
      part[parts] = s + 1;
    }
  }
  if (parts < 3) return -1;
  const int a = mgen__act_parse(part[0], len[0]), w = mgen__wfmt_parse(part[1], len[1]);
  int g, sch;
  if (a < 0 || w < 0 || parse_group(part[2], len[2], &g) != 0) return -1;
  if ((parts == 4) != (scheme_count(w) > 1)) return -1; /* written iff not implied */
  sch = parts == 4 ? mgen__scheme_parse(part[3], len[3]) : mgen__scheme_of(w, g);
  if (!mgen__act_valid(a) || !mgen__group_valid(w, sch, g)) return -1; /* e.g. fe2m1/g32/nvfp4 */
  *act = a, *wfmt = w, *scheme = sch, *group = g;
  return 0;
}

int mgen__act_at(int i) { return i >= 0 && (size_t)i < COUNT_(kActs) ? kActs[i].value : -1; }

int mgen__format_at(int i, int *wfmt, int *scheme, int *group) {
  if (i < 0 || (size_t)i >= COUNT_(kGroups)) return 0;
  *wfmt = mgen__scheme_wfmt(kGroups[i].scheme);
  *scheme = kGroups[i].scheme;
  *group = kGroups[i].group;
  return 1;
}

/* The last field of a format's text: its scheme where written, else its group ("g128"). */
static void last_field(int wfmt, int scheme, int group, char *buf, size_t size) {
  char text[48];
  mgen__format_text(MGEN_ACT_F16, wfmt, scheme, group, text, sizeof text);
  snprintf(buf, size, "%s", strrchr(text, '/') + 1);
}

/* Whether a format before (wfmt, scheme, group) in the table has the same last field: then the
 * SHORT name is the BENCH one (u4's g128 is u4_g128, u4b8's came first and keeps g128). */
static int last_field_taken(int wfmt, int scheme, int group) {
  char mine[48], other[48];
  last_field(wfmt, scheme, group, mine, sizeof mine);
  for (int i = 0, w, s, g; mgen__format_at(i, &w, &s, &g); i++) {
    if (w == wfmt && s == scheme && g == group) return 0;
    last_field(w, s, g, other, sizeof other);
    if (strcmp(mine, other) == 0) return 1;
  }
  return 0;
}

void mgen__a8_act_name(int act, char *buf, size_t size) {
  if (buf == NULL || size == 0) return;
  snprintf(buf, size, "%s%s", mgen__layout_name(MGEN_LAYOUT_E4M3),
           act == MGEN_ACT_F16 ? "" : mgen__act_name(act));
}

int mgen__a8_act_parse(const char *s, size_t len) {
  char name[32];
  for (int i = 0, act; (act = mgen__act_at(i)) >= 0; i++) {
    mgen__a8_act_name(act, name, sizeof name);
    if (s != NULL && strlen(name) == len && strncmp(name, s, len) == 0) return act;
  }
  return -1;
}

void mgen__format_name(int form, int wfmt, int scheme, int group, char *buf, size_t size) {
  if (buf == NULL || size == 0) return;
  char text[48], last[48];
  mgen__format_text(MGEN_ACT_F16, wfmt, scheme, group, text, sizeof text);
  last_field(wfmt, scheme, group, last, sizeof last);
  if (form == MGEN__FORMAT_KEY) snprintf(buf, size, "%s", strchr(text, '/') + 1);
  else if (form == MGEN__FORMAT_BENCH || last_field_taken(wfmt, scheme, group))
    snprintf(buf, size, "%s_%s", mgen__wfmt_name(wfmt), last);
  else snprintf(buf, size, "%s", last);
}

int mgen__format_name_parse(int form, const char *text, int *wfmt, int *scheme, int *group) {
  if (text == NULL) return -1;
  for (int i = 0, w, s, g; mgen__format_at(i, &w, &s, &g); i++) {
    char name[48];
    mgen__format_name(form, w, s, g, name, sizeof name);
    if (strcmp(name, text) == 0) {
      *wfmt = w, *scheme = s, *group = g;
      return 0;
    }
  }
  return -1;
}

void mgen__format_short_list(char *buf, size_t size) {
  if (buf == NULL || size == 0) return;
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0, w, s, g; mgen__format_at(i, &w, &s, &g) && used < size; i++) {
    char name[48];
    mgen__format_name(MGEN__FORMAT_SHORT, w, s, g, name, sizeof name);
    int n = snprintf(buf + used, size - used, "%s%s", i ? "," : "", name);
    if (n < 0) return;
    used += (size_t)n;
  }
}
