/* cache_file.c -- reader, parser and writer of the autotune cache format (cache_file.h). The
 * parser is strict and bounded: it reads only inside the buffer, copies each line into a
 * fixed buffer, and every number is range-checked before use (it is fuzzed: tests/fuzz).
 */
#include "cache/cache_file.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/formats.h"
#include "formats/op.h"

#define MAX_TOKENS 10

typedef struct reader {
  const char *p, *end;
  int line;
  const char *path;
  char *why;
  size_t why_size;
  char buf[MGEN__CACHE_LINE_MAX];
  char *tok[MAX_TOKENS];
  int ntok;
} reader;

static mgen_status fail(reader *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static mgen_status fail(reader *r, const char *fmt, ...) {
  if (r->why != NULL && r->why_size > 0) {
    int used = snprintf(r->why, r->why_size, "%s:%d: ", r->path ? r->path : "(cache)",
                        r->line > 0 ? r->line : 1);
    if (used >= 0 && (size_t)used < r->why_size) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(r->why + used, r->why_size - (size_t)used, fmt, ap);
      va_end(ap);
    }
  }
  return MGEN_ERR_CACHE_FORMAT;
}

/* Next line into r->buf (newline and a trailing '\r' removed). 1: a line; 0: end of input;
 * -1: error (message written). */
static int next_line(reader *r) {
  if (r->p >= r->end) return 0;
  r->line++;
  const char *start = r->p, *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
  size_t len = nl != NULL ? (size_t)(nl - r->p) : (size_t)(r->end - r->p);
  r->p = nl != NULL ? nl + 1 : r->end; /* past the line even when it is refused (salvage) */
  if (len >= sizeof r->buf) {
    fail(r, "line longer than %d bytes", MGEN__CACHE_LINE_MAX - 1);
    return -1;
  }
  if (nl == NULL) {
    fail(r, "the file ends inside this line (truncated?)");
    return -1;
  }
  memcpy(r->buf, start, len);
  if (len > 0 && r->buf[len - 1] == '\r') len--;
  r->buf[len] = '\0';
  for (size_t i = 0; i < len; i++) {
    unsigned char ch = (unsigned char)r->buf[i];
    if ((ch < 0x20 && ch != '\t') || ch > 0x7e) {
      fail(r, "byte 0x%02x at column %zu is not printable ASCII", ch, i + 1);
      return -1;
    }
  }
  return 1;
}

/* Splits r->buf into whitespace-separated tokens (at most MAX_TOKENS; more counts as one
 * extra, enough to reject the line). */
static void tokenize(reader *r) {
  r->ntok = 0;
  char *s = r->buf;
  for (;;) {
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '\0') return;
    if (r->ntok == MAX_TOKENS) {
      r->ntok++;
      return;
    }
    r->tok[r->ntok++] = s;
    while (*s != '\0' && *s != ' ' && *s != '\t') s++;
    if (*s != '\0') *s++ = '\0';
  }
}

/* Next line that is not blank or a comment, tokenized. 1, 0 (end of input) or -1. */
static int next_significant(reader *r) {
  for (;;) {
    int got = next_line(r);
    if (got <= 0) return got;
    const char *s = r->buf;
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '\0' || *s == '#') continue;
    tokenize(r);
    return 1;
  }
}

