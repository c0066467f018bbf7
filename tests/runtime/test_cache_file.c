/* test_cache_file.c -- the cache file parser and writer (runtime/src/cache/cache_file.c) on text in
 * memory: round trip, every truncation of a valid file, garbage, huge lines, other format
 * versions, bad headers and records, each with the status and a "path:line:" message. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache_file.h"
#include "check.h"

typedef struct sink {
  mgen__cache_record r[8];
  int count;
  char bad[8][200]; /* what a salvaging parse reported */
  int nbad;
} sink;

static void note(void *self, const char *why) {
  sink *s = self;
  if (s->nbad < 8) snprintf(s->bad[s->nbad], sizeof s->bad[0], "%s", why);
  s->nbad++;
}

static int keep(void *self, const mgen__cache_record *r) {
  sink *s = self;
  if (s->count < 8) s->r[s->count] = *r;
  s->count++;
  return 0;
}

static mgen__cache_header header(long records) {
  mgen__cache_header h;
  memset(&h, 0, sizeof h);
  h.format = MGEN__CACHE_FORMAT;
  snprintf(h.library, sizeof h.library, "0.1.0");
  h.table_hash = 0x502f66986d178286ULL;
  snprintf(h.device, sizeof h.device, "NVIDIA H200");
  h.sms = 132, h.sm = 90, h.cuda_runtime = 13000, h.cuda_driver = 13000, h.records = records;
  return h;
}

static mgen__cache_record record(int group, int scheme, int n, int m_lo, int m_hi, uint64_t ns) {
  mgen__cache_record r;
  memset(&r, 0, sizeof r);
  r.key = (mgen__key){MGEN_ACT_F16, scheme ? MGEN_WFMT_FE2M1 : MGEN_WFMT_U4B8, scheme, group,
                      MGEN_LAYOUT_MMA, MGEN_OP_DENSE};
  r.n = n, r.k = 4096, r.m_lo = m_lo, r.m_hi = m_hi, r.ns = ns;
  r.default_ns = ns + 100;
  snprintf(r.kernel, sizeof r.kernel, "mgen_sm80_f16_u4b8_g128_16x128x128_s4_w8_sw3x4x4");
  snprintf(r.default_kernel, sizeof r.default_kernel, "mgen_sm80_f16_u4b8_g128_32x256x64_s4_w8_sw3x4x3");
  return r;
}

/* A valid file of three records, as the writer makes it (caller frees). */
static char *valid_file(size_t *size) {
  char *text = NULL;
  FILE *f = open_memstream(&text, size);
  mgen__cache_header h = header(3);
  mgen__cache_record rs[3] = {record(128, 0, 4096, 1, 1, 13730), record(0, 0, 12288, 17, 32, 28370),
                              record(16, 1, 8192, 3073, 4096, 1234567)};
  rs[1].key.act = MGEN_ACT_BF16;
  rs[1].key.layout = MGEN_LAYOUT_E4M3; /* W4A8 weights: "@e4m3" */
  CHECK(mgen__cache_write_header(f, &h) == 0, "header");
  for (int i = 0; i < 3; i++) CHECK(mgen__cache_write_record(f, &rs[i]) == 0, "record %d", i);
  CHECK(mgen__cache_write_end(f) == 0, "end");
  fclose(f);
  return text;
}

static mgen_status parse(const char *text, size_t size, mgen__cache_header *h, sink *s, char *why,
                         size_t why_size) {
  memset(s, 0, sizeof *s);
  return mgen__cache_parse(text, size, "t.cache", h, keep, s, why, why_size);
}

/* Parses `text` (NUL-terminated), expects `status` and, on failure, `where` and `what` in the
 * message. */
static void expect(const char *text, mgen_status status, const char *where, const char *what) {
  mgen__cache_header h;
  sink s;
  char why[512];
  mgen_status st = parse(text, strlen(text), &h, &s, why, sizeof why);
  CHECK(st == status, "%s: %s, expected %s (%s)", what, mgen_status_str(st), mgen_status_str(status), why);
  if (status != MGEN_OK) {
    CHECK(strstr(why, where) != NULL && strstr(why, what) != NULL, "message '%s' lacks '%s' / '%s'",
          why, where, what);
  }
}

