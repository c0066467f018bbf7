/* test_cache_io.c -- cache files through the public API on contexts built by hand (fake
 * table, fake timer, no GPU): save/load round trip, merging, what a header must match (foreign
 * device, table, library, CUDA versions), skipped records, malformed files rejected whole,
 * MGEN_CACHE, unwritable locations, the file's limits, FIFOs, symbolic links, and concurrent
 * writer processes (fork) with a reader. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "dispatch/bucket.h"
#include "cache/cache.h"
#include "cache/cache_file.h"
#include "check.h"
#include "tune_fixture.h"

static char dir[256];

static char *path_of(const char *name) {
  static char buf[8][512];
  static int next;
  char *p = buf[next++ % 8];
  snprintf(p, 512, "%s/%s", dir, name);
  return p;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  return text;
}

static void spit(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  fputs(text, f);
  fclose(f);
}

/* FNV-1a of a file's bytes and its inode: "unchanged" for files too large to slurp (a save
 * that renames a new file over it changes the inode). 0 if it cannot be read. */
static uint64_t file_id(const char *path) {
  FILE *f = fopen(path, "rb");
  struct stat sb;
  if (f == NULL || fstat(fileno(f), &sb) != 0) return f ? fclose(f), 0 : 0;
  uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)sb.st_ino;
  for (int ch; (ch = getc(f)) != EOF;) h = (h ^ (uint64_t)ch) * 0x100000001b3ULL;
  fclose(f);
  return h;
}

/* Whether a temporary file of a save was left in `where`. */
static int temp_left(const char *where) {
  char cmd[800];
  snprintf(cmd, sizeof cmd, "ls %s | grep -q '\\.tmp\\.'", where);
  return system(cmd) == 0;
}

/* Records for (n, bucket of m) via mgen_tune with the fake timer: kernel `win` wins. */
static void tune_one(mgen_ctx *ctx, int n, int m, int win, double us) {
  for (int i = 0; i < FAKE_COUNT; i++) fixture_us[i] = 100.0;
  fixture_us[win] = us;
  mgen_weights w = fixture_weights(MGEN_ACT_F16, 128, n, 4096);
  mgen_status st = mgen_tune(ctx, m, &w, NULL, NULL);
  CHECK(st == MGEN_OK, "tune n=%d m=%d: %s", n, m, mgen_ctx_last_error(ctx));
}

static const char *choice(mgen_ctx *ctx, int n, int m) {
  const char *name = "?";
  mgen_weights w = fixture_weights(MGEN_ACT_F16, 128, n, 4096);
  CHECK(mgen_gemm_choice(ctx, MGEN_ACT_F16, m, &w, &name) == MGEN_OK, "choice");
  return name;
}

static void test_round_trip(void) {
  fixture_reset();
  mgen_ctx *a = fixture_ctx(80), *b = fixture_ctx(80);
  tune_one(a, 4096, 1, FAKE_G128_64, 12.5);
  tune_one(a, 8192, 100, FAKE_G128_32, 40.0);
  tune_one(a, 12288, 5000, FAKE_G128_16_R1, 30.0);
  const char *p = path_of("rt.cache");
  CHECK(mgen_cache_save(a, p, 0) == MGEN_OK, "save: %s", mgen_ctx_last_error(a));
  char first[1 << 16];
  snprintf(first, sizeof first, "%s", slurp(p));
  CHECK(strstr(first, "device Fake GPU\nsms 132\nsm 80\n") != NULL, "header:\n%s", first);
  CHECK(strstr(first, "dense/f16/u4b8/g128 4096 4096 1 1 fake_g128_64 12500 ") != NULL, "record:\n%s", first);
  int applied = -1;
  CHECK(mgen_cache_load(b, p, &applied) == MGEN_OK && applied == 3, "load: %d %s", applied,
        mgen_ctx_last_error(b));
  CHECK(mgen_cache_count(b) == 3, "count %zu", mgen_cache_count(b));
  CHECK(strcmp(choice(b, 4096, 1), "fake_g128_64") == 0, "4096/1: %s", choice(b, 4096, 1));
  CHECK(strcmp(choice(b, 8192, 97), "fake_g128_32") == 0, "8192/97 shares 97..128");
  CHECK(strcmp(choice(b, 12288, 4097), "fake_g128_16_r1") == 0, "12288/4097..6144");
  CHECK(strcmp(choice(b, 12288, 1), "fake_g128_16_r0") == 0, "untuned: the default");
  /* Saving what was loaded gives the same bytes (deterministic order, same values). */
  const char *p2 = path_of("rt2.cache");
  CHECK(mgen_cache_save(b, p2, 0) == MGEN_OK && strcmp(slurp(p2), first) == 0, "same bytes");
  /* Saving again into the same file changes nothing (merge of equal records). */
  CHECK(mgen_cache_save(a, p, 0) == MGEN_OK && strcmp(slurp(p), first) == 0, "idempotent");
  mgen_ctx_destroy(a);
  mgen_ctx_destroy(b);
}

static void spit_edited(const char *path, const char *text, const char *from, const char *to);

/* W4A8 weights (the e4m3 layout) tune a key of their own: saved with "@e4m3", read back as that
 * key, beside the same shape's key in the default layout; a record naming a kernel of the other
 * layout is skipped. */
static void test_layout_key(void) {
  fixture_reset();
  mgen_ctx *a = fixture_ctx(80), *b = fixture_ctx(80);
  tune_one(a, 4096, 1, FAKE_G128_64, 12.5);
  for (int i = 0; i < FAKE_COUNT; i++) fixture_us[i] = 100.0;
  fixture_us[FAKE_E4M3_G128] = 9.0;
  mgen_weights w8 = fixture_weights(MGEN_ACT_F16, 128, 4096, 4096);
  w8.layout = MGEN_LAYOUT_E4M3;
  CHECK(mgen_tune(a, 1, &w8, NULL, NULL) == MGEN_OK, "tune e4m3: %s", mgen_ctx_last_error(a));
  CHECK(mgen_cache_count(a) == 2, "two keys: %zu", mgen_cache_count(a));
  const char *p = path_of("layout.cache");
  CHECK(mgen_cache_save(a, p, 0) == MGEN_OK, "save: %s", mgen_ctx_last_error(a));
  char text[1 << 16];
  snprintf(text, sizeof text, "%s", slurp(p));
  CHECK(strstr(text, "\ndense/f16/u4b8/g128@e4m3 4096 4096 1 1 fake_e4m3_g128 9000 ") != NULL &&
            strstr(text, "\ndense/f16/u4b8/g128 4096 4096 1 1 fake_g128_64 12500 ") != NULL,
        "records:\n%s", text);
  int applied = -1;
  CHECK(mgen_cache_load(b, p, &applied) == MGEN_OK && applied == 2 && mgen_cache_count(b) == 2,
        "load: %d %s", applied, mgen_ctx_last_error(b));
  const char *name = "?";
  CHECK(mgen_gemm_choice(b, MGEN_ACT_F16, 1, &w8, &name) == MGEN_OK && strcmp(name, "fake_e4m3_g128") == 0,
        "e4m3 choice: %s", name);
  CHECK(strcmp(choice(b, 4096, 1), "fake_g128_64") == 0, "mma choice: %s", choice(b, 4096, 1));
  /* The e4m3 key naming an mma-layout kernel: skipped with a warning, the other applied. */
  const char *q = path_of("layout2.cache");
  spit_edited(q, text, "g128@e4m3 4096 4096 1 1 fake_e4m3_g128", "g128@e4m3 4096 4096 1 1 fake_g128_32");
  mgen_cache_clear(b);
  int warns = fixture_warns;
  applied = -1;
  CHECK(mgen_cache_load(b, q, &applied) == MGEN_OK && applied == 1 && fixture_warns == warns + 1 &&
            strstr(fixture_last_warn, "fake_g128_32") != NULL,
        "wrong layout's kernel: applied %d, '%s'", applied, fixture_last_warn);
  mgen_ctx_destroy(a);
  mgen_ctx_destroy(b);
}

