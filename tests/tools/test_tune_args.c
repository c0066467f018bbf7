/* test_tune_args.c -- marlin-tune's --fmt list (runtime/tools/tune_args.c), parsed in-process:
 * a format named again (by short name, by key, or through "all") is kept once, so no list of 64
 * items can hold more than 64 formats. "all" followed by 63 more items once wrote past
 * tune_opts.fmts[64], over nshapes and the M values. cli.h's exit is replaced by a longjmp, so
 * a usage error comes back here as its status. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cli.h"
#include "formats/formats.h"
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
      CHECK(memcmp(&o.fmts[i], &first[i], sizeof first[i]) == 0, "--fmt %.40s...: format %d",
            fmts, i);
    for (int j = 0; j < i; j++)
      CHECK(memcmp(&o.fmts[i], &o.fmts[j], sizeof o.fmts[i]) != 0,
            "--fmt %.40s...: formats %d and %d are the same", fmts, j, i);
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
  return check_exit("test_tune_args");
}
