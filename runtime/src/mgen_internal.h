/* mgen_internal.h -- the one internal header of bench/ and runtime/tools/: everything else they
 * use is the public API (mgen/mgen.h, mgen/mgen_kernel.h). bench/ links mgen_internal (every
 * symbol; runtime/CMakeLists.txt). The names below are all they may use (tests/scripts/
 * layering_check.sh checks that each mgen__ / MGEN__ name in bench/ and tools/ is listed here);
 * a program that needs another one adds it here, with the reason.
 * marlin-tune links libmgen.so instead (an install then holds the kernels once), which exports
 * for it exactly the functions below that it calls: those marked MGEN__TOOLS_API where they
 * are declared (base/tools_api.h; not the ABI). A function marlin-tune starts to call gets the
 * mark too (its link fails without it); install_test.sh checks libmgen.so exports no more.
 *
 * The format table's names and lists (formats/formats.h): the bench and tuning command lines
 * parse and print formats as the cache and kernel names spell them --
 *   mgen__act_at, mgen__act_name, mgen__act_parse, mgen__format_at, mgen__format_name,
 *   mgen__format_name_parse, mgen__format_short_list, mgen__format_text, MGEN__FORMAT_BENCH,
 *   MGEN__FORMAT_KEY, MGEN__FORMAT_SHORT, mgen__scheme_safe_scale_byte (valid scale bytes for
 *   the random weights bench_tune_method times, as the tuner's own timer makes them);
 *   mgen__a8_act_name, mgen__a8_act_parse, mgen__layout_name, mgen__layout_fits,
 *   mgen__format_layout_fits, mgen__layout_resolve (the W4A8 names of bench_gemm and
 *   marlin-tune --act, the formats packed in the e4m3 layout).
 * The M buckets (dispatch/bucket.h): marlin-tune tunes one M per bucket --
 *   mgen__bucket_of.
 * The choice key and the candidates of a key (dispatch/select.h): bench_gemm's cold rows and
 *   bench_tune_method time the same candidates tuning would --
 *   mgen__choice_key, mgen__choice_key_of, mgen__candidates.
 * Only where MGEN_INTERNAL_CTX is defined before the include (the rest is plain C, without CUDA
 * headers, as marlin-tune's command line must be): the tuner's timer (core/ctx.h, tuning/tune.h),
 * with which bench_tune_method compares timing methods --
 *   mgen__tune_problem, mgen__tune_order, MGEN__TUNE_FIXED, MGEN__TUNE_ALTERNATE,
 *   MGEN__TUNE_ROTATE, MGEN__TUNE_SHUFFLE, MGEN__TUNE_WARMUP, MGEN__DEFAULT_TUNE_REPS,
 *   mgen__gpu_timer, mgen__fill_random, MGEN__FILL_PATTERN_BYTES;
 *   and the context's device model, ctx->model (struct mgen_ctx), for mgen__candidates.
 * The cache file's reader and parser (cache/cache_file.h): marlin-tune --show shows what
 *   mgen_cache_load would accept --
 *   mgen__cache_header, mgen__cache_record, mgen__cache_read_file, mgen__cache_parse,
 *   mgen__cache_key_text, MGEN__CACHE_FORMAT, MGEN__CACHE_NAME_MAX, mgen__cache_format_why
 *   (the re-tune message for a file of an earlier format, as the loader gives it),
 *   mgen__cache_format_read (the formats it reads); mgen__key (the progress line names a key
 *   as the file does).
 * The family registry (families/family.h): --show names each winner's family --
 *   mgen__family, mgen__family_of.
 */
#ifndef MGEN_INTERNAL_TOOLS_H
#define MGEN_INTERNAL_TOOLS_H

#include "cache/cache_file.h"
#include "dispatch/bucket.h"
#include "dispatch/select.h"
#include "families/family.h"
#include "formats/formats.h"
#include "mgen/mgen.h"

#ifdef MGEN_INTERNAL_CTX
#include "core/ctx.h"
#include "tuning/tune.h"
#endif

#endif /* MGEN_INTERNAL_TOOLS_H */