static void test_merge(void) {
  fixture_reset();
  mgen_ctx *a = fixture_ctx(80), *b = fixture_ctx(80), *c = fixture_ctx(80);
  const char *p = path_of("merge.cache");
  tune_one(a, 4096, 1, FAKE_G128_64, 20.0);
  tune_one(a, 4096, 2, FAKE_G128_64, 20.0);
  tune_one(b, 4096, 1, FAKE_G128_32, 10.0); /* saved last: its own tuning wins the shared key */
  tune_one(b, 8192, 1, FAKE_G128_32, 10.0);
  CHECK(mgen_cache_save(a, p, 0) == MGEN_OK && mgen_cache_save(b, p, 0) == MGEN_OK, "saves");
  int applied;
  CHECK(mgen_cache_load(c, p, &applied) == MGEN_OK && applied == 3, "union of 3 keys: %d", applied);
  CHECK(strcmp(choice(c, 4096, 1), "fake_g128_32") == 0, "b's tuning wins");
  CHECK(strcmp(choice(c, 4096, 2), "fake_g128_64") == 0, "a's own key kept");
  /* A load never displaces what the context tuned itself (a's slower record stays); between
   * loaded records the lower time wins: c's faster one stays when a's file is loaded. */
  const char *pa = path_of("merge-a.cache");
  CHECK(mgen_cache_save(a, pa, MGEN_CACHE_REPLACE) == MGEN_OK, "a alone");
  CHECK(mgen_cache_load(a, p, NULL) == MGEN_OK && strcmp(choice(a, 4096, 1), "fake_g128_64") == 0,
        "load keeps the context's own tuning");
  CHECK(mgen_cache_load(c, pa, NULL) == MGEN_OK && strcmp(choice(c, 4096, 1), "fake_g128_32") == 0,
        "load keeps the lower of two loaded times");
  /* MGEN_CACHE_REPLACE writes this context's records only. */
  mgen_ctx *d = fixture_ctx(80);
  tune_one(d, 16384, 1, FAKE_G128_128, 1.0);
  CHECK(mgen_cache_save(d, p, MGEN_CACHE_REPLACE) == MGEN_OK, "replace");
  mgen_cache_clear(c);
  CHECK(mgen_cache_load(c, p, &applied) == MGEN_OK && applied == 1, "only d's: %d", applied);
  CHECK(mgen_cache_save(d, p, 4) == MGEN_ERR_INVALID_ARG, "unknown flag");
  mgen_ctx_destroy(a);
  mgen_ctx_destroy(b);
  mgen_ctx_destroy(c);
  mgen_ctx_destroy(d);
}

/* Writes `text` with the first occurrence of `from` replaced by `to`. */
static void spit_edited(const char *path, const char *text, const char *from, const char *to) {
  char buf[1 << 16];
  const char *at = strstr(text, from);
  CHECK(at != NULL, "'%s' not in the file", from);
  if (at == NULL) return;
  snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  spit(path, buf);
}

