/* mgen.h -- libmgen, the marlin-gen runtime: the only public API.
 *
 * Weight-only 4-bit GEMM for LLM inference: C[M,N] = A[M,K] * W^T with A and C in FP16 or BF16
 * and W quantized to 4 bits -- u4b8 (GPTQ symmetric int4) with group or per-channel scales,
 * u4 (asymmetric int4: AWQ, GPTQ sym=false) with group or per-channel scales and zero points, or
 * fe2m1 (FP4 E2M1) with NVFP4 or MXFP4 scales -- packed on the GPU into the layout the
 * generated kernels read.
 *
 * Conventions (SQLite / libuv style):
 * - Every function returns an mgen_status; out-parameters are written only on MGEN_OK.
 * - A failing call on a context stores a message retrievable with mgen_ctx_last_error(), per
 *   thread (no thread's failure overwrites another thread's message).
 * - The library never prints, exits or aborts; warnings go to the optional log callback.
 * - Sticky CUDA errors: a kernel fault (cudaErrorIllegalAddress, cudaErrorLaunchFailure from a
 *   trap, cudaErrorIllegalInstruction, ...) loses the process's CUDA context for good, and
 *   nothing in the process clears it (after cudaGetLastError, cudaDeviceSynchronize returns it
 *   again). From then on every call that launches work (GEMM, quantize, pack, tuning) returns
 *   ERR_CUDA with that error's name in mgen_ctx_last_error, and mgen_ctx_create returns
 *   ERR_CUDA too. The caller must destroy its contexts (mgen_ctx_destroy still returns) and
 *   restart the process: retrying, or a new context, cannot succeed.
 * - All pointers named `d_*` are CUDA device pointers; `stream` is a cudaStream_t (0 = legacy
 *   default stream), passed as void* so that this header needs no CUDA headers.
 * - Thread safety: every function taking a context may be called from several host threads
 *   at once, for the same or different streams (see "Workspaces and streams" at the end), except
 *   mgen_ctx_destroy. mgen_status_str and the table functions are thread-safe.
 * - Devices: calls that launch work or touch device memory (GEMM, tuning, quantize, pack,
 *   import) run on the calling thread's current CUDA device, which must be the context's
 *   (cudaSetDevice); otherwise they return ERR_WRONG_DEVICE and do nothing. A new thread's
 *   current device is 0. A stream must be of the context's device too: CUDA refuses the
 *   launch, and a GEMM returns ERR_WRONG_DEVICE naming the stream's device (CUDA 13 builds;
 *   ERR_CUDA with CUDA's "invalid resource handle" before). Weights, A and C are read where
 *   they are: buffers of another device fault, or with peer access enabled are read across
 *   the link, silently and slowly -- keep them on the context's device.
 * - Shapes: one check serves every entry point (mgen_weights_bytes, quantize, pack, import,
 *   GEMM, choice, tuning), and it is derived from the table, not written by hand: (n, k) must
 *   be a shape some kernel of the weights' key (act, wfmt, scheme, group, layout) can run: n a
 *   multiple of its n step (its tile_n; 64 for the wgmma family, whose last column tile may
 *   end at n, its consumer warpgroups past n idle) and k a multiple of the group (of 64 per channel; every group is a
 *   multiple of 16). K needs nothing more: the packed layout pads k to k_packed, a multiple
 *   of 128 and so of every tile_k (see mgen_weights). A key's kernels have several tiles, so
 *   the rule is a union of alternatives; with the builtin table every key has 64-wide kernels
 *   everywhere, and its rule is "n a multiple of 64 and k a multiple of the group": README.md
 *   ("Shape rules") lists every key's, and the error message states the one that applied. The
 *   kernels that count: for quantize, pack, import, GEMM and tuning, those of the context's
 *   table that run on its device (where none does, those of every architecture: the GEMM is
 *   then ERR_NO_KERNEL); for mgen_weights_bytes, which has no device, every kernel of the
 *   builtin table whatever its architecture, so a shape it accepts may still be refused on a
 *   device that runs only wider kernels. Weights of a key the table has no kernel for need n
 *   a multiple of 64 (the packed layout) and k a multiple of the group (of 64 per channel).
 *   Always n * k_packed / 8 at most MGEN_MAX_PACKED_WORDS, and m >= 1 with m * max(n, k) at
 *   most MGEN_MAX_ELEMENTS (below). A positive shape outside these rules is
 *   ERR_UNSUPPORTED_SHAPE; n, k or m < 1 is ERR_INVALID_ARG.
 * - Alignment of the buffers each call reads or writes (ERR_MISALIGNED otherwise):
 *     mgen_gemm, mgen_gemm_kernel   d_a, d_c, w->d_q, w->d_scales: 16 bytes
 *     mgen_quantize                 d_w: 2 bytes; w->d_q, w->d_scales: 16 bytes
 *     mgen_pack_weights             src->codes, src->zeros: any; src->scales: u4b8 and u4
 *                                   2 bytes, fe2m1 any;
 *                                   w->d_q, w->d_scales: 16
 *     mgen_pack                     d_codes: any; d_scales: 2 bytes; w->d_q, w->d_scales: 16
 *     mgen_pack_fp4                 d_packed, d_block_scales: any; w->d_q, w->d_scales: 16
 *     mgen_import_awq, _gptq, _ct   each tensor: its element (1, 2 or 4 bytes); w->d_q,
 *                                   w->d_scales: 16
 *   cudaMalloc's pointers are 256-byte aligned; offsets into one buffer must keep these.
 */
#ifndef MGEN_H
#define MGEN_H

#include <stddef.h>
#include <stdint.h>

#include "mgen_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the functions libmgen.so exports: the library is built with hidden visibility, so
 * these are its whole ABI (its internal mgen__* symbols and kernel launchers stay private). */
#if defined(__GNUC__) || defined(__clang__)
#define MGEN_API __attribute__((visibility("default")))
#else
#define MGEN_API
#endif

#define MGEN_VERSION_MAJOR 0
#define MGEN_VERSION_MINOR 1
#define MGEN_VERSION_PATCH 0
#define MGEN_VERSION_NUMBER (MGEN_VERSION_MAJOR * 10000 + MGEN_VERSION_MINOR * 100 + MGEN_VERSION_PATCH)

/* Limits: the largest sizes any call accepts, checked by every entry point before it sizes a
 * buffer or a grid (a larger one is ERR_UNSUPPORTED_SHAPE, with the product in the message),
 * never assumed. The kernels and packers index with 32-bit ints, hence 2^31 - 1:
 *   MGEN_MAX_PACKED_WORDS  n * k_packed / 8, the packed weight's int32 words (k_packed: k
 *                          rounded up to 128, mgen_weights; n * k_packed < 2^34: e.g.
 *                          n = k = 131072; its scales are fewer, at most n * k_packed / 16)
 *   MGEN_MAX_ELEMENTS      m * max(n, k): elements of A (m x k) and of C (m x n); e.g. with
 *                          n = k = 8192, m up to 262143
 * Workspaces and tuning scratch are sized from these in 64-bit arithmetic (size_t). */
#define MGEN_MAX_PACKED_WORDS 2147483647LL
#define MGEN_MAX_ELEMENTS 2147483647LL

/* Status codes: XX(name, value, message). Values are stable. */
#define MGEN_STATUS_MAP(XX)                                                                  \
  XX(OK, 0, "success")                                                                       \
  XX(ERR_INVALID_ARG, -1, "invalid argument")                                                \
  XX(ERR_NULL_POINTER, -2, "null pointer")                                                   \
  XX(ERR_MISALIGNED, -3, "buffer not 16-byte aligned")                                       \
  XX(ERR_UNSUPPORTED_SHAPE, -4, "shape not supported by any kernel")                         \
  XX(ERR_UNSUPPORTED_FORMAT, -5, "unsupported format, activation or group size")            \
  XX(ERR_NO_KERNEL, -6, "no kernel in the table runs on this device")                       \
  XX(ERR_UNKNOWN_KERNEL, -7, "no kernel of that name in the table")                         \
  XX(ERR_CUDA, -8, "CUDA error")                                                             \
  XX(ERR_NO_MEMORY, -9, "out of memory")                                                     \
  XX(ERR_BUFFER_TOO_SMALL, -10, "buffer too small")                                         \
  XX(ERR_CACHE_FORMAT, -11, "malformed autotune cache file")                                 \
  XX(ERR_IO, -12, "file input/output error")                                                 \
  XX(ERR_CACHE_MISMATCH, -13, "autotune cache file belongs to another device or format")    \
  XX(ERR_STREAM_CAPTURING, -14, "the stream is being captured into a CUDA graph")           \
  XX(ERR_WRONG_DEVICE, -15, "the current CUDA device is not the context's device")

