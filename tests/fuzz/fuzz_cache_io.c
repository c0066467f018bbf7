/* fuzz_cache_io.c -- libFuzzer target for the cache's load/merge/save path
 * (runtime/src/context/cache_io.c), on contexts built by hand over the fake table
 * (tests/runtime/tune_fixture.c), no GPU.
 *
 * Each input is written to a file F (saved to through a symbolic link when bit 1 of its first
 * byte is set), then:
 *   1. a fresh context A loads F;
 *   2. A, plus a record of its own, saves into V, a valid file of this device and table;
 *   3. a context B with records of its own saves into F (with MGEN_CACHE_REPLACE when bit 0
 *      is set): merging, replacing or refusing what the input holds.
 * Properties, beyond "no crash, no sanitizer report":
 * - a load's status is OK or ERR_CACHE_FORMAT, and a failed load applies nothing;
 * - what a load accepted can always be saved (step 2 returns OK);
 * - after a save that returned OK the file loads back with OK and holds the key count the
 *   merge rule gives (the union of the file's and the context's keys, or the context's alone
 *   when the file was replaced); where the loader refused F, a merging save drops only the
 *   lines it cannot parse, so it holds at least the context's keys; a refused save leaves the
 *   file's bytes as they were, and refuses only what the loader also refuses or does not use;
 * - no temporary file is left and the link stays a link.
 * Build and run: tests/fuzz/run.sh BUILD_DIR fuzz_cache_io RUNS. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tune_fixture.h"

#include "fuzz_require.h"

/* The GPU timer and capture query: no_gpu_timer.c. */

static char dir[256], f_path[320], link_path[320], v_path[320], v0_path[320];
static char *v0_text;
static size_t v0_size;

static void spit(const char *path, const void *data, size_t size) {
  FILE *f = fopen(path, "wb");
  REQUIRE(f != NULL && fwrite(data, 1, size, f) == size && fclose(f) == 0);
}

/* The file's bytes equal data[0..size). */
static int same_bytes(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return 0;
  int same = 1;
  for (size_t i = 0; i <= size && same; i++) {
    int ch = getc(f);
    same = i < size ? ch == data[i] : ch == EOF;
  }
  fclose(f);
  return same;
}

static int temp_left(void) {
  DIR *d = opendir(dir);
  REQUIRE(d != NULL);
  int found = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) found |= strstr(e->d_name, ".tmp.") != NULL;
  closedir(d);
  return found;
}

/* Records a context holds besides any file's: `which` picks one of two sets that share a key,
 * so merges meet both new and shared keys. */
