/* formats.h -- which weights exist, and the names of everything in them: activation types,
 * weight formats, scale schemes, group sizes and packed layouts. Pure C over the format table
 * (templates/formats.lua, generated as mgen_formats.h's X-macro lists), so that no enum<->name
 * map or group list is written by hand anywhere else: weights.c checks weights by it, the cache
 * parser (cache_file.c) records, selection and the tools print and parse names with it, and
 * the fuzzers (tests/fuzz) generate what it allows. Thread-safe (constant data only).
 *
 * Today's table:
 *   wfmt   scheme   group                          scales                 layouts
 *   u4b8   group    32, 64, 128 or MGEN_GROUP_CHANNEL  of the activation type  mma
 *   fe2m1  nvfp4    16                             E4M3 + FP32 global     mma
 *   fe2m1  mxfp4    32                             E8M0                   mma
 *   u4     asym     32, 64, 128 or MGEN_GROUP_CHANNEL  of the activation type  mma
 *                                                  + 4-bit zero points
 */
#ifndef MGEN_FORMATS_H
#define MGEN_FORMATS_H

#include <stddef.h>

#include "base/tools_api.h"
#include "mgen_formats.h"

/* Names (the kernel-name and cache-key fields: "f16", "u4b8", "nvfp4", "mma"), or "?" for a
 * value outside the table. Static storage. */
MGEN__TOOLS_API const char *mgen__act_name(int act);
const char *mgen__wfmt_name(int wfmt);
const char *mgen__scheme_name(int scheme);
MGEN__TOOLS_API const char *mgen__layout_name(int layout);

/* The value named by the `len` bytes at `s` (need not be NUL-terminated), or -1. */
MGEN__TOOLS_API int mgen__act_parse(const char *s, size_t len);
int mgen__wfmt_parse(const char *s, size_t len);
int mgen__scheme_parse(const char *s, size_t len);
int mgen__layout_parse(const char *s, size_t len);

/* 1 if the value is in the table, else 0. */
int mgen__act_valid(int act);
int mgen__wfmt_valid(int wfmt);
int mgen__scheme_valid(int scheme);
int mgen__layout_valid(int layout);

/* Bits of one code of `wfmt` (0 outside the table). */
int mgen__wfmt_bits(int wfmt);
/* Bytes of one activation value (0 outside the table). */
int mgen__act_bytes(int act);
/* The weight format a scheme scales (0 outside the table). */
int mgen__scheme_wfmt(int scheme);
/* 1 if `scheme` is a scale scheme of `wfmt`, else 0. */
int mgen__scheme_fits(int wfmt, int scheme);
/* Bytes of one stored scale of `scheme` for activations `act` (0 if either is outside). */
int mgen__scheme_scale_bytes(int scheme, int act);
/* Whether the checkpoint of `scheme` carries an FP32 global scale (NVFP4). */
int mgen__scheme_global_scale(int scheme);
/* Whether the packed scale buffer of `scheme` ends with n FP32 column factors (fe2m1). */
int mgen__scheme_column_factors(int scheme);
/* Bits of one zero point of `scheme`, stored after its scales (layout.h, "Zero points"); 0 for
 * a scheme without zero points or outside the table. */
int mgen__scheme_zero_bits(int scheme);
/* The bits of a stored scale of `scheme` for activations `act` that are all ones exactly when
 * it is not finite (inf or NaN): 0x7c00 for FP16 scales, 0x7f80 BF16, 0x7f E4M3, 0xff E8M0 (0
 * if either is outside the table). mgen_pack and mgen_pack_fp4 reject such scales by it. */
unsigned mgen__scheme_nonfinite_bits(int scheme, int act);
/* A byte that, repeated over a packed scale buffer, gives valid finite positive scales. */
int mgen__scheme_safe_scale_byte(int scheme);
/* The scheme's scale storage: "act", "e4m3", "e8m0" ("?" outside the table). */
const char *mgen__scheme_storage(int scheme);
/* The group sizes of `scheme`, ascending (MGEN_GROUP_CHANNEL = 0 first): writes up to `cap` to
 * `out` (may be NULL) and returns how many there are. */
int mgen__scheme_groups(int scheme, int *out, int cap);
/* "32, 64, 128 or 0 (per channel)", "16": the group sizes of `scheme` as text. */
void mgen__scheme_groups_text(int scheme, char *buf, size_t size);
/* The scheme of weights (wfmt, group), or -1 (a (wfmt, group) pair has at most one). */
int mgen__scheme_of(int wfmt, int group);
/* 1 if `group` is a group size of (wfmt, scheme), else 0. */
int mgen__group_valid(int wfmt, int scheme, int group);