/* Decimal digits only, value <= max. Returns 0 or -1. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out) {
  uint64_t v = 0;
  if (*s == '\0') return -1;
  for (; *s != '\0'; s++) {
    if (*s < '0' || *s > '9') return -1;
    unsigned digit = (unsigned)(*s - '0');
    if (v > (max - digit) / 10) return -1;
    v = v * 10 + digit;
  }
  *out = v;
  return 0;
}

static int parse_int(const char *s, int min, int max, int *out) {
  uint64_t v;
  if (parse_u64(s, (uint64_t)max, &v) != 0 || v < (uint64_t)min) return -1;
  *out = (int)v;
  return 0;
}

static int parse_name(const char *s, char *out) {
  size_t len = strlen(s);
  if (len == 0 || len >= MGEN__CACHE_NAME_MAX) return -1;
  for (size_t i = 0; i < len; i++) {
    char ch = s[i];
    int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
             ch == '_';
    if (!ok) return -1;
  }
  memcpy(out, s, len + 1);
  return 0;
}

int mgen__cache_parse_key(const char *text, mgen__key *key) {
  mgen__key k;
  char weights[64];
  const char *slash = strchr(text, '/');
  if (slash == NULL || (k.op = mgen__op_parse(text, (size_t)(slash - text))) < 0) return -1;
  const char *at = strchr(slash + 1, '@');
  const size_t len = at != NULL ? (size_t)(at - (slash + 1)) : strlen(slash + 1);
  if (len >= sizeof weights) return -1;
  memcpy(weights, slash + 1, len);
  weights[len] = '\0';
  if (mgen__format_parse(weights, &k.act, &k.wfmt, &k.scheme, &k.group) != 0) return -1;
  k.layout = mgen__wfmt_default_layout(k.wfmt);
  if (at != NULL) {
    const int layout = mgen__layout_parse(at + 1, strlen(at + 1));
    if (layout < 0 || layout == k.layout || !mgen__format_layout_fits(k.wfmt, k.scheme, layout)) return -1;
    k.layout = layout;
  }
  *key = k;
  return 0;
}

int mgen__cache_format_read(int format) {
  return format >= MGEN__CACHE_FORMAT_OLDEST && format <= MGEN__CACHE_FORMAT;
}

/* ---------------------------------------------------------------- header */

/* MAJOR.MINOR.PATCH: three numbers of 0..99999, nothing else. Returns 0 or -1. */
static int parse_version(const char *s) {
  char part[8];
  for (int i = 0; i < 3; i++) {
    size_t len = strcspn(s, ".");
    if (len == 0 || len >= sizeof part || (i < 2) != (s[len] == '.')) return -1;
    memcpy(part, s, len);
    part[len] = '\0';
    int value;
    if (parse_int(part, 0, 99999, &value) != 0) return -1;
    s += len + 1;
  }
  return 0;
}

/* The next header line must be `name value...`; for single-value fields exactly two tokens. */
static mgen_status expect_field(reader *r, const char *name, int single) {
  int got = next_significant(r);
  if (got < 0) return MGEN_ERR_CACHE_FORMAT;
  if (got == 0) return fail(r, "the file ends before the header field '%s' (truncated?)", name);
  if (strcmp(r->tok[0], name) != 0)
    return fail(r, "expected the header field '%s', found '%.40s'", name, r->tok[0]);
  if (r->ntok < 2) return fail(r, "header field '%s' has no value", name);
  if (single && r->ntok != 2) return fail(r, "header field '%s' takes one value", name);
  return MGEN_OK;
}

static mgen_status int_field(reader *r, const char *name, int max, int *out) {
  mgen_status st = expect_field(r, name, 1);
  if (st != MGEN_OK) return st;
  if (parse_int(r->tok[1], 0, max, out) != 0)
    return fail(r, "header field '%s': '%.40s' is not a number in 0..%d", name, r->tok[1], max);
  return MGEN_OK;
}

