/* internal.h -- the context's layout and the helpers shared by the runtime's C files. Not
 * installed; tests/runtime may include it to build contexts over fake tables and fake timers.
 */
#ifndef MGEN_INTERNAL_H
#define MGEN_INTERNAL_H

#include <pthread.h>

#include <cuda_runtime_api.h>

#include "cache/cache.h"
#include "dispatch/cost.h"
#include "context/errors.h"
#include "mgen/mgen.h"
#include "dispatch/select.h"
#include "context/workspace.h"

#define MGEN__DEFAULT_TUNE_REPS 20
#define MGEN__TUNE_WARMUP 3

/* The order in which a round of the timer runs its candidates. Tuning shuffles; the others
 * are bench_tune_method's (bench/notes.md v31: no order removed the slow start a kernel has
 * after ~20 others' code, priming does -- mgen__tune_problem.prime). */
typedef enum mgen__tune_order {
  MGEN__TUNE_FIXED = 0,     /* candidate 0 first, every round */
  MGEN__TUNE_ALTERNATE = 1, /* odd rounds reversed (with two candidates, ABBA) */
  MGEN__TUNE_ROTATE = 2,    /* round r starts at candidate r mod count, the rest in order */
  MGEN__TUNE_SHUFFLE = 3,   /* a fresh pseudo-random permutation each round (fixed seeds) */
} mgen__tune_order;

/* One tuning problem: what the timer times. */
typedef struct mgen__tune_problem {
  mgen__choice_key ck;
  int m;                  /* the M timed: the bucket's representative */
  const int *candidates;  /* table indexes */
  int count;
  int reps, warmup;
  void *stream;
  int order;              /* mgen__tune_order: the candidates' order within each round */
  int prime;              /* untimed launches of each candidate right before its timed one:
                             its code in the SMs, as bench_gemm and the sweeps time it (v31) */
} mgen__tune_problem;

/* The candidate (index into p->candidates) that round `r` of the timer runs at `step`, under
 * p->order (tune.c). `perm` (p->count ints) holds the round's permutation: a call with
 * step 0 makes it for MGEN__TUNE_SHUFFLE, later steps of the round read it. */
int mgen__tune_candidate_at(const mgen__tune_problem *p, int r, int step, int *perm);

/* Times each candidate of `p` on the device: us[i] = median microseconds of candidate i, or
 * a negative value if it cannot run. The real one is tune_timer.c's; tests install a fake. */
typedef mgen_status (*mgen__timer_fn)(struct mgen_ctx *ctx, const mgen__tune_problem *p,
                                      double *us);
/* Whether `stream` is being captured into a graph: 1, 0, or -1 (error; then not tuned), with
 * the query's CUDA error in *err (cudaSuccess unless -1), so that callers can name it: after a
 * sticky error (a kernel that faulted) this query is the first call to fail. */
typedef int (*mgen__capturing_fn)(struct mgen_ctx *ctx, void *stream, cudaError_t *err);
/* The calling thread's current CUDA device, or -1 (tests without a device install a fake). */
typedef int (*mgen__device_fn)(void);

struct mgen_ctx {
  int device;             /* CUDA ordinal */
  int sm;                 /* 10*major + minor */
  int sm_count;           /* multiprocessors GEMMs spread over (the device's, or max_sms) */
  int plain_launches;     /* mgen_ctx_opts.plain_launches */
  const mgen_table *table;
  mgen__device model;     /* the cost model's view of the device (cost.h) */
  /* Identity checked against cache file headers (cache_io.c). */
  char device_name[256];
  int cuda_runtime, cuda_driver;
  /* Reduction workspaces (workspace.h); sized by mgen_kernel.h's rule for every kernel. */
  mgen__pool pool;
  /* Kernel choice: cache, tuning policy, and the hooks tests replace. */
  pthread_mutex_t lock;       /* guards cache and pool */
  pthread_mutex_t tune_lock;  /* one tuning at a time (timings stay apart) */
  int host_ready;             /* the mutexes and the cache are initialized */
  mgen__cache cache;
  int tune_policy;           /* mgen_tune_policy */
  int tune_reps;
  int tuner_warm;            /* the GPU was spun up for timing once (tune_timer.c) */
  mgen__timer_fn timer;
  mgen__capturing_fn capturing;
  mgen__device_fn current_device;
  mgen_log_fn log;
  void *log_user;
  unsigned long long serial; /* tells contexts apart in the per-thread last error (ctx.c) */
};