static void own_records(mgen_ctx *ctx, int which) {
  static const struct {
    int n, bucket, kernel;
    uint64_t ns;
  } recs[2][2] = {{{4096, 0, FAKE_G128_64, 9000}, {8192, 3, FAKE_G128_32, 20000}},
                  {{4096, 0, FAKE_G128_16_R1, 8000}, {12288, 24, FAKE_G128_128, 70000}}};
  for (int i = 0; i < 2; i++) {
    mgen__choice_key ck = {{MGEN_ACT_F16, MGEN_WFMT_U4B8, MGEN_SCHEME_GROUP, 128, MGEN_LAYOUT_MMA},
                           recs[which][i].n, 4096, recs[which][i].bucket};
    REQUIRE(mgen__cache_put_measured(&ctx->cache, &ck, recs[which][i].kernel, recs[which][i].ns,
                                     -1, 0, 0) >= 0);
  }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  /* tmpfs where there is one: every save fsyncs. */
  snprintf(dir, sizeof dir, "%s/mgen-fuzz-io-XXXXXX",
           access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
  REQUIRE(mkdtemp(dir) != NULL);
  snprintf(f_path, sizeof f_path, "%s/in.cache", dir);
  snprintf(link_path, sizeof link_path, "%s/link.cache", dir);
  snprintf(v_path, sizeof v_path, "%s/valid.cache", dir);
  snprintf(v0_path, sizeof v0_path, "%s/valid0.cache", dir);
  REQUIRE(symlink("in.cache", link_path) == 0);
  /* V's contents before each step 2: what a context of this device saves. */
  fixture_reset();
  mgen_ctx *ctx = fixture_ctx(80);
  own_records(ctx, 1);
  REQUIRE(mgen_cache_save(ctx, v0_path, 0) == MGEN_OK);
  mgen_ctx_destroy(ctx);
  FILE *f = fopen(v0_path, "rb");
  REQUIRE(f != NULL);
  v0_text = malloc(1 << 16);
  v0_size = fread(v0_text, 1, 1 << 16, f);
  fclose(f);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const int flags = size > 0 && (data[0] & 1) ? MGEN_CACHE_REPLACE : 0;
  const char *target = size > 0 && (data[0] & 2) ? link_path : f_path;
  spit(f_path, data, size);

  /* 1. Load. */
  mgen_ctx *a = fixture_ctx(80);
  int applied = -1;
  mgen_status loaded = mgen_cache_load(a, f_path, &applied);
  /* CACHE_MISMATCH: a file of an earlier format, which the caller must re-tune */
  REQUIRE(loaded == MGEN_OK || loaded == MGEN_ERR_CACHE_FORMAT || loaded == MGEN_ERR_CACHE_MISMATCH);
  if (loaded == MGEN_OK) REQUIRE(applied >= 0 && mgen_cache_count(a) <= (size_t)applied);
  else REQUIRE(applied == -1 && mgen_cache_count(a) == 0);

  /* The key count a merge into F must give: F's usable records plus B's. */
  mgen_ctx *expect = fixture_ctx(80);
  if (!(flags & MGEN_CACHE_REPLACE)) (void)mgen_cache_load(expect, f_path, NULL);
  own_records(expect, 1);

  /* 2. What was loaded saves: merged into V, V loads back with the union of the keys. */
  own_records(a, 0);
  spit(v_path, v0_text, v0_size);
  mgen_status st = mgen_cache_save(a, v_path, 0);
  if (st != MGEN_OK) fprintf(stderr, "fuzz_cache_io: save into V: %s\n", mgen_ctx_last_error(a));
  REQUIRE(st == MGEN_OK);
  mgen_ctx *c = fixture_ctx(80);
  REQUIRE(mgen_cache_load(c, v_path, NULL) == MGEN_OK);
  REQUIRE(mgen_cache_load(a, v0_path, NULL) == MGEN_OK); /* a: the union, by the merge rule */
  REQUIRE(mgen_cache_count(c) == mgen_cache_count(a));
  mgen_cache_clear(c);

  /* 3. B saves into F. */
  mgen_ctx *b = fixture_ctx(80);
  own_records(b, 1);
  st = mgen_cache_save(b, target, (unsigned)flags);
  if (st == MGEN_OK) {
    int back = -1;
    mgen_status again = mgen_cache_load(c, f_path, &back);
    if (again != MGEN_OK) fprintf(stderr, "fuzz_cache_io: reload: %s\n", mgen_ctx_last_error(c));
    REQUIRE(again == MGEN_OK && back == (int)mgen_cache_count(c));
    if (loaded == MGEN_OK || loaded == MGEN_ERR_CACHE_MISMATCH || (flags & MGEN_CACHE_REPLACE))
      REQUIRE(mgen_cache_count(c) == mgen_cache_count(expect));
    else /* salvaged: F's readable records besides B's */
      REQUIRE(mgen_cache_count(c) >= mgen_cache_count(expect));
  } else {
    /* Refused: a file that is not an mgen cache or whose header is broken (the loader refuses
     * it too), or one whose header names another device or format (the loader does not use
     * it, or refuses it for a bad record past that header). */
    REQUIRE(st == MGEN_ERR_CACHE_FORMAT || st == MGEN_ERR_CACHE_MISMATCH);
    REQUIRE(st == MGEN_ERR_CACHE_MISMATCH || loaded == MGEN_ERR_CACHE_FORMAT);
    REQUIRE(same_bytes(f_path, data, size));
  }
  struct stat sb;
  REQUIRE(lstat(link_path, &sb) == 0 && S_ISLNK(sb.st_mode));
  REQUIRE(!temp_left());
  mgen_ctx_destroy(a);
  mgen_ctx_destroy(b);
  mgen_ctx_destroy(c);
  mgen_ctx_destroy(expect);
  return 0;
}
