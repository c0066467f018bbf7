/* test_tune_args.c -- marlin-tune's --fmt list (runtime/tools/tune_args.c), parsed in-process:
 * a format named again (by short name, by key, or through "all") is kept once, so no list of 64
 * items can hold more than 64 formats. "all" followed by 63 more items once wrote past
 * tune_opts.fmts[64], over nshapes and the M values. cli.h's exit is replaced by a longjmp, so
 * a usage error comes back here as its status. And --act e4m3 (W4A8): its layout and formats. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli.h"
#include "formats/formats.h"
#include "mgen/mgen.h"
#include "tune_args.h"

static jmp_buf back;
static int exit_status;

static void test_exit(int status) {
  exit_status = status;
  longjmp(back, 1);
}

/* Parses "marlin-tune --fmt FMTS 4096x4096 --m 1,16 -o t.cache"; -1 if it parsed (into *o),
 * else the exit status. */
static int parse(const char *fmts, tune_opts *o) {
  char *argv[] = {"marlin-tune", "--fmt", (char *)fmts, "4096x4096", "--m", "1,16", "-o",
                  "t.cache", NULL};
  if (setjmp(back) != 0) return exit_status;
  *o = tune_parse_args(8, argv);
  return -1;
}

/* The same with "--act ACT" before the rest. */
static int parse_act(const char *act, const char *fmts, tune_opts *o) {
  char *argv[] = {"marlin-tune", "--act", (char *)act, "--fmt", (char *)fmts, "4096x4096", "--m",
                  "1,16", "-o", "t.cache", NULL};
  if (setjmp(back) != 0) return exit_status;
  *o = tune_parse_args(10, argv);
  return -1;
}

/* The same weight format (from_all is how the list named it, not which format it is). */
static int same_fmt(const tune_fmt *a, const tune_fmt *b) {
  return a->wfmt == b->wfmt && a->scheme == b->scheme && a->group == b->group;
}

/* The parse kept the shape and M values (nothing written over them) and `want` formats, the
 * first `nfirst` of them equal to first[], and no format twice. */
static void expect_fmts(const char *fmts, int want, const tune_fmt *first, int nfirst) {
  tune_opts o;
  memset(&o, 0x5a, sizeof o);
  const int rc = parse(fmts, &o);
  CHECK(rc == -1, "--fmt %.40s...: exit %d", fmts, rc);
  if (rc != -1) return;
  CHECK(o.nfmts == want, "--fmt %.40s...: %d formats, want %d", fmts, o.nfmts, want);
  CHECK(o.nshapes == 1 && o.shapes[0].n == 4096 && o.shapes[0].k == 4096,
        "--fmt %.40s...: %d shapes, the first %dx%d", fmts, o.nshapes, o.shapes[0].n,
        o.shapes[0].k);
  CHECK(o.nms == 2 && o.ms[0] == 1 && o.ms[1] == 16, "--fmt %.40s...: M values %d: %d,%d", fmts,
        o.nms, o.ms[0], o.ms[1]);
  for (int i = 0; i < o.nfmts && i < TUNE_MAX_LIST; i++) {
    if (i < nfirst)
      CHECK(same_fmt(&o.fmts[i], &first[i]), "--fmt %.40s...: format %d", fmts, i);
    for (int j = 0; j < i; j++)
      CHECK(!same_fmt(&o.fmts[i], &o.fmts[j]), "--fmt %.40s...: formats %d and %d are the same",
            fmts, j, i);
  }
}

int main(void) {
  cli_set_exit(test_exit);
  unsetenv("MGEN_CACHE");
  tune_fmt all[TUNE_MAX_LIST], g128, g64;
  int nall = 0;
  while (nall < TUNE_MAX_LIST && mgen__format_at(nall, &all[nall].wfmt, &all[nall].scheme,
                                                 &all[nall].group))
    nall++;
  CHECK(nall >= 2, "the format table has %d formats", nall);
  CHECK(mgen__format_name_parse(MGEN__FORMAT_SHORT, "g128", &g128.wfmt, &g128.scheme,
                                &g128.group) == 0 &&
            mgen__format_name_parse(MGEN__FORMAT_SHORT, "g64", &g64.wfmt, &g64.scheme,
                                    &g64.group) == 0,
        "g128 and g64 are formats");

  /* "all" and 63 more: the list's limit, every item a format "all" already holds. */
  char list[1024] = "all";
  for (int i = 0; i < 63; i++) strcat(list, ",g128");
  expect_fmts(list, nall, all, nall);
  /* The same format by short name and by key, and "all" twice. */
  expect_fmts("g128,g128,u4b8/g128", 1, &g128, 1);
  expect_fmts("all,all", nall, all, nall);
  /* A format before "all" stays first; "all" adds the rest once. */
  const tune_fmt g64_first[] = {g64};
  expect_fmts("g64,all", nall, g64_first, 1);

  /* The list itself is still limited to 64 items (cli_list): a usage error, not an overflow. */
  strcat(list, ",g64");
  tune_opts o;
  CHECK(parse(list, &o) == CLI_EXIT_USAGE, "65 items: a usage error");

  /* --act e4m3 (W4A8): the output type f16 and the e4m3 layout; of "all" the formats packed in
   * it (u4b8's, MXFP4), in table order; one named that is not, a usage error; e4m3bf16: BF16 output. */
  CHECK(parse("g128", &o) == -1 && o.layout == MGEN_LAYOUT_DEFAULT && o.act == MGEN_ACT_F16,
        "no --act: f16, the default layout");
  int fits = 0;
  for (int i = 0; i < nall; i++) fits += mgen__format_layout_fits(all[i].wfmt, all[i].scheme, MGEN_LAYOUT_E4M3);
  CHECK(fits >= 1 && fits < nall, "%d of %d formats packed in the e4m3 layout", fits, nall);
  CHECK(parse_act("e4m3", "all", &o) == -1 && o.layout == MGEN_LAYOUT_E4M3 &&
            o.act == MGEN_ACT_F16 && o.nfmts == fits, "--act e4m3 --fmt all: %d formats", o.nfmts);
  for (int i = 0; i < o.nfmts; i++)
    CHECK(mgen__format_layout_fits(o.fmts[i].wfmt, o.fmts[i].scheme, MGEN_LAYOUT_E4M3), "format %d is packed in e4m3", i);
  CHECK(parse_act("e4m3bf16", "g128", &o) == -1 && o.layout == MGEN_LAYOUT_E4M3 &&
            o.act == MGEN_ACT_BF16 && o.nfmts == 1 && same_fmt(&o.fmts[0], &g128), "e4m3bf16 g128");
  CHECK(parse_act("e4m3", "g128,nvfp4", &o) == CLI_EXIT_USAGE, "--act e4m3 --fmt nvfp4: usage");
  CHECK(parse_act("e4m3", "nvfp4,all", &o) == CLI_EXIT_USAGE, "named before all: still a usage error");
  CHECK(parse_act("e4m3", "all,nvfp4", &o) == CLI_EXIT_USAGE, "named after all: still a usage error");
  CHECK(parse_act("e4m3f16", "g128", &o) == CLI_EXIT_USAGE, "e4m3f16 is not a name");
  return check_exit("test_tune_args");
}
