/* ctx.h -- the context's layout (struct mgen_ctx), the tuning problem its timer hook takes,
 * and what every call does with a context: check its device, launch a kernel with a workspace
 * lease. The layer above the cache and below prepare, tuning and context/ (LAYERS): those read
 * and write the fields; context/ctx.c creates and destroys. Not installed; tests/runtime may
 * include it (through context/internal.h) to build contexts over fake tables and fake timers.
 */
#ifndef MGEN_CTX_H
#define MGEN_CTX_H

#include <pthread.h>

#include <cuda_runtime_api.h>

#include "base/device.h"
#include "base/key.h"
#include "cache/cache.h"
#include "core/errors.h"
#include "core/workspace.h"
#include "mgen/mgen.h"

#define MGEN__DEFAULT_TUNE_REPS 20
#define MGEN__TUNE_WARMUP 3

/* The order in which a round of the timer runs its candidates. Tuning shuffles; the others
 * are bench_tune_method's (bench/notes/v31.md: no order removed the slow start a kernel has
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
                             its code in the SMs, as bench_gemm and the sweeps time it */
} mgen__tune_problem;

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
/* The device a stream belongs to, or -1 where that cannot be asked (tests install a fake). */
typedef int (*mgen__stream_device_fn)(void *stream);

struct mgen_ctx {
  int device;             /* CUDA ordinal */
  int sm;                 /* 10*major + minor */
  int sm_count;           /* multiprocessors GEMMs spread over (the device's, or max_sms) */
  int plain_launches;     /* mgen_ctx_opts.plain_launches */
  const mgen_table *table;
  mgen__device model;     /* the cost model's view of the device (base/device.h) */
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
  mgen__stream_device_fn stream_device;
  mgen_log_fn log;
  void *log_user;
  unsigned long long serial; /* tells contexts apart in the per-thread last error (ctx.c) */
};

/* current_device.c: ERR_WRONG_DEVICE unless the calling thread's current device is the
 * context's (every call that launches work or touches device memory checks it first). */
mgen_status mgen__check_device(mgen_ctx *ctx);
/* The calling thread's current CUDA device, or -1: the current_device hook's default. */
int mgen__current_device(void);
/* The device `stream` belongs to (cudaStreamGetDevice, CUDA 13 and later), or -1 (an older
 * toolkit, the legacy or per-thread default stream, or a failed query): the stream_device
 * hook's default. Asked only after a launch failed: never on a working call's path. */
int mgen__stream_device(void *stream);

/* launch.c: launches kernel `d` with the lease's workspace (no checks beyond the launcher). */
mgen_status mgen__launch(mgen_ctx *ctx, const mgen_kernel_desc *d, int m, const void *a,
                         const mgen_weights *w, void *c, void *stream, const mgen__lease *lease);
/* As mgen__launch, with the op's arguments (mgen_launch_args.op_args: NULL for dense). */
mgen_status mgen__launch_op(mgen_ctx *ctx, const mgen_kernel_desc *d, int m, const void *a,
                            const mgen_weights *w, void *c, const void *op_args, void *stream,
                            const mgen__lease *lease);
/* As mgen__launch, for a kernel of FP8 activations (mgen_gemm_a8): row i of `a` scaled by
 * a_scales[i * a_scale_stride] (mgen_launch_args.a_scales). */
mgen_status mgen__launch_a8(mgen_ctx *ctx, const mgen_kernel_desc *d, int m, const void *a,
                            const float *a_scales, int a_scale_stride, const mgen_weights *w,
                            void *c, void *stream, const mgen__lease *lease);

#endif /* MGEN_CTX_H */
