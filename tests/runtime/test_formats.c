/* test_formats.c -- the public enums (mgen.h, mgen_kernel.h, written by hand: ABI) agree with the
 * format table (templates/formats.lua, generated as mgen_formats.h); formats.c's names, parsing
 * and rules follow the table. The agreement is checked at compile time: a disagreement does not
 * build. The rules are the ones mgen.h states, read from its text (test_rules). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "fp4.h"
#include "formats/formats.h"
#include "formats/op.h"
#include "mgen/mgen.h"

/* Every row of the table names a public enumerator of its value... */
#define ACT_AGREES_(id, name, value, c_type, bytes, nonfinite) \
  _Static_assert(MGEN_ACT_##id == value, "mgen_act MGEN_ACT_" #id " != formats.lua's " #value);
#define WFMT_AGREES_(id, name, value, bits, layout) \
  _Static_assert(MGEN_WFMT_##id == value, "mgen_wfmt MGEN_WFMT_" #id " != formats.lua's " #value);
#define SCHEME_AGREES_(id, name, value, wfmt, storage, bytes, global, columns, nonfinite, safe) \
  _Static_assert(MGEN_SCHEME_##id == value, "mgen_scheme MGEN_SCHEME_" #id " != formats.lua's " #value);
#define LAYOUT_AGREES_(id, name, value, family) \
  _Static_assert(MGEN_LAYOUT_##id == value && value != MGEN_LAYOUT_DEFAULT, \
                 "mgen_layout MGEN_LAYOUT_" #id " != formats.lua's " #value);
MGEN_ACT_LIST(ACT_AGREES_)
MGEN_WFMT_LIST(WFMT_AGREES_)
MGEN_SCHEME_LIST(SCHEME_AGREES_)
MGEN_LAYOUT_LIST(LAYOUT_AGREES_)

/* ...and every public enumerator is a row: the switches below name each enumerator once and
 * -Wswitch is an error here, so a new enumerator fails the build until it is listed; the
 * listed counts must then equal the table's. */
#if defined(__GNUC__)
#pragma GCC diagnostic error "-Wswitch"
#endif
enum { PUBLIC_ACTS = 2, PUBLIC_WFMTS = 3, PUBLIC_SCHEMES = 4, PUBLIC_LAYOUTS = 2 };
_Static_assert(MGEN_ACT_COUNT == PUBLIC_ACTS, "mgen_act has an enumerator formats.lua lacks (or v.v.)");
_Static_assert(MGEN_WFMT_COUNT == PUBLIC_WFMTS, "mgen_wfmt and formats.lua differ in size");
_Static_assert(MGEN_SCHEME_COUNT == PUBLIC_SCHEMES, "mgen_scheme and formats.lua differ in size");
_Static_assert(MGEN_LAYOUT_COUNT == PUBLIC_LAYOUTS, "mgen_layout and formats.lua differ in size");
static int public_enumerators_are_rows(mgen_act a, mgen_wfmt w, mgen_scheme s, mgen_layout l) {
  int n = 0;
  switch (a) { case MGEN_ACT_F16: case MGEN_ACT_BF16: n++; }
  switch (w) { case MGEN_WFMT_U4B8: case MGEN_WFMT_FE2M1: case MGEN_WFMT_U4: n++; }
  switch (s) { case MGEN_SCHEME_GROUP: case MGEN_SCHEME_NVFP4: case MGEN_SCHEME_MXFP4:
    case MGEN_SCHEME_ASYM: n++; }
  switch (l) { case MGEN_LAYOUT_DEFAULT: case MGEN_LAYOUT_MMA: case MGEN_LAYOUT_E4M3: n++; }
  return n;
}

/* The operations likewise (mgen_kernel.h's mgen_op; op.h's names), and dense is 0: a
 * descriptor, key or launch that leaves the op zero is dense. */
#define OP_AGREES_(id, name, value) \
  _Static_assert(MGEN_OP_##id == value, "mgen_op MGEN_OP_" #id " != formats.lua's " #value);
MGEN_OP_LIST(OP_AGREES_)
enum { PUBLIC_OPS = 2 };
_Static_assert(MGEN_OP_COUNT == PUBLIC_OPS, "mgen_op and formats.lua differ in size");
_Static_assert(MGEN_OP_DENSE == 0, "a zero op must be dense (mgen_kernel.h)");
static void test_ops(mgen_op o) {
  int n = 0;
  switch (o) { case MGEN_OP_DENSE: case MGEN_OP_MOE: n++; }
  CHECK(n == 1, "switch");
#define OP_NAME_(id, name, value)                                                   \
  CHECK(strcmp(mgen__op_name(value), name) == 0, "op %d named %s", value, name); \
  CHECK(mgen__op_parse(name, strlen(name)) == value, "op %s parses", name);
  MGEN_OP_LIST(OP_NAME_)
  CHECK(strcmp(mgen__op_name(-1), "?") == 0 && strcmp(mgen__op_name(MGEN_OP_COUNT), "?") == 0,
        "unknown ops print as ?");
  CHECK(mgen__op_parse("densex", 5) == MGEN_OP_DENSE && mgen__op_parse("densex", 6) == -1 &&
            mgen__op_parse("", 0) == -1 && mgen__op_parse("Dense", 5) == -1, "op parsing");
}

/* Names round-trip and unknown values print as "?". */
static void test_names(void) {
#define ACT_NAME_(id, name, value, c_type, bytes, nonfinite)                        \
  CHECK(strcmp(mgen__act_name(value), name) == 0, "act %d named %s", value, name); \
  CHECK(mgen__act_parse(name, strlen(name)) == value, "act %s parses", name);     \
  CHECK(mgen__act_bytes(value) == bytes, "act %s bytes", name);
  MGEN_ACT_LIST(ACT_NAME_)
#define WFMT_NAME_(id, name, value, bits, layout)                                     \
  CHECK(strcmp(mgen__wfmt_name(value), name) == 0, "wfmt %d named %s", value, name); \
  CHECK(mgen__wfmt_parse(name, strlen(name)) == value, "wfmt %s parses", name);     \
  CHECK(mgen__wfmt_default_layout(value) == MGEN_LAYOUT_##layout, "wfmt %s layout", name);
  MGEN_WFMT_LIST(WFMT_NAME_)
#define SCHEME_NAME_(id, name, value, wfmt, storage, bytes, global, columns, nonfinite, safe) \
  CHECK(strcmp(mgen__scheme_name(value), name) == 0, "scheme %d named %s", value, name); \
  CHECK(mgen__scheme_parse(name, strlen(name)) == value, "scheme %s parses", name);     \
  CHECK(mgen__scheme_wfmt(value) == MGEN_WFMT_##wfmt, "scheme %s wfmt", name);
  MGEN_SCHEME_LIST(SCHEME_NAME_)
  CHECK(strcmp(mgen__act_name(99), "?") == 0 && strcmp(mgen__scheme_name(-1), "?") == 0,
        "unknown values print as ?");
  CHECK(mgen__act_parse("f16x", 3) == MGEN_ACT_F16 && mgen__act_parse("f1", 2) == -1,
        "parse reads exactly len bytes");
  CHECK(strcmp(mgen__layout_name(MGEN_LAYOUT_MMA), "mma") == 0, "layout name");
}

/* ---------------------------------------------------------------- the rules mgen.h documents
 * The rules are read from mgen.h's text (MGEN_HEADER), not written here, so that the header
 * and the table cannot drift apart: a new group, scheme or layout fails this test until
 * mgen.h says so, and so does an edit of the sentence that the table does not follow. */

/* mgen.h with each comment line's leading " * " (or a continuation's indent) joined into one
 * space: sentences read as one line. Caller frees. */
static char *header_text(void) {
  FILE *f = fopen(MGEN_HEADER, "rb");
  CHECK(f != NULL, "cannot read %s", MGEN_HEADER);
  if (f == NULL) return NULL;
  static char raw[1 << 18];
  const size_t n = fread(raw, 1, sizeof raw - 1, f);
  fclose(f);
  raw[n] = 0;
  char *out = malloc(n + 1), *o = out;
  for (const char *p = raw; *p;) {
    if (*p != '\n') {
      *o++ = *p++;
      continue;
    }
    p++;
    while (*p == ' ') p++;
    if (p[0] == '*' && p[1] != '/') p++;
    while (*p == ' ') p++;
    *o++ = ' ';
  }
  *o = 0;
  return out;
}

/* The clause text after `marker` in `text`, up to `end` (not included), into `out`; 0 if absent. */
static int doc_span(const char *text, const char *marker, const char *end, char *out, size_t size) {
  const char *p = strstr(text, marker);
  if (p == NULL) return 0;
  p += strlen(marker);
  const char *q = strstr(p, end);
  size_t n = q ? (size_t)(q - p) : strlen(p);
  if (n >= size) n = size - 1;
  memcpy(out, p, n);
  out[n] = 0;
  return 1;
}

/* A documented name, upper or lower case ("NVFP4", "u4b8"), parsed by `parse`; -1 if none. */
static int doc_name(const char *word, int (*parse)(const char *, size_t)) {
  char lower[32];
  size_t n = strlen(word);
  if (n >= sizeof lower) return -1;
  for (size_t i = 0; i <= n; i++) lower[i] = (char)tolower((unsigned char)word[i]);
  return parse(lower, n);
}

enum { MAX_DOC = 32 };
struct doc_rule { int wfmt, scheme, group; };

/* "today u4b8 + GROUP with group 32/64/128/CHANNEL; fe2m1 + NVFP4 with group 16; ...; every
 * format in the MMA layout; u4b8 also in the E4M3 layout.": the (wfmt, scheme, group) triples,
 * the layout of every format and the formats' further layouts (also[wfmt][layout]). */
static int doc_also[MGEN_WFMT_COUNT + 2][MGEN_LAYOUT_COUNT + 2];
/* "<wfmt> + <scheme> also in the <layout> layout": that scheme's further layouts. */
static int doc_also_scheme[MGEN_SCHEME_COUNT + 2][MGEN_LAYOUT_COUNT + 2];
static int doc_rules(const char *text, struct doc_rule *rules, int *layout) {
  char span[1024];
  CHECK(doc_span(text, "The valid combinations are the format table's", ". ", span, sizeof span) &&
            strstr(span, ": today ") != NULL,
        "mgen.h: no sentence \"The valid combinations are the format table's (...): today ...\"");
  const char *p = strstr(span, ": today ");
  int count = 0;
  *layout = -1;
  for (p = p ? p + 8 : span + strlen(span); *p;) {
    char clause[256], wfmt[32], scheme[32], groups[128], lay[32];
    size_t n = strcspn(p, ";");
    snprintf(clause, sizeof clause, "%.*s", (int)n, p);
    p += n + (p[n] == ';');
    while (*p == ' ') p++;
    if (sscanf(clause, "every format in the %31s layout", lay) == 1) {
      *layout = doc_name(lay, mgen__layout_parse);
      CHECK(*layout > 0, "mgen.h: unknown layout '%s' in \"%s\"", lay, clause);
    } else if (sscanf(clause, "%31s + %31s also in the %31s layout", wfmt, scheme, lay) == 3) {
      const int w = doc_name(wfmt, mgen__wfmt_parse), s = doc_name(scheme, mgen__scheme_parse);
      const int l = doc_name(lay, mgen__layout_parse);
      CHECK(w > 0 && s >= 0 && l > 0 && mgen__scheme_wfmt(s) == w, "mgen.h: unknown format, scheme or layout in \"%s\"",
            clause);
      if (w > 0 && s >= 0 && l > 0) doc_also_scheme[s][l] = 1;
    } else if (sscanf(clause, "%31s also in the %31s layout", wfmt, lay) == 2) {
      const int w = doc_name(wfmt, mgen__wfmt_parse), l = doc_name(lay, mgen__layout_parse);
      CHECK(w > 0 && l > 0, "mgen.h: unknown format or layout in \"%s\"", clause);
      if (w > 0 && l > 0) doc_also[w][l] = 1;
    } else if (sscanf(clause, "%31s + %31s with group %127s", wfmt, scheme, groups) == 3) {
      const int w = doc_name(wfmt, mgen__wfmt_parse), s = doc_name(scheme, mgen__scheme_parse);
      CHECK(w > 0 && s >= 0, "mgen.h: unknown format in \"%s\"", clause);
      for (char *g = strtok(groups, "/"); g && count < MAX_DOC; g = strtok(NULL, "/")) {
        const int digits = g[strspn(g, "0123456789")] == 0 && *g;
        CHECK(digits || strcmp(g, "CHANNEL") == 0, "mgen.h: group '%s' in \"%s\"", g, clause);
        rules[count++] = (struct doc_rule){w, s, digits ? atoi(g) : 0};
      }
    } else {
      CHECK(0, "mgen.h: cannot read the rule \"%s\"", clause);
    }
  }
  CHECK(count > 0 && *layout > 0, "mgen.h: %d rules and no layout read", count);
  return count;
}

/* The group text formats.c prints ("32, 64, 128 or 0 (per channel)") for the documented groups
 * of (wfmt, scheme), ascending. */
static void doc_groups_text(const struct doc_rule *rules, int count, int wfmt, int scheme,
                            char *out, size_t size) {
  int g[MAX_DOC], n = 0, channel = 0;
  for (int i = 0; i < count; i++)
    if (rules[i].wfmt == wfmt && rules[i].scheme == scheme) {
      if (rules[i].group == 0) channel = 1;
      else g[n++] = rules[i].group;
    }
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && g[j - 1] > g[j]; j--) {
      const int t = g[j];
      g[j] = g[j - 1], g[j - 1] = t;
    }
  size_t used = 0;
  out[0] = 0;
  for (int i = 0; i < n && used < size; i++)
    used += (size_t)snprintf(out + used, size - used, "%s%d",
                             i == 0 ? "" : (i == n - 1 && !channel ? " or " : ", "), g[i]);
  if (channel && used < size) snprintf(out + used, size - used, "%s0 (per channel)", n ? " or " : "");
}

static void test_rules(void) {
  char *text = header_text();
  if (text == NULL) return;
  struct doc_rule rules[MAX_DOC];
  int layout;
  const int count = doc_rules(text, rules, &layout);
  /* mgen__group_valid and mgen__scheme_of agree with the sentence on every (wfmt, scheme) of
   * the table and every group it or the table names, plus groups no format has. */
  int probes[MAX_DOC + 16], np = 0;
  static const int extra[] = {-1, 8, 16, 24, 32, 48, 64, 96, 128, 256};
  for (int i = 0; i < count; i++) probes[np++] = rules[i].group;
  for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) probes[np++] = extra[i];
  for (int i = 0, w, s, g; mgen__format_at(i, &w, &s, &g) && np < MAX_DOC + 16; i++) probes[np++] = g;
  for (int w = 0; w <= MGEN_WFMT_COUNT + 1; w++)
    for (int s = -1; s <= MGEN_SCHEME_COUNT; s++)
      for (int i = 0; i < np; i++) {
        int documented = 0, scheme_of = -1;
        for (int r = 0; r < count; r++) {
          documented |= rules[r].wfmt == w && rules[r].scheme == s && rules[r].group == probes[i];
          if (rules[r].wfmt == w && rules[r].group == probes[i]) scheme_of = rules[r].scheme;
        }
        CHECK(mgen__group_valid(w, s, probes[i]) == documented,
              "wfmt %s scheme %s group %d: valid %d, mgen.h says %d", mgen__wfmt_name(w),
              mgen__scheme_name(s), probes[i], mgen__group_valid(w, s, probes[i]), documented);
        CHECK(mgen__scheme_of(w, probes[i]) == scheme_of, "scheme of %s g%d: %d, mgen.h: %d",
              mgen__wfmt_name(w), probes[i], mgen__scheme_of(w, probes[i]), scheme_of);
      }
  /* "every format in the <layout> layout; <wfmt> also in the <layout> layout; <wfmt> +
   * <scheme> also in ...": each format fits those (a scheme's its own and its format's), and
   * no other; the first is its default. */
  for (int s = 0; s < MGEN_SCHEME_COUNT; s++)
    for (int l = 1; l <= MGEN_LAYOUT_COUNT + 1; l++) {
      const int w = mgen__scheme_wfmt(s), doc = l == layout || doc_also[w][l] || doc_also_scheme[s][l];
      CHECK(mgen__scheme_layout_fits(s, l) == doc, "scheme %s layout %d: fits %d, mgen.h says %d",
            mgen__scheme_name(s), l, mgen__scheme_layout_fits(s, l), doc);
      doc_also[w][l] |= doc_also_scheme[s][l]; /* a format fits what one of its schemes does */
    }
  for (int w = 1; w <= MGEN_WFMT_COUNT; w++) {
    for (int l = 1; l <= MGEN_LAYOUT_COUNT + 1; l++)
      CHECK(mgen__layout_fits(w, l) == (l == layout || doc_also[w][l]),
            "wfmt %s layout %d: fits %d, mgen.h: %s%s", mgen__wfmt_name(w), l,
            mgen__layout_fits(w, l), mgen__layout_name(layout), doc_also[w][l] ? " and this" : "");
    CHECK(mgen__layout_resolve(w, MGEN_LAYOUT_DEFAULT) == layout,
          "layout 0 of %s resolves to the documented layout", mgen__wfmt_name(w));
  }
  for (int s = 0; s < MGEN_SCHEME_COUNT; s++) {
    char want[64], got[64];
    doc_groups_text(rules, count, mgen__scheme_wfmt(s), s, want, sizeof want);
    mgen__scheme_groups_text(s, got, sizeof got);
    CHECK(strcmp(got, want) == 0, "scheme %s: group text '%s', from mgen.h '%s'",
          mgen__scheme_name(s), got, want);
  }
  /* d_scales: "packed scales: u4b8 (...) * n * 2 bytes; fe2m1 (...) * n bytes, padded to 16,
   * then n FP32 column factors": bytes per scale and column factors per weight format. */
  char span[512];
  CHECK(doc_span(text, "/* packed scales: ", "*/", span, sizeof span),
        "mgen.h: no \"packed scales:\" comment on mgen_weights.d_scales");
  int formats = 0;
  for (char *clause = strtok(span, ";"); clause; clause = strtok(NULL, ";")) {
    char word[32];
    if (sscanf(clause, " %31s", word) != 1) continue;
    const int w = doc_name(word, mgen__wfmt_parse);
    const char *times = strstr(clause, "* n * ");
    const int bytes = times ? atoi(times + 6) : strstr(clause, "* n bytes") ? 1 : 0;
    const int columns = strstr(clause, "FP32 column factors") != NULL;
    CHECK(w > 0 && bytes > 0, "mgen.h: cannot read d_scales' \"%s\"", clause);
    for (int s = 0; s < MGEN_SCHEME_COUNT; s++)
      if (w > 0 && mgen__scheme_wfmt(s) == w) {
        for (int a = 0, act; (act = mgen__act_at(a)) >= 0; a++)
          CHECK(mgen__scheme_scale_bytes(s, act) == bytes, "%s scales for %s: %d bytes, mgen.h %d",
                mgen__scheme_name(s), mgen__act_name(act), mgen__scheme_scale_bytes(s, act), bytes);
        CHECK(mgen__scheme_column_factors(s) == columns, "%s column factors: %d, mgen.h %d",
              mgen__scheme_name(s), mgen__scheme_column_factors(s), columns);
      }
    formats++;
  }
  CHECK(formats == MGEN_WFMT_COUNT, "mgen.h's d_scales names %d weight formats, the table %d",
        formats, MGEN_WFMT_COUNT);
  /* "global_scale: NVFP4's per-tensor FP32 decode scale": that scheme alone has one. */
  char who[32] = "";
  CHECK(doc_span(text, "global_scale: ", "'s", who, sizeof who), "mgen.h: no global_scale doc");
  for (int s = 0; s < MGEN_SCHEME_COUNT; s++)
    CHECK(mgen__scheme_global_scale(s) == (doc_name(who, mgen__scheme_parse) == s),
          "scheme %s: global scale %d; mgen.h names %s's", mgen__scheme_name(s),
          mgen__scheme_global_scale(s), who);
  free(text);
}

/* The non-finite bits of every (scheme, act) against the value of every stored pattern, decoded
 * by the test's own readers (act.c; fp4.c for E4M3 and E8M0): all ones exactly in inf and NaN.
 * mgen_pack and mgen_pack_fp4 reject scales by these bits. */
static void test_nonfinite(void) {
#define SCHEME_VALUE_(id, name, value, ...) value,
  static const int schemes[] = {MGEN_SCHEME_LIST(SCHEME_VALUE_)};
#undef SCHEME_VALUE_
  for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
    for (int a = 0, act; (act = mgen__act_at(a)) >= 0; a++) {
      const int s = schemes[i];
      const unsigned bits = mgen__scheme_nonfinite_bits(s, act);
      const char *storage = mgen__scheme_storage(s);
      const int bytes = mgen__scheme_scale_bytes(s, act);
      long wrong = 0, first = -1;
      for (long x = 0; x < (1L << (8 * bytes)); x++) {
        const double v = strcmp(storage, "e4m3") == 0   ? fp4_e4m3_value((unsigned)x)
                         : strcmp(storage, "e8m0") == 0 ? fp4_e8m0_value((unsigned)x)
                                                        : act_to_double(act, (uint16_t)x);
        if ((((unsigned)x & bits) == bits) != !isfinite(v)) wrong++, first = first < 0 ? x : first;
      }
      CHECK(bits != 0 && wrong == 0, "scheme %s, act %s: non-finite bits 0x%x misjudge %ld "
            "patterns, first 0x%lx", mgen__scheme_name(s), mgen__act_name(act), bits, wrong, first);
    }
  CHECK(mgen__scheme_nonfinite_bits(MGEN_SCHEME_GROUP, 99) == 0 &&
            mgen__scheme_nonfinite_bits(-1, MGEN_ACT_F16) == 0, "outside the table: 0");
}

/* Text of every format of the table round-trips; implied schemes are not written. */
static void test_text(void) {
  int count = 0;
  for (int i = 0, w, s, g; mgen__format_at(i, &w, &s, &g); i++, count++) {
    char text[48];
    int act, w2, s2, g2;
    mgen__format_text(MGEN_ACT_BF16, w, s, g, text, sizeof text);
    CHECK(mgen__format_parse(text, &act, &w2, &s2, &g2) == 0 && act == MGEN_ACT_BF16 &&
              w2 == w && s2 == s && g2 == g, "%s round-trips", text);
  }
  CHECK(count == 10, "10 formats in the table, got %d", count);
  /* The command-line and CSV names (formats.h) name one format each, and parse back. */
  for (int form = MGEN__FORMAT_SHORT; form <= MGEN__FORMAT_KEY; form++)
    for (int i = 0, w, s, g; mgen__format_at(i, &w, &s, &g); i++) {
      char name[48];
      int w2, s2, g2;
      mgen__format_name(form, w, s, g, name, sizeof name);
      CHECK(mgen__format_name_parse(form, name, &w2, &s2, &g2) == 0 && w2 == w && s2 == s &&
                g2 == g, "form %d: %s names another format", form, name);
    }
  char list[128];
  mgen__format_short_list(list, sizeof list);
  /* u4's groups are u4b8's, which came first: u4's short names are its bench names. */
  CHECK(strcmp(list, "gc,g32,g64,g128,nvfp4,mxfp4,u4_gc,u4_g32,u4_g64,u4_g128") == 0,
        "short names: %s", list);
  char name[48];
  mgen__format_name(MGEN__FORMAT_BENCH, MGEN_WFMT_FE2M1, MGEN_SCHEME_NVFP4, 16, name, sizeof name);
  CHECK(strcmp(name, "fe2m1_nvfp4") == 0, "bench name %s (bench/results/*.csv's fmt column)", name);
  mgen__format_name(MGEN__FORMAT_BENCH, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 0, name, sizeof name);
  CHECK(strcmp(name, "u4b8_gc") == 0, "bench name %s", name);
  mgen__format_name(MGEN__FORMAT_SHORT, MGEN_WFMT_U4, MGEN_SCHEME_ASYM, 128, name, sizeof name);
  CHECK(strcmp(name, "u4_g128") == 0, "short name %s (bench_gemm --fmt g128,u4_g128)", name);
  mgen__format_name(MGEN__FORMAT_SHORT, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128, name, sizeof name);
  CHECK(strcmp(name, "g128") == 0, "u4b8 keeps its short name: %s", name);
  mgen__format_name(MGEN__FORMAT_KEY, MGEN_WFMT_U4, MGEN_SCHEME_ASYM, 0, name, sizeof name);
  CHECK(strcmp(name, "u4/gc") == 0, "key %s (the scheme is implied)", name);
  static const char *const bad[] = {"f16/u4b8/g128/group", "f16/fe2m1/g16", "f16/fe2m1/g32/nvfp4",
                                    "f16/u4b8/g16", "f16/u4b8/g0128", "f32/u4b8/g128", "f16/u4b8"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int a, w, s, g;
    CHECK(mgen__format_parse(bad[i], &a, &w, &s, &g) == -1, "'%s' is not a key", bad[i]);
  }
}

int main(void) {
  CHECK(public_enumerators_are_rows(MGEN_ACT_F16, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP,
                                    MGEN_LAYOUT_MMA) == 4, "switches");
  test_names();
  test_ops(MGEN_OP_DENSE);
  test_ops(MGEN_OP_MOE);
  test_rules();
  test_text();
  test_nonfinite();
  return check_exit("test_formats");
}