typedef enum mgen_status {
#define MGEN_STATUS_ENUM_(name, value, msg) MGEN_##name = value,
  MGEN_STATUS_MAP(MGEN_STATUS_ENUM_)
#undef MGEN_STATUS_ENUM_
} mgen_status;

/* Static text for a status; never NULL ("unknown status" for values outside the map). */
MGEN_API const char *mgen_status_str(mgen_status status);

/* MGEN_VERSION_NUMBER of the library actually linked. */
MGEN_API int mgen_version_number(void);

/* ---------------------------------------------------------------- dispatch table */

/* The table compiled into this library (generated by marlin-gen). Static storage. */
MGEN_API const mgen_table *mgen_builtin_table(void);
/* Index of the kernel called `name` in `table`, or -1. */
MGEN_API int mgen_table_find(const mgen_table *table, const char *name);

/* ---------------------------------------------------------------- context */

typedef struct mgen_ctx mgen_ctx;

/* Log levels passed to the callback. */
typedef enum mgen_log_level { MGEN_LOG_INFO = 0, MGEN_LOG_WARN = 1 } mgen_log_level;
typedef void (*mgen_log_fn)(void *user, mgen_log_level level, const char *message);

typedef struct mgen_ctx_opts {
  int device;          /* CUDA device ordinal; -1 = the calling thread's current device */
  mgen_log_fn log;     /* optional; may be called from any thread using the context */
  void *log_user;
  int max_workspaces;  /* reduction workspaces for eager streams, 1..4; 0 = 4, and as many
                          for streams capturing into graphs. Bounds the context's device
                          memory ("Workspaces and streams" below) */
  int plain_launches;  /* 0: on sm_90 and later every GEMM is a programmatic dependent launch:
                          its blocks start while the stream's previous kernel drains, copy their
                          first weights, and wait for that kernel before reading A or writing C
                          (the same order and results as an ordinary launch; "Weights are
                          read-only" below); 1: ordinary launches, nothing overlaps */
  int max_sms;         /* SMs a GEMM spreads over: 0 = all of the device's; n > 0: at most n (an
                          engine keeping SMs free for kernels that run beside its GEMMs, e.g.
                          communication). Grids, stream-K plans, workspaces, the cost model and
                          the autotune cache's `sms` then count n SMs; more than the device has
                          means all of them */
} mgen_ctx_opts;

/* Whether CUDA can run on this machine, without making a context (a program that should skip
 * where there is no GPU but fail where CUDA is broken). MGEN_OK with *count the number of
 * devices, 0 where there is none or no NVIDIA driver is installed; ERR_CUDA where a driver is
 * installed but CUDA cannot start (older than this CUDA runtime, or damaged). `why` (may be
 * NULL) gets the reason in why_size bytes, e.g. "no NVIDIA driver installed (...)". Statuses:
 * OK, ERR_NULL_POINTER (count), ERR_CUDA. Thread-safe. */
MGEN_API mgen_status mgen_device_count(int *count, char *why, size_t why_size);

/* Creates a context on a device over `table` (usually mgen_builtin_table(); the table must
 * outlive the context). Allocates a first reduction workspace (its size:
 * mgen_ctx_workspaces) and prepares every kernel the device can run. `opts` may be NULL
 * (current device, no log, 4 workspaces).
 * Statuses: OK, ERR_NULL_POINTER, ERR_INVALID_ARG (bad device, max_workspaces or max_sms),
 * ERR_NO_KERNEL, ERR_CUDA (CUDA cannot start here: no NVIDIA driver installed, no device, or a
 * driver that is installed but unusable, each named as such; or a sticky error, above),
 * ERR_NO_MEMORY. On failure *out is untouched and nothing leaks; the message
 * "mgen_ctx_create: <mgen_status_str>: <why>" (e.g. "mgen_ctx_create: CUDA error: no NVIDIA
 * driver installed (...) (cudaGetDevice: cudaErrorInsufficientDriver)") is
 * mgen_ctx_last_error(NULL) on this thread, and a failure past the argument checks also goes
 * to opts->log as a warning. */
MGEN_API mgen_status mgen_ctx_create(mgen_ctx **out, const mgen_table *table,
                                     const mgen_ctx_opts *opts);
/* Frees the context and its workspaces. NULL is a no-op. Not while GEMMs on it are in flight:
 * synchronize their streams first. Graphs that captured its GEMMs point into its workspaces:
 * never replay them after this call (destroy them with it). */
MGEN_API void mgen_ctx_destroy(mgen_ctx *ctx);
/* Message of the calling thread's last failing call on `ctx` ("" if this thread's last
 * failure was on another context, or it has none). Per thread, so other threads' failures
 * never change it and reading needs no lock. The text is in thread-local storage, valid until
 * this thread's next call into libmgen. Never NULL. For ctx == NULL: why this thread's last
 * mgen_ctx_create failed ("mgen_ctx_create: <mgen_status_str>: <why>", with the CUDA error's
 * name where CUDA failed), which the next mgen_ctx_create clears; without one (the last create
 * succeeded, or none was made), "no context (mgen_ctx is NULL)". */
MGEN_API const char *mgen_ctx_last_error(const mgen_ctx *ctx);

/* The context's reduction workspaces on the device: *bytes_each (every workspace has the same
 * size: 4 * SMs * max(2 * blocks_per_sm * tile_m * tile_n) + 4 * SMs * max(blocks_per_sm)
 * over the table's kernels: two FP32 slots per block of a full grid, for both families; 33 MiB
 * on a 132-SM H200 with the builtin table), *allocated
 * (how many exist now) and *limit (the most there can be: max_workspaces for eager streams and
 * as many for capturing ones). Any pointer may be NULL. Statuses: OK, ERR_NULL_POINTER (ctx). */
MGEN_API mgen_status mgen_ctx_workspaces(const mgen_ctx *ctx, size_t *bytes_each, int *allocated,
                                         int *limit);
/* Compute capability of the context's device as 10*major+minor (e.g. 90). */
MGEN_API int mgen_ctx_sm(const mgen_ctx *ctx);

/* ---------------------------------------------------------------- weights */

/* Packed weights: caller-owned device buffers plus their description. Fill `wfmt`, `act`,
 * `scheme`, `group`, `n`, `k` (and `layout`, or leave it 0), then size the buffers with
 * mgen_weights_bytes() and allocate them. The valid combinations are the format table's
 * (templates/formats.lua; mgen_scheme and mgen_layout are in mgen_kernel.h): today u4b8 +
 * GROUP with group 32/64/128/CHANNEL; fe2m1 + NVFP4 with group 16; fe2m1 + MXFP4 with
 * group 32; u4 + ASYM with group 32/64/128/CHANNEL; every format in the MMA layout; u4b8 also
 * in the E4M3 layout; u4 also in the E4M3 layout; fe2m1 + MXFP4 also in the E4M3 layout.
 *
 * Layouts. Packed weights are in one layout, and a kernel reads only weights in its family's
 * layout (the layout is part of the kernel-choice key): the packing follows the family's MMA
 * fragments so that its main loop loads and dequantizes without shuffles, and no layout suits
 * every family. Weights for kernels of two families are packed twice, at twice the memory.
 * The packed bytes are for the activation type `act` they were packed for (fe2m1 words are
 * bit-permuted per type) and for this library version: pack again rather than store them.
 * MGEN_LAYOUT_E4M3 holds W4A8 words (the FP8 wgmma fragments, same sizes as the MMA layout):
 * weights quantized, packed or imported into it are read by mgen_gemm_a8 (FP8 activations,
 * sm_90): u4b8 and u4 (its zero points subtracted in the E4M3 bytes, exactly) at groups 128
 * and CHANNEL, and MXFP4; mgen_gemm refuses them. MXFP4 in the E4M3 layout folds each block's
 * power-of-two scale into the E4M3 weights, exactly for blocks at most 11 binades below their
 * column's largest; a block further down is stored with its codes rounded to that floor (to
 * the nearest, ties to even: an error of at most 2^-13 times the column's largest block scale
 * 2^(e_max - 127)).
 * `layout` 0 (MGEN_LAYOUT_DEFAULT) means the format's default layout, resolved by the library
 * at each call (the field is not rewritten); a layout the format cannot be packed in is
 * ERR_UNSUPPORTED_FORMAT in mgen_weights_bytes, quantize, pack and GEMM.
 *
 * K padding. Packed weights are laid out as if k were k_packed = k rounded up to a multiple of
 * 128 (k itself where it is one): the kernels step through K in tiles of 64 or 128, and the
 * padding lets every one of them run any k the group allows. The padded positions hold what
 * mgen_quantize makes of zero weights (u4b8 code 8 and scale 1.0; fe2m1 code 0 and block scale
 * byte 0; u4 code 8, and in padded scale rows scale 1.0 and zero point 8), written by every
 * call that writes packed weights; the GEMM never reads A past k, so they add nothing. mgen_weights_bytes's sizes include them; A, C and the checkpoint tensors
 * the calls read are of the true k.
 *
 * Weights are read-only from the call that writes them (mgen_quantize, mgen_pack*,
 * mgen_import_*) to their last GEMM. A GEMM on sm_90 and later copies its first weights
 * before it waits for the stream's previous kernel (mgen_ctx_opts.plain_launches), so the
 * kernel right before a GEMM must not be one that writes that GEMM's weights. The library's
 * own calls that write weights end with a kernel that closes this window (nothing to do after
 * them: the GEMM may follow at once). Weights written by the caller's own kernels need a
 * completed boundary before their first GEMM: an event the stream waits on, a copy or memset
 * on the stream, or any ordinary (non-programmatic) kernel launched after them. */
