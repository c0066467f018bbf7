/* workspace.c -- reduction workspaces per stream (mgen.h, "Workspaces and streams").
 *
 *   slot 0..3  eager streams (the first `eager` of them: opts.max_workspaces). A slot belongs
 *              to the stream that used it last (by
 *              cudaStreamGetId). Same stream: reuse, stream order keeps GEMMs apart.
 *              New stream: a free slot, else allocate one, else steal the least recently
 *              used idle slot behind cudaStreamWaitEvent(stream, slot.done).
 *   slot 4..7  graphs (again the first `eager`): a GEMM enqueued while its stream is capturing
 *              takes the slot of that stream, by handle (a capturing stream's id cannot be
 *              queried; cudaStreamPerThread names each host thread's own stream, so there
 *              the calling thread tells them apart: capturer_of). GEMMs captured on one
 *              stream are ordered in the graph, as on an eager stream; GEMMs on branches
 *              forked onto other streams run in parallel, so each capturing stream needs its
 *              own slot. A graph keeps its slot's pointers for its
 *              whole life and replays are not ours to order, so a slot is never freed or
 *              waited on: past `eager` capturing streams, a new one shares the least recently
 *              captured slot, and the log says so (mgen.h states what the caller must then
 *              keep apart).
 *
 * `done` is recorded, under the lock, by the last thread to leave a slot once two streams
 * have been seen (before that nobody can steal, so a single-stream context records nothing).
 * A slot is stealable when no thread holds it (busy == 0) and `done` was recorded after its
 * last use (has_event); acquiring resets has_event. Slots used before the second stream
 * appeared have no event and stay with their stream, which is why at least two eager slots
 * exist: the second stream always finds a free one. With one eager slot (max_workspaces = 1)
 * the pool is shared from the start: every GEMM records `done`, so the slot is always
 * stealable once its last user has left.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/ctx.h"
#include "core/errors.h"
#include "families/family.h"

_Static_assert(MGEN__WORKSPACES >= 2, "the second stream must find a free workspace");

int mgen__stream_capturing(void *stream, cudaError_t *err) {
  enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  *err = cudaStreamIsCapturing((cudaStream_t)stream, &status);
  if (*err != cudaSuccess) return -1;
  return status != cudaStreamCaptureStatusNone;
}

/* The largest workspace any kernel of the table needs on `sm_count` SMs (its family's rule,
 * families/<family>.c), at least one float and one counter. */
static void workspace_need(const mgen_table *table, int sm_count, size_t *floats, size_t *ints) {
  *floats = 1;
  *ints = 1;
  for (size_t i = 0; i < table->count; i++) {
    const mgen_kernel_desc *d = &table->kernels[i];
    const mgen__family *f = mgen__family_of(d->family);
    size_t kf = 0, ki = 0;
    if (f == NULL) continue; /* never selected (mgen__kernel_runs) */
    f->workspace(d, sm_count, &kf, &ki);
    if (kf > *floats) *floats = kf;
    if (ki > *ints) *ints = ki;
  }
}

int (*mgen__fault_alloc)(void);

/* cudaMalloc, or the out-of-memory failure that the test hook mgen__fault_alloc injects. */
static cudaError_t ws_malloc(void **p, size_t bytes) {
  if (mgen__fault_alloc != NULL && mgen__fault_alloc()) return cudaErrorMemoryAllocation;
  return cudaMalloc(p, bytes);
}

/* Allocates and zeroes slot `s` on the context's device, whatever the calling thread's
 * current device and whether or not some stream is being captured (relaxed capture mode
 * lets this thread allocate; the zeroing runs on the pool's own stream). */