static void test_headers(void) {
  fixture_reset();
  mgen_ctx *a = fixture_ctx(80), *b = fixture_ctx(80);
  tune_one(a, 4096, 1, FAKE_G128_64, 12.5);
  tune_one(a, 8192, 1, FAKE_G128_64, 12.5);
  const char *p = path_of("h.cache"), *q = path_of("h2.cache");
  CHECK(mgen_cache_save(a, p, 0) == MGEN_OK, "save");
  char text[1 << 16];
  snprintf(text, sizeof text, "%s", slurp(p));
  static const struct {
    const char *from, *to, *why;
    int used;
  } cases[] = {
      {"device Fake GPU", "device Other GPU", "tuned on 'Other GPU' (132 SMs, sm_80)", 0},
      {"sms 132", "sms 114", "114 SMs", 0},
      {"sm 80", "sm 90", "sm_90", 0},
      {"table 0x0", "table 0x9", "kernel table", 0},
      {"library 0.1.0", "library 0.1.1", "libmgen 0.1.1", 0},
      {"mgen-cache 3", "mgen-cache 4", "cache format 4", 0},
      {"cuda-runtime 12080", "cuda-runtime 12040", "CUDA runtime 12040", 1},
      {"cuda-driver 12080", "cuda-driver 13000", "driver 13000", 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    spit_edited(q, text, cases[i].from, cases[i].to);
    mgen_cache_clear(b);
    int warns = fixture_warns, applied = -1;
    mgen_status st = mgen_cache_load(b, q, &applied);
    CHECK(st == MGEN_OK, "%s: %s %s", cases[i].to, mgen_status_str(st), mgen_ctx_last_error(b));
    CHECK(applied == (cases[i].used ? 2 : 0) && mgen_cache_count(b) == (size_t)applied,
          "%s: applied %d", cases[i].to, applied);
    CHECK(fixture_warns == warns + 1 && strstr(fixture_last_warn, cases[i].why) != NULL,
          "%s: warning '%s' lacks '%s'", cases[i].to, fixture_last_warn, cases[i].why);
    CHECK(cases[i].used || strstr(fixture_last_warn, "not used") != NULL, "%s", fixture_last_warn);
  }
  /* A file of format 2 (before the layout suffix; its keys are the default layouts') is read
   * as it is, silently. */
  spit_edited(q, text, "mgen-cache 3", "mgen-cache 2");
  {
    mgen_cache_clear(b);
    int warns = fixture_warns, applied = -1;
    CHECK(mgen_cache_load(b, q, &applied) == MGEN_OK && applied == 2 && mgen_cache_count(b) == 2 &&
              fixture_warns == warns, "format 2: applied %d, %d warnings", applied, fixture_warns - warns);
  }
  /* Saving over a file of another device or format refuses and leaves it alone. */
  spit_edited(q, text, "device Fake GPU", "device Other GPU");
  char before[1 << 16];
  snprintf(before, sizeof before, "%s", slurp(q));
  CHECK(mgen_cache_save(a, q, 0) == MGEN_ERR_CACHE_MISMATCH, "foreign device: refused");
  CHECK(mgen_cache_save(a, q, MGEN_CACHE_REPLACE) == MGEN_ERR_CACHE_MISMATCH, "even to replace");
  CHECK(strstr(mgen_ctx_last_error(a), "Other GPU") != NULL, "%s", mgen_ctx_last_error(a));
  CHECK(strcmp(slurp(q), before) == 0, "untouched");
  /* ... over another table's file of this device it replaces, with a warning. */
  spit_edited(q, text, "table 0x0", "table 0x9");
  int warns = fixture_warns;
  CHECK(mgen_cache_save(a, q, 0) == MGEN_OK && fixture_warns == warns + 1 &&
            strstr(fixture_last_warn, "replaced") != NULL, "other table replaced: %s", fixture_last_warn);
  CHECK(strcmp(slurp(q), text) == 0, "now this context's file");
  /* ... a file of a later format is refused too, ... */
  spit_edited(q, text, "mgen-cache 3", "mgen-cache 4");
  snprintf(before, sizeof before, "%s", slurp(q));
  CHECK(mgen_cache_save(a, q, 0) == MGEN_ERR_CACHE_MISMATCH && strcmp(slurp(q), before) == 0,
        "later format: refused");
  /* ... while one of format 1, from before the op, tells the loader's caller to re-tune (a
   * status, not just a warning: its tuning is gone) and is replaced by the re-tune's save. */
  const char *retune = "cache format 1 predates the operation field (format 2): re-run marlin-tune";
  char old[1 << 16];
  snprintf(old, sizeof old, "%s", text);
  for (char *at; (at = strstr(old, "dense/")) != NULL;) memmove(at, at + 6, strlen(at + 6) + 1);
  spit_edited(q, old, "mgen-cache 3", "mgen-cache 1");
  mgen_cache_clear(b);
  warns = fixture_warns;
  int applied = -1;
  CHECK(mgen_cache_load(b, q, &applied) == MGEN_ERR_CACHE_MISMATCH && applied == -1 &&
            mgen_cache_count(b) == 0, "format 1: refused with a status");
  CHECK(strstr(mgen_ctx_last_error(b), retune) != NULL && strstr(mgen_ctx_last_error(b), q) != NULL,
        "format 1: message '%s'", mgen_ctx_last_error(b));
  CHECK(fixture_warns == warns + 1 && strstr(fixture_last_warn, retune) != NULL,
        "format 1: warning '%s'", fixture_last_warn);
  warns = fixture_warns;
  CHECK(mgen_cache_save(a, q, 0) == MGEN_OK && fixture_warns == warns + 1 &&
            strstr(fixture_last_warn, "replaced") != NULL, "format 1 replaced: %s", fixture_last_warn);
  CHECK(strcmp(slurp(q), text) == 0 && mgen_cache_load(b, q, &applied) == MGEN_OK && applied == 2,
        "the re-tuned file loads: %d", applied);
  /* ... and a file that is not a cache is never replaced. */
  spit(q, "my notes\n");
  CHECK(mgen_cache_save(a, q, MGEN_CACHE_REPLACE) == MGEN_ERR_CACHE_FORMAT &&
            strcmp(slurp(q), "my notes\n") == 0, "not a cache: refused");
  /* The message quotes the parser's, intact (it is built from the buffer it replaces). */
  char expected[1600];
  snprintf(expected, sizeof expected, "refusing to replace %s: it is not an mgen cache (%s:1: not "
           "an mgen cache (expected 'mgen-cache <format>'))", q, q);
  CHECK(strcmp(mgen_ctx_last_error(a), expected) == 0, "message '%s', expected '%s'",
        mgen_ctx_last_error(a), expected);
  /* An empty file is replaced. */
  spit(q, "");
  CHECK(mgen_cache_save(a, q, 0) == MGEN_OK && strcmp(slurp(q), text) == 0, "empty replaced");
  mgen_ctx_destroy(a);
  mgen_ctx_destroy(b);
}

static void test_records(void) {
  fixture_reset();
  mgen_ctx *a = fixture_ctx(80), *b = fixture_ctx(80);
  tune_one(a, 4096, 1, FAKE_G128_64, 12.5);
  tune_one(a, 8192, 1, FAKE_G128_64, 12.5);
  tune_one(a, 12288, 1, FAKE_G128_64, 12.5);
  const char *p = path_of("r.cache"), *q = path_of("r2.cache");
  CHECK(mgen_cache_save(a, p, 0) == MGEN_OK, "save");
  char text[1 << 16];
  snprintf(text, sizeof text, "%s", slurp(p));
  static const struct {
    const char *from, *to, *why;
  } skips[] = {
      {"4096 4096 1 1 fake_g128_64", "4096 4096 1 1 mgen_gone_kernel", "not in the table"},
      {"4096 4096 1 1 fake_g128_64", "4096 4096 1 1 fake_gc_a", "cannot run the key"},
      {"4096 4096 1 1 fake_g128_64", "4096 4096 1 1 fake_g128_256_sm90", "cannot run the key"},
      {"dense/f16/u4b8/g128 4096 4096 1 1 fake_g128_64", "dense/f16/u4b8/g128 4000 4096 1 1 fake_g128_64",
       "cannot run the key"},
      {"4096 4096 1 1 fake_g128_64", "4096 4096 1 3 fake_g128_64", "buckets"},
  };
  for (size_t i = 0; i < sizeof skips / sizeof skips[0]; i++) {
    spit_edited(q, text, skips[i].from, skips[i].to);
    mgen_cache_clear(b);
    int warns = fixture_warns, applied = -1;
    CHECK(mgen_cache_load(b, q, &applied) == MGEN_OK && applied == 2, "%s: %d applied",
          skips[i].to, applied);
    CHECK(fixture_warns == warns + 1 && strstr(fixture_last_warn, skips[i].why) != NULL &&
              strstr(fixture_last_warn, "line 1") != NULL, "warning: %s", fixture_last_warn);
  }
  /* A malformed line rejects the whole file: nothing applied, the line named. */
  mgen_cache_clear(b);
  spit_edited(q, text, "8192 4096 1 1 fake_g128_64 12500", "8192 4096 1 1 fake_g128_64 12.5");
  int applied = 77;
  CHECK(mgen_cache_load(b, q, &applied) == MGEN_ERR_CACHE_FORMAT && applied == 77 &&
            mgen_cache_count(b) == 0, "malformed: nothing applied");
  char where[600];
  snprintf(where, sizeof where, "%s:13:", q);
  CHECK(strstr(mgen_ctx_last_error(b), where) != NULL, "'%s' lacks '%s'", mgen_ctx_last_error(b), where);
  /* Truncated, and missing. */
  spit(q, "mgen-cache 2\nlibrary 0.1.0\n");
  CHECK(mgen_cache_load(b, q, NULL) == MGEN_ERR_CACHE_FORMAT && mgen_cache_count(b) == 0, "truncated");
  CHECK(mgen_cache_load(b, path_of("missing.cache"), NULL) == MGEN_ERR_IO &&
            strstr(mgen_ctx_last_error(b), "missing.cache") != NULL, "missing");
  /* Too large. */
  FILE *f = fopen(q, "wb");
  fseek(f, (17L << 20) - 1, SEEK_SET);
  fputc('\n', f);
  fclose(f);
  CHECK(mgen_cache_load(b, q, NULL) == MGEN_ERR_CACHE_FORMAT &&
            strstr(mgen_ctx_last_error(b), "larger than") != NULL, "%s", mgen_ctx_last_error(b));
  CHECK(mgen_cache_load(b, dir, NULL) == MGEN_ERR_IO, "a directory");
  /* MGEN_CACHE names the default path. */
  unsetenv("MGEN_CACHE");
  CHECK(mgen_cache_load(b, NULL, NULL) == MGEN_ERR_INVALID_ARG &&
            strstr(mgen_ctx_last_error(b), "MGEN_CACHE") != NULL, "no path, no MGEN_CACHE");
  CHECK(mgen_cache_save(b, NULL, 0) == MGEN_ERR_INVALID_ARG, "save: no path");
  setenv("MGEN_CACHE", p, 1);
  CHECK(mgen_cache_load(b, NULL, &applied) == MGEN_OK && applied == 3, "MGEN_CACHE: %d", applied);
  /* "" is not NULL: an error naming the empty path, whatever MGEN_CACHE holds. */
  CHECK(mgen_cache_save(b, "", 0) == MGEN_ERR_INVALID_ARG &&
            strstr(mgen_ctx_last_error(b), "cache path is empty") != NULL, "save '': %s",
        mgen_ctx_last_error(b));
  CHECK(mgen_cache_load(b, "", NULL) == MGEN_ERR_INVALID_ARG &&
            strstr(mgen_ctx_last_error(b), "cache path is empty") != NULL, "load '': %s",
        mgen_ctx_last_error(b));
  setenv("MGEN_CACHE", "", 1);
  CHECK(mgen_cache_load(b, NULL, NULL) == MGEN_ERR_INVALID_ARG &&
            strstr(mgen_ctx_last_error(b), "MGEN_CACHE is empty") != NULL, "empty MGEN_CACHE: %s",
        mgen_ctx_last_error(b));
  unsetenv("MGEN_CACHE");
  CHECK(mgen_cache_load(NULL, p, NULL) == MGEN_ERR_NULL_POINTER &&
            mgen_cache_save(NULL, p, 0) == MGEN_ERR_NULL_POINTER, "NULL ctx");
  mgen_ctx_destroy(a);
  mgen_ctx_destroy(b);
}

static void fill(mgen_ctx *ctx, int kernel, int count, int n0);

/* Reads a whole file (any size; caller frees). */
static char *slurp_all(const char *path) {
  char *text = NULL, why[600];
  size_t size = 0;
  CHECK(mgen__cache_read_file(path, &text, &size, why, sizeof why, NULL) == MGEN_OK, "%s", why);
  return text;
}

/* A save keeps every record of the file it merges into that it does not replace: a line it
 * cannot parse (here a key this library lacks, between valid records) is dropped with a
 * warning naming it, never the records around it; a file whose header is broken (whose
 * records they are is unknown) is refused unless MGEN_CACHE_REPLACE says to replace it. */
static void test_salvage(void) {
  fixture_reset();
  mgen_ctx *a = fixture_ctx(80), *b = fixture_ctx(80), *c = fixture_ctx(80);
  const char *p = path_of("salvage.cache");
  fill(a, FAKE_G128_64, 1000, 128);
  CHECK(mgen_cache_save(a, p, 0) == MGEN_OK, "save: %s", mgen_ctx_last_error(a));
  char *text = slurp_all(p), *edited = malloc(strlen(text) + 200);
  char *first = strstr(text, "records 1000\n"), *second;
  CHECK(first != NULL, "records line");
  if (first == NULL) return;
  first += strlen("records 1000\n");
  second = strchr(first, '\n') + 1; /* after the first record */
  int line = 1;
  for (const char *q = text; q < second; q++) line += *q == '\n';
  sprintf(edited, "%.*srecords 1001\n%.*sdense/f16/u4b8/g96 4096 4096 1 1 fake_g128_64 9000 "
          "fake_g128_64 9000\n%s", (int)(first - strlen("records 1000\n") - text), text,
          (int)(second - first), first, second);
  spit(p, edited);
  tune_one(b, 25600, 1, FAKE_G128_32, 10.0);
  tune_one(b, 25728, 1, FAKE_G128_32, 10.0);
  tune_one(b, 25856, 1, FAKE_G128_32, 10.0);
  int warns = fixture_warns;
  CHECK(mgen_cache_save(b, p, 0) == MGEN_OK, "save over the bad line: %s", mgen_ctx_last_error(b));
  char where[700];
  snprintf(where, sizeof where, "%s:%d: 'dense/f16/u4b8/g96' is not a key", p, line);
  CHECK(fixture_warns == warns + 1 && strstr(fixture_last_warn, "1 line(s) that do not parse") &&
            strstr(fixture_last_warn, where) != NULL, "warning '%s' lacks '%s'", fixture_last_warn,
        where);
  int applied = 0;
  CHECK(mgen_cache_load(c, p, &applied) == MGEN_OK && applied == 1003, "%d of 1003 records kept",
        applied);
  free(text);

  /* A broken header: refused, the file unchanged; replaced only when asked to. */
  text = slurp_all(p);
  spit_edited(p, text, "sms 132", "sms many");
  uint64_t before = file_id(p);
  mgen_status st = mgen_cache_save(b, p, 0);
  CHECK(st == MGEN_ERR_CACHE_FORMAT && file_id(p) == before, "broken header: %s", mgen_status_str(st));
  CHECK(strstr(mgen_ctx_last_error(b), "header is malformed") != NULL &&
            strstr(mgen_ctx_last_error(b), "'sms'") != NULL, "%s", mgen_ctx_last_error(b));
  CHECK(mgen_cache_save(b, p, MGEN_CACHE_REPLACE) == MGEN_OK && mgen_cache_clear(c) == MGEN_OK &&
            mgen_cache_load(c, p, &applied) == MGEN_OK && applied == 3, "replaced: %d", applied);
  free(text);
  free(edited);
  mgen_ctx_destroy(a);
  mgen_ctx_destroy(b);
  mgen_ctx_destroy(c);
}

/* Times that cannot be real are skipped (a 1 ns record would win every merge by the lower
 * time), and a re-tune replaces the file's record of its key whatever the times; a context that
 * only loaded a record does not put it back over a newer one. */
static void test_retune(void) {
  fixture_reset();
  mgen_ctx *a = fixture_ctx(80), *b = fixture_ctx(80);
  tune_one(a, 4096, 1, FAKE_G128_64, 12.5);
  tune_one(a, 8192, 1, FAKE_G128_64, 12.5);
  tune_one(a, 12288, 1, FAKE_G128_64, 12.5);
  const char *p = path_of("pin.cache");
  CHECK(mgen_cache_save(a, p, 0) == MGEN_OK, "save");
  char text[1 << 16], step[1 << 16];
  snprintf(text, sizeof text, "%s", slurp(p));
  spit_edited(p, text, "4096 4096 1 1 fake_g128_64 12500", "4096 4096 1 1 fake_g128_64 1");
  snprintf(step, sizeof step, "%s", slurp(p));
  spit_edited(p, step, "8192 4096 1 1 fake_g128_64 12500", "8192 4096 1 1 fake_g128_64 0");
  int warns = fixture_warns, applied = -1;
  CHECK(mgen_cache_load(b, p, &applied) == MGEN_OK && applied == 1, "1 ns and 0 ns: %d applied",
        applied);
  CHECK(fixture_warns == warns + 1 && strstr(fixture_last_warn, "skipped 2 record(s) with a time "
                                             "below 500 ns") != NULL, "%s", fixture_last_warn);
  /* A re-tune, slower than the file's record: its record replaces the file's. */
  mgen_ctx *c = fixture_ctx(80);
  tune_one(c, 12288, 1, FAKE_G128_32, 40.0);
  CHECK(mgen_cache_save(c, p, 0) == MGEN_OK, "save: %s", mgen_ctx_last_error(c));
  CHECK(strstr(slurp(p), "dense/f16/u4b8/g128 12288 4096 1 1 fake_g128_32 40000 ") != NULL &&
            strstr(slurp(p), "fake_g128_64 1 ") == NULL && strstr(slurp(p), "fake_g128_64 0 ") == NULL,
        "the re-tune replaced, the impossible times dropped:\n%s", slurp(p));
  /* d loads that record; e re-tunes the key and saves; d's save keeps e's record. */
  mgen_ctx *d = fixture_ctx(80), *e = fixture_ctx(80);
  CHECK(mgen_cache_load(d, p, NULL) == MGEN_OK, "load");
  tune_one(e, 12288, 1, FAKE_G128_16_R1, 60.0);
  CHECK(mgen_cache_save(e, p, 0) == MGEN_OK && mgen_cache_save(d, p, 0) == MGEN_OK, "saves");
  CHECK(strstr(slurp(p), "dense/f16/u4b8/g128 12288 4096 1 1 fake_g128_16_r1 60000 ") != NULL,
        "the newer re-tune stays:\n%s", slurp(p));
  mgen_ctx_destroy(a);
  mgen_ctx_destroy(b);
  mgen_ctx_destroy(c);
  mgen_ctx_destroy(d);
  mgen_ctx_destroy(e);
}

/* A key given on two lines: counted once, the later line used, both lines named. */
static void test_repeated_key(void) {
  fixture_reset();
  mgen_ctx *a = fixture_ctx(80), *b = fixture_ctx(80);
  tune_one(a, 4096, 1, FAKE_G128_64, 12.5);
  tune_one(a, 8192, 1, FAKE_G128_64, 12.5);
  const char *p = path_of("twice.cache");
  CHECK(mgen_cache_save(a, p, 0) == MGEN_OK, "save");
  char text[1 << 16], step[1 << 16];
  snprintf(text, sizeof text, "%s", slurp(p));
  spit_edited(p, text, "records 2\n", "records 3\n");
  snprintf(step, sizeof step, "%s", slurp(p));
  spit_edited(p, step, "\nend\n", "\ndense/f16/u4b8/g128 4096 4096 1 1 fake_g128_32 20000 fake_g128_32 "
              "20000\nend\n");
  int warns = fixture_warns, applied = -1;
  CHECK(mgen_cache_load(b, p, &applied) == MGEN_OK && applied == 2 && mgen_cache_count(b) == 2,
        "two keys: %d applied", applied);
  CHECK(fixture_warns == warns + 1 && strstr(fixture_last_warn, "lines 12 and 14") != NULL,
        "warning: %s", fixture_last_warn);
  CHECK(strcmp(choice(b, 4096, 1), "fake_g128_32") == 0, "the later line: %s", choice(b, 4096, 1));
  mgen_ctx_destroy(a);
  mgen_ctx_destroy(b);
}

/* Where no file can be created: a read-only directory (as root, where permissions do not
 * stop writes, sysfs, which refuses new files to everyone), and a path that is a directory. */
static void test_unwritable(void) {
  fixture_reset();
  mgen_ctx *a = fixture_ctx(80);
  tune_one(a, 4096, 1, FAKE_G128_64, 12.5);
  char ro[600], probe[700];
  snprintf(ro, sizeof ro, "%s/readonly", dir);
  mkdir(ro, 0755);
  chmod(ro, 0555);
  snprintf(probe, sizeof probe, "%s/probe", ro);
  FILE *f = fopen(probe, "w");
  if (f != NULL) { /* root: use sysfs */
    fclose(f);
    unlink(probe);
    snprintf(ro, sizeof ro, "/sys");
  }
  struct stat sb;
  if (stat(ro, &sb) == 0) {
    char target[700];
    snprintf(target, sizeof target, "%s/mgen.cache", ro);
    mgen_status st = mgen_cache_save(a, target, 0);
    CHECK(st == MGEN_ERR_IO, "read-only %s: %s", ro, mgen_status_str(st));
    CHECK(strstr(mgen_ctx_last_error(a), ro) != NULL, "names the place: %s", mgen_ctx_last_error(a));
    CHECK(stat(target, &sb) != 0, "nothing created");
  } else {
    printf("test_cache_io: no read-only directory available, skipped that check\n");
  }
  /* The target is a directory: ERR_IO, nothing replaced, and no temporary file is left. */
  char target[600];
  snprintf(target, sizeof target, "%s/adir", dir);
  mkdir(target, 0755);
  CHECK(mgen_cache_save(a, target, 0) == MGEN_ERR_IO, "onto a directory");
  CHECK(!temp_left(dir), "a temporary file was left in %s", dir);
  snprintf(ro, sizeof ro, "%s/readonly", dir);
  chmod(ro, 0755);
  mgen_ctx_destroy(a);
}

/* ---------------------------------------------------------------- limits, FIFOs, links */

/* Puts `count` records for distinct keys (n, M bucket) of f16/u4b8/g128, k 4096, run by
 * `kernel`, into ctx's cache, as a long tuning session would (n from n0 on). */
static void fill(mgen_ctx *ctx, int kernel, int count, int n0) {
  for (int i = 0; i < count; i++) {
    mgen__choice_key ck = {{MGEN_ACT_F16, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128, MGEN_LAYOUT_MMA,
                             MGEN_OP_DENSE},
                           n0 + 128 * (i / MGEN__BUCKET_COUNT), 4096, i % MGEN__BUCKET_COUNT, 1};
    CHECK(mgen__cache_put_measured(&ctx->cache, &ck, kernel, 1000 + (uint64_t)i, kernel,
                                   2000 + (uint64_t)i, 0) == 1, "record %d", i);
  }
}

/* A save never writes a file its loader refuses, and never drops records: a cache file holds
 * MGEN__CACHE_RECORDS_MAX records and 16 MiB; one record more is refused, the file unchanged. */
static void test_limits(void) {
  fixture_reset();
  mgen_ctx *a = fixture_ctx(80), *b = fixture_ctx(80), *c = fixture_ctx(80);
  const char *p = path_of("full.cache");
  fill(a, FAKE_G128_64, MGEN__CACHE_RECORDS_MAX, 128);
  CHECK(mgen_cache_save(a, p, 0) == MGEN_OK, "%d records: %s", MGEN__CACHE_RECORDS_MAX,
        mgen_ctx_last_error(a));
  int applied = 0;
  CHECK(mgen_cache_load(b, p, &applied) == MGEN_OK && applied == MGEN__CACHE_RECORDS_MAX,
        "loaded back: %d (%s)", applied, mgen_ctx_last_error(b));
  const uint64_t full = file_id(p);
  /* One new tuning result in another context: the merge would hold 65537. */
  tune_one(c, 128 * 4000, 1, FAKE_G128_64, 5.0);
  mgen_status st = mgen_cache_save(c, p, 0);
  CHECK(st == MGEN_ERR_BUFFER_TOO_SMALL, "65537 merged: %s", mgen_status_str(st));
  CHECK(strstr(mgen_ctx_last_error(c), "65537 records") != NULL &&
            strstr(mgen_ctx_last_error(c), "at most 65536") != NULL, "%s", mgen_ctx_last_error(c));
  CHECK(file_id(p) == full && !temp_left(dir), "the file is unchanged, no temporary left");
  CHECK(mgen_cache_count(c) == 1, "in memory untouched: %zu", mgen_cache_count(c));
  /* The same in one context, with or without the file's records. */
  fill(a, FAKE_G128_64, 1, 128 * 5000);
  CHECK(mgen_cache_save(a, p, 0) == MGEN_ERR_BUFFER_TOO_SMALL && file_id(p) == full, "65537");
  CHECK(mgen_cache_save(a, p, MGEN_CACHE_REPLACE) == MGEN_ERR_BUFFER_TOO_SMALL &&
            file_id(p) == full && mgen_cache_count(a) == MGEN__CACHE_RECORDS_MAX + 1, "replace");
  /* A better time for a key the file has keeps the count: saved. */
  fill(b, FAKE_G128_32, 1, 128);
  CHECK(mgen_cache_save(b, p, 0) == MGEN_OK && file_id(p) != full, "%s", mgen_ctx_last_error(b));

  /* 65536 records of 127-character kernel names pass 16 MiB: refused, nothing written. */
  static const char long_name[] =
      "fake_g128_64_with_a_name_of_127_characters_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
  _Static_assert(sizeof long_name == MGEN__CACHE_NAME_MAX, "the longest name a file holds");
  static mgen_kernel_desc long_kernel;
  long_kernel = fake_table.kernels[FAKE_G128_64];
  long_kernel.name = long_name;
  static const mgen_table long_table = {&long_kernel, 1, 0x4321, "long names"};
  mgen_ctx *d = fixture_ctx(80);
  d->table = &long_table;
  fill(d, 0, MGEN__CACHE_RECORDS_MAX, 128);
  const char *q = path_of("big.cache");
  st = mgen_cache_save(d, q, 0);
  CHECK(st == MGEN_ERR_BUFFER_TOO_SMALL && strstr(mgen_ctx_last_error(d), "16 MiB") != NULL,
        "%s: %s", mgen_status_str(st), mgen_ctx_last_error(d));
  struct stat sb;
  CHECK(stat(q, &sb) != 0 && !temp_left(dir), "nothing written");

  /* A record the format cannot hold (n above 2^30): refused, not written for the loader to
   * reject the whole file. */
  mgen_ctx *e = fixture_ctx(80);
  const char *r = path_of("one.cache");
  tune_one(e, 4096, 1, FAKE_G128_64, 12.5);
  CHECK(mgen_cache_save(e, r, 0) == MGEN_OK, "save");
  const uint64_t one = file_id(r);
  fill(e, FAKE_G128_64, 1, (1 << 30) + 128);
  st = mgen_cache_save(e, r, 0);
  CHECK(st == MGEN_ERR_CACHE_FORMAT && strstr(mgen_ctx_last_error(e), "n and k") != NULL,
        "%s: %s", mgen_status_str(st), mgen_ctx_last_error(e));
  CHECK(file_id(r) == one && mgen_cache_load(c, r, NULL) == MGEN_OK && !temp_left(dir),
        "the file is unchanged");
  mgen_ctx_destroy(a);
  mgen_ctx_destroy(b);
  mgen_ctx_destroy(c);
  mgen_ctx_destroy(d);
  mgen_ctx_destroy(e);
}

/* A FIFO (or device) as the cache or its lock: refused at once, never a read that waits for a
 * writer. alarm() turns a regression into a failure instead of a hang. */
static void test_not_regular(void) {
  fixture_reset();
  mgen_ctx *a = fixture_ctx(80);
  tune_one(a, 4096, 1, FAKE_G128_64, 12.5);
  const char *fifo = path_of("fifo.cache"), *p = path_of("locked.cache");
  char lock[600];
  snprintf(lock, sizeof lock, "%s.lock", p);
  CHECK(mkfifo(fifo, 0644) == 0 && mkfifo(lock, 0644) == 0, "mkfifo: %s", strerror(errno));
  alarm(20);
  CHECK(mgen_cache_load(a, fifo, NULL) == MGEN_ERR_IO &&
            strstr(mgen_ctx_last_error(a), "not a regular file") != NULL, "load: %s",
        mgen_ctx_last_error(a));
  CHECK(mgen_cache_save(a, fifo, 0) == MGEN_ERR_IO &&
            strstr(mgen_ctx_last_error(a), "not a regular file") != NULL, "save: %s",
        mgen_ctx_last_error(a));
  struct stat sb;
  CHECK(lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode), "the FIFO stays");
  CHECK(mgen_cache_save(a, p, 0) == MGEN_ERR_IO &&
            strstr(mgen_ctx_last_error(a), "not a regular file") != NULL &&
            strstr(mgen_ctx_last_error(a), ".lock") != NULL, "lock: %s", mgen_ctx_last_error(a));
  CHECK(stat(p, &sb) != 0, "nothing written");
  CHECK(mgen_cache_load(a, "/dev/zero", NULL) == MGEN_ERR_IO &&
            strstr(mgen_ctx_last_error(a), "not a regular file") != NULL, "/dev/zero: %s",
        mgen_ctx_last_error(a));
  alarm(0);
  unlink(fifo);
  unlink(lock);
  mgen_ctx_destroy(a);
}