typedef struct mgen_weights {
  mgen_wfmt wfmt;      /* MGEN_WFMT_U4B8, MGEN_WFMT_FE2M1 or MGEN_WFMT_U4 */
  mgen_act act;        /* activation type of the GEMMs (u4b8, u4: also the scales' type) */
  mgen_scheme scheme;  /* how the scales are stored */
  int group;           /* K elements per scale (see above) */
  int n, k;            /* the weight is n x k (nn.Linear: out_features x in_features) */
  void *d_q;           /* packed 4-bit codes, qbytes = n * k_packed / 2 ("K padding" above) */
  void *d_scales;      /* packed scales: u4b8 (k_packed/group or 1) * n * 2 bytes; fe2m1
                          (k_packed/group) * n bytes, padded to 16, then n FP32 column factors;
                          u4 (k_packed/group or 1) * n * 2 bytes, padded to 16, then as many
                          4-bit zero points (n/2 bytes a row) */
  mgen_layout layout;  /* packed layout, 0 = the format's default (see "Layouts" above) */
  const void *d_bias;  /* optional bias of the GEMMs over these weights, NULL for none: n
                          values of type act (the moe GEMM: local_experts rows of n, expert
                          e's at e * n), 16-byte aligned, added in FP32 to every row of C
                          after the scales (and before a moe pair's router weight), rounded
                          once with it. Read by mgen_gemm, mgen_gemm_a8, mgen_moe_gemm and
                          their _kernel forms only; quantize, pack and import ignore it */
} mgen_weights;

/* Bytes needed for the packed codes and scales of `w` (only wfmt, act, scheme, group, layout,
 * n, k are read). Checks the combination (see mgen_weights): the scheme, group and layout
 * valid for the format, and the shape rule under "Conventions" for the builtin table's kernels
 * of every architecture (no device here: quantize, pack and import then check the device's).
 * Statuses: OK, ERR_NULL_POINTER, ERR_INVALID_ARG (bad enum, n or k < 1),
 * ERR_UNSUPPORTED_FORMAT (incl. a layout the format lacks), ERR_UNSUPPORTED_SHAPE (the shape
 * rules under "Conventions"). */
MGEN_API mgen_status mgen_weights_bytes(const mgen_weights *w, size_t *qbytes, size_t *sbytes);

/* Quantizes d_w (n x k, row-major, as nn.Linear stores it, of type w->act: FP16 or BF16)
 * into weights `w` on the GPU, by w->scheme (FP32 arithmetic, round to nearest even):
 * - GROUP (u4b8): per (column, group) s = act(2 * max|w| / 15) (1 if that is 0: an all-zero
 *   group) and q = clamp(rint(w / s) + 8, 0, 15) with the rounded s; scales of type w->act.
 * - ASYM (u4; AWQ's recipe): per (column, group) min and max of w, s = act((max - min) / 15)
 *   (1 if that is 0: a constant group; computed without overflowing FP32 for any finite
 *   BF16 weights), the zero point z = clamp(rint(-min / s), 0, 15) and
 *   q = clamp(rint(w / s) + z, 0, 15), both with the rounded s; value (q - z) * s.
 * - NVFP4 (NVIDIA's recipe): global = amax(tensor) / (6 * 448) (1 for an all-zero tensor);
 *   per 16 K elements s = e4m3(block amax / 6 / global), saturating at 448; codes
 *   e2m1(w / (s * global)), saturating at 6.
 * - MXFP4 (OCP MX): per 32 K elements the shared exponent e = floor(log2(block amax)) - 2
 *   (E2M1's largest exponent), clamped to the E8M0 range; codes e2m1(w / 2^e), saturating.
 * Then packs codes and scales into the kernels' layout.
 * Weights must be finite. Asynchronous on `stream`; d_w must stay valid until the stream
 * reaches this point. Allocates nothing.
 * Statuses: OK, ERR_NULL_POINTER, ERR_MISALIGNED, ERR_INVALID_ARG, ERR_UNSUPPORTED_FORMAT,
 * ERR_UNSUPPORTED_SHAPE, ERR_WRONG_DEVICE, ERR_CUDA. */
MGEN_API mgen_status mgen_quantize(mgen_ctx *ctx, const void *d_w, mgen_weights *w, void *stream);

/* FP8 E4M3 activations (W4A8: mgen_gemm_a8's A and its row scales): x [m, k] row-major FP16 or BF16 (act) -> d_q [m, k] E4M3 codes and d_scales [m] FP32,
 * row i's scale and codes
 *   s_i = amax_i / 448 (FP32 division; 1 for a row of zeros), amax_i = max_j |x[i][j]|
 *   q[i][j] = e4m3(x[i][j] / s_i) (FP32 division; nearest, ties to even, saturating at 448;
 *             the sign bit x's, so -0 gives 0x80)
 * so x[i][j] ~ value(q[i][j]) * s_i, 448 the row's largest code. x must be finite. k a
 * positive multiple of 16; d_x and d_q 16-byte aligned, d_scales 4-byte aligned. One kernel on
 * `stream` (d_x read, d_q and d_scales written when the stream gets there); allocates nothing.
 * Statuses: OK, ERR_NULL_POINTER, ERR_INVALID_ARG (act, m < 1, k), ERR_MISALIGNED,
 * ERR_WRONG_DEVICE, ERR_CUDA. */
MGEN_API mgen_status mgen_quantize_act(mgen_ctx *ctx, mgen_act act, int m, int k,
                                       const void *d_x, uint8_t *d_q, float *d_scales,
                                       void *stream);

/* Quantized weights as a checkpoint stores them, for mgen_pack_weights: device buffers the
 * caller owns (read only, until `stream` reaches the packing) and their sizes in bytes:
 *   w->wfmt  codes (codes_bytes)                        scales (scales_bytes)
 *   u4b8     n x k uint8, one code 0..15 per byte,      (k/group) x n of type w->act (GPTQ's
 *            value = (code - 8) * scale: n*k            layout; 1 x n per channel): rows*n*2
 *   fe2m1    n x k/2 bytes, two E2M1 codes per byte,    n x k/group bytes (E4M3 for NVFP4,
 *            the low nibble the lower k index: n*k/2    E8M0 for MXFP4): n*k/group
 *   u4       n x k uint8, one code 0..15 per byte       (k/group) x n of type w->act (1 x n per
 *            (the checkpoint's unsigned q): n*k         channel): rows*n*2
 * global_scale: NVFP4's per-tensor FP32 decode scale (as mgen_pack_fp4's); ignored otherwise.
 * zeros (zeros_bytes): u4's zero points, (k/group) x n uint8 (1 x n per channel), one zero
 * 0..15 per byte, value = (code - zero) * scale: rows*n; required for u4 (NULL:
 * ERR_NULL_POINTER), and NULL for the formats without zero points (else ERR_INVALID_ARG).
 * The struct grows at its end only: zero-initialize it ({0} or memset) so that fields added
 * later are NULL / 0. */
typedef struct mgen_pack_src {
  const void *codes;
  size_t codes_bytes;
  const void *scales;
  size_t scales_bytes;
  float global_scale;
  const void *zeros;
  size_t zeros_bytes;
} mgen_pack_src;

