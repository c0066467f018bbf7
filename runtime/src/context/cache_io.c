/* cache_io.c -- mgen_cache_load / _save / _clear / _count: cache files <-> the context's cache.
 * What a header must match, what a record must satisfy, how saves stay atomic under
 * concurrent writers, and that a save never writes a file the loader would refuse (mgen.h,
 * "Cache files", is the contract; README "Autotune cache").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/cache_file.h"
#include "context/cache_fs.h"
#include "context/internal.h"
#include "dispatch/bucket.h"
#include "families/family.h"

/* ---------------------------------------------------------------- header */

static void our_header(const mgen_ctx *ctx, mgen__cache_header *h, long records) {
  memset(h, 0, sizeof *h);
  h->format = MGEN__CACHE_FORMAT;
  snprintf(h->library, sizeof h->library, "%d.%d.%d", MGEN_VERSION_MAJOR, MGEN_VERSION_MINOR,
           MGEN_VERSION_PATCH);
  h->table_hash = ctx->table->hash;
  snprintf(h->device, sizeof h->device, "%s", ctx->device_name);
  h->sms = ctx->sm_count;
  h->sm = ctx->sm;
  h->cuda_runtime = ctx->cuda_runtime;
  h->cuda_driver = ctx->cuda_driver;
  h->records = records;
}

/* OLD_FORMAT: a format before the oldest this library reads (re-tune); OTHER_FORMAT: a later
 * one, which a newer library wrote. */
enum verdict { SAME, SOFT, FOREIGN_DEVICE, OLD_FORMAT, OTHER_FORMAT, OTHER_TABLE, OTHER_LIBRARY };

/* How a file's header relates to this context, with the reason in `why`. */
static enum verdict judge(const mgen_ctx *ctx, const mgen__cache_header *f, char *why, size_t n) {
  mgen__cache_header me;
  our_header(ctx, &me, 0);
  if (!mgen__cache_format_read(f->format)) {
    mgen__cache_format_why(f->format, why, n);
    return f->format < me.format ? OLD_FORMAT : OTHER_FORMAT;
  }
  if (strcmp(f->device, me.device) != 0 || f->sms != me.sms || f->sm != me.sm) {
    snprintf(why, n, "it was tuned on '%.120s' (%d SMs, sm_%d), this is '%.120s' (%d SMs, sm_%d)",
             f->device, f->sms, f->sm, me.device, me.sms, me.sm);
    return FOREIGN_DEVICE;
  }
  if (f->table_hash != me.table_hash) {
    snprintf(why, n, "it was tuned with kernel table 0x%016llx, this library has 0x%016llx "
             "(the kernels changed: re-tune)", (unsigned long long)f->table_hash,
             (unsigned long long)me.table_hash);
    return OTHER_TABLE;
  }
  if (strcmp(f->library, me.library) != 0) {
    snprintf(why, n, "it was written by libmgen %s, this is %s (kernel code may differ: re-tune)",
             f->library, me.library);
    return OTHER_LIBRARY;
  }
  if (f->cuda_runtime != me.cuda_runtime || f->cuda_driver != me.cuda_driver) {
    snprintf(why, n, "tuned under CUDA runtime %d / driver %d, running %d / %d: records used, "
             "re-tune when convenient", f->cuda_runtime, f->cuda_driver, me.cuda_runtime,
             me.cuda_driver);
    return SOFT;
  }
  why[0] = '\0';
  return SAME;
}

/* ---------------------------------------------------------------- records */

/* A record checked against the table, ready to merge. */
typedef struct item {
  mgen__choice_key ck;
  int kernel, default_kernel;
  uint64_t ns, default_ns;
  uint64_t k0, k1; /* ck packed, for sorting */
  int line;
} item;