static void test_round_trip(void) {
  size_t size;
  char *text = valid_file(&size);
  mgen__cache_header h;
  sink s;
  char why[256];
  CHECK(parse(text, size, &h, &s, why, sizeof why) == MGEN_OK, "valid: %s", why);
  CHECK(h.format == MGEN__CACHE_FORMAT && strcmp(h.library, "0.1.0") == 0 && h.table_hash == 0x502f66986d178286ULL,
        "header");
  CHECK(strcmp(h.device, "NVIDIA H200") == 0 && h.sms == 132 && h.sm == 90, "device '%s'", h.device);
  CHECK(h.cuda_runtime == 13000 && h.cuda_driver == 13000 && h.records == 3, "versions");
  CHECK(s.count == 3, "%d records", s.count);
  CHECK(s.r[0].key.group == 128 && s.r[0].n == 4096 && s.r[0].m_lo == 1 && s.r[0].ns == 13730 &&
            s.r[0].default_ns == 13830 && s.r[0].key.scheme == 0 &&
            s.r[0].key.layout == MGEN_LAYOUT_MMA, "record 0");
  CHECK(s.r[1].key.act == MGEN_ACT_BF16 && s.r[1].key.group == MGEN_GROUP_CHANNEL &&
            s.r[1].m_lo == 17 && s.r[1].m_hi == 32 && s.r[1].key.layout == MGEN_LAYOUT_E4M3, "record 1");
  CHECK(s.r[2].key.wfmt == MGEN_WFMT_FE2M1 && s.r[2].key.scheme == 1 && s.r[2].key.group == 16 &&
            s.r[2].ns == 1234567, "record 2");
  CHECK(strstr(text, "dense/f16/u4b8/g128 4096 4096 1 1 mgen_sm80") != NULL, "text:\n%s", text);
  CHECK(strstr(text, "dense/bf16/u4b8/gc@e4m3 12288 4096 17 32 ") != NULL, "gc, e4m3 layout");
  CHECK(strstr(text, "dense/f16/fe2m1/g16/nvfp4 ") != NULL, "scheme");
  CHECK(s.r[0].line > 9 && s.r[2].line == s.r[0].line + 2, "line numbers %d %d", s.r[0].line, s.r[2].line);

  /* Every proper prefix is rejected: a file cut anywhere never parses. */
  int accepted = 0;
  for (size_t cut = 0; cut < size; cut++)
    accepted += parse(text, cut, &h, &s, why, sizeof why) == MGEN_OK;
  CHECK(accepted == 0, "%d truncations accepted", accepted);
  CHECK(parse(text, size - 4, &h, &s, why, sizeof why) == MGEN_ERR_CACHE_FORMAT &&
            strstr(why, "without 'end'") != NULL, "cut before 'end': %s", why);

  /* Comments, blank lines and CRLF are fine. */
  char *crlf = malloc(2 * size + 64), *o = crlf;
  o += sprintf(o, "# leading comment\n\n");
  for (size_t i = 0; i < size; i++) {
    if (text[i] == '\n') *o++ = '\r';
    *o++ = text[i];
  }
  o += sprintf(o, "\n# trailing comment\n");
  CHECK(parse(crlf, (size_t)(o - crlf), &h, &s, why, sizeof why) == MGEN_OK && s.count == 3,
        "comments and CRLF: %s", why);
  free(crlf);
  free(text);
}