/* Packs already-quantized weights of any format (w->wfmt; the table above) into the kernels'
 * layout on the GPU: the one packing entry point (mgen_pack and mgen_pack_fp4 are it for one
 * format each, with their own argument names in messages). Sizes other than the table's are
 * ERR_INVALID_ARG naming src->codes_bytes, src->scales_bytes or src->zeros_bytes. The inputs
 * are checked on the GPU first, as mgen_pack and mgen_pack_fp4 check theirs (a u4b8 or u4
 * code or a u4 zero above 15, a non-finite scale: ERR_INVALID_ARG naming the first, nothing
 * packed, w->d_q's first 16 bytes overwritten), so it blocks until `stream` has run the check: a load-time call; not while the
 * stream is being captured (ERR_STREAM_CAPTURING). Thread-safe as mgen_pack. Statuses: OK,
 * ERR_NULL_POINTER (ctx, src, w or a buffer NULL), ERR_MISALIGNED, ERR_INVALID_ARG,
 * ERR_UNSUPPORTED_FORMAT, ERR_UNSUPPORTED_SHAPE, ERR_WRONG_DEVICE, ERR_STREAM_CAPTURING,
 * ERR_CUDA. */
MGEN_API mgen_status mgen_pack_weights(mgen_ctx *ctx, const mgen_pack_src *src, mgen_weights *w,
                                       void *stream);

/* mgen_pack_weights for u4b8 weights, without sizes (d_codes n*k bytes and d_scales as its
 * table says are assumed), messages naming d_codes and d_scales; fe2m1 weights are
 * ERR_UNSUPPORTED_FORMAT naming mgen_pack_fp4. In detail:
 * Packs already-quantized u4b8 weights: d_codes is n x k uint8, one code 0..15 per byte
 * (value = (code - 8) * scale); d_scales is (k/group) x n of type w->act, FP16 or BF16
 * (GPTQ's scales layout; 1 x n for per-channel); the bits are moved, not converted.
 * Inputs are checked on the GPU first: a code above 15, or a scale that is inf or NaN (every
 * output of its column would be NaN), is ERR_INVALID_ARG naming the first such element, and
 * nothing is packed (w->d_q's first 16 bytes are overwritten). So mgen_pack blocks until
 * `stream` has run the check (it reads 16 bytes back): a load-time call; not while the stream
 * is being captured (ERR_STREAM_CAPTURING). Statuses: those of mgen_quantize, plus
 * ERR_STREAM_CAPTURING. */
MGEN_API mgen_status mgen_pack(mgen_ctx *ctx, const uint8_t *d_codes, const void *d_scales,
                               mgen_weights *w, void *stream);

/* mgen_pack_weights for fe2m1 weights (codes d_packed, scales d_block_scales), messages naming
 * these arguments; u4b8 weights are ERR_UNSUPPORTED_FORMAT naming mgen_pack. In detail:
 * Imports an FP4 checkpoint into fe2m1 weights `w` (scheme NVFP4 or MXFP4), repacking on the
 * GPU. d_packed: n x k/2 bytes, two E2M1 codes per byte, the low nibble the lower k index (as
 * ModelOpt NVFP4 `weight` and OCP MXFP4 `blocks` store them); packed_bytes must be n*k/2.
 * d_block_scales: n x k/group bytes, row n holding column n's scales in K order (NVFP4: E4M3
 * `weight_scale`, either sign: a negative one is stored as its magnitude with its sign moved
 * into the block's codes, the same weights; MXFP4: E8M0 `scales`); scale_bytes must be
 * n*k/group. global_scale: NVFP4's
 * per-tensor FP32 decode scale (`weight_scale_2`, value = e2m1 * e4m3 * global_scale); must be
 * finite and positive, and global_scale * 2^7 finite (the kernels' column factor), else
 * ERR_INVALID_ARG; ignored for MXFP4 (any value, NaN included).
 * The block scales are checked on the GPU first, as mgen_pack checks its scales: a NaN (E4M3
 * 0x7f or 0xff, which has no inf; E8M0 0xff, NaN in OCP MX), which would make every output of
 * its column NaN, is ERR_INVALID_ARG naming the first one (d_block_scales[i], its column and
 * block), and nothing is packed (w->d_q's first 16 bytes are overwritten). So mgen_pack_fp4
 * blocks until `stream` has run the check (it reads 16 bytes back): a load-time call; not
 * while the stream is being captured (ERR_STREAM_CAPTURING). Statuses: as mgen_quantize, plus
 * ERR_INVALID_ARG for mismatched sizes, a bad global scale or a NaN block scale, and
 * ERR_STREAM_CAPTURING. */
MGEN_API mgen_status mgen_pack_fp4(mgen_ctx *ctx, const uint8_t *d_packed, size_t packed_bytes,
                                   const uint8_t *d_block_scales, size_t scale_bytes,
                                   float global_scale, mgen_weights *w, void *stream);

/* ---------------------------------------------------------------- checkpoint import
 *
 * Int4 checkpoints are imported from their tensors as the checkpoint stores them (on the GPU,
 * contiguous row-major, unchanged), in one call per weight, into u4b8 weights (symmetric) or
 * u4 weights (MGEN_WFMT_U4, scheme MGEN_SCHEME_ASYM: zero points) `w` in w->layout (the mma
 * layout today, read by every kernel family). Which call, weights and fields:
 *
 *   quantization_config                         call                   w
 *   quant_method "gptq" (AutoGPTQ, GPTQModel,   mgen_import_gptq       u4b8; group = group_size,
 *     optimum), bits 4, sym true, desc_act                             -1 -> MGEN_GROUP_CHANNEL
 *     false (or g_idx the identity);
 *     checkpoint_format "gptq" -> MGEN_GPTQ_ZEROS_MINUS_ONE, "gptq_v2" -> MGEN_GPTQ_ZEROS_EXACT,
 *     absent -> MGEN_GPTQ_ZEROS_AUTO
 *   the same with sym false                     mgen_import_gptq       u4, ASYM; group as above
 *     checkpoint_format "gptq" or absent -> MGEN_GPTQ_ZEROS_MINUS_ONE, "gptq_v2" -> _EXACT
 *     (AUTO is refused for u4: mgen_gptq_zeros)
 *   quant_method "awq" (AutoAWQ), bits 4,       mgen_import_awq        u4, ASYM; group =
 *     zero_point true, version "gemm"                                  q_group_size
 *   quant_method "compressed-tensors", format   mgen_import_ct         u4b8; group_size (strategy
 *     "pack-quantized", weights num_bits 4,                            "group"); strategy
 *     type "int", symmetric true (W4A16)                               "channel" -> CHANNEL
 *   the same with symmetric false               mgen_import_ct         u4, ASYM; group as above
 *     (weight_zero_point present)
 *   quant_method "modelopt", NVFP4              mgen_pack_fp4          fe2m1, 16 (NVFP4)
 *   OCP MXFP4 (e.g. gpt-oss "mxfp4")            mgen_pack_fp4          fe2m1, 32 (MXFP4)
 *
 * Act-order checkpoints (a g_idx that is not k / group, i.e. desc_act true or compressed-tensors
 * actorder "group" with a real permutation) are refused with ERR_UNSUPPORTED_FORMAT, into
 * either format: the kernels read contiguous groups. So are asymmetric ones into u4b8 (a GPTQ
 * zero other than 8, a compressed-tensors weight_zero_point; any AWQ checkpoint): import them
 * into u4, whose codes are the checkpoint's q 0..15 and zero points z 0..15, w = (q - z) * s. */

/* Element types of checkpoint tensors. */
typedef enum mgen_dtype {
  MGEN_DTYPE_U8 = 1,   /* uint8 (FP4 bytes) */
  MGEN_DTYPE_I32 = 2,  /* int32 (packed 4-bit words, g_idx, GPTQ qzeros) */
  MGEN_DTYPE_F16 = 3,
  MGEN_DTYPE_BF16 = 4,
  MGEN_DTYPE_F32 = 5
} mgen_dtype;

/* One checkpoint tensor on the device: contiguous, row-major, `ndim` (1 or 2) dimensions.
 * data NULL means "absent" where a tensor is optional. data must be aligned to its element. */
typedef struct mgen_tensor {
  const void *data;
  mgen_dtype dtype;
  int ndim;
  int64_t shape[2];
} mgen_tensor;

