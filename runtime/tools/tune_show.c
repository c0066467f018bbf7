/* tune_show.c -- marlin-tune --show FILE: which kernel won where, and by how much over the
 * cost model's default (--json: tune_json.c). Reads the file with the runtime's own reader and
 * parser (what mgen_cache_load accepts, it shows; what it refuses, this refuses); no GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "marlin_tune.h"
#include "mgen_internal.h"

typedef struct shown {
  mgen__cache_record *r;
  size_t count, cap;
} shown;

static int keep(void *self, const mgen__cache_record *r) {
  shown *s = self;
  if (s->count == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 64;
    mgen__cache_record *bigger = realloc(s->r, cap * sizeof *bigger);
    if (bigger == NULL) return -1;
    s->r = bigger, s->cap = cap;
  }
  s->r[s->count++] = *r;
  return 0;
}

/* "sm80 16x128x128_s4_w8_sw3x4x4": the name without "mgen_" and the key fields the row already
 * shows (act, wfmt, group); the whole name if it has fewer fields. */
static const char *short_name(const char *name, char *buf, size_t size) {
  const char *p = name;
  int fields = 0;
  const char *sm = NULL, *tile = NULL;
  for (; *p; p++)
    if (*p == '_') {
      fields++;
      if (fields == 1) sm = p + 1;
      if (fields == 5) tile = p + 1;
    }
  if (sm == NULL || tile == NULL || strncmp(name, "mgen_", 5) != 0) {
    snprintf(buf, size, "%s", name);
  } else {
    const char *sm_end = strchr(sm, '_');
    snprintf(buf, size, "%.*s %s", (int)(sm_end - sm), sm, tile);
  }
  return buf;
}

typedef struct bucket_sum {
  int lo, hi, count, changed;
  double log_sum;
} bucket_sum;

static int by_lo(const void *a, const void *b) {
  const bucket_sum *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void m_range(int lo, int hi, char *buf, size_t size) {
  if (lo == hi) snprintf(buf, size, "%d", lo);
  else if (hi == 0x7fffffff) snprintf(buf, size, "%d+", lo);
  else snprintf(buf, size, "%d-%d", lo, hi);
}

int marlin_tune_show(const char *path, int json) {
  char *text = NULL, why[512];
  size_t size = 0;
  mgen__cache_header h;
  shown s = {0};
  mgen_status st = mgen__cache_read_file(path, &text, &size, why, sizeof why, NULL);
  if (st == MGEN_OK) {
    st = mgen__cache_parse(text, size, path, &h, keep, &s, why, sizeof why);
    free(text);
  }
  if (st != MGEN_OK) {
    fprintf(stderr, "marlin-tune: %s: %s\n", mgen_status_str(st), why);
    free(s.r);
    return 1;
  }
  if (!mgen__cache_format_read(h.format)) {
    mgen__cache_format_why(h.format, why, sizeof why);
    fprintf(stderr, "marlin-tune: %s: %s\n", path, why);
    return 1;
  }
  const mgen_table *t = mgen_builtin_table();
  if (json) {
    marlin_tune_json(stdout, path, &h, s.r, s.count, h.table_hash == t->hash);
    free(s.r);
    return 0;
  }
  printf("%s: %zu records, tuned on %s (%d SMs, sm_%d), libmgen %s, CUDA runtime %d, driver %d\n",
         path, s.count, h.device, h.sms, h.sm, h.library, h.cuda_runtime, h.cuda_driver);
  printf("kernel table 0x%016llx%s\n\n", (unsigned long long)h.table_hash,
         h.table_hash == t->hash ? " (this build's)" : " (NOT this build's: its records are not used here)");
  printf("%-26s %6s %6s %11s  %-6s %-32s %10s  %-32s %10s %8s\n", "key", "n", "k", "M", "family",
         "winner", "us", "default (cost model)", "us", "speedup");

  /* Per M bucket: geometric mean of default / winner, and how often tuning changed the choice. */
  enum { BUCKETS = 64 };
  bucket_sum sums[BUCKETS];
  int nb = 0;
  for (size_t i = 0; i < s.count; i++) {
    const mgen__cache_record *r = &s.r[i];
    char key[48], mr[24], w[64], d[64];
    mgen__cache_key_text(&r->key, key, sizeof key);
    m_range(r->m_lo, r->m_hi, mr, sizeof mr);
    const int same = strcmp(r->kernel, r->default_kernel) == 0;
    const double speedup = r->ns > 0 && r->default_ns > 0 ? (double)r->default_ns / r->ns : 0;
    printf("%-26s %6d %6d %11s  %-6s %-32s %10.2f  %-32s %10.2f %7.2fx\n", key, r->n, r->k, mr,
           marlin_tune_family(r->kernel), short_name(r->kernel, w, sizeof w), r->ns / 1000.0,
           same ? "(same)" : short_name(r->default_kernel, d, sizeof d), r->default_ns / 1000.0,
           speedup);
    int b = 0;
    while (b < nb && !(sums[b].lo == r->m_lo && sums[b].hi == r->m_hi)) b++;
    if (b == nb) {
      if (nb == BUCKETS) continue;
      sums[nb++] = (bucket_sum){r->m_lo, r->m_hi, 0, 0, 0};
    }
    if (speedup > 0) sums[b].count++, sums[b].changed += !same, sums[b].log_sum += log(speedup);
  }
  qsort(sums, (size_t)nb, sizeof *sums, by_lo);
  printf("\nspeedup of the tuned choice over the cost model's default, geometric mean per M:\n\n"
         "| M | records | tuning changed the kernel | speedup |\n|---|---|---|---|\n");
  for (int b = 0; b < nb; b++) {
    char mr[24];
    m_range(sums[b].lo, sums[b].hi, mr, sizeof mr);
    printf("| %s | %d | %d | %.3fx |\n", mr, sums[b].count, sums[b].changed,
           sums[b].count ? exp(sums[b].log_sum / sums[b].count) : 0.0);
  }
  free(s.r);
  return 0;
}
