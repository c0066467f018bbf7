/* fuzz_cache.c -- libFuzzer target for the autotune cache parser (runtime/src/cache/cache_file.c).
 *
 * Properties checked on every input, beyond "no crash, no sanitizer report":
 * - a rejected input says where: its message starts with "fuzz:<line>: ";
 * - an accepted input of format 1 has exactly the announced number of records, each within
 *   the documented limits, and survives a round trip: written back by the writer, it parses
 *   again to the same header and records.
 * Build and run: tests/fuzz/run.sh BUILD_DIR fuzz_cache RUNS (clang with -fsanitize=fuzzer). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache_file.h"

#include "fuzz_require.h"

typedef struct list {
  mgen__cache_record *r;
  size_t count, cap;
} list;

static int keep(void *self, const mgen__cache_record *r) {
  list *l = self;
  if (l->count == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 16;
    mgen__cache_record *bigger = realloc(l->r, cap * sizeof *bigger);
    if (bigger == NULL) return -1;
    l->r = bigger, l->cap = cap;
  }
  REQUIRE(r->m_lo >= 1 && r->m_lo <= r->m_hi && r->n >= 1 && r->k >= 1);
  REQUIRE(r->kernel[0] != '\0' && strlen(r->kernel) < MGEN__CACHE_NAME_MAX);
  REQUIRE(r->line >= 1);
  l->r[l->count++] = *r;
  return 0;
}

static int same_record(const mgen__cache_record *a, const mgen__cache_record *b) {
  return a->key.act == b->key.act && a->key.wfmt == b->key.wfmt && a->key.group == b->key.group &&
         a->key.scheme == b->key.scheme && a->key.layout == b->key.layout && a->key.op == b->key.op &&
         a->n == b->n && a->k == b->k && a->m_lo == b->m_lo && a->m_hi == b->m_hi && strcmp(a->kernel, b->kernel) == 0 && a->ns == b->ns &&
         strcmp(a->default_kernel, b->default_kernel) == 0 && a->default_ns == b->default_ns;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mgen__cache_header h, h2;
  list a = {0}, b = {0};
  char why[512];
  mgen_status st = mgen__cache_parse((const char *)data, size, "fuzz", &h, keep, &a, why, sizeof why);
  if (st == MGEN_ERR_CACHE_FORMAT) REQUIRE(strncmp(why, "fuzz:", 5) == 0);
  if (st == MGEN_OK && h.format == MGEN__CACHE_FORMAT) {
    REQUIRE((long)a.count == h.records);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    REQUIRE(f != NULL);
    REQUIRE(mgen__cache_write_header(f, &h) == 0);
    for (size_t i = 0; i < a.count; i++) REQUIRE(mgen__cache_write_record(f, &a.r[i]) == 0);
    REQUIRE(mgen__cache_write_end(f) == 0);
    fclose(f);
    st = mgen__cache_parse(text, len, "again", &h2, keep, &b, why, sizeof why);
    if (st != MGEN_OK) fprintf(stderr, "fuzz_cache: round trip failed: %s\n", why);
    REQUIRE(st == MGEN_OK && b.count == a.count);
    REQUIRE(h2.format == h.format && strcmp(h2.library, h.library) == 0 &&
            h2.table_hash == h.table_hash && strcmp(h2.device, h.device) == 0 &&
            h2.sms == h.sms && h2.sm == h.sm && h2.cuda_runtime == h.cuda_runtime &&
            h2.cuda_driver == h.cuda_driver && h2.records == h.records);
    for (size_t i = 0; i < a.count; i++) REQUIRE(same_record(&a.r[i], &b.r[i]));
    free(text);
  }
  free(a.r);
  free(b.r);
  return 0;
}
