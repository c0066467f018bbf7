/* cache_file.h -- the autotune cache file format: reader, parser and writer. Pure C over
 * memory buffers, FILE* and POSIX files, no CUDA and no knowledge of a context, so the
 * libFuzzer targets (tests/fuzz) and marlin-tune --show use it as is. What the records mean
 * for a context (validation against the table, merging) is cache_io.c's business.
 *
 * Format 3, line-oriented ASCII; '#' lines and blank lines are comments anywhere:
 *
 *   mgen-cache 3
 *   library 0.1.0
 *   table 0x502f66986d178286
 *   device NVIDIA H200
 *   sms 132
 *   sm 90
 *   cuda-runtime 13000
 *   cuda-driver 13000
 *   records 2
 *   dense/f16/u4b8/g128 4096 4096 1 1 mgen_sm80_f16_u4b8_g128_16x128x128_s4_w8_sw3x4x4 13730 mgen_sm80_f16_u4b8_g128_16x128x128_s4_w8_sw3x4x4 13730
 *   dense/f16/u4b8/gc@e4m3 11008 4096 17 32 mgen_... 18370 mgen_... 19640
 *   end
 *
 * The header fields come in this order, once each. A record is
 *   op/act/wfmt/group[/scheme][@layout]  n  k  m_lo  m_hi  kernel  ns  default_kernel  default_ns
 * (op, act, wfmt, group, scheme and layout of the format table, formats.h and op.h: the op
 * always written, "dense" included; u4b8/g32, g64, g128 or gc with the scheme omitted -- u4b8
 * has one -- fe2m1/g16/nvfp4, fe2m1/g32/mxfp4; the layout only where it is not the format's
 * default: "@e4m3" for W4A8 weights (mgen_gemm_a8), whose act is the output type; m_lo..m_hi
 * one of the runtime's M buckets; times are integer nanoseconds, so no locale touches the
 * file). Format 2, the same without layouts, is read as is (its records are of the default
 * layouts); format 1 had no op. `records N`
 * announces the count and `end` closes the file: a file cut anywhere, even at a line boundary,
 * fails to parse. Limits: lines of MGEN__CACHE_LINE_MAX bytes, MGEN__CACHE_RECORDS_MAX
 * records, MGEN__CACHE_BYTES_MAX bytes, names of 127 characters [A-Za-z0-9_], n and k up to
 * 2^30, times up to 10^15 ns. Format 1 had no op in the key: its files are refused with
 * mgen__cache_format_why's message (re-tune), never read as dense.
 */
#ifndef MGEN_CACHE_FILE_H
#define MGEN_CACHE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/key.h"
#include "base/tools_api.h"
#include "mgen/mgen.h"

#define MGEN__CACHE_FORMAT 3
/* The oldest format read: its files mean what they meant then (format 3 only added the layout
 * suffix, which no format 2 key has). */
#define MGEN__CACHE_FORMAT_OLDEST 2
#define MGEN__CACHE_MAGIC "mgen-cache"
#define MGEN__CACHE_LINE_MAX 1024
#define MGEN__CACHE_RECORDS_MAX 65536
#define MGEN__CACHE_BYTES_MAX ((size_t)16 << 20)
#define MGEN__CACHE_NAME_MAX 128
#define MGEN__CACHE_DEVICE_MAX 256
/* A record's time below this cannot be real: the fastest GEMMs measured take microseconds
 * (bench/results: 9 us at the smallest benchmark shape; small decode shapes ~3-5 us), and
 * 0.5 us is the resolution CUDA documents for cudaEventElapsedTime, the tuner's clock. A lower
 * time (0 included) would win every merge by the lower time, so the loader skips it. */
#define MGEN__CACHE_NS_MIN 500

typedef struct mgen__cache_header {
  int format;                         /* the number after mgen-cache */
  char library[32];                   /* "0.1.0" */
  uint64_t table_hash;
  char device[MGEN__CACHE_DEVICE_MAX]; /* cudaDeviceProp.name */
  int sms, sm;                        /* multiprocessors, 10*major+minor */
  int cuda_runtime, cuda_driver;      /* cudaRuntimeGetVersion, cudaDriverGetVersion */
  long records;
} mgen__cache_header;

typedef struct mgen__cache_record {
  mgen__key key; /* its layout resolved: the format's default where the text names none */
  int n, k, m_lo, m_hi;
  char kernel[MGEN__CACHE_NAME_MAX];
  uint64_t ns;
  char default_kernel[MGEN__CACHE_NAME_MAX];
  uint64_t default_ns;
  int line; /* 1-based line number in the file */
} mgen__cache_record;

/* Called once per record, in file order; a nonzero return stops the parse with
 * MGEN_ERR_NO_MEMORY (the callback's own failure). */