enum { SKIP_UNKNOWN, SKIP_MISMATCH, SKIP_BUCKET, SKIP_FAST, SKIP_KINDS };
_Static_assert(MGEN__CACHE_NS_MIN == 500, "cache_io.c: kSkipWhat names the floor");
static const char *const kSkipWhat[SKIP_KINDS] = {
    "naming kernels not in the table", "whose kernel cannot run the key on this device",
    "with an M range that is not one of this library's buckets",
    "with a time below 500 ns, which no GEMM achieves"};

typedef struct collector {
  mgen_ctx *ctx;
  item *items;
  size_t count, cap;
  int skipped[SKIP_KINDS], first_line[SKIP_KINDS];
  char first_name[SKIP_KINDS][MGEN__CACHE_NAME_MAX];
  int bad_lines;                  /* lines a salvaging parse dropped */
  char first_bad[MGEN_ERROR_SIZE]; /* its first "path:line: what" */
} collector;

static void skip(collector *c, int kind, const mgen__cache_record *r) {
  if (c->skipped[kind]++ == 0) {
    c->first_line[kind] = r->line;
    snprintf(c->first_name[kind], sizeof c->first_name[kind], "%s", r->kernel);
  }
}

static int collect(void *self, const mgen__cache_record *r) {
  collector *c = self;
  const mgen_table *t = c->ctx->table;
  int bucket = mgen__bucket_find(r->m_lo, r->m_hi);
  int kernel = mgen_table_find(t, r->kernel);
  if (kernel < 0) return skip(c, SKIP_UNKNOWN, r), 0;
  if (bucket < 0) return skip(c, SKIP_BUCKET, r), 0;
  if (r->ns < MGEN__CACHE_NS_MIN) return skip(c, SKIP_FAST, r), 0;
  const mgen_kernel_desc *d = &t->kernels[kernel];
  if (!mgen__key_matches(d, &r->key) || !mgen__kernel_runs(d, c->ctx->sm) ||
      !mgen__can_implement(d, 1, r->n, r->k, NULL, 0))
    return skip(c, SKIP_MISMATCH, r), 0;
  if (c->count == c->cap) {
    size_t cap = c->cap ? 2 * c->cap : 64;
    item *bigger = realloc(c->items, cap * sizeof *bigger);
    if (bigger == NULL) return -1;
    c->items = bigger;
    c->cap = cap;
  }
  item *it = &c->items[c->count++];
  memset(it, 0, sizeof *it);
  it->ck.key = r->key;
  it->ck.n = r->n;
  it->ck.k = r->k;
  it->ck.bucket = bucket;
  it->kernel = kernel;
  it->ns = r->ns;
  it->default_kernel = mgen_table_find(t, r->default_kernel);
  it->default_ns = r->default_ns;
  it->line = r->line;
  mgen__choice_key_pack(&it->ck, &it->k0, &it->k1);
  return 0;
}

static void note_bad(void *self, const char *why) {
  collector *c = self;
  if (c->bad_lines++ == 0) snprintf(c->first_bad, sizeof c->first_bad, "%s", why);
}

static int item_cmp(const void *a, const void *b) {
  const item *x = a, *y = b;
  if (x->k1 != y->k1) return x->k1 < y->k1 ? -1 : 1;
  if (x->k0 != y->k0) return x->k0 < y->k0 ? -1 : 1;
  return (x->line > y->line) - (x->line < y->line);
}

/* One record per key: a key given on several lines (a file edited or concatenated by hand;
 * saves never write one twice) keeps its last line's record, as a later assignment overrides
 * an earlier one, and the log callback names the first such pair of lines. */
static void drop_repeats(collector *c, const char *path) {
  if (c->count < 2) return;
  qsort(c->items, c->count, sizeof *c->items, item_cmp);
  size_t kept = 0;
  int repeats = 0, first = 0, second = 0;
  for (size_t i = 0; i < c->count; i++) {
    if (kept > 0 && c->items[kept - 1].k0 == c->items[i].k0 &&
        c->items[kept - 1].k1 == c->items[i].k1) {
      if (repeats++ == 0) first = c->items[kept - 1].line, second = c->items[i].line;
      c->items[kept - 1] = c->items[i];
    } else {
      c->items[kept++] = c->items[i];
    }
  }
  c->count = kept;
  if (repeats > 0)
    mgen__log(c->ctx, MGEN_LOG_WARN, "mgen: cache %s: %d record(s) repeat the key of an earlier "
              "line; the later line is used (first: lines %d and %d)", path, repeats, first,
              second);
}