static mgen_status slot_alloc(mgen_ctx *ctx, mgen__slot *s) {
  mgen__pool *p = &ctx->pool;
  mgen_status st = MGEN_OK;
  int previous = -1;
  enum cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  MGEN_CUDA_TRY(ctx, cudaThreadExchangeStreamCaptureMode(&mode));
  MGEN_CUDA_TRY(ctx, cudaGetDevice(&previous));
  if (previous != ctx->device) MGEN_CUDA_TRY(ctx, cudaSetDevice(ctx->device));
  if (p->side == NULL)
    MGEN_CUDA_TRY(ctx, cudaStreamCreateWithFlags(&p->side, cudaStreamNonBlocking));
  MGEN_CUDA_TRY(ctx, ws_malloc((void **)&s->partials, p->partial_bytes));
  MGEN_CUDA_TRY(ctx, ws_malloc((void **)&s->counters, p->counter_bytes));
  MGEN_CUDA_TRY(ctx, cudaMemsetAsync(s->partials, 0, p->partial_bytes, p->side));
  MGEN_CUDA_TRY(ctx, cudaMemsetAsync(s->counters, 0, p->counter_bytes, p->side));
  MGEN_CUDA_TRY(ctx, cudaStreamSynchronize(p->side));
out:
  if (st != MGEN_OK) {
    if (s->partials != NULL) (void)cudaFree(s->partials);
    if (s->counters != NULL) (void)cudaFree(s->counters);
    s->partials = NULL;
    s->counters = NULL;
  }
  if (previous >= 0 && previous != ctx->device) (void)cudaSetDevice(previous);
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  return st;
}

mgen_status mgen__pool_init(mgen_ctx *ctx, int eager) {
  mgen__pool *p = &ctx->pool;
  size_t floats, ints;
  memset(p, 0, sizeof *p);
  p->eager = eager;
  p->shared = eager == 1; /* the only slot must be stealable by a second stream */
  workspace_need(ctx->table, ctx->sm_count, &floats, &ints);
  if (floats > SIZE_MAX / 2 / sizeof(float) || ints > SIZE_MAX / 2 / sizeof(int))
    return mgen__fail(ctx, MGEN_ERR_NO_MEMORY, "the table's kernels need a workspace of %zu "
                      "floats and %zu counters on %d SMs: its size overflows size_t", floats,
                      ints, ctx->sm_count);
  p->partial_bytes = floats * sizeof(float);
  p->counter_bytes = ints * sizeof(int);
  if (pthread_cond_init(&p->released, NULL) != 0)
    return mgen__fail(ctx, MGEN_ERR_NO_MEMORY, "pthread_cond_init failed");
  p->tracked = 1;
  return slot_alloc(ctx, &p->slot[0]);
}

void mgen__pool_fixed(mgen__pool *pool, float *partials, int *counters) {
  memset(pool, 0, sizeof *pool);
  pool->eager = 1;
  pool->slot[0].partials = partials;
  pool->slot[0].counters = counters;
}

void mgen__pool_free(mgen_ctx *ctx) {
  mgen__pool *p = &ctx->pool;
  if (!p->tracked) return;
  /* cudaFree acts on the allocation's device whatever the current one is. */
  for (int i = 0; i < 2 * MGEN__WORKSPACES; i++) {
    if (p->slot[i].partials != NULL) (void)cudaFree(p->slot[i].partials);
    if (p->slot[i].counters != NULL) (void)cudaFree(p->slot[i].counters);
    if (p->slot[i].done != NULL) (void)cudaEventDestroy(p->slot[i].done);
  }
  if (p->side != NULL) (void)cudaStreamDestroy(p->side);
  pthread_cond_destroy(&p->released);
  memset(p, 0, sizeof *p);
}

static void take(mgen__pool *p, int i, unsigned long long owner, mgen__lease *lease) {
  mgen__slot *s = &p->slot[i];
  s->owner = owner;
  s->owned = 1;
  s->busy++;
  s->has_event = 0;
  s->last_use = ++p->clock;
  lease->slot = i;
  lease->partials = s->partials;
  lease->counters = s->counters;
}