/* Saving through a symbolic link writes the file it points to (relative targets from the
 * link's directory, chains, dangling links); the link stays a link. */
static void test_symlinks(void) {
  fixture_reset();
  mgen_ctx *a = fixture_ctx(80), *b = fixture_ctx(80);
  tune_one(a, 4096, 1, FAKE_G128_64, 12.5);
  const char *real = path_of("real.cache"), *link = path_of("link.cache");
  const char *chain = path_of("chain.cache");
  CHECK(symlink("real.cache", link) == 0 && symlink(link, chain) == 0, "symlink");
  struct stat sb;
  CHECK(mgen_cache_save(a, link, 0) == MGEN_OK, "save: %s", mgen_ctx_last_error(a));
  CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode), "the link stays a link");
  CHECK(lstat(real, &sb) == 0 && S_ISREG(sb.st_mode), "the target was written");
  CHECK(lstat(path_of("real.cache.lock"), &sb) != 0 && lstat(path_of("link.cache.lock"), &sb) != 0,
        "no lock file left");
  tune_one(a, 8192, 1, FAKE_G128_64, 12.5);
  CHECK(mgen_cache_save(a, chain, 0) == MGEN_OK, "chain: %s", mgen_ctx_last_error(a));
  CHECK(lstat(chain, &sb) == 0 && S_ISLNK(sb.st_mode), "the chain stays");
  int applied = 0;
  CHECK(mgen_cache_load(b, real, &applied) == MGEN_OK && applied == 2, "through both: %d", applied);
  /* A dangling link to a file not created yet, relative to a link in another directory. */
  char links[600], data[600];
  snprintf(links, sizeof links, "%s/links", dir);
  snprintf(data, sizeof data, "%s/data", dir);
  mkdir(links, 0755);
  mkdir(data, 0755);
  const char *dangling = path_of("links/new.cache");
  CHECK(symlink("../data/new.cache", dangling) == 0, "symlink");
  CHECK(mgen_cache_save(a, dangling, 0) == MGEN_OK, "dangling: %s", mgen_ctx_last_error(a));
  CHECK(lstat(dangling, &sb) == 0 && S_ISLNK(sb.st_mode), "the dangling link stays");
  CHECK(lstat(path_of("data/new.cache"), &sb) == 0 && S_ISREG(sb.st_mode), "target created");
  CHECK(!temp_left(links) && !temp_left(data), "no temporary left");
  /* A loop. */
  const char *l1 = path_of("loop1.cache"), *l2 = path_of("loop2.cache");
  CHECK(symlink("loop2.cache", l1) == 0 && symlink("loop1.cache", l2) == 0, "symlink");
  CHECK(mgen_cache_save(a, l1, 0) == MGEN_ERR_IO &&
            strstr(mgen_ctx_last_error(a), "symbolic links") != NULL, "loop: %s",
        mgen_ctx_last_error(a));
  CHECK(lstat(l1, &sb) == 0 && S_ISLNK(sb.st_mode), "the loop stays");
  mgen_ctx_destroy(a);
  mgen_ctx_destroy(b);
}