typedef int (*mgen__cache_record_fn)(void *self, const mgen__cache_record *r);

/* Reads the regular file at `path` whole into *text (malloc'ed, NUL-terminated after *size
 * bytes; the caller frees). The open never blocks: a FIFO, device or directory is refused as
 * "not a regular file" instead of waiting for a writer. Returns OK; ERR_IO (cannot open, stat
 * or read, or not a regular file; *missing, if not NULL, is set to 1 when the file does not
 * exist, else 0); ERR_CACHE_FORMAT (more than MGEN__CACHE_BYTES_MAX bytes); ERR_NO_MEMORY.
 * On failure `why` holds a message naming `path`; *text and *size are written only on OK. */
MGEN__TOOLS_API mgen_status mgen__cache_read_file(const char *path, char **text, size_t *size,
                                                  char *why, size_t why_size, int *missing);

/* Parses `size` bytes of `text` (need not be NUL-terminated). `path` only names the file in
 * messages. On MGEN_OK, *hdr is filled and every record was passed to on_record (may be NULL).
 * A file whose first line is "mgen-cache N" with a format this library does not read
 * (mgen__cache_format_read) parses as MGEN_OK with hdr->format = N and nothing else read (the
 * caller decides). On MGEN_ERR_CACHE_FORMAT,
 * `why` holds "path:line: what is wrong"; records before the error were passed on (callers
 * that apply records buffer them and drop them on failure). Never reads past size. */
MGEN__TOOLS_API mgen_status mgen__cache_parse(const char *text, size_t size, const char *path,
                                              mgen__cache_header *hdr,
                                              mgen__cache_record_fn on_record, void *self,
                                              char *why, size_t why_size);

/* The header alone (the records are not read): as mgen__cache_parse, hdr->format 0 with
 * ERR_CACHE_FORMAT where the text is not an mgen cache at all. */
mgen_status mgen__cache_parse_header(const char *text, size_t size, const char *path,
                                     mgen__cache_header *hdr, char *why, size_t why_size);

/* Called by mgen__cache_parse_salvage for each problem it skips, with "path:line: what". */
typedef void (*mgen__cache_bad_fn)(void *self, const char *why);

/* mgen__cache_parse for a save that merges into an existing file: the header must parse as
 * strictly (else ERR_CACHE_FORMAT, as above), but past it every problem is reported to on_bad
 * and skipped rather than fatal: a line that is not a valid record (too long, unprintable, a
 * bad field, a key this library does not know) is dropped, and a missing 'end', a record count
 * other than the announced one or text after 'end' is only reported. So a save keeps every
 * record it can read. Returns OK (every good record passed on), ERR_CACHE_FORMAT (header) or
 * ERR_NO_MEMORY (on_record failed). */
mgen_status mgen__cache_parse_salvage(const char *text, size_t size, const char *path,
                                      mgen__cache_header *hdr, mgen__cache_record_fn on_record,
                                      mgen__cache_bad_fn on_bad, void *self, char *why,
                                      size_t why_size);

/* Writes the header (with hdr->records), one line per record, then "end". Returns 0, or -1 if
 * the stream reports an error (errno set by stdio). */
int mgen__cache_write_header(FILE *f, const mgen__cache_header *hdr);
int mgen__cache_write_record(FILE *f, const mgen__cache_record *r);
int mgen__cache_write_end(FILE *f);

/* The record key as text, the op's name then mgen__format_text, then "@" and the layout's name
 * where it is not the format's default: "dense/f16/u4b8/g128", "dense/f16/fe2m1/g16/nvfp4",
 * "dense/f16/u4b8/g128@e4m3"; and back: parse returns 0, or -1 for text that is not a key,
 * names an op that does not exist (op.h), weights that do not exist (formats.h: a layout the
 * format is not packed in) or the default layout by name (one text per key); without "@" the
 * parsed key's layout is its format's default. */
MGEN__TOOLS_API void mgen__cache_key_text(const mgen__key *key, char *buf, size_t size);
int mgen__cache_parse_key(const char *text, mgen__key *key);

/* 1 if files of cache format `format` are read (MGEN__CACHE_FORMAT_OLDEST..MGEN__CACHE_FORMAT). */
MGEN__TOOLS_API int mgen__cache_format_read(int format);

/* Why a file of cache format `format` (one not read) is not read, and what to do,
 * e.g. "cache format 1 predates the operation field (format 2): re-run marlin-tune to tune
 * again". The loader, the saver and marlin-tune --show all say it so. */
MGEN__TOOLS_API void mgen__cache_format_why(int format, char *buf, size_t size);

#endif /* MGEN_CACHE_FILE_H */