/* Under ctx->lock: a slot for stream `id`, or -1 if every candidate is busy (wait). */
static int pick(mgen_ctx *ctx, unsigned long long id, void *stream, mgen__lease *lease,
                mgen_status *st) {
  mgen__pool *p = &ctx->pool;
  int free_slot = -1, unallocated = -1, lru = -1, others = 0;
  for (int i = 0; i < p->eager; i++) {
    mgen__slot *s = &p->slot[i];
    if (s->owned && s->owner == id) {
      take(p, i, id, lease);
      return i;
    }
    others += s->owned;
    if (s->partials == NULL) {
      if (unallocated < 0) unallocated = i;
    } else if (!s->owned) {
      if (free_slot < 0) free_slot = i;
    } else if (s->busy == 0 && s->has_event &&
               (lru < 0 || s->last_use < p->slot[lru].last_use)) {
      lru = i;
    }
  }
  if (others > 0) p->shared = 1; /* a second stream: from now on last users record `done` */
  if (free_slot < 0 && unallocated >= 0) {
    if ((*st = slot_alloc(ctx, &p->slot[unallocated])) != MGEN_OK) return -2;
    free_slot = unallocated;
  }
  if (free_slot >= 0) {
    take(p, free_slot, id, lease);
    return free_slot;
  }
  if (lru < 0) return -1;
  cudaError_t err = cudaStreamWaitEvent((cudaStream_t)stream, p->slot[lru].done, 0);
  if (err != cudaSuccess) {
    *st = mgen__fail(ctx, mgen__cuda_status(err), "cudaStreamWaitEvent: %s (%s)",
                     cudaGetErrorString(err), cudaGetErrorName(err));
    return -2;
  }
  take(p, lru, id, lease);
  return lru;
}

/* Who captures on `stream`: its handle, or for cudaStreamPerThread (and NULL, which code built
 * with --default-stream per-thread passes for it) the calling thread, whose stream it is: a
 * number of its own, never reused (a new thread may get an exited one's pthread_t) and with
 * bit 63 set, which no user-space address (a live stream's handle) has. */
#define CAPTURER_THREAD (1ULL << 63)
static unsigned long long capturer_of(void *stream) {
  static unsigned long long threads; /* atomic */
  static _Thread_local unsigned long long thread_key;
  if (stream != NULL && (cudaStream_t)stream != cudaStreamPerThread)
    return (unsigned long long)(uintptr_t)stream;
  if (thread_key == 0)
    thread_key = CAPTURER_THREAD | __atomic_add_fetch(&threads, 1, __ATOMIC_RELAXED);
  return thread_key;
}

/* A capturer as the log names it. */
static void capturer_name(unsigned long long who, char *buf, size_t size) {
  if (who & CAPTURER_THREAD)
    snprintf(buf, size, "cudaStreamPerThread of host thread #%llu", who & ~CAPTURER_THREAD);
  else
    snprintf(buf, size, "stream %p", (void *)(uintptr_t)who);
}

/* Under ctx->lock: the graph slot of capturer `who` (capturer_of: see the top).
 * Sets *evicted (else left 0) to the capturer whose slot it takes: never 0, capturer_of gives a
 * handle of a stream that can capture (not NULL) or a thread's number. */
static mgen_status graph_pick(mgen_ctx *ctx, unsigned long long who, mgen__lease *lease,
                              unsigned long long *evicted) {
  mgen__pool *p = &ctx->pool;
  int unallocated = -1, lru = -1;
  for (int i = MGEN__GRAPH_BASE; i < MGEN__GRAPH_BASE + p->eager; i++) {
    mgen__slot *s = &p->slot[i];
    if (s->partials != NULL && s->owner == who) {
      take(p, i, who, lease);
      return MGEN_OK;
    }
    if (s->partials == NULL) {
      if (unallocated < 0) unallocated = i;
    } else if (lru < 0 || s->last_use < p->slot[lru].last_use) {
      lru = i;
    }
  }
  if (unallocated >= 0) {
    mgen_status st = slot_alloc(ctx, &p->slot[unallocated]);
    if (st != MGEN_OK) return st;
    take(p, unallocated, who, lease);
    return MGEN_OK;
  }
  *evicted = p->slot[lru].owner;
  take(p, lru, who, lease);
  return MGEN_OK;
}