static mgen_status parse_header(reader *r, mgen__cache_header *hdr) {
  mgen_status st;
  int got = next_significant(r);
  if (got < 0) return MGEN_ERR_CACHE_FORMAT;
  if (got == 0) return fail(r, "empty file: not an mgen cache");
  if (r->ntok != 2 || strcmp(r->tok[0], MGEN__CACHE_MAGIC) != 0 ||
      parse_int(r->tok[1], 1, 1 << 20, &hdr->format) != 0)
    return fail(r, "not an mgen cache (expected '%s <format>')", MGEN__CACHE_MAGIC);
  if (!mgen__cache_format_read(hdr->format)) return MGEN_OK;

  if ((st = expect_field(r, "library", 1)) != MGEN_OK) return st;
  size_t len = strlen(r->tok[1]);
  if (len >= sizeof hdr->library || parse_version(r->tok[1]) != 0)
    return fail(r, "library version '%.40s' is not MAJOR.MINOR.PATCH (numbers up to 99999)",
                r->tok[1]);
  memcpy(hdr->library, r->tok[1], len + 1);

  if ((st = expect_field(r, "table", 1)) != MGEN_OK) return st;
  const char *h = r->tok[1];
  size_t hex = strlen(h) > 2 ? strspn(h + 2, "0123456789abcdefABCDEF") : 0;
  if (h[0] != '0' || (h[1] != 'x' && h[1] != 'X') || hex == 0 || hex > 16 || h[2 + hex] != '\0')
    return fail(r, "table hash '%.40s' is not 0x followed by 1-16 hex digits", h);
  hdr->table_hash = 0;
  for (const char *p = h + 2; *p; p++)
    hdr->table_hash = hdr->table_hash << 4 |
                      (uint64_t)(*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);

  if ((st = expect_field(r, "device", 0)) != MGEN_OK) return st;
  /* The name is the rest of the line, spaces included (tokenize split it: rejoin). */
  size_t used = 0;
  for (int i = 1; i < r->ntok && i < MAX_TOKENS; i++) {
    size_t tl = strlen(r->tok[i]);
    if (used + tl + 2 > sizeof hdr->device) return fail(r, "device name too long");
    if (i > 1) hdr->device[used++] = ' ';
    memcpy(hdr->device + used, r->tok[i], tl);
    used += tl;
  }
  if (r->ntok > MAX_TOKENS) return fail(r, "device name has too many words");
  hdr->device[used] = '\0';

  if ((st = int_field(r, "sms", 1 << 20, &hdr->sms)) != MGEN_OK) return st;
  if ((st = int_field(r, "sm", 10000, &hdr->sm)) != MGEN_OK) return st;
  if ((st = int_field(r, "cuda-runtime", 1 << 30, &hdr->cuda_runtime)) != MGEN_OK) return st;
  if ((st = int_field(r, "cuda-driver", 1 << 30, &hdr->cuda_driver)) != MGEN_OK) return st;
  int records;
  if ((st = int_field(r, "records", MGEN__CACHE_RECORDS_MAX, &records)) != MGEN_OK) return st;
  hdr->records = records;
  return MGEN_OK;
}

/* ---------------------------------------------------------------- records */

/* "'x' is not a key: dense, then f16|bf16, then u4b8/gc, u4b8/g32, ..., fe2m1/g32/mxfp4" (the
 * table's). */
static mgen_status key_error(reader *r, const char *text) {
  char list[512] = "";
  size_t used = 0;
#define OP_NAME_(id, name, value) \
  if (used < sizeof list)         \
    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? "|" : "", name);
  MGEN_OP_LIST(OP_NAME_)
#undef OP_NAME_
  for (int i = 0, act; (act = mgen__act_at(i)) >= 0 && used < sizeof list; i++)
    used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? "|" : ", then ",
                             mgen__act_name(act));
  for (int i = 0, wfmt, scheme, group; mgen__format_at(i, &wfmt, &scheme, &group) &&
                                       used < sizeof list; i++) {
    char key[48];
    mgen__format_text(mgen__act_at(0), wfmt, scheme, group, key, sizeof key);
    used += (size_t)snprintf(list + used, sizeof list - used, "%s %s", i ? "," : ", then",
                             strchr(key, '/') + 1);
  }
  return fail(r, "'%.40s' is not a key: %s", text, list);
}