/* Initializes the host-side parts of a context (locks, cache; tune_reps and the hooks where
 * zero). mgen_ctx_create calls it; tests call it on contexts they build by hand. */
mgen_status mgen__ctx_init_host(mgen_ctx *ctx);
void mgen__ctx_free_host(mgen_ctx *ctx);

/* The generated table (mgen_table.c). */
extern const mgen_table mgen__builtin_table;

/* ERR_WRONG_DEVICE unless the calling thread's current device is the context's (every call
 * that launches work or touches device memory checks it first). */
mgen_status mgen__check_device(mgen_ctx *ctx);

/* NULL, enum values, group sign and scheme of `w` (weights.c); ctx may be NULL. */
mgen_status mgen__check_kind(mgen_ctx *ctx, const mgen_weights *w);
/* The one check of a weight description (weights.c), used by every entry point: kind, group,
 * and the shape rules (mgen.h, "Shapes": the rule of the key's kernels in ctx's table on
 * ctx->sm, dispatch/shape_rule.h; ctx NULL: the builtin table's, any architecture; then the
 * packed layout's own: n a multiple of 64, k of the group (64 per channel), n * k_packed / 8
 * fitting an int). ERR_NULL_POINTER,
 * ERR_INVALID_ARG, ERR_UNSUPPORTED_FORMAT, ERR_UNSUPPORTED_SHAPE. */
mgen_status mgen__check_desc(mgen_ctx *ctx, const mgen_weights *w);
/* mgen__check_desc, then m >= 1 with m * max(n, k) fitting an int (gemm.c): the checks of
 * every call that computes a product (GEMM, choice, tuning). */
mgen_status mgen__check_problem(mgen_ctx *ctx, int m, const mgen_weights *w);
/* w->d_q and w->d_scales: not NULL, 16-byte aligned (weights.c; GEMM, quantize and pack). */
mgen_status mgen__check_weight_buffers(mgen_ctx *ctx, const mgen_weights *w);

/* OK for err 0 (cudaSuccess), else the status of CUDA error `err` with "what: message (name)"
 * in ctx (weights.c; quantize, pack and import). */
mgen_status mgen__launched(mgen_ctx *ctx, const char *what, int err);

/* OK unless `stream` is being captured into a graph (ERR_STREAM_CAPTURING, "call: the stream is
 * being captured into a CUDA graph: why") or its capture status cannot be queried (the CUDA
 * error, named): for the calls that synchronize or read back (weights.c; tune, pack, import). */
mgen_status mgen__refuse_capture(mgen_ctx *ctx, void *stream, const char *call, const char *why);

/* gemm.c: launches kernel `d` with the lease's workspace (no checks beyond the launcher). */
mgen_status mgen__launch(mgen_ctx *ctx, const mgen_kernel_desc *d, int m, const void *a,
                         const mgen_weights *w, void *c, void *stream, const mgen__lease *lease);

/* tune.c: the kernel for a checked call, by cache, tuning or default (mgen.h, "Kernel
 * choice"); tunes only if may_tune and the policy says so (mgen_gemm_choice passes 0). */
mgen_status mgen__choose(mgen_ctx *ctx, const mgen__choice_key *ck, void *stream, int may_tune,
                         int *index);
/* The choice key of a call (bucket of m). */
mgen__choice_key mgen__choice_key_of(const mgen_weights *w, int m);

/* tune_timer.c: the CUDA timer and capture query installed by mgen_ctx_create. */
mgen_status mgen__gpu_timer(mgen_ctx *ctx, const mgen__tune_problem *p, double *us);
int mgen__gpu_capturing(mgen_ctx *ctx, void *stream, cudaError_t *err);
/* The timer's data: `bytes` at d from a pattern of MGEN__FILL_PATTERN_BYTES made on the host
 * (in `pattern`, that many bytes) -- values of type `act` with magnitudes 2^-5..1, or random
 * bytes when act is neither F16 nor BF16 -- then doubled by device copies on stream s. */
#define MGEN__FILL_PATTERN_BYTES (64 * 1024)
cudaError_t mgen__fill_random(void *d, size_t bytes, int act, uint64_t seed, cudaStream_t s,
                              uint16_t *pattern);

#endif /* MGEN_INTERNAL_H */