mgen_status mgen__ws_acquire(mgen_ctx *ctx, void *stream, mgen__lease *lease) {
  mgen__pool *p = &ctx->pool;
  mgen_status st = MGEN_OK;
  if (!p->tracked) {
    lease->slot = 0;
    lease->partials = p->slot[0].partials;
    lease->counters = p->slot[0].counters;
    return MGEN_OK;
  }
  cudaError_t err;
  int capturing = mgen__stream_capturing(stream, &err);
  unsigned long long id = 0;
  if (capturing == 0) err = cudaStreamGetId((cudaStream_t)stream, &id);
  if (capturing < 0 || err != cudaSuccess)
    return mgen__fail(ctx, mgen__cuda_status(err), "stream %p: %s (%s)", stream,
                      cudaGetErrorString(err), cudaGetErrorName(err));

  pthread_mutex_lock(&ctx->lock);
  unsigned long long who = capturing ? capturer_of(stream) : 0, evicted = 0;
  if (capturing) {
    st = graph_pick(ctx, who, lease, &evicted);
  } else {
    while (pick(ctx, id, stream, lease, &st) == -1) pthread_cond_wait(&p->released, &ctx->lock);
  }
  pthread_mutex_unlock(&ctx->lock);
  if (evicted != 0) { /* after the unlock: the callback may call into the library */
    char now[64], before[64];
    capturer_name(who, now, sizeof now);
    capturer_name(evicted, before, sizeof before);
    mgen__log(ctx, MGEN_LOG_WARN, "%s captures GEMMs into a graph while other streams hold all "
              "%d graph workspaces of the context: it shares the one of %s (captured into the "
              "longest ago); GEMMs captured on those two must not run at the same time (mgen.h, "
              "\"Workspaces and streams\")", now, p->eager, before);
  }
  return st;
}

void mgen__ws_release(mgen_ctx *ctx, void *stream, const mgen__lease *lease) {
  mgen__pool *p = &ctx->pool;
  if (!p->tracked) return;
  pthread_mutex_lock(&ctx->lock);
  mgen__slot *s = &p->slot[lease->slot];
  if (--s->busy == 0) {
    if (p->shared && lease->slot < MGEN__GRAPH_BASE) {
      /* Every GEMM on the slot has been enqueued (busy was > 0 from acquire to here): an
       * event recorded now follows them all. */
      cudaError_t err = cudaSuccess;
      if (s->done == NULL) err = cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming);
      if (err == cudaSuccess) err = cudaEventRecord(s->done, (cudaStream_t)stream);
      s->has_event = err == cudaSuccess;
      if (err != cudaSuccess) (void)cudaGetLastError();
    }
    pthread_cond_broadcast(&p->released);
  }
  pthread_mutex_unlock(&ctx->lock);
}

mgen_status mgen_ctx_workspaces(const mgen_ctx *ctx, size_t *bytes_each, int *allocated,
                                int *limit) {
  if (ctx == NULL) return MGEN_ERR_NULL_POINTER;
  const mgen__pool *p = &ctx->pool;
  int count = 0;
  pthread_mutex_lock((pthread_mutex_t *)&ctx->lock);
  for (int i = 0; i < 2 * MGEN__WORKSPACES; i++) count += p->slot[i].partials != NULL;
  pthread_mutex_unlock((pthread_mutex_t *)&ctx->lock);
  if (bytes_each != NULL) *bytes_each = p->partial_bytes + p->counter_bytes;
  if (allocated != NULL) *allocated = count;
  if (limit != NULL) *limit = 2 * p->eager;
  return MGEN_OK;
}