static mgen_status parse_record(reader *r, mgen__cache_record *rec) {
  static const char *const kFields =
      "op/act/wfmt/group n k m_lo m_hi kernel ns default_kernel default_ns";
  if (r->ntok != 9)
    return fail(r, "a record has 9 fields (%s), this line has %d", kFields, r->ntok);
  memset(rec, 0, sizeof *rec);
  rec->line = r->line;
  uint64_t ns;
  if (mgen__cache_parse_key(r->tok[0], &rec->key) != 0)
    return key_error(r, r->tok[0]);
  if (parse_int(r->tok[1], 1, 1 << 30, &rec->n) != 0 || parse_int(r->tok[2], 1, 1 << 30, &rec->k) != 0)
    return fail(r, "n and k must be numbers in 1..2^30");
  if (parse_int(r->tok[3], 1, 0x7fffffff, &rec->m_lo) != 0 ||
      parse_int(r->tok[4], 1, 0x7fffffff, &rec->m_hi) != 0 || rec->m_lo > rec->m_hi)
    return fail(r, "m_lo and m_hi must be numbers with 1 <= m_lo <= m_hi");
  if (parse_name(r->tok[5], rec->kernel) != 0 || parse_name(r->tok[7], rec->default_kernel) != 0)
    return fail(r, "kernel names are 1-127 characters of [A-Za-z0-9_]");
  if (parse_u64(r->tok[6], UINT64_C(1000000000000000), &ns) != 0) goto bad_time;
  rec->ns = ns;
  if (parse_u64(r->tok[8], UINT64_C(1000000000000000), &ns) != 0) goto bad_time;
  rec->default_ns = ns;
  return MGEN_OK;
bad_time:
  return fail(r, "times are integer nanoseconds (at most 10^15)");
}

/* A salvaging parse's report of a line it skipped: the message fail() left in r->why goes to
 * on_bad, and r->why is cleared again (it holds only a fatal error when the parse ends). */
static void skipped(reader *r, mgen__cache_bad_fn on_bad, void *self) {
  on_bad(self, r->why != NULL && r->why_size > 0 ? r->why : "");
  if (r->why != NULL && r->why_size > 0) r->why[0] = '\0';
}

/* Sets up r over text[size] and parses the header into *hdr. */
static mgen_status begin(reader *r, const char *text, size_t size, const char *path,
                         mgen__cache_header *hdr, char *why, size_t why_size) {
  memset(r, 0, sizeof *r);
  r->p = text;
  r->end = text + size;
  r->path = path;
  r->why = why;
  r->why_size = why_size;
  if (why != NULL && why_size > 0) why[0] = '\0';
  memset(hdr, 0, sizeof *hdr);
  return text == NULL && size > 0 ? MGEN_ERR_NULL_POINTER : parse_header(r, hdr);
}

mgen_status mgen__cache_parse_header(const char *text, size_t size, const char *path,
                                     mgen__cache_header *hdr, char *why, size_t why_size) {
  reader rd;
  return begin(&rd, text, size, path, hdr, why, why_size);
}

