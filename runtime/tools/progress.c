/* progress.c -- marlin-tune's progress report (progress.h). */
#include "progress.h"

#include <math.h>
#include <string.h>

progress_mode progress_choose(progress_flag flag, int is_tty, const char *ci, const char *term) {
  if (flag == PROGRESS_FLAG_OFF) return PROGRESS_OFF;
  const int dumb = term != NULL && strcmp(term, "dumb") == 0;
  if (flag == PROGRESS_FLAG_ON) return is_tty && !dumb ? PROGRESS_REDRAW : PROGRESS_LINES;
  const int in_ci = ci != NULL && ci[0] != '\0';
  return is_tty && !dumb && !in_ci ? PROGRESS_REDRAW : PROGRESS_OFF;
}

void progress_duration(double seconds, char *buf, size_t size) {
  const long s = seconds > 0 ? lround(seconds) : 0;
  if (s < 60) snprintf(buf, size, "%ld s", s);
  else if (s < 3600) snprintf(buf, size, "%ld min %02ld s", s / 60, s % 60);
  else snprintf(buf, size, "%ld h %02ld min", s / 3600, s / 60 % 60);
}

void progress_text(int done, int total, double elapsed, const char *what, char *buf, size_t size) {
  char spent[32], left[48] = "estimating";
  progress_duration(elapsed, spent, sizeof spent);
  if (done > 0) {
    char d[32];
    progress_duration(elapsed / done * (total - done), d, sizeof d);
    snprintf(left, sizeof left, "~%s left", d);
  }
  if (done >= total) snprintf(left, sizeof left, "done");
  snprintf(buf, size, "%d/%d keys, %s elapsed, %s%s%s", done, total, spent, left,
           what[0] ? ": " : "", what);
}

progress progress_start(FILE *out, progress_mode mode, int total) {
  return (progress){.out = out, .mode = mode, .total = total, .open = 0};
}

void progress_update(progress *p, int done, double elapsed, const char *what) {
  if (p->mode == PROGRESS_OFF) return;
  char text[256];
  progress_text(done, p->total, elapsed, what, text, sizeof text);
  if (p->mode == PROGRESS_LINES) {
    fprintf(p->out, "marlin-tune: %s\n", text);
  } else {
    /* "\033[K" clears what a longer previous line left on the right. */
    fprintf(p->out, "\r%s\033[K", text);
    p->open = 1;
  }
  fflush(p->out);
}

void progress_break(progress *p) {
  if (p->open) fputc('\n', p->out);
  p->open = 0;
}