/* How a GPTQ checkpoint stores its zero points (qzeros). AutoGPTQ and GPTQModel's "gptq"
 * format (v1) store each zero minus one (the dequantization reads qzeros + 1); GPTQModel's
 * "gptq_v2" stores the zero itself. Symmetric (u4b8 weights): the zero is 8, stored 7 or 8,
 * and AUTO takes whichever of the two every stored zero is. Asymmetric (u4 weights): the data
 * cannot tell the conventions apart (a stored 3 is a zero point 4 under v1 and 3 under v2, both
 * valid), and a wrong guess shifts every weight by one scale without any error, so AUTO is
 * refused (ERR_INVALID_ARG) and the caller says which: MINUS_ONE where checkpoint_format is
 * "gptq" or absent (the format's default on disk), EXACT for "gptq_v2". Under MINUS_ONE a
 * stored 15 would be zero point 16, which 4 bits cannot hold (v1 packing wraps a zero point 0
 * to 15): refused (ERR_UNSUPPORTED_FORMAT) naming the first such qzeros element. */
typedef enum mgen_gptq_zeros {
  MGEN_GPTQ_ZEROS_AUTO = 0,
  MGEN_GPTQ_ZEROS_MINUS_ONE = 1,  /* stored = zero - 1 (checkpoint_format "gptq", v1) */
  MGEN_GPTQ_ZEROS_EXACT = 2       /* stored = zero (checkpoint_format "gptq_v2") */
} mgen_gptq_zeros;

/* A GPTQ layer (`<prefix>.qweight` etc.), 4-bit, of an n x k nn.Linear (out x in):
 *   qweight  I32 [k/8, n]     eight codes along K per word, row k/8, code of k at bits 4 (k%8)
 *   scales   F16/BF16/F32 [k/group, n] ([1, n] per channel)
 *   qzeros   I32 [k/group, n/8] eight zeros along N per word (code of n at bits 4 (n%8));
 *            into u4b8 optional (data NULL: symmetric trusted, nothing checked); into u4
 *            required (ERR_NULL_POINTER)
 *   g_idx    I32 [k], the group of each K index; optional (data NULL: contiguous groups) */
typedef struct mgen_gptq {
  mgen_tensor qweight, scales, qzeros, g_idx;
  mgen_gptq_zeros zeros;  /* how qzeros stores the zero (above) */
} mgen_gptq;

/* A compressed-tensors "pack-quantized" layer (`<prefix>.weight_packed` etc.), num_bits 4:
 *   weight_packed  I32 [n, k/8]  eight codes along K per word, code of k at bits 4 (k%8),
 *                  stored as q + 8 (0..15)
 *   weight_scale   F16/BF16/F32 [n, k/group] ([n, 1] for strategy "channel")
 *   weight_zero_point  I32 [n/8, k/group] ([n/8, 1] per channel): the zero points of
 *                  symmetric false, packed along N (pack_to_int32, packed_dim 0): column n at
 *                  bits 4 (n%8) of word (n/8, g), stored zp + 8 (0..15) for the signed
 *                  zp -8..7, as the codes are stored q + 8: value (q - z) * s on the stored
 *                  values. Required into u4 weights (ERR_NULL_POINTER); into u4b8 it must be
 *                  absent (data NULL; ERR_UNSUPPORTED_FORMAT)
 *   weight_g_idx   I32 [k]; optional, as GPTQ's g_idx
 * (weight_shape, [n, k], is not read: it is w->n, w->k.) */
typedef struct mgen_ct {
  mgen_tensor weight_packed, weight_scale, weight_zero_point, weight_g_idx;
} mgen_ct;

/* An AutoAWQ layer (`<prefix>.qweight` etc.; quant_method "awq", version "gemm", zero_point
 * true), 4-bit, of an n x k nn.Linear (out x in):
 *   qweight  I32 [k, n/8]     eight codes along N per word, row k: nibble i (bits 4i..4i+3)
 *                             of word (k, n/8) holds column 8 (n/8) + [0,2,4,6,1,3,5,7][i]
 *                             (AutoAWQ's order_map)
 *   qzeros   I32 [k/group, n/8] the zero points z (0..15, stored as they are), packed as
 *                             qweight; required (ERR_NULL_POINTER)
 *   scales   F16/BF16/F32 [k/group, n] ([1, n] per channel)
 * value (q - z) * s. AWQ has no act order (no g_idx). */
typedef struct mgen_awq {
  mgen_tensor qweight, qzeros, scales;
} mgen_awq;

/* Import an AWQ / GPTQ / compressed-tensors pack-quantized layer into weights `w` (w->wfmt,
 * scheme, group as in the table above, n, k, layout, and d_q, d_scales sized by
 * mgen_weights_bytes): u4b8 (scheme GROUP; not from AWQ) takes the codes as they are (GPTQ's
 * q with zero 8 is u4b8's q + 8); u4 (scheme ASYM) the codes q and zero points z as they are
 * (GPTQ v1's stored z - 1 plus one). The scales are converted to w->act (round to nearest
 * even; a copy when the types agree). Every shape, dtype and alignment is checked against w
 * on the host first (ERR_INVALID_ARG naming the tensor, its shape and the expected one). Then
 * one kernel checks the data: g_idx is k / group at every k, every stored zero is the
 * symmetric one (u4b8) or a zero point 0..15 (u4: GPTQ v1's stored 15 is not), every scale is
 * finite in w->act; it writes its findings into d_scales and the host reads them back, so
 * these calls synchronize `stream` once (not allowed while it is being captured:
 * ERR_STREAM_CAPTURING). Only then is the layout written, asynchronously on `stream`. A
 * refused import (any status but OK and ERR_CUDA) leaves d_q untouched; d_scales' contents are
 * then unspecified. Allocates nothing. Thread-safe as every call on a context.
 * Statuses: OK, ERR_NULL_POINTER (a required tensor absent, u4's zero points included),
 * ERR_MISALIGNED, ERR_INVALID_ARG (a shape, dtype or ndim that does not match w; a non-finite
 * scale; MGEN_GPTQ_ZEROS_AUTO into u4), ERR_UNSUPPORTED_FORMAT (a format these calls do not
 * import into; act-order g_idx; asymmetric zeros or AWQ into u4b8; GPTQ v1's stored 15),
 * ERR_UNSUPPORTED_SHAPE (w's shape rules), ERR_STREAM_CAPTURING, ERR_WRONG_DEVICE, ERR_CUDA. */
MGEN_API mgen_status mgen_import_awq(mgen_ctx *ctx, const mgen_awq *src, mgen_weights *w, void *stream);
MGEN_API mgen_status mgen_import_gptq(mgen_ctx *ctx, const mgen_gptq *src, mgen_weights *w, void *stream);
MGEN_API mgen_status mgen_import_ct(mgen_ctx *ctx, const mgen_ct *src, mgen_weights *w, void *stream);

/* ---------------------------------------------------------------- GEMM */

/* C[m, w->n] = A[m, w->k] * W^T (+ w->d_bias on every row). d_a and d_c row-major, of type
 * `act` (FP16 or BF16), which must be the type the weights were prepared for (w->act: the
 * scales' type); contiguous,
 * 16-byte aligned. Any m >= 1. Enqueues on `stream`; no file I/O, and no allocation or host
 * synchronization except in a new stream's first call (its workspace, "Workspaces and streams"
 * below) and when MGEN_TUNE_ON_MISS tunes a miss. Runs on the calling thread's current device,
 * which must be the context's.
 * Picks the kernel from the cache, by tuning or by the cost model ("Kernel choice" below);
 * with MGEN_TUNE_ON_MISS a cache miss times the candidates first, in this call.
 * Statuses: OK, ERR_NULL_POINTER, ERR_MISALIGNED, ERR_INVALID_ARG (m < 1, bad enum),
 * ERR_UNSUPPORTED_FORMAT (act != w->act, a layout the format lacks, or no kernel for the
 * format, scheme, group and layout), ERR_NO_KERNEL
 * (the key's kernels all need a newer SM), ERR_UNSUPPORTED_SHAPE, ERR_WRONG_DEVICE, ERR_CUDA
 * (launch failure). */
MGEN_API mgen_status mgen_gemm(mgen_ctx *ctx, mgen_act act, int m, const void *d_a,
                               const mgen_weights *w, void *d_c, void *stream);