/* mgen__cache_parse, or with on_bad set mgen__cache_parse_salvage. */
static mgen_status parse(const char *text, size_t size, const char *path, mgen__cache_header *hdr,
                         mgen__cache_record_fn on_record, mgen__cache_bad_fn on_bad, void *self,
                         char *why, size_t why_size) {
  reader rd, *r = &rd;
  mgen_status st = begin(r, text, size, path, hdr, why, why_size);
  if (st != MGEN_OK || !mgen__cache_format_read(hdr->format)) goto out;

  /* Past the header a salvaging parse reports each problem through on_bad and goes on: a bad
   * line is skipped, a missing 'end' or a wrong count only reported. */
  long count = 0, lines = 0; /* records passed on; record lines seen, bad ones included */
  mgen__cache_record rec;
  for (;;) {
    int got = next_significant(r);
    if (got < 0 && on_bad != NULL) {
      lines++;
      skipped(r, on_bad, self);
      continue;
    }
    if (got < 0) {
      st = MGEN_ERR_CACHE_FORMAT;
      goto out;
    }
    if (got == 0) {
      st = fail(r, "the file ends without 'end' after %ld of %ld records (truncated?)", lines,
                hdr->records);
      if (on_bad == NULL) goto out;
      skipped(r, on_bad, self);
      st = MGEN_OK;
      goto out;
    }
    if (r->ntok == 1 && strcmp(r->tok[0], "end") == 0) break;
    if (lines++ == hdr->records) {
      st = fail(r, "more records than the %ld announced", hdr->records);
      if (on_bad == NULL) goto out;
      skipped(r, on_bad, self); /* reported once; the records still count */
      st = MGEN_OK;
    }
    if ((st = parse_record(r, &rec)) != MGEN_OK) {
      if (on_bad == NULL) goto out;
      skipped(r, on_bad, self);
      st = MGEN_OK;
      continue;
    }
    count++;
    if (on_record != NULL && on_record(self, &rec) != 0) {
      fail(r, "out of memory");
      st = MGEN_ERR_NO_MEMORY;
      goto out;
    }
  }
  if (lines < hdr->records) {
    st = fail(r, "'end' after %ld records, %ld were announced (truncated?)", lines, hdr->records);
    if (on_bad == NULL) goto out;
    skipped(r, on_bad, self);
    st = MGEN_OK;
  }
  for (;;) {
    int got = next_significant(r);
    if (got == 0) break;
    st = got < 0 ? MGEN_ERR_CACHE_FORMAT : fail(r, "text after 'end'");
    if (on_bad == NULL) goto out;
    skipped(r, on_bad, self); /* reported once: the rest is not read */
    st = MGEN_OK;
    break;
  }
out:
  return st;
}

mgen_status mgen__cache_parse(const char *text, size_t size, const char *path,
                              mgen__cache_header *hdr, mgen__cache_record_fn on_record, void *self,
                              char *why, size_t why_size) {
  return parse(text, size, path, hdr, on_record, NULL, self, why, why_size);
}

mgen_status mgen__cache_parse_salvage(const char *text, size_t size, const char *path,
                                      mgen__cache_header *hdr, mgen__cache_record_fn on_record,
                                      mgen__cache_bad_fn on_bad, void *self, char *why,
                                      size_t why_size) {
  return parse(text, size, path, hdr, on_record, on_bad, self, why, why_size);
}

/* ---------------------------------------------------------------- file */

static mgen_status fail_file(mgen_status st, char *why, size_t why_size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static mgen_status fail_file(mgen_status st, char *why, size_t why_size, const char *fmt, ...) {
  if (why != NULL && why_size > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
  }
  return st;
}

mgen_status mgen__cache_read_file(const char *path, char **text, size_t *size, char *why,
                                  size_t why_size, int *missing) {
  if (missing != NULL) *missing = 0;
  /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (missing != NULL) *missing = errno == ENOENT;
    return fail_file(MGEN_ERR_IO, why, why_size, "cannot open cache %s: %s", path, strerror(errno));
  }
  struct stat sb;
  mgen_status st = MGEN_OK;
  char *buf = NULL;
  size_t got = 0;
  if (fstat(fd, &sb) != 0) {
    st = fail_file(MGEN_ERR_IO, why, why_size, "cannot stat cache %s: %s", path, strerror(errno));
  } else if (!S_ISREG(sb.st_mode)) {
    st = fail_file(MGEN_ERR_IO, why, why_size, "cache %s is not a regular file", path);
  } else if ((uint64_t)sb.st_size > MGEN__CACHE_BYTES_MAX) {
    st = fail_file(MGEN_ERR_CACHE_FORMAT, why, why_size, "%s: %lld bytes, larger than the %zu MiB "
                "a cache may have", path, (long long)sb.st_size, MGEN__CACHE_BYTES_MAX >> 20);
  } else if ((buf = malloc((size_t)sb.st_size + 1)) == NULL) {
    st = fail_file(MGEN_ERR_NO_MEMORY, why, why_size, "reading %s: out of memory", path);
  } else {
    (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); /* plain reads from here */
    while (got < (size_t)sb.st_size) {
      ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        st = fail_file(MGEN_ERR_IO, why, why_size, "cannot read cache %s: %s", path,
                       strerror(errno));
        break;
      }
      if (r == 0) break; /* shrank meanwhile: parse what is there (it will not end well) */
      got += (size_t)r;
    }
  }
  close(fd);
  if (st != MGEN_OK) {
    free(buf);
    return st;
  }
  buf[got] = '\0';
  *text = buf;
  *size = got;
  return MGEN_OK;
}

