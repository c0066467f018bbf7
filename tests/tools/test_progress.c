/* test_progress.c -- marlin-tune's progress report (runtime/tools/progress.c): when it shows
 * (terminal, pipe, CI, dumb terminal, --progress, --quiet), the duration and estimate text, and
 * what a redrawn line and a line-per-update report write. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "progress.h"

static void modes(void) {
  const progress_flag a = PROGRESS_FLAG_AUTO, on = PROGRESS_FLAG_ON, off = PROGRESS_FLAG_OFF;
  /* Default: a terminal redraws; a pipe, CI or a dumb terminal shows nothing. */
  CHECK(progress_choose(a, 1, NULL, "xterm") == PROGRESS_REDRAW, "terminal");
  CHECK(progress_choose(a, 0, NULL, "xterm") == PROGRESS_OFF, "pipe");
  CHECK(progress_choose(a, 1, "true", "xterm") == PROGRESS_OFF, "CI with a pseudo-terminal");
  CHECK(progress_choose(a, 1, "", "xterm") == PROGRESS_REDRAW, "CI= (empty) is not CI");
  CHECK(progress_choose(a, 1, NULL, "dumb") == PROGRESS_OFF, "dumb terminal");
  CHECK(progress_choose(a, 1, NULL, NULL) == PROGRESS_REDRAW, "no TERM");
  /* --progress: redraw where it can, lines elsewhere; --quiet: never. */
  CHECK(progress_choose(on, 0, "true", NULL) == PROGRESS_LINES, "--progress in a CI pipe");
  CHECK(progress_choose(on, 1, "true", "xterm") == PROGRESS_REDRAW, "--progress, terminal");
  CHECK(progress_choose(on, 1, NULL, "dumb") == PROGRESS_LINES, "--progress, dumb terminal");
  CHECK(progress_choose(off, 1, NULL, "xterm") == PROGRESS_OFF, "--quiet on a terminal");
}

static void expect_text(const char *got, const char *want) {
  CHECK(strcmp(got, want) == 0, "got '%s', want '%s'", got, want);
}

static void texts(void) {
  char buf[256];
  progress_duration(0, buf, sizeof buf), expect_text(buf, "0 s");
  progress_duration(59.4, buf, sizeof buf), expect_text(buf, "59 s");
  progress_duration(59.6, buf, sizeof buf), expect_text(buf, "1 min 00 s");
  progress_duration(185, buf, sizeof buf), expect_text(buf, "3 min 05 s");
  progress_duration(7260, buf, sizeof buf), expect_text(buf, "2 h 01 min");
  progress_duration(-3, buf, sizeof buf), expect_text(buf, "0 s");
  progress_text(0, 104, 0.2, "f16/u4b8/g128 n=4096 k=4096 M=1", buf, sizeof buf);
  expect_text(buf, "0/104 keys, 0 s elapsed, estimating: f16/u4b8/g128 n=4096 k=4096 M=1");
  /* 12 keys in 14 s: 92 left at 14/12 s each = 107.3 s. */
  progress_text(12, 104, 14, "f16/u4b8/gc n=11008 k=4096 M=16", buf, sizeof buf);
  expect_text(buf, "12/104 keys, 14 s elapsed, ~1 min 47 s left: f16/u4b8/gc n=11008 k=4096 M=16");
  progress_text(104, 104, 130, "", buf, sizeof buf);
  expect_text(buf, "104/104 keys, 2 min 10 s elapsed, done");
}

/* What a report writes to a file. */
static void written(progress_mode mode, char *buf, size_t size) {
  FILE *f = tmpfile();
  if (f == NULL) {
    perror("tmpfile");
    exit(1);
  }
  progress p = progress_start(f, mode, 2);
  progress_update(&p, 0, 0, "a");
  progress_update(&p, 1, 1, "b");
  progress_break(&p); /* a message comes */
  fputs("warning: x\n", f);
  progress_update(&p, 2, 2, "");
  progress_break(&p);
  progress_break(&p); /* twice: no second newline */
  size_t n = (size_t)ftell(f);
  rewind(f);
  n = fread(buf, 1, n < size - 1 ? n : size - 1, f);
  buf[n] = '\0';
  fclose(f);
}

static void reports(void) {
  char buf[1024];
  written(PROGRESS_OFF, buf, sizeof buf);
  expect_text(buf, "warning: x\n");
  written(PROGRESS_LINES, buf, sizeof buf);
  expect_text(buf, "marlin-tune: 0/2 keys, 0 s elapsed, estimating: a\n"
                   "marlin-tune: 1/2 keys, 1 s elapsed, ~1 s left: b\n"
                   "warning: x\n"
                   "marlin-tune: 2/2 keys, 2 s elapsed, done\n");
  written(PROGRESS_REDRAW, buf, sizeof buf);
  expect_text(buf, "\r0/2 keys, 0 s elapsed, estimating: a\033[K"
                   "\r1/2 keys, 1 s elapsed, ~1 s left: b\033[K\n"
                   "warning: x\n"
                   "\r2/2 keys, 2 s elapsed, done\033[K\n");
}

int main(void) {
  modes();
  texts();
  reports();
  return check_exit("test_progress");
}