static void log_skips(const collector *c, const char *path) {
  for (int kind = 0; kind < SKIP_KINDS; kind++)
    if (c->skipped[kind] > 0)
      mgen__log(c->ctx, MGEN_LOG_WARN, "mgen: cache %s: skipped %d record(s) %s (first: line %d, "
                "%s)", path, c->skipped[kind], kSkipWhat[kind], c->first_line[kind],
                c->first_name[kind]);
}

/* ---------------------------------------------------------------- files */

/* NULL means MGEN_CACHE; "" is an error of its own (a path left empty by mistake should not
 * quietly become the environment's file). */
static const char *resolve(mgen_ctx *ctx, const char *path) {
  if (path != NULL && path[0] == '\0') {
    mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "the cache path is empty (pass NULL to use MGEN_CACHE)");
    return NULL;
  }
  if (path != NULL) return path;
  path = getenv("MGEN_CACHE");
  if (path == NULL || path[0] == '\0') {
    mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "no cache path given and MGEN_CACHE is %s",
               path == NULL ? "not set" : "empty");
    return NULL;
  }
  return path;
}

/* Parses `path` into a collector. Returns the parse status; *hdr tells which header it had
 * (format 0: not an mgen cache at all). A missing file is ERR_IO with *missing set. */
static mgen_status parse_path(mgen_ctx *ctx, const char *path, mgen__cache_header *hdr,
                              collector *c, int *missing, int salvage) {
  char *text = NULL, why[MGEN_ERROR_SIZE];
  size_t size = 0;
  memset(hdr, 0, sizeof *hdr);
  mgen_status st = mgen__cache_read_file(path, &text, &size, why, sizeof why, missing);
  if (st != MGEN_OK) return mgen__fail(ctx, st, "%s", why);
  st = salvage ? mgen__cache_parse_salvage(text, size, path, hdr, collect, note_bad, c, why,
                                           sizeof why)
               : mgen__cache_parse(text, size, path, hdr, collect, c, why, sizeof why);
  free(text);
  if (st != MGEN_OK) return mgen__fail(ctx, st, "%s", why[0] ? why : mgen_status_str(st));
  return MGEN_OK;
}

mgen_status mgen_cache_load(mgen_ctx *ctx, const char *path, int *applied) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  if ((path = resolve(ctx, path)) == NULL) return MGEN_ERR_INVALID_ARG;
  collector c = {.ctx = ctx};
  mgen__cache_header hdr;
  char why[MGEN_ERROR_SIZE];
  int missing, taken = 0;
  mgen_status st = parse_path(ctx, path, &hdr, &c, &missing, 0);
  if (st != MGEN_OK) goto out;
  enum verdict v = judge(ctx, &hdr, why, sizeof why);
  if (v == OLD_FORMAT) { /* the caller must act: its tuning is gone until it re-tunes */
    st = mgen__fail(ctx, MGEN_ERR_CACHE_MISMATCH, "cache %s not used: %s", path, why);
    mgen__log(ctx, MGEN_LOG_WARN, "mgen: %s", mgen_ctx_last_error(ctx));
    goto out;
  }
  if (v != SAME && v != SOFT) {
    mgen__log(ctx, MGEN_LOG_WARN, "mgen: cache %s not used: %s", path, why);
    goto out;
  }
  if (v == SOFT) mgen__log(ctx, MGEN_LOG_WARN, "mgen: cache %s: %s", path, why);
  log_skips(&c, path);
  drop_repeats(&c, path);
  pthread_mutex_lock(&ctx->lock);
  for (size_t i = 0; i < c.count && st == MGEN_OK; i++, taken++)
    if (mgen__cache_put_measured(&ctx->cache, &c.items[i].ck, c.items[i].kernel, c.items[i].ns,
                                 c.items[i].default_kernel, c.items[i].default_ns,
                                 MGEN__PUT_MERGE) < 0)
      st = mgen__fail(ctx, MGEN_ERR_NO_MEMORY, "loading %s: out of memory", path);
  pthread_mutex_unlock(&ctx->lock);
  if (st == MGEN_OK)
    mgen__log(ctx, MGEN_LOG_INFO, "mgen: cache %s: %d record(s) applied", path, taken);