/* ---------------------------------------------------------------- writer */

void mgen__cache_key_text(const mgen__key *key, char *buf, size_t size) {
  if (buf == NULL || size == 0) return;
  int used = snprintf(buf, size, "%s/", mgen__op_name(key->op));
  if (used < 0 || (size_t)used >= size) return;
  mgen__format_text(key->act, key->wfmt, key->scheme, key->group, buf + used, size - (size_t)used);
  used = (int)strlen(buf);
  if (key->layout != mgen__wfmt_default_layout(key->wfmt) && (size_t)used < size)
    snprintf(buf + used, size - (size_t)used, "@%s", mgen__layout_name(key->layout));
}

/* What each format brought that its predecessor lacked: the reason a file of the one before
 * is not read. */
static const char *const kFormatAdded[] = {
    [2] = "the operation field",
    [3] = "the layout suffix (files of format 2 are read)",
};
_Static_assert(sizeof kFormatAdded / sizeof kFormatAdded[0] == MGEN__CACHE_FORMAT + 1,
               "cache_file.c: a new MGEN__CACHE_FORMAT says in kFormatAdded what it added");

void mgen__cache_format_why(int format, char *buf, size_t size) {
  if (format >= 1 && format < MGEN__CACHE_FORMAT_OLDEST)
    snprintf(buf, size, "cache format %d predates %s (format %d): re-run marlin-tune to tune "
             "again", format, kFormatAdded[format + 1], format + 1);
  else
    snprintf(buf, size, "cache format %d is not this library's (format %d): it was written by "
             "another libmgen; re-run marlin-tune to tune with this one", format,
             MGEN__CACHE_FORMAT);
}

int mgen__cache_write_header(FILE *f, const mgen__cache_header *hdr) {
  fprintf(f, "%s %d\n", MGEN__CACHE_MAGIC, MGEN__CACHE_FORMAT);
  fprintf(f, "# libmgen autotune cache (README.md, \"Autotune cache\"). A record is:\n"
             "# op/act/wfmt/group[/scheme][@layout] n k m_lo m_hi kernel ns default_kernel "
             "default_ns\n");
  fprintf(f, "library %s\ntable 0x%016" PRIx64 "\ndevice %s\nsms %d\nsm %d\n", hdr->library,
          hdr->table_hash, hdr->device, hdr->sms, hdr->sm);
  fprintf(f, "cuda-runtime %d\ncuda-driver %d\nrecords %ld\n", hdr->cuda_runtime,
          hdr->cuda_driver, hdr->records);
  return ferror(f) ? -1 : 0;
}

int mgen__cache_write_record(FILE *f, const mgen__cache_record *r) {
  char key[64];
  mgen__cache_key_text(&r->key, key, sizeof key);
  fprintf(f, "%s %d %d %d %d %s %" PRIu64 " %s %" PRIu64 "\n", key, r->n, r->k, r->m_lo,
          r->m_hi, r->kernel, r->ns, r->default_kernel, r->default_ns);
  return ferror(f) ? -1 : 0;
}

int mgen__cache_write_end(FILE *f) {
  fputs("end\n", f);
  return ferror(f) ? -1 : 0;
}
