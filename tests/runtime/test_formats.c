/* test_formats.c -- the public enums (mgen.h, mgen_kernel.h, written by hand: ABI) agree with the
 * format table (templates/formats.lua, generated as mgen_formats.h); formats.c's names, parsing
 * and rules follow the table. The agreement is checked at compile time: a disagreement does not
 * build. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "act.h"
#include "check.h"
#include "fp4.h"
#include "formats/formats.h"
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
enum { PUBLIC_ACTS = 2, PUBLIC_WFMTS = 2, PUBLIC_SCHEMES = 3, PUBLIC_LAYOUTS = 1 };
_Static_assert(MGEN_ACT_COUNT == PUBLIC_ACTS, "mgen_act has an enumerator formats.lua lacks (or v.v.)");
_Static_assert(MGEN_WFMT_COUNT == PUBLIC_WFMTS, "mgen_wfmt and formats.lua differ in size");
_Static_assert(MGEN_SCHEME_COUNT == PUBLIC_SCHEMES, "mgen_scheme and formats.lua differ in size");
_Static_assert(MGEN_LAYOUT_COUNT == PUBLIC_LAYOUTS, "mgen_layout and formats.lua differ in size");
static int public_enumerators_are_rows(mgen_act a, mgen_wfmt w, mgen_scheme s, mgen_layout l) {
  int n = 0;
  switch (a) { case MGEN_ACT_F16: case MGEN_ACT_BF16: n++; }
  switch (w) { case MGEN_WFMT_U4B8: case MGEN_WFMT_FE2M1: n++; }
  switch (s) { case MGEN_SCHEME_GROUP: case MGEN_SCHEME_NVFP4: case MGEN_SCHEME_MXFP4: n++; }
  switch (l) { case MGEN_LAYOUT_DEFAULT: case MGEN_LAYOUT_MMA: n++; }
  return n;
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

/* Today's rules, as mgen.h documents them. */
static void test_rules(void) {
  static const struct { int wfmt, scheme, group, ok; } cases[] = {
      {MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128, 1}, {MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 0, 1},
      {MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 16, 0},  {MGEN_WFMT_U4B8, MGEN_SCHEME_NVFP4, 16, 0},
      {MGEN_WFMT_FE2M1, MGEN_SCHEME_NVFP4, 16, 1}, {MGEN_WFMT_FE2M1, MGEN_SCHEME_NVFP4, 32, 0},
      {MGEN_WFMT_FE2M1, MGEN_SCHEME_MXFP4, 32, 1}, {MGEN_WFMT_FE2M1, MGEN_SCHEME_GROUP, 32, 0}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    CHECK(mgen__group_valid(cases[i].wfmt, cases[i].scheme, cases[i].group) == cases[i].ok,
          "case %zu: wfmt %d scheme %d group %d", i, cases[i].wfmt, cases[i].scheme,
          cases[i].group);
  CHECK(mgen__scheme_of(MGEN_WFMT_FE2M1, 16) == MGEN_SCHEME_NVFP4, "scheme of fe2m1 g16");
  CHECK(mgen__scheme_of(MGEN_WFMT_U4B8, 16) == -1, "no scheme of u4b8 g16");
  CHECK(mgen__scheme_scale_bytes(MGEN_SCHEME_GROUP, MGEN_ACT_BF16) == 2, "u4b8 scales: 2 bytes");
  CHECK(mgen__scheme_scale_bytes(MGEN_SCHEME_MXFP4, MGEN_ACT_F16) == 1, "mxfp4 scales: 1 byte");
  CHECK(mgen__scheme_global_scale(MGEN_SCHEME_NVFP4) && !mgen__scheme_global_scale(MGEN_SCHEME_MXFP4),
        "only nvfp4 has a global scale");
  CHECK(mgen__layout_fits(MGEN_WFMT_FE2M1, MGEN_LAYOUT_MMA) && !mgen__layout_fits(MGEN_WFMT_U4B8, 2),
        "layouts");
  CHECK(mgen__layout_resolve(MGEN_WFMT_U4B8, MGEN_LAYOUT_DEFAULT) == MGEN_LAYOUT_MMA,
        "layout 0 resolves to the format's default");
  char text[64];
  mgen__scheme_groups_text(MGEN_SCHEME_GROUP, text, sizeof text);
  CHECK(strcmp(text, "32, 64, 128 or 0 (per channel)") == 0, "group text: %s", text);
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
  CHECK(count == 6, "6 formats in the table, got %d", count);
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
  CHECK(strcmp(list, "gc,g32,g64,g128,nvfp4,mxfp4") == 0, "short names: %s", list);
  char name[48];
  mgen__format_name(MGEN__FORMAT_BENCH, MGEN_WFMT_FE2M1, MGEN_SCHEME_NVFP4, 16, name, sizeof name);
  CHECK(strcmp(name, "fe2m1_nvfp4") == 0, "bench name %s (bench/results/*.csv's fmt column)", name);
  mgen__format_name(MGEN__FORMAT_BENCH, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 0, name, sizeof name);
  CHECK(strcmp(name, "u4b8_gc") == 0, "bench name %s", name);
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
  test_rules();
  test_text();
  test_nonfinite();
  return check_exit("test_formats");
}