out:
  free(c.items);
  if (st == MGEN_OK && applied != NULL) *applied = taken;
  return st;
}

/* ---------------------------------------------------------------- save */

/* The context's records, gathered into the scratch map that already holds the file's: a key
 * this context tuned replaces the file's record (a re-tune must be able to replace a record,
 * whatever its time); one it only loaded fills a key the file lacks, and otherwise the file's
 * record stays (it is as fresh as what was loaded, or fresher: another process may have
 * re-tuned it since). Times below the floor are not written: every load would skip them. */
typedef struct gatherer {
  mgen__cache *out;
  int failed, too_fast;
} gatherer;

static void gather(void *self, const mgen__entry *e) {
  gatherer *g = self;
  mgen__choice_key ck;
  if (e->ns < MGEN__CACHE_NS_MIN) {
    g->too_fast++;
    return;
  }
  mgen__choice_key_unpack(e->k0, e->k1, &ck);
  int how = e->flags & MGEN__ENTRY_TUNED ? MGEN__PUT_TUNED : MGEN__PUT_FILL;
  if (mgen__cache_put_measured(g->out, &ck, e->kernel, e->ns, e->default_kernel, e->default_ns,
                               how) < 0)
    g->failed = 1;
}

typedef struct writer {
  mgen_ctx *ctx;
  mgen__cache_record *records;
  size_t count;
} writer;

static void to_record(void *self, const mgen__entry *e) {
  writer *w = self;
  const mgen_table *t = w->ctx->table;
  mgen__choice_key ck;
  mgen__choice_key_unpack(e->k0, e->k1, &ck);
  mgen__cache_record *r = &w->records[w->count++];
  memset(r, 0, sizeof *r);
  r->key = ck.key;
  r->n = ck.n;
  r->k = ck.k;
  mgen__bucket_range(ck.bucket, &r->m_lo, &r->m_hi);
  snprintf(r->kernel, sizeof r->kernel, "%s", t->kernels[e->kernel].name);
  int def = e->default_kernel;
  if (def < 0) /* not known (e.g. merged from a record naming none): the model's choice now */
    (void)mgen__select(t, &w->ctx->model, &ck.key, mgen__bucket_rep(ck.bucket, ck.n, ck.k), ck.n,
                       ck.k, &def, NULL, 0);
  snprintf(r->default_kernel, sizeof r->default_kernel, "%s",
           def >= 0 ? t->kernels[def].name : r->kernel);
  r->ns = e->ns;
  r->default_ns = e->default_ns;
}

/* File order: by key text, then n, k, M. Deterministic, so saved files diff well. */
static int record_cmp(const void *a, const void *b) {
  const mgen__cache_record *x = a, *y = b;
  char kx[48], ky[48];
  mgen__cache_key_text(&x->key, kx, sizeof kx);
  mgen__cache_key_text(&y->key, ky, sizeof ky);
  int c = strcmp(kx, ky);
  if (c != 0) return c;
  if (x->n != y->n) return x->n < y->n ? -1 : 1;
  if (x->k != y->k) return x->k < y->k ? -1 : 1;
  return x->m_lo < y->m_lo ? -1 : x->m_lo > y->m_lo;
}