/* W4A8: FP8 E4M3 activations with FP32 row scales times 4-bit weights packed in the E4M3
 * layout (w->layout = MGEN_LAYOUT_E4M3; u4b8 or MXFP4, or u4 where the table has its kernels), on
 * sm_90 (the wgmma family):
 *   C[i, j] = a_scale(i) * sum_k value(A8[i, k]) * W[j, k],   a_scale(i) = d_a_scales[i] when
 *   a_scale_per_row is 1, d_a_scales[0] for every row when it is 0 (per tensor)
 * d_a8: m x w->k E4M3 codes, row-major (mgen_quantize_act's d_q and d_scales are these
 * operands); d_c: m x w->n of type act, which must be w->act (the scales' type: the output
 * type is chosen when the weights are packed). The products are exact in FP32 and summed in
 * FP32: the weights' codes are E4M3 values, the group scales multiply each group's FP32 sum
 * (MXFP4: the block scales are in the E4M3 values, the column factors multiply the totals).
 * Alignment: d_a8 and d_c 16 bytes, d_a_scales 4. Otherwise as mgen_gemm (choice, tuning,
 * workspace, streams). Statuses: as mgen_gemm; ERR_UNSUPPORTED_FORMAT also for weights in
 * another layout (those take mgen_gemm); ERR_INVALID_ARG for a_scale_per_row not 0 or 1;
 * ERR_NO_KERNEL on a device without the wgmma family. mgen_gemm refuses weights in the E4M3
 * layout (ERR_UNSUPPORTED_FORMAT: their kernels read FP8 activations). */
MGEN_API mgen_status mgen_gemm_a8(mgen_ctx *ctx, mgen_act act, int m, const void *d_a8,
                                  const float *d_a_scales, int a_scale_per_row,
                                  const mgen_weights *w, void *d_c, void *stream);
/* As mgen_gemm_a8, but runs the named kernel (as mgen_gemm_kernel). */
MGEN_API mgen_status mgen_gemm_a8_kernel(mgen_ctx *ctx, const char *kernel_name, mgen_act act,
                                         int m, const void *d_a8, const float *d_a_scales,
                                         int a_scale_per_row, const mgen_weights *w, void *d_c,
                                         void *stream);

/* As mgen_gemm, but runs the named kernel (tests, benchmarks, tuning). Additional statuses:
 * ERR_UNKNOWN_KERNEL; ERR_UNSUPPORTED_SHAPE / _FORMAT when that kernel cannot run the call. */
MGEN_API mgen_status mgen_gemm_kernel(mgen_ctx *ctx, const char *kernel_name, mgen_act act, int m,
                                      const void *d_a, const mgen_weights *w, void *d_c,
                                      void *stream);

/* Name of the kernel mgen_gemm (mgen_gemm_a8 for weights in the E4M3 layout) would run for
 * (act, m, w) from the cache or the cost model, without running or tuning anything. The string is the table's (static storage). Same
 * statuses as mgen_gemm minus ERR_CUDA and ERR_WRONG_DEVICE (any thread, any device). */
MGEN_API mgen_status mgen_gemm_choice(mgen_ctx *ctx, mgen_act act, int m, const mgen_weights *w,
                                      const char **kernel_name);

/* ---------------------------------------------------------------- mixture of experts
 *
 * A MoE layer's grouped GEMM in three calls on one stream, none of which synchronizes with the
 * host or allocates (graph-capturable), each deterministic (bit-identical run to run):
 *   1. mgen_moe_route_tokens: the tokens' top-k expert ids -> the (token, k) pairs (id = token * topk
 *      + k) sorted by expert into runs padded to block_rows, on the GPU;
 *   2. mgen_moe_gemm (gate_up, then down): C[id, :] = A[row of id, :] * W_e^T for each pair
 *      routed to this GPU's expert e, optionally times the pair's router weight (A's rows
 *      gathered through the route, or first permuted into its order: mgen_moe_permute);
 *   3. mgen_moe_sum: out[t, :] = sum over k of C[t * topk + k, :], in k order.
 * At decode the first step can go (mgen_moe_unsorted_pays, mgen_moe_route.unsorted): the GEMM
 * then takes every pair as a block of its own, reading its expert from the tokens' ids.
 * The GEMM's kernels are the table's MGEN_OP_MOE kernels (the mma family's where few rows reach
 * an expert, the wgmma family's where many do; a small set whose choice is the cost model's,
 * never tuned). block_rows is the chosen kernel's tile_m: mgen_moe_gemm_choice gives it before
 * routing. Bit-identical run to run means for the same route: the wgmma kernels plan their
 * blocks on the GPU over the tiles the route makes live (stream-K, as the dense GEMM over M), so
 * another route, or another SM count, may split a tile otherwise and round its last bits
 * otherwise (as the dense GEMM's M does: README "Determinism"). Python:
 * Context.moe_route, moe_gemm, moe_sum (marlin_gen), and marlin_gen.torch.fused_moe, a whole
 * MoE layer on them. */

/* A route: what mgen_moe_route_tokens reads (tokens' expert ids) and writes (caller-owned device
 * buffers, sized by mgen_moe_route_rows), and what the GEMM and sum read back. */
typedef struct mgen_moe_route {
  int m;                       /* tokens, >= 1 */
  int topk;                    /* experts per token, 1..64; m * topk < 2^30 */
  int num_experts;             /* E: ids in d_topk_ids are 0..E-1 (1..4096) */
  int local_experts;           /* experts on this GPU (in the weights): E without a map */
  int block_rows;              /* rows per block of the sorted list: the GEMM kernel's tile_m */
  const int32_t *d_topk_ids;   /* [m * topk]: token t's experts at t * topk ... (an id outside
                                  0..E-1 routes its pair nowhere) */
  const int32_t *d_expert_map; /* [E]: expert -> local index 0..local_experts-1, or -1 (not on
                                  this GPU: its pairs go nowhere); NULL: the identity */
  int32_t *d_sorted_ids;       /* [rows]: pair ids by local expert, increasing within one, runs
                                  padded with the id m * topk; past *d_num_padded all padding */
  int32_t *d_block_experts;    /* [rows / block_rows]: local expert of each block, -1 past
                                  *d_num_padded */
  int32_t *d_num_padded;       /* [1]: rows of the list in use, a multiple of block_rows */
  int unsorted;                /* 0: the sorted list above; 1: none (mgen_moe_unsorted_pays):
                                  every pair is a block of its own (its first row), its expert
                                  read by the GEMM from d_topk_ids through d_expert_map; the three
                                  buffers above are not read (may be NULL), mgen_moe_route_tokens
                                  launches nothing, mgen_moe_permute refuses it. For decode,
                                  where the route would cost more than the pairs that share an
                                  expert cost by reading its weights twice */
} mgen_moe_route;

/* *rows = the sorted list's capacity for r (m, topk, num_experts, local_experts, block_rows,
 * unsorted read; nothing else, the map's presence included):
 * m * topk + local_experts * (block_rows - 1), rounded down to a multiple of block_rows; the
 * route's buffers are d_sorted_ids[rows], d_block_experts[rows / block_rows], d_num_padded[1].
 * An unsorted route has no list: 0.
 * Statuses: OK, ERR_NULL_POINTER, ERR_INVALID_ARG (a field out of its range above; rows must
 * fit an int). */
MGEN_API mgen_status mgen_moe_route_rows(const mgen_moe_route *r, int *rows);

/* Routes on `stream` (one kernel): writes d_sorted_ids, d_block_experts and d_num_padded whole;
 * an unsorted route is checked and nothing is launched.
 * Buffers 4-byte aligned. Statuses: OK, ERR_NULL_POINTER, ERR_INVALID_ARG (as
 * mgen_moe_route_rows; local_experts != num_experts without a map), ERR_MISALIGNED,
 * ERR_WRONG_DEVICE, ERR_CUDA. */
MGEN_API mgen_status mgen_moe_route_tokens(mgen_ctx *ctx, const mgen_moe_route *r, void *stream);

/* The kernel mgen_moe_gemm would run for a route with r's m, topk and local_experts (its
 * block_rows, buffers and map are not read: local_experts < num_experts needs no map here) over
 * weights w: *kernel_name (static storage) and *block_rows, the block_rows to route with.
 * Chosen by the cost model at the mean rows per active expert (about m * topk / local_experts)
 * and their spread about it (each kernel's expected slabs of block_rows), or by the context's
 * cache. Statuses as mgen_moe_gemm minus ERR_CUDA, ERR_WRONG_DEVICE and
 * ERR_MISALIGNED. */
MGEN_API mgen_status mgen_moe_gemm_choice(mgen_ctx *ctx, mgen_act act, const mgen_moe_route *r,
                                          const mgen_weights *w, const char **kernel_name,
                                          int *block_rows);

/* Where the grouped GEMM finds a pair's row of A (mgen_moe_gemm's a_rows). */
typedef enum mgen_moe_a_rows {
  MGEN_MOE_A_TOKENS = 0, /* A [m, k], a row per token: pair id's is id / topk (gate_up) */
  MGEN_MOE_A_PAIRS = 1,  /* A [m * topk, k], a row per pair: id's is id (down) */
  MGEN_MOE_A_SORTED = 2  /* A [rows, k] in the route's order (mgen_moe_permute): row r of the
                            sorted list is A's row r. Read by whole blocks of rows (the wgmma
                            family's copy engine) instead of gathered row by row: faster where
                            experts get many rows; padding rows' contents reach no output */
} mgen_moe_a_rows;