static void test_garbage(void) {
  expect("", MGEN_ERR_CACHE_FORMAT, "t.cache:1:", "empty file");
  expect("hello world\n", MGEN_ERR_CACHE_FORMAT, "t.cache:1:", "not an mgen cache");
  expect("mgen-cache\n", MGEN_ERR_CACHE_FORMAT, "t.cache:1:", "not an mgen cache");
  expect("mgen-cache 2", MGEN_ERR_CACHE_FORMAT, "t.cache:1:", "truncated");
  expect("mgen-cache 2\n", MGEN_ERR_CACHE_FORMAT, "t.cache:1:", "'library'");
  /* Random bytes: rejected, never crashing (the fuzzer goes further). */
  unsigned char junk[4096];
  unsigned x = 12345;
  for (int round = 0; round < 200; round++) {
    size_t n = (size_t)(round * 20 % sizeof junk) + 1;
    for (size_t i = 0; i < n; i++) x = x * 1103515245 + 12345, junk[i] = (unsigned char)(x >> 16);
    if (round % 2) memcpy(junk, "mgen-cache 2\n", n < 13 ? n : 13);
    mgen__cache_header h;
    sink s;
    char why[128];
    CHECK(parse((const char *)junk, n, &h, &s, why, sizeof why) == MGEN_ERR_CACHE_FORMAT,
          "junk round %d accepted", round);
  }
  expect("mgen-cache 2\nlibrary 0.1.0\x01\n", MGEN_ERR_CACHE_FORMAT, "t.cache:2:", "not printable");
  /* A huge line. */
  char *huge = malloc(10000);
  strcpy(huge, "mgen-cache 2\n# ");
  memset(huge + 15, 'x', 5000);
  strcpy(huge + 5015, "\n");
  expect(huge, MGEN_ERR_CACHE_FORMAT, "t.cache:2:", "line longer than 1023 bytes");
  /* The exact boundary: a line holds MGEN__CACHE_LINE_MAX - 1 bytes (its buffer keeps one
   * for the NUL). A comment of 1022 or 1023 bytes parses; 1024 is refused, not copied over
   * the end of the buffer (inside the reader struct, where ASan cannot see it). */
  size_t size;
  char *valid = valid_file(&size);
  const char *rest = strchr(valid, '\n') + 1; /* the valid file after "mgen-cache 2\n" */
  for (int len = MGEN__CACHE_LINE_MAX - 2; len <= MGEN__CACHE_LINE_MAX; len++) {
    char *o = huge + sprintf(huge, "mgen-cache 2\n#");
    memset(o, 'x', (size_t)len - 1);
    sprintf(o + len - 1, "\n%s", rest);
    CHECK(strchr(huge + 13, '\n') == huge + 13 + len, "the comment has %d bytes", len);
    if (len < MGEN__CACHE_LINE_MAX)
      expect(huge, MGEN_OK, "", "");
    else
      expect(huge, MGEN_ERR_CACHE_FORMAT, "t.cache:2:", "line longer than 1023 bytes");
  }
  free(valid);
  free(huge);
  /* A NUL byte inside. */
  mgen__cache_header h;
  sink s;
  char why[128];
  CHECK(parse("mgen-cache 2\n\0library 0.1.0\n", 28, &h, &s, why, sizeof why) == MGEN_ERR_CACHE_FORMAT &&
            strstr(why, "0x00") != NULL, "NUL: %s", why);
}

#define HEADER_FIELDS                                                                    \
  "library 0.1.0\ntable 0x502f66986d178286\ndevice NVIDIA H200 NVL\nsms 132\nsm 90\n" \
  "cuda-runtime 13000\ncuda-driver 13000\n"
#define HEADER "mgen-cache 3\n" HEADER_FIELDS
#define REC "dense/f16/u4b8/g128 4096 4096 1 1 kern_a 100 kern_b 200\n"