/* Reads the temporary file back with the loader's own reader and parser: a save never renames
 * into place a file that mgen_cache_load would refuse (a value past the format's limits, say
 * n > 2^30 from a context built by hand). */
static mgen_status check_written(mgen_ctx *ctx, const char *tmp, const char *path, long records) {
  char *text = NULL, why[MGEN_ERROR_SIZE];
  size_t size = 0;
  mgen__cache_header hdr;
  mgen_status st = mgen__cache_read_file(tmp, &text, &size, why, sizeof why, NULL);
  if (st == MGEN_OK) st = mgen__cache_parse(text, size, tmp, &hdr, NULL, NULL, why, sizeof why);
  free(text);
  if (st == MGEN_OK && hdr.records != records) {
    snprintf(why, sizeof why, "%ld records read back, %ld written", hdr.records, records);
    st = MGEN_ERR_CACHE_FORMAT;
  }
  if (st != MGEN_OK)
    return mgen__fail(ctx, st, "saving %s: not written, the file would not load back: %s", path,
                      why);
  return MGEN_OK;
}

/* Writes the records to a temporary file next to `path`, checks it, and renames it over
 * `path`; the file at `path` is unchanged on failure. */
static mgen_status write_atomically(mgen_ctx *ctx, const char *path, mgen__cache *records,
                                    int mode) {
  mgen_status st = MGEN_OK;
  char tmp[PATH_MAX];
  writer w = {ctx, NULL, 0};
  FILE *f = NULL;
  int fd = -1;
  if (strlen(path) + sizeof ".tmp.XXXXXX" > sizeof tmp)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "cache path too long: %s", path);
  w.records = calloc(records->measured ? records->measured : 1, sizeof *w.records);
  if (w.records == NULL) return mgen__fail(ctx, MGEN_ERR_NO_MEMORY, "saving %s: out of memory", path);
  mgen__cache_each_measured(records, to_record, &w);
  qsort(w.records, w.count, sizeof *w.records, record_cmp);

  if ((fd = mgen__cache_temp_open(path, mode, tmp)) < 0) {
    st = mgen__fail(ctx, MGEN_ERR_IO, "cannot create a temporary file next to %s: %s", path,
                    strerror(errno));
    tmp[0] = '\0'; /* nothing of ours to remove */
    goto out;
  }
  if ((f = fdopen(fd, "w")) == NULL) {
    st = mgen__fail(ctx, MGEN_ERR_IO, "fdopen %s: %s", tmp, strerror(errno));
    goto out;
  }
  fd = -1; /* f owns it */
  mgen__cache_header hdr;
  our_header(ctx, &hdr, (long)w.count);
  int bad = mgen__cache_write_header(f, &hdr);
  for (size_t i = 0; i < w.count && !bad; i++) {
    bad = mgen__cache_write_record(f, &w.records[i]);
    if (!bad && (uint64_t)ftello(f) > MGEN__CACHE_BYTES_MAX - 4) { /* 4: "end\n" */
      st = mgen__fail(ctx, MGEN_ERR_BUFFER_TOO_SMALL, "saving %s: %zu records take more than "
                      "the %zu MiB a cache file may have: the file is unchanged", path, w.count,
                      MGEN__CACHE_BYTES_MAX >> 20);
      goto out;
    }
  }
  if (!bad) bad = mgen__cache_write_end(f);
  if (!bad) bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
  int saved_errno = errno;
  if (fclose(f) != 0 && !bad) bad = 1, saved_errno = errno;
  f = NULL;
  if (bad) {
    st = mgen__fail(ctx, MGEN_ERR_IO, "writing %s: %s", tmp, strerror(saved_errno));
    goto out;
  }
  if ((st = check_written(ctx, tmp, path, (long)w.count)) != MGEN_OK) goto out;
  if (rename(tmp, path) != 0) {
    st = mgen__fail(ctx, MGEN_ERR_IO, "renaming %s to %s: %s", tmp, path, strerror(errno));
    goto out;
  }
  tmp[0] = '\0';
  /* Make the rename itself durable: fsync the directory (best effort). */
  char dir[PATH_MAX];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash == NULL) snprintf(dir, sizeof dir, ".");
  else if (slash == dir) dir[1] = '\0';
  else *slash = '\0';
  int dfd = open(dir, O_RDONLY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)fsync(dfd);
    close(dfd);
  }
  mgen__log(ctx, MGEN_LOG_INFO, "mgen: cache %s: %zu record(s) written", path, w.count);