/* *pays = 1 where mgen_moe_gemm over r (its m, topk, num_experts and local_experts; not its
 * unsorted) and w is expected to run faster unsorted (mgen_moe_route.unsorted) than routed plus
 * the route: the choice for an unsorted route (every pair a block of one row) is a kernel of a
 * family that runs it (the mma family) and the experts its pairs are expected to read twice
 * (uniform routing; none at M = 1, a token's top-k being distinct) cost fewer bytes of w than
 * half the route's time streams (a layer's two GEMMs share the route: take it unsorted where
 * both pay). H200 figures: DeepSeek-V3 to M = 2, Qwen3 and gpt-oss to 4, Mixtral at 1; else 0.
 * *block_rows: the block_rows to give the unsorted route (the kernel's tile_m). Statuses as
 * mgen_moe_gemm_choice. */
MGEN_API mgen_status mgen_moe_unsorted_pays(mgen_ctx *ctx, mgen_act act, const mgen_moe_route *r,
                                            const mgen_weights *w, int *pays, int *block_rows);

/* *pays = 1 where mgen_moe_gemm over r (its m, topk and local_experts) and w reads A faster
 * in the route's order (MGEN_MOE_A_SORTED) by more than mgen_moe_permute costs: the chosen
 * kernel reads it by whole blocks of rows (the wgmma family), experts get 64 rows or more on
 * average and n >= 4096 (a rule measured on an H200: bench/notes/v51.md); else 0. Statuses as
 * mgen_moe_gemm_choice. */
MGEN_API mgen_status mgen_moe_gemm_a_sorted(mgen_ctx *ctx, mgen_act act, const mgen_moe_route *r,
                                            const mgen_weights *w, int *pays);

/* The grouped GEMM over route r (routed on this stream, or before it): for each pair id in the
 * sorted list, C[id, 0..n-1] = A[a_row, :] * W_e^T, plus expert e's bias row where w->d_bias is
 * set ([local_experts, n]), times d_topk_weights[id] when that is not NULL (gpt-oss's down
 * projection: (A W^T + b) * weight, summed by mgen_moe_sum), e the pair's local expert, a_row
 * as a_rows (mgen_moe_a_rows) says. w describes one expert (n x k) and its d_q, d_scales point
 * at local_experts of them,
 * expert e's at e * qbytes and e * sbytes (mgen_weights_bytes of w). d_c is [m * topk, n];
 * rows of pairs routed nowhere are not written. d_a, d_c, w's buffers 16-byte aligned,
 * d_topk_weights ([m * topk] float) 4. The chosen kernel's tile_m must be r->block_rows
 * (mgen_moe_gemm_choice). No allocation except a new stream's first workspace (as mgen_gemm).
 * Statuses: as mgen_gemm, ERR_INVALID_ARG also for a route field or block_rows that does not
 * match the kernel. */
MGEN_API mgen_status mgen_moe_gemm(mgen_ctx *ctx, mgen_act act, const mgen_moe_route *r,
                                   int a_rows, const void *d_a, const mgen_weights *w,
                                   const float *d_topk_weights, void *d_c, void *stream);

/* As mgen_moe_gemm with the named MGEN_OP_MOE kernel (tests, benchmarks); ERR_UNKNOWN_KERNEL,
 * ERR_UNSUPPORTED_FORMAT / _SHAPE when it cannot run the call. */
MGEN_API mgen_status mgen_moe_gemm_kernel(mgen_ctx *ctx, const char *kernel_name, mgen_act act,
                                          const mgen_moe_route *r, int a_rows,
                                          const void *d_a, const mgen_weights *w,
                                          const float *d_topk_weights, void *d_c, void *stream);

/* A's rows in route r's order (routed on this stream, or before it), for mgen_moe_gemm with
 * MGEN_MOE_A_SORTED: d_sorted[i, 0..k-1] = d_a[row of sorted_ids[i], :] (a_rows
 * MGEN_MOE_A_TOKENS or _PAIRS: whose row, as for mgen_moe_gemm) for the rows i below
 * *d_num_padded; padding rows get zeros, rows past *d_num_padded are not written. Elements of
 * 16 bits (FP16 or BF16, copied as they are); k a positive multiple of 8; d_a, d_sorted
 * ([mgen_moe_route_rows, k]) 16-byte aligned, not overlapping. One kernel, no allocation.
 * Statuses: OK, ERR_NULL_POINTER, ERR_INVALID_ARG, ERR_MISALIGNED, ERR_WRONG_DEVICE, ERR_CUDA. */
MGEN_API mgen_status mgen_moe_permute(mgen_ctx *ctx, const mgen_moe_route *r, int a_rows, int k,
                                      const void *d_a, void *d_sorted, void *stream);

/* d_out[t, 0..n-1] = sum over j = 0..topk-1 in order of d_c[t * topk + j, :] over the pairs
 * routed to a local expert (the others' rows are not read), in FP32, rounded once to act; a
 * token with none gets zeros. d_c [m * topk, n], d_out [m, n], 16-byte aligned; n a multiple
 * of 8. Statuses: OK, ERR_NULL_POINTER, ERR_INVALID_ARG, ERR_MISALIGNED, ERR_WRONG_DEVICE,
 * ERR_CUDA. */
MGEN_API mgen_status mgen_moe_sum(mgen_ctx *ctx, mgen_act act, const mgen_moe_route *r, int n,
                                  const void *d_c, void *d_out, void *stream);

/* ================================================================ kernel choice, tuning, cache
 *
 * Kernel choice. mgen_gemm's key is (activation, weight format, scale scheme, group, layout,
 * n, k, M bucket) on the context's device. The candidates are the table's kernels of that
 * (activation, format, scheme, group, layout) that run on the device (their architecture
 * range) and that can
 * implement (n, k);
 * the choice among them is the first of:
 *   1. the context's cache record for the key (measured here, or loaded from a file);
 *   2. tuning, if the context's policy is MGEN_TUNE_ON_MISS and the stream is not capturing;
 *   3. the default: the lowest time predicted by the cost model (runtime/src/dispatch/cost.c: a
 *      roofline of dequantization, tensor and memory time with tile, wave and occupancy
 *      waste), evaluated at the bucket's upper M. Never an if/else chain over kernels.
 * M buckets, by upper bound: 1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, ... (2^j and
 * 1.5 * 2^j) ..., 12288, 16384, and one bucket above 16384 (runtime/src/dispatch/bucket.h says why).
 *
 * Workspaces and streams. The kernels' cross-block reduction needs a workspace that no two
 * concurrent GEMMs share. A context keeps up to opts.max_workspaces (default 4), each owned by
 * the stream that used it last (identified by cudaStreamGetId, so a destroyed and re-created
 * handle is a new stream); GEMMs on one stream reuse its workspace in stream order at no cost.
 * The first GEMM on a new stream takes a free workspace, allocating it (cudaMalloc) while
 * fewer than max_workspaces exist: that first call is the only one that allocates. Each
 * workspace has the size mgen_ctx_workspaces reports (33 MiB on an H200 with the builtin
 * table), so a context holds at most 2 * max_workspaces of them (264 MiB there by default;
 * 66 MiB with max_workspaces = 1, which serves every stream with one workspace and so makes
 * every GEMM record an event). With more streams than workspaces, a stream
 * takes the least recently used one after making its stream wait, on the GPU
 * (cudaStreamWaitEvent), for the last GEMM that used it; so once a second stream has been
 * seen, each GEMM also records an event (~0.3 us of host time). The host never waits for GPU
 * work of another stream; a thread may briefly wait for another thread to finish enqueueing.
 * GEMMs captured into CUDA graphs use workspaces reserved for graphs, one per capturing stream
 * (by its handle, which a capturing stream can be told by: a stream later created at the same
 * handle counts as the same one; cudaStreamPerThread counts as each calling thread's own),
 * up to max_workspaces of them, allocated by the first GEMM a stream captures:
 * GEMMs of one context on parallel branches of a graph (captured on streams forked from the
 * capturing one) each have their own when the branches are captured on different streams,
 * as they must be. A graph keeps the workspaces of its capture, so what the caller keeps
 * apart is replays: graphs whose GEMMs of one context were captured on the same stream must
 * not run at the same time (replay them on one stream, as engines do). Past max_workspaces
 * capturing streams, a new one shares the workspace of the stream that captured the longest
 * ago (the log callback warns, naming both): GEMMs captured on those two must not run at the
 * same time either. Eager GEMMs are unaffected.
 *
 * The cache is thread-safe: lookups, tuning, load and save may run concurrently from any
 * threads; a lookup takes one uncontended mutex. One thread tunes a key at a time; other
 * threads missing on it meanwhile use the default rather than wait.
 */