/* The layout mgen_weights.layout = 0 means for `wfmt` (0 outside the table). */
int mgen__wfmt_default_layout(int wfmt);
/* `layout`, or the default layout of `wfmt` for MGEN_LAYOUT_DEFAULT (0). */
MGEN__TOOLS_API int mgen__layout_resolve(int wfmt, int layout);
/* 1 if weights of `wfmt` can be packed in `layout` (a resolved layout, not 0), else 0. */
MGEN__TOOLS_API int mgen__layout_fits(int wfmt, int layout);
/* Whether weights of `scheme` can be packed in `layout` (its row's layouts, formats.lua). */
int mgen__scheme_layout_fits(int scheme, int layout);
/* Both: weights of (wfmt, scheme) can be packed in `layout` (resolved). */
MGEN__TOOLS_API int mgen__format_layout_fits(int wfmt, int scheme, int layout);
/* 1 when the kernels of `layout` (resolved) read FP8 E4M3 activations with row scales
 * (formats.lua's a_type: mgen_gemm_a8), else 0. */
int mgen__layout_a8(int layout);

/* All of the above: 1 if (act, wfmt, scheme, group, layout) describes weights that exist
 * (layout resolved: not 0). */
int mgen__format_valid(int act, int wfmt, int scheme, int group, int layout);

/* Enumeration in table order: the i-th activation type (-1 past the end), and the i-th
 * (wfmt, scheme, group) that exists (returns 0 past the end, else 1 and the fields). */
MGEN__TOOLS_API int mgen__act_at(int i);
MGEN__TOOLS_API int mgen__format_at(int i, int *wfmt, int *scheme, int *group);

/* Weights as text, the cache key and message form: "f16/u4b8/g128", "f16/u4b8/gc",
 * "bf16/fe2m1/g16/nvfp4". The scheme is written only where the weight format has several (one
 * text per key, and today's cache files stay valid); the layout is not written (the cache key
 * adds it where it is not the default: cache_file.h). Values outside the table print as "?". */
MGEN__TOOLS_API void mgen__format_text(int act, int wfmt, int scheme, int group, char *buf,
                                       size_t size);
/* Parses mgen__format_text's form: 0 and the fields written, or -1 for text that is not one or
 * names weights that do not exist (a scheme written where it is implied is not the form). */
int mgen__format_parse(const char *text, int *act, int *wfmt, int *scheme, int *group);

/* Names of a format (wfmt, scheme, group) for command lines and CSV columns:
 *   SHORT  the scheme where the weight format has several, else the group: "g128", "gc",
 *          "nvfp4", "mxfp4" (marlin-tune and bench_gemm --fmt); the BENCH name where a
 *          format earlier in the table has that one: "u4_g128" (u4b8 is "g128")
 *   BENCH  "<wfmt>_<SHORT>": "u4b8_g128", "fe2m1_nvfp4" (bench_gemm's CSV column)
 *   KEY    mgen__format_text without the act: "u4b8/g128", "fe2m1/g16/nvfp4"
 * Parsing looks the text up among the table's formats (first match): 0, or -1 if none. */
enum { MGEN__FORMAT_SHORT, MGEN__FORMAT_BENCH, MGEN__FORMAT_KEY };
void mgen__format_name(int form, int wfmt, int scheme, int group, char *buf, size_t size);
MGEN__TOOLS_API int mgen__format_name_parse(int form, const char *text, int *wfmt, int *scheme,
                                            int *group);
/* The command-line and CSV name of W4A8 with output `act` (FP8 E4M3 activations, weights in the
 * e4m3 layout): the layout's name, then the act's where it is not f16: "e4m3", "e4m3bf16"
 * (bench_gemm --act, marlin-tune --act). */
MGEN__TOOLS_API void mgen__a8_act_name(int act, char *buf, size_t size);
/* The output act whose W4A8 name (mgen__a8_act_name) is s[0..len), or -1. */
MGEN__TOOLS_API int mgen__a8_act_parse(const char *s, size_t len);
/* The SHORT names of every format of the table, comma-separated in table order ("gc,g32,...");
 * position i is mgen__format_at(i). */
MGEN__TOOLS_API void mgen__format_short_list(char *buf, size_t size);

#endif /* MGEN_FORMATS_H */