static int exists(const char *path) {
  struct stat sb;
  return lstat(path, &sb) == 0;
}

/* What a save leaves beside its file: nothing. The target is checked before anything is
 * created (a directory, a non-cache file behind a link get no lock file), the lock file goes
 * when the save ends, a held lock is waited on for a bounded time and named, a temporary left
 * by a killed save is removed by the next, and modes follow the umask or the existing file. */
static void test_beside(void) {
  fixture_reset();
  mgen_ctx *a = fixture_ctx(80);
  tune_one(a, 4096, 1, FAKE_G128_64, 12.5);
  char lock[700];
  /* A directory, and a link to a file that is not a cache: refused, no lock file. */
  const char *d = path_of("adir2"), *notes = path_of("notes"), *link = path_of("to-notes");
  mkdir(d, 0755);
  spit(notes, "root:x:0:0\n");
  CHECK(symlink("notes", link) == 0, "symlink");
  CHECK(mgen_cache_save(a, d, 0) == MGEN_ERR_IO, "a directory");
  CHECK(mgen_cache_save(a, link, 0) == MGEN_ERR_CACHE_FORMAT, "not a cache");
  CHECK(!exists(path_of("adir2.lock")) && !exists(path_of("notes.lock")) &&
            !exists(path_of("to-notes.lock")), "a lock file was created beside a refused target");
  /* A save leaves no lock file. */
  char p[600]; /* path_of's buffers are reused below */
  snprintf(p, sizeof p, "%s", path_of("beside.cache"));
  snprintf(lock, sizeof lock, "%s.lock", p);
  CHECK(mgen_cache_save(a, p, 0) == MGEN_OK && !exists(lock), "lock file left after a save");

  /* A held lock: the save gives up after MGEN_CACHE_LOCK_TIMEOUT and names the holder. */
  int fd = open(lock, O_RDWR | O_CREAT, 0644);
  CHECK(fd >= 0 && flock(fd, LOCK_EX) == 0 && write(fd, "mgen-cache-lock pid 4242\n", 25) == 25,
        "hold the lock");
  const uint64_t before = file_id(p);
  setenv("MGEN_CACHE_LOCK_TIMEOUT", "0.3", 1);
  alarm(20); /* a save that waits forever fails the test instead of hanging it */
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  mgen_status st = mgen_cache_save(a, p, 0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  alarm(0);
  double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
  CHECK(st == MGEN_ERR_IO && waited >= 0.25 && waited < 5, "held lock: %s after %.2f s",
        mgen_status_str(st), waited);
  CHECK(strstr(mgen_ctx_last_error(a), "process 4242") != NULL &&
            strstr(mgen_ctx_last_error(a), "MGEN_CACHE_LOCK_TIMEOUT") != NULL, "%s",
        mgen_ctx_last_error(a));
  CHECK(file_id(p) == before && exists(lock), "the file and the holder's lock untouched");
  close(fd); /* released, the file left behind as by a killed save: the next save reuses it */
  CHECK(mgen_cache_save(a, p, 0) == MGEN_OK && !exists(lock), "stale lock: %s",
        mgen_ctx_last_error(a));
  /* A file of that name that is not ours is left alone. */
  spit(lock, "someone else's\n");
  CHECK(mgen_cache_save(a, p, 0) == MGEN_ERR_IO && strcmp(slurp(lock), "someone else's\n") == 0,
        "foreign lock file: %s", mgen_ctx_last_error(a));
  unlink(lock);
  unsetenv("MGEN_CACHE_LOCK_TIMEOUT");

  /* Temporaries of a killed save: the next save removes its own old ones, nothing else. */
  static const char *const names[] = {"beside.cache.tmp.Ab3xY9", "beside.cache.tmp.Fresh1",
                                      "beside.cache.tmp.short", "beside.cache.tmpQ.Ab3xY9",
                                      "other.cache.tmp.Ab3xY9"};
  struct timeval old[2] = {{time(NULL) - 7200, 0}, {time(NULL) - 7200, 0}};
  for (int i = 0; i < 5; i++) {
    spit(path_of(names[i]), "partial");
    if (i != 1) CHECK(utimes(path_of(names[i]), old) == 0, "utimes");
  }
  CHECK(mgen_cache_save(a, p, 0) == MGEN_OK, "save: %s", mgen_ctx_last_error(a));
  CHECK(!exists(path_of(names[0])), "the stale temporary stays");
  for (int i = 1; i < 5; i++) CHECK(exists(path_of(names[i])), "%s was removed", names[i]);
  for (int i = 1; i < 5; i++) unlink(path_of(names[i]));

  /* Modes: a new file follows the umask, an existing one keeps its own. */
  struct stat sb;
  const char *fresh = path_of("mode.cache");
  mode_t saved = umask(077);
  CHECK(mgen_cache_save(a, fresh, 0) == MGEN_OK && stat(fresh, &sb) == 0 &&
            (sb.st_mode & 0777) == 0600, "umask 077: %o", (unsigned)(sb.st_mode & 0777));
  umask(022);
  CHECK(chmod(fresh, 0640) == 0 && mgen_cache_save(a, fresh, 0) == MGEN_OK &&
            stat(fresh, &sb) == 0 && (sb.st_mode & 0777) == 0640, "kept 0640: %o",
        (unsigned)(sb.st_mode & 0777));
  unlink(fresh);
  CHECK(mgen_cache_save(a, fresh, 0) == MGEN_OK && stat(fresh, &sb) == 0 &&
            (sb.st_mode & 0777) == 0644, "umask 022: %o", (unsigned)(sb.st_mode & 0777));
  umask(saved);
  mgen_ctx_destroy(a);
}

/* Two writer processes save into one file 40 times each, adding a key every time, while a
 * reader loads it in a loop: the file is never torn and the end result holds all 80 keys. */
enum { SAVES = 40 };
static void writer(int id, const char *p) {
  long failures = check_failures; /* the parent's, inherited */
  fixture_reset();
  mgen_ctx *ctx = fixture_ctx(80);
  for (int i = 0; i < SAVES; i++) {
    tune_one(ctx, 128 * (1 + i), id == 0 ? 1 : 2, id == 0 ? FAKE_G128_64 : FAKE_G128_32, 10.0 + i);
    if (mgen_cache_save(ctx, p, 0) != MGEN_OK) _exit(10 + id);
  }
  mgen_ctx_destroy(ctx);
  _exit(check_failures != failures ? 20 : 0);
}

static void reader(const char *p, volatile int *stop_flag_unused) {
  (void)stop_flag_unused;
  mgen_ctx *ctx = fixture_ctx(80);
  int loads = 0;
  for (int i = 0; i < 4000 && loads < 400; i++) {
    mgen_status st = mgen_cache_load(ctx, p, NULL);
    if (st == MGEN_OK) loads++;
    else if (st != MGEN_ERR_IO) _exit(30); /* torn or malformed */
    usleep(100);
  }
  mgen_ctx_destroy(ctx);
  _exit(0);
}

static void test_concurrent_writers(void) {
  const char *p = path_of("shared.cache");
  pid_t pids[3];
  for (int i = 0; i < 3; i++) {
    pids[i] = fork();
    if (pids[i] == 0) {
      if (i < 2) writer(i, p);
      reader(p, NULL);
    }
  }
  for (int i = 0; i < 3; i++) {
    int status = 0;
    waitpid(pids[i], &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process %d: status %d", i,
          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  fixture_reset();
  mgen_ctx *ctx = fixture_ctx(80);
  int applied = 0;
  CHECK(mgen_cache_load(ctx, p, &applied) == MGEN_OK && applied == 2 * SAVES,
        "%d of %d records survived", applied, 2 * SAVES);
  CHECK(strcmp(choice(ctx, 128 * SAVES, 1), "fake_g128_64") == 0 &&
            strcmp(choice(ctx, 128, 2), "fake_g128_32") == 0, "both writers' last and first");
  mgen_ctx_destroy(ctx);
}

/* The in-memory map keys on the op: keys that differ only by op are two entries, and a packed
 * key unpacks to its op (what a save writes back). */
static void test_op_key(void) {
  mgen__choice_key dense = {{MGEN_ACT_BF16, MGEN_WFMT_FE2M1, MGEN_SCHEME_MXFP4, 32, MGEN_LAYOUT_MMA,
                             MGEN_OP_DENSE}, 8192, 4096, 3, 1};
  mgen__choice_key other = dense, back;
  other.key.op = 5; /* the most an op may be is 7 (cache.c's 3 bits) */
  uint64_t d0, d1, o0, o1;
  mgen__choice_key_pack(&dense, &d0, &d1);
  mgen__choice_key_pack(&other, &o0, &o1);
  CHECK(d0 != o0 || d1 != o1, "the op is in the packed key");
  mgen__choice_key_unpack(o0, o1, &back);
  CHECK(memcmp(&back.key, &other.key, sizeof back.key) == 0 && back.n == 8192 && back.k == 4096 &&
            back.bucket == 3, "unpacked: op %d act %d wfmt %d scheme %d group %d layout %d",
        back.key.op, back.key.act, back.key.wfmt, back.key.scheme, back.key.group, back.key.layout);
  /* the moe op's slabs (the active experts side by side) are in it too; 1 packs as no field */
  mgen__choice_key moe = other, zero = dense;
  moe.slabs = 4096; /* MGEN__MOE_MAX_EXPERTS */
  zero.slabs = 0;
  uint64_t m0, m1, z0, z1;
  mgen__choice_key_pack(&moe, &m0, &m1);
  mgen__choice_key_pack(&zero, &z0, &z1);
  mgen__choice_key_unpack(m0, m1, &back);
  CHECK((m0 != o0 || m1 != o1) && back.slabs == 4096 && back.key.group == 32 &&
            back.key.op == 5 && back.n == 8192, "slabs packed: %d, group %d", back.slabs,
        back.key.group);
  CHECK(z0 == d0 && z1 == d1 && (d1 & 0xffff0000u) == 0, "slabs 0 or 1: the key of before");
  mgen__choice_key_unpack(d0, d1, &back);
  CHECK(back.slabs == 1, "a dense key unpacks with slabs 1 (got %d)", back.slabs);
  mgen__cache c;
  CHECK(mgen__cache_init(&c, 16) == MGEN_OK, "init");
  CHECK(mgen__cache_put_measured(&c, &dense, 1, 1000, 1, 1000, MGEN__PUT_MERGE) == 1 &&
            mgen__cache_put_measured(&c, &other, 2, 2000, 2, 2000, MGEN__PUT_MERGE) == 1 &&
            c.measured == 2, "two ops, two entries");
  mgen__entry *e = mgen__cache_find(&c, &other);
  CHECK(e != NULL && e->kernel == 2, "the other op's entry");
  mgen__cache_free(&c);
}

int main(void) {
  snprintf(dir, sizeof dir, "/tmp/mgen-test-cache-XXXXXX");
  if (mkdtemp(dir) == NULL) return perror("mkdtemp"), 1;
  test_op_key();
  test_round_trip();
  test_layout_key();
  test_merge();
  test_headers();
  test_records();
  test_salvage();
  test_retune();
  test_repeated_key();
  test_unwritable();
  test_limits();
  test_not_regular();
  test_symlinks();
  test_beside();
  test_concurrent_writers();
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (check_failures == 0 && system(cmd) != 0) printf("could not remove %s\n", dir);
  return check_exit("test_cache_io");
}