typedef enum mgen_tune_policy {
  MGEN_TUNE_NEVER = 0,  /* cache hit, else the cost model's default: mgen_gemm never times */
  MGEN_TUNE_ON_MISS = 1 /* a cache miss tunes the key once, inside the mgen_gemm call that
                           misses (blocking that thread for the timing, milliseconds), then
                           caches the winner; never while the stream is being captured (the
                           default is used and the log callback says so) */
} mgen_tune_policy;

/* Sets the context's tuning policy (a new context has MGEN_TUNE_NEVER) and the number of
 * timed runs per candidate (reps 0 = 20, at most 10000; at least 5 recommended). Call it before the context
 * is shared between threads. Statuses: OK, ERR_NULL_POINTER, ERR_INVALID_ARG. */
MGEN_API mgen_status mgen_ctx_set_tune(mgen_ctx *ctx, mgen_tune_policy policy, int reps);

/* What a tuning measured. Strings are the table's (static storage). */
typedef struct mgen_tune_result {
  const char *kernel;         /* the fastest candidate: what the cache now holds */
  const char *default_kernel; /* the cost model's choice */
  double us, default_us;      /* their median times, microseconds (of the last round) */
  int m_lo, m_hi;             /* the M bucket the record covers */
  int m_timed;                /* the M the candidates were timed at (the bucket's upper M) */
  int candidates;             /* kernels timed */
} mgen_tune_result;

/* Times every candidate kernel for the key of (w, m) and stores the fastest in the context's
 * cache, replacing any record of that key. Only the description fields of `w` are read
 * (d_q and d_scales may be NULL): the timing runs on scratch buffers of the problem's size
 * holding random data, weights rotated over copies that exceed twice the L2, on `stream` with
 * CUDA events: warm-up runs, then the median of tune_reps runs, candidates interleaved; when
 * that round's fastest is not the default, a runoff times it again with the default and any
 * candidate within 5% of it, and the runoff decides (and gives the times reported). It
 * allocates and frees the scratch and blocks until the timing is done; the caller's buffers
 * are never touched. `result` may be NULL. Statuses: OK, ERR_NULL_POINTER, ERR_INVALID_ARG,
 * ERR_UNSUPPORTED_FORMAT, ERR_UNSUPPORTED_SHAPE, ERR_NO_KERNEL, ERR_STREAM_CAPTURING (nothing
 * timed), ERR_WRONG_DEVICE, ERR_NO_MEMORY, ERR_CUDA. */
MGEN_API mgen_status mgen_tune(mgen_ctx *ctx, int m, const mgen_weights *w, void *stream,
                               mgen_tune_result *result);

/* Cache files (README.md, "Autotune cache"): line-oriented text, a versioned header (format,
 * library version, table hash, device name, SM count, compute capability, CUDA runtime and
 * driver versions), one record per key. `path` NULL means the environment variable MGEN_CACHE
 * (ERR_INVALID_ARG if unset or empty); an empty `path` ("") is ERR_INVALID_ARG whatever
 * MGEN_CACHE holds. mgen_gemm itself never touches files.
 *
 * mgen_cache_load merges the file's records into the context's cache: a key this context
 * tuned itself (mgen_tune, or a miss under MGEN_TUNE_ON_MISS) keeps its record; otherwise a
 * key in both keeps the lower measured time. A file for another device (name, SM count, compute capability),
 * another table hash, library version or a later format is well-formed but not used: no record is
 * applied and the log callback says why (a warning). A file of an earlier format (format 1:
 * before the operation field) is not used either, and the call says so: ERR_CACHE_MISMATCH,
 * with "... cache format 1 predates the operation field (format 2): re-run marlin-tune ..." in
 * last_error (and the log). Other CUDA runtime or driver versions
 * apply the records with a warning (same kernels; re-tune when convenient). Records naming a
 * kernel the table lacks, one that cannot run the key or an unknown M bucket, and records with
 * a time below 500 ns (no GEMM is that fast; such a record would win every merge) are skipped
 * with a warning. A key given on two lines counts once: the later line's record is used, and
 * a warning names both lines. A malformed file (syntax, truncation, size limits) is rejected whole and nothing
 * is applied: ERR_CACHE_FORMAT, with "path:line: what" in last_error; so is a record whose key
 * names weights that do not exist (u4b8 with a scheme, fe2m1/g32/nvfp4, an unsupported group).
 * A path that is not a regular file (a FIFO, a device, a directory) is refused at once with
 * ERR_IO ("... is not a regular file"); opening never blocks. `applied` (may be NULL)
 * receives the number of records taken. Statuses: OK, ERR_NULL_POINTER, ERR_INVALID_ARG,
 * ERR_IO (missing or unreadable), ERR_CACHE_FORMAT, ERR_CACHE_MISMATCH, ERR_NO_MEMORY. */
MGEN_API mgen_status mgen_cache_load(mgen_ctx *ctx, const char *path, int *applied);

#define MGEN_CACHE_REPLACE 1u /* mgen_cache_save: write this context's records only */

/* Writes the context's measured records to `path` atomically: a temporary file in the same
 * directory, fsync, rename, all under an exclusive lock on `path`.lock (flock; the file exists
 * only while a save holds it and holds the holder's pid), so writers in any processes never
 * leave a torn file and lose no records. A save waits for another's lock at most
 * MGEN_CACHE_LOCK_TIMEOUT seconds (environment; default 10), then returns ERR_IO naming the
 * holding process; the file is unchanged. A temporary file left by a save that was killed
 * (`path`.tmp.XXXXXX, older than a minute) is removed by the next save. A new file gets 0666
 * less the umask; an existing file keeps its permission bits. By
 * default (flags 0) the records the file holds for this device and table are merged in first:
 * for a key in both, this context's record if it tuned the key itself (a re-tune replaces the
 * file's record, whatever the times), else the file's (a record this context only loaded
 * never goes back over a newer one). A save never drops a valid record of the file it does not
 * replace: a line past the header that does not parse (a key this library does not know, a
 * bad field, a truncated end) is dropped with a warning naming it, and the other records are
 * kept; records the loader skips (above) are dropped. A file whose header is malformed is not
 * replaced (ERR_CACHE_FORMAT: whose records it holds is unknown) unless MGEN_CACHE_REPLACE
 * is given. A file for another device or a later format is not replaced
 * (ERR_CACHE_MISMATCH); one of an earlier format, or of this device from another table or
 * library version, is replaced, with a warning (its records cannot be used); a file that is not an mgen cache is never
 * replaced (ERR_CACHE_FORMAT). With MGEN_CACHE_REPLACE the file gets this context's records
 * only. A save never writes a file mgen_cache_load would reject: a merge of more than 65536
 * records, or a file over 16 MiB, is refused with ERR_BUFFER_TOO_SMALL, and the written file
 * is read back with the loader's own reader before the rename (ERR_CACHE_FORMAT if it would
 * not load); either way the file and the context's records are unchanged. If `path` is a
 * symbolic link (or a chain of up to 16), the file it points to is written (lock, temporary
 * file and rename are the target's) and the link stays; a dangling link's target is created.
 * `path` is checked before anything is created beside it: one that is not a regular file gives
 * ERR_IO, a non-empty file that is not an mgen cache ERR_CACHE_FORMAT. A `path`.lock that is
 * not a regular file, or holds anything but an mgen lock, gives ERR_IO and is left alone.
 * Statuses: OK, ERR_NULL_POINTER, ERR_INVALID_ARG, ERR_IO (e.g. a read-only directory, or the
 * lock held past the timeout; the file is unchanged), ERR_BUFFER_TOO_SMALL, ERR_CACHE_FORMAT, ERR_CACHE_MISMATCH,
 * ERR_NO_MEMORY. */
MGEN_API mgen_status mgen_cache_save(mgen_ctx *ctx, const char *path, unsigned flags);

/* Forgets every record and remembered default of the context's cache. Statuses: OK,
 * ERR_NULL_POINTER. */
MGEN_API mgen_status mgen_cache_clear(mgen_ctx *ctx);

/* Number of measured records in the context's cache (0 for NULL). */
MGEN_API size_t mgen_cache_count(const mgen_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_H */
