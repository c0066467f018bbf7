/* progress.h -- marlin-tune's progress report: keys done / total, elapsed time and an estimate
 * of the time left. On a terminal it is one line redrawn in place; in a pipe, a log or CI it is
 * off unless forced (--progress), and then one line per update; --quiet turns it off anywhere.
 * Plain C, no CUDA: tests/tools/test_progress.c checks the decisions and the text.
 */
#ifndef MGEN_PROGRESS_H
#define MGEN_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

/* What the command line asked for: nothing (decide from the output), --progress, --quiet. */
typedef enum progress_flag {
  PROGRESS_FLAG_AUTO,
  PROGRESS_FLAG_ON,
  PROGRESS_FLAG_OFF
} progress_flag;
/* How it is shown: not at all, one line per update, or one line redrawn with '\r'. */
typedef enum progress_mode { PROGRESS_OFF, PROGRESS_LINES, PROGRESS_REDRAW } progress_mode;

/* The mode for `flag` on an output that is (`is_tty`) a terminal, with the environment's CI
 * and TERM values (NULL: unset). AUTO shows a redrawn line only on a terminal that is not a
 * dumb one and outside CI (CI set and not empty: CI systems may give jobs a pseudo-terminal,
 * whose log would fill with redraws); ON redraws on a terminal and prints lines elsewhere. */
progress_mode progress_choose(progress_flag flag, int is_tty, const char *ci, const char *term);

/* "12 s", "3 min 05 s", "2 h 01 min": a duration in whole seconds, rounded. */
void progress_duration(double seconds, char *buf, size_t size);

/* The report without line control, e.g.
 *   "12/104 keys, 14 s elapsed, ~1 min 48 s left: f16/u4b8/g128 n=4096 k=4096 M=16"
 * The estimate is the mean time per key so far times the keys left; before the first key is
 * done it is "estimating". `what` (may be empty) names the key being tuned. */
void progress_text(int done, int total, double elapsed, const char *what, char *buf, size_t size);

typedef struct progress {
  FILE *out;
  progress_mode mode;
  int total;
  int open; /* a redrawn line is on screen without its newline */
} progress;

/* A report on `out` of `total` keys in `mode`. */
progress progress_start(FILE *out, progress_mode mode, int total);
/* Shows the state: `done` keys finished after `elapsed` seconds, `what` under way. */
void progress_update(progress *p, int done, double elapsed, const char *what);
/* Ends a redrawn line, so that a message printed next starts on a line of its own. */
void progress_break(progress *p);

#endif /* MGEN_PROGRESS_H */
