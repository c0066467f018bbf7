/* workspace.h -- the context's cross-block reduction workspaces, one per concurrently used
 * stream (mgen.h, "Workspaces and streams", is the contract; workspace.c the mechanics).
 */
#ifndef MGEN_WORKSPACE_H
#define MGEN_WORKSPACE_H

#include <pthread.h>
#include <stddef.h>

#include <cuda_runtime_api.h>

#include "mgen/mgen.h"

/* Slots per kind, at most (opts.max_workspaces): slot[0 ..] serve eager streams,
 * slot[MGEN__GRAPH_BASE ..] streams capturing into graphs. */
#define MGEN__WORKSPACES 4
#define MGEN__GRAPH_BASE MGEN__WORKSPACES

typedef struct mgen__slot {
  float *partials;          /* NULL: not allocated yet */
  int *counters;
  unsigned long long owner; /* the stream that used it last: cudaStreamGetId (eager), its
                               handle (capturing: a capturing stream has no id to query) */
  int owned;
  cudaEvent_t done;         /* recorded on the owner stream when the last user leaves */
  int has_event;            /* `done` follows every GEMM launched on the slot */
  int busy;                 /* threads between acquire and release */
  unsigned long long last_use;
} mgen__slot;

typedef struct mgen__pool {
  mgen__slot slot[2 * MGEN__WORKSPACES];
  size_t partial_bytes, counter_bytes;
  int eager;            /* slots in use per kind: 1..MGEN__WORKSPACES (opts.max_workspaces) */
  int tracked;          /* 0: slot 0 serves every call and nothing calls CUDA (tests) */
  int shared;           /* a second stream was seen: last users record `done` */
  unsigned long long clock;
  pthread_cond_t released; /* initialized exactly when tracked */
  cudaStream_t side;    /* zeroes new workspaces off every caller's stream */
} mgen__pool;

/* One GEMM's hold on a workspace, from acquire to release. */
typedef struct mgen__lease {
  int slot;
  float *partials;
  int *counters;
} mgen__lease;

struct mgen_ctx;

/* Sizes the workspaces for every kernel of the table (mgen_kernel.h's rule) and allocates and
 * zeroes the first; at most `eager` (1..MGEN__WORKSPACES) serve eager streams, and as many
 * streams capturing into graphs. Needs the
 * context's device current, ctx->lock initialized. */
mgen_status mgen__pool_init(struct mgen_ctx *ctx, int eager);
/* A pool of one given workspace, for contexts built by hand in tests: no CUDA calls. */
void mgen__pool_fixed(mgen__pool *pool, float *partials, int *counters);
/* Frees what mgen__pool_init and the acquires allocated (tracked pools only). */
void mgen__pool_free(struct mgen_ctx *ctx);

/* Takes the workspace for a GEMM on `stream` (see mgen.h). Takes ctx->lock itself; may
 * allocate (a new stream's first GEMM) and may make `stream` wait on an event. Statuses: OK,
 * ERR_CUDA, ERR_NO_MEMORY (with ctx's error message set). */
mgen_status mgen__ws_acquire(struct mgen_ctx *ctx, void *stream, mgen__lease *lease);
/* Ends the lease after the launch (whether or not it succeeded). */
void mgen__ws_release(struct mgen_ctx *ctx, void *stream, const mgen__lease *lease);

/* Fault injection for the tests (tests/gpu/test_faults_gpu.c): when set and returning nonzero,
 * a workspace allocation fails as cudaMalloc does when the device is out of memory. NULL in
 * production; set it only while no context is in use on another thread. */
extern int (*mgen__fault_alloc)(void);

/* Whether `stream` is being captured: 1, 0, or -1 if CUDA cannot tell (error in *err). */
int mgen__stream_capturing(void *stream, cudaError_t *err);

#endif /* MGEN_WORKSPACE_H */