static void test_header_and_records(void) {
  mgen__cache_header h;
  sink s;
  char why[256];
  const char *other = "mgen-cache 4\nwhatever follows is not read\x01\n";
  CHECK(parse(other, strlen(other), &h, &s, why, sizeof why) == MGEN_OK && h.format == 4 &&
            s.count == 0, "another format: OK with its number");
  CHECK(!mgen__cache_format_read(1) && mgen__cache_format_read(2) && mgen__cache_format_read(3) &&
            !mgen__cache_format_read(4), "formats read: 2 and 3");
  /* Format 1, before the op: its keys would read as malformed; its number is what the caller
   * gets, and the message it gives the user says to re-tune. */
  const char *old = "mgen-cache 1\nlibrary 0.1.0\nrecords 1\nf16/u4b8/g128 1 1 1 1 a 1 b 1\nend\n";
  CHECK(parse(old, strlen(old), &h, &s, why, sizeof why) == MGEN_OK && h.format == 1 &&
            s.count == 0, "format 1: OK with its number, no record read");
  mgen__cache_format_why(1, why, sizeof why);
  CHECK(strstr(why, "cache format 1 predates the operation field (format 2)") != NULL &&
            strstr(why, "re-run marlin-tune") != NULL, "format 1's message: '%s'", why);
  mgen__cache_format_why(4, why, sizeof why);
  CHECK(strstr(why, "cache format 4") != NULL && strstr(why, "re-run marlin-tune") != NULL,
        "format 4's message: '%s'", why);
  /* Format 2 (no layouts) reads as it did: its keys are of the default layouts. */
  const char *two = "mgen-cache 2\n" HEADER_FIELDS "records 1\n" REC "end\n";
  CHECK(parse(two, strlen(two), &h, &s, why, sizeof why) == MGEN_OK && h.format == 2 &&
            s.count == 1 && s.r[0].key.layout == MGEN_LAYOUT_MMA, "format 2 read: %s", why);
  /* Format 3: a W4A8 record (the e4m3 layout) beside a default one. */
  const char *three = HEADER "records 2\n" REC
                             "dense/f16/u4b8/g128@e4m3 4096 4096 1 1 kern_c 90 kern_d 95\nend\n";
  CHECK(parse(three, strlen(three), &h, &s, why, sizeof why) == MGEN_OK && h.format == 3 &&
            s.count == 2 && s.r[0].key.layout == MGEN_LAYOUT_MMA &&
            s.r[1].key.layout == MGEN_LAYOUT_E4M3 && strcmp(s.r[1].kernel, "kern_c") == 0,
        "format 3 with a layout: %s", why);
  const char *ok = HEADER "records 1\n" REC "end\n";
  CHECK(parse(ok, strlen(ok), &h, &s, why, sizeof why) == MGEN_OK, "%s", why);
  CHECK(strcmp(h.device, "NVIDIA H200 NVL") == 0, "device with spaces '%s'", h.device);
  CHECK(s.count == 1 && strcmp(s.r[0].kernel, "kern_a") == 0 && s.r[0].line == 10, "record");
  CHECK(mgen__cache_parse(ok, strlen(ok), "t", &h, NULL, NULL, why, sizeof why) == MGEN_OK,
        "no callback");

  expect("mgen-cache 2\nlibrary 0.1\n", MGEN_ERR_CACHE_FORMAT, ":2:", "MAJOR.MINOR.PATCH");
  /* Version numbers are range-checked, not converted by sscanf (undefined past INT_MAX). */
  static const char *const bad_versions[] = {"99999999999999999999.1.0", "0.4294967297.0",
                                             "1.2.3.4", "1..3", ".1.2", "1.2.", "1.2.3x", "+1.2.3"};
  for (size_t i = 0; i < sizeof bad_versions / sizeof bad_versions[0]; i++) {
    char text[128];
    snprintf(text, sizeof text, "mgen-cache 2\nlibrary %s\n", bad_versions[i]);
    expect(text, MGEN_ERR_CACHE_FORMAT, ":2:", "MAJOR.MINOR.PATCH");
  }
  expect("mgen-cache 2\ntable 0x1\n", MGEN_ERR_CACHE_FORMAT, ":2:", "'library'");
  expect("mgen-cache 2\nlibrary 0.1.0\ntable 12\n", MGEN_ERR_CACHE_FORMAT, ":3:", "hex digits");
  expect("mgen-cache 2\nlibrary 0.1.0\ntable 0x11112222333344445\n", MGEN_ERR_CACHE_FORMAT, ":3:",
         "hex digits");
  expect("mgen-cache 2\nlibrary 0.1.0\ntable 0x1\ndevice\n", MGEN_ERR_CACHE_FORMAT, ":4:", "no value");
  expect("mgen-cache 2\nlibrary 0.1.0\ntable 0x1\ndevice X\nsms -1\n", MGEN_ERR_CACHE_FORMAT, ":5:",
         "not a number");
  expect("mgen-cache 2\nlibrary 0.1.0\ntable 0x1\ndevice X\nsms 1 2\n", MGEN_ERR_CACHE_FORMAT, ":5:",
         "one value");
  expect(HEADER "records 99999999\n", MGEN_ERR_CACHE_FORMAT, ":9:", "records");
  expect(HEADER "records 2\n" REC "end\n", MGEN_ERR_CACHE_FORMAT, ":11:", "2 were announced");
  expect(HEADER "records 0\n" REC "end\n", MGEN_ERR_CACHE_FORMAT, ":10:", "more records");
  expect(HEADER "records 1\n" REC "end\n" REC, MGEN_ERR_CACHE_FORMAT, ":12:", "after 'end'");
  expect(HEADER "records 1\ndense/f16/u4b8/g128 4096 4096 1 1 kern_a 100 kern_b\nend\n",
         MGEN_ERR_CACHE_FORMAT, ":10:", "9 fields");
  expect(HEADER "records 1\ndense/f16/u4b8/g128 4096 4096 1 1 kern_a 100 kern_b 200 x\nend\n",
         MGEN_ERR_CACHE_FORMAT, ":10:", "9 fields");
  expect(HEADER "records 1\ndense/f16/u4b8/g96x 4096 4096 1 1 a 1 b 2\nend\n", MGEN_ERR_CACHE_FORMAT,
         ":10:", "is not a key");
  expect(HEADER "records 1\ndense/f16/u4b8/g128/nvfp4 4096 4096 1 1 a 1 b 2\nend\n",
         MGEN_ERR_CACHE_FORMAT, ":10:", "is not a key");
  expect(HEADER "records 1\ndense/f16/u4b8/g128 4096 4096 8 4 a 1 b 2\nend\n", MGEN_ERR_CACHE_FORMAT,
         ":10:", "m_lo <= m_hi");
  expect(HEADER "records 1\ndense/f16/u4b8/g128 0 4096 1 1 a 1 b 2\nend\n", MGEN_ERR_CACHE_FORMAT,
         ":10:", "n and k");
  expect(HEADER "records 1\ndense/f16/u4b8/g128 4096 4096 1 1 a-b 1 b 2\nend\n", MGEN_ERR_CACHE_FORMAT,
         ":10:", "kernel names");
  expect(HEADER "records 1\ndense/f16/u4b8/g128 4096 4096 1 1 a 1.5 b 2\nend\n", MGEN_ERR_CACHE_FORMAT,
         ":10:", "nanoseconds");
  expect(HEADER "records 1\ndense/f16/u4b8/g128 4096 4096 1 1 a 99999999999999999999 b 2\nend\n",
         MGEN_ERR_CACHE_FORMAT, ":10:", "nanoseconds");
  expect(HEADER "records 1\ndense/f16/u4b8/g128 4096 4096 1 1 a 1 b 2\n", MGEN_ERR_CACHE_FORMAT, ":10:",
         "without 'end'");

  /* Salvaging (a merging save's reader): past the header every problem is reported and
   * skipped; the records around it are passed on. The strict parse refuses the same text. */
  {
    char text[4096], *o = text;
    o += sprintf(o, HEADER "records 2\n" REC "#");
    memset(o, 'x', 1100), o += 1100;
    o += sprintf(o, "\ndense/f16/u4b8/g96 4096 4096 1 1 a 1 b 2\nlibrary\x01\n"
                 "dense/f16/u4b8/g128 8192 4096 1 1 kern_c 300 kern_d 400\n");
    memset(&s, 0, sizeof s);
    CHECK(mgen__cache_parse(text, strlen(text), "t", &h, NULL, NULL, why, sizeof why) ==
              MGEN_ERR_CACHE_FORMAT, "strict: refused");
    CHECK(mgen__cache_parse_salvage(text, strlen(text), "t", &h, keep, note, &s, why, sizeof why) ==
              MGEN_OK && s.count == 2 && s.r[1].n == 8192, "salvaged %d records: %s", s.count, why);
    static const char *const reports[] = {"t:11: line longer than 1023 bytes",
                                          "t:12: more records than the 2 announced",
                                          "t:12: 'dense/f16/u4b8/g96' is not a key",
                                          "t:13: byte 0x01", "t:14: the file ends without 'end'"};
    CHECK(s.nbad == 5, "%d reports", s.nbad);
    for (int i = 0; i < 5 && i < s.nbad; i++)
      CHECK(strstr(s.bad[i], reports[i]) == s.bad[i], "report %d: '%s', expected '%s'", i,
            s.bad[i], reports[i]);
    CHECK(why[0] == '\0', "no fatal error: '%s'", why);
  }

  /* Keys both ways. */
  static const char *const good[] = {"dense/f16/u4b8/g128", "dense/bf16/u4b8/gc",
                                     "dense/f16/fe2m1/g16/nvfp4", "dense/bf16/fe2m1/g32/mxfp4",
                                     "dense/f16/u4b8/g32", "dense/bf16/u4b8/g64",
                                     /* W4A8 weights: the layout where it is not the default */
                                     "dense/f16/u4b8/g128@e4m3", "dense/bf16/u4b8/gc@e4m3"};
  static const char *const bad[] = {
      "dense/f16/u4b8", "dense/f16/u4b8/g", "dense/f16/u4b8/g0", "dense/f16/u4b8/g08",
      "dense/f16/u4b8/128", "dense/f32/u4b8/g128", "dense/f16/u8/g128", "dense/f16/u4b8/g128/",
      "dense/f16/fe2m1/g16/xx", "dense/f16/u4b8/g128/nvfp4/x", "dense//u4b8/g128",
      "dense/f16//g128", "", "dense", "dense/",
      /* the op: always written (format 1's keys had none), one of the table's, exactly */
      "f16/u4b8/g128", "/f16/u4b8/g128", "Dense/f16/u4b8/g128", "densex/f16/u4b8/g128",
      "dens/f16/u4b8/g128", "nosuchop/f16/u4b8/g128", "?/f16/u4b8/g128",
      /* well-formed, but no such weights (mgen.h, mgen_weights): the scheme must fit the format
       * and the group the scheme */
      "dense/f16/u4b8/g128/nvfp4", "dense/f16/u4b8/g1073741824", "dense/f16/u4b8/g96",
      "dense/f16/u4b8/g16", "dense/f16/fe2m1/g16", "dense/f16/fe2m1/g32/nvfp4",
      "dense/f16/fe2m1/g16/mxfp4", "dense/bf16/fe2m1/gc/nvfp4", "dense/f16/u4b8/gc/mxfp4",
      /* the layout: a name of the table's, one the format is packed in, never the default
       * (one text per key), once */
      "dense/f16/u4b8/g128@", "dense/f16/u4b8/g128@mma", "dense/f16/u4b8/g128@E4M3",
      "dense/f16/u4b8/g128@e4m3x", "dense/f16/u4b8/g128@e4m3@e4m3", "dense/f16/u4b8@e4m3/g128",
      "dense/f16/fe2m1/g16/nvfp4@e4m3", "dense@e4m3/f16/u4b8/g128", "dense/f16/u4b8/g128 @e4m3"};
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    mgen__key key = {.op = 7}; /* the parse writes the op */
    char back[48];
    CHECK(mgen__cache_parse_key(good[i], &key) == 0 && key.op == MGEN_OP_DENSE, "%s", good[i]);
    mgen__cache_key_text(&key, back, sizeof back);
    CHECK(strcmp(back, good[i]) == 0, "%s -> %s", good[i], back);
  }
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    mgen__key key = {7, 7, 7, 7, 7, 7};
    CHECK(mgen__cache_parse_key(bad[i], &key) == -1 && key.act == 7 && key.scheme == 7,
          "'%s' accepted", bad[i]);
  }
  /* A small message buffer truncates, never overflows. */
  char tiny[6];
  memset(tiny, 'x', sizeof tiny);
  mgen__cache_parse("junk\n", 5, "a-long-path", &h, NULL, NULL, tiny, sizeof tiny);
  CHECK(memchr(tiny, '\0', sizeof tiny) != NULL, "tiny buffer terminated");
}

int main(void) {
  test_round_trip();
  test_garbage();
  test_header_and_records();
  return check_exit("test_cache_file");
}