out:
  if (f != NULL) fclose(f);
  if (fd >= 0) close(fd);
  if (tmp[0] != '\0' && st != MGEN_OK) unlink(tmp);
  free(w.records);
  return st;
}

mgen_status mgen_cache_save(mgen_ctx *ctx, const char *path, unsigned flags) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  if ((path = resolve(ctx, path)) == NULL) return MGEN_ERR_INVALID_ARG;
  if (flags & ~MGEN_CACHE_REPLACE)
    return mgen__fail(ctx, MGEN_ERR_INVALID_ARG, "unknown mgen_cache_save flags 0x%x", flags);
  char real[PATH_MAX], why[MGEN_ERROR_SIZE];
  mgen__cache_lock_file lock = {.fd = -1};
  int mode = -1;
  /* What the path names is checked before anything is created beside it. */
  mgen_status st = mgen__cache_follow_links(ctx, path, real);
  if (st == MGEN_OK) st = mgen__cache_check_target(ctx, real);
  if (st == MGEN_OK) st = mgen__cache_lock(ctx, real, &lock);
  if (st != MGEN_OK) return st;
  path = real;
  mgen__cache_clean_temps(ctx, path);

  mgen__cache merged;
  memset(&merged, 0, sizeof merged);
  collector c = {.ctx = ctx};
  mgen__cache_header hdr;
  int missing = 0;
  if ((st = mgen__cache_init(&merged, 64)) != MGEN_OK) {
    st = mgen__fail(ctx, st, "saving %s: out of memory", path);
    goto out;
  }
  /* What the file holds now (a missing or empty file holds nothing). */
  struct stat sb;
  const int exists = stat(path, &sb) == 0;
  if (!exists && errno != ENOENT) {
    st = mgen__fail(ctx, MGEN_ERR_IO, "cannot stat cache %s: %s", path, strerror(errno));
    goto out;
  }
  if (exists && !S_ISREG(sb.st_mode)) { /* changed since the check, by another program */
    st = mgen__fail(ctx, MGEN_ERR_IO, "cache %s is not a regular file", path);
    goto out;
  }
  mode = exists ? (int)(sb.st_mode & 0777) : -1; /* an existing file keeps its mode */
  if (!exists || sb.st_size == 0) goto merge;
  /* Past its header the file is read salvaging: a line that does not parse is dropped (with
   * a warning), never the records around it. */
  st = parse_path(ctx, path, &hdr, &c, &missing, 1);
  if (st == MGEN_ERR_IO && missing) { /* removed meanwhile by a non-cooperating process */
    st = MGEN_OK;
  } else if (st == MGEN_ERR_CACHE_FORMAT && hdr.format == 0) {
    snprintf(why, sizeof why, "%s", mgen_ctx_last_error(ctx)); /* the buffer mgen__fail writes */
    st = mgen__fail(ctx, MGEN_ERR_CACHE_FORMAT, "refusing to replace %s: it is not an mgen "
                    "cache (%s)", path, why);
    goto out;
  } else if (st == MGEN_ERR_CACHE_FORMAT && !(flags & MGEN_CACHE_REPLACE)) {
    /* A broken header: whose records the file holds is unknown, so they can be neither kept
     * nor dropped. The caller decides. */
    snprintf(why, sizeof why, "%s", mgen_ctx_last_error(ctx));
    st = mgen__fail(ctx, MGEN_ERR_CACHE_FORMAT, "refusing to replace %s: its header is malformed "
                    "(%s); fix or remove the file, or save with MGEN_CACHE_REPLACE", path, why);
    goto out;
  } else if (st == MGEN_ERR_CACHE_FORMAT) {
    mgen__log(ctx, MGEN_LOG_WARN, "mgen: cache %s is replaced (MGEN_CACHE_REPLACE): its header "
              "is malformed: %s", path, mgen_ctx_last_error(ctx));
    st = MGEN_OK;
    c.count = 0;
  } else if (st != MGEN_OK) {
    goto out;
  } else {
    enum verdict v = judge(ctx, &hdr, why, sizeof why);
    if (v == FOREIGN_DEVICE || v == OTHER_FORMAT) {
      st = mgen__fail(ctx, MGEN_ERR_CACHE_MISMATCH, "refusing to replace %s: %s", path, why);
      goto out;
    }
    if (v == OTHER_TABLE || v == OTHER_LIBRARY || v == OLD_FORMAT) {
      mgen__log(ctx, MGEN_LOG_WARN, "mgen: cache %s is replaced: %s", path, why);
      c.count = 0;
    } else if (!(flags & MGEN_CACHE_REPLACE)) {
      if (c.bad_lines > 0)
        mgen__log(ctx, MGEN_LOG_WARN, "mgen: cache %s: %d line(s) that do not parse are dropped, "
                  "the other records kept (first: %s)", path, c.bad_lines, c.first_bad);
      drop_repeats(&c, path);
    }
  }
merge:
  if (flags & MGEN_CACHE_REPLACE) c.count = 0;

  for (size_t i = 0; i < c.count; i++)
    if (mgen__cache_put_measured(&merged, &c.items[i].ck, c.items[i].kernel, c.items[i].ns,
                                 c.items[i].default_kernel, c.items[i].default_ns,
                                 MGEN__PUT_MERGE) < 0) {
      st = mgen__fail(ctx, MGEN_ERR_NO_MEMORY, "saving %s: out of memory", path);
      goto out;
    }
  gatherer g = {&merged, 0, 0};
  pthread_mutex_lock(&ctx->lock);
  mgen__cache_each_measured(&ctx->cache, gather, &g);
  pthread_mutex_unlock(&ctx->lock);
  if (g.failed) {
    st = mgen__fail(ctx, MGEN_ERR_NO_MEMORY, "saving %s: out of memory", path);
    goto out;
  }
  if (g.too_fast > 0)
    mgen__log(ctx, MGEN_LOG_WARN, "mgen: cache %s: %d record(s) of this context with a time "
              "below %d ns not written (no GEMM is that fast: a broken timer?)", path, g.too_fast,
              MGEN__CACHE_NS_MIN);
  /* Over the limit the loader would refuse the file, and the next save replace it. */
  if (merged.measured > MGEN__CACHE_RECORDS_MAX) {
    st = mgen__fail(ctx, MGEN_ERR_BUFFER_TOO_SMALL, "saving %s: %zu records, a cache file holds "
                    "at most %d: the file is unchanged", path, merged.measured,
                    MGEN__CACHE_RECORDS_MAX);
    goto out;
  }
  st = write_atomically(ctx, path, &merged, mode);
out:
  mgen__cache_free(&merged);
  free(c.items);
  mgen__cache_unlock(&lock);
  return st;
}

mgen_status mgen_cache_clear(mgen_ctx *ctx) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  pthread_mutex_lock(&ctx->lock);
  mgen__cache_clear(&ctx->cache);
  pthread_mutex_unlock(&ctx->lock);
  return MGEN_OK;
}

size_t mgen_cache_count(const mgen_ctx *ctx) {
  if (ctx == NULL) return 0;
  pthread_mutex_lock((pthread_mutex_t *)&ctx->lock);
  size_t n = ctx->cache.measured;
  pthread_mutex_unlock((pthread_mutex_t *)&ctx->lock);
  return n;
}
