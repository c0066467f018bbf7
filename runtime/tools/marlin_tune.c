/* marlin_tune.c -- marlin-tune: tunes libmgen's kernel choice on this GPU for a list of weight
 * shapes and M values, and writes (by default merges into) an autotune cache file; with
 * --show FILE it prints which kernel won where (tune_show.c).
 *
 *   marlin-tune --preset llama-70b -o h200.cache            tune, merge into h200.cache
 *   marlin-tune 12288x4096 4096x4096 --m 1,16,256 --fmt g128,gc,nvfp4
 *   marlin-tune --show h200.cache
 *
 * Shapes are NxK, nn.Linear's weight.shape (N = out_features, K = in_features; cli.h). M values
 * falling in one bucket are tuned once, at the bucket's upper M. The file is saved after every
 * shape, so an interrupted run keeps what it measured. Every argument is checked before CUDA
 * is touched (tune_args.c). Exit status: 0; 1 on a runtime error (a key that failed to tune included);
 * 2 on a usage error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "cli.h"
#include "formats/formats.h"
#include "marlin_tune.h"
#include "tune_args.h"

static int verbose;
static void log_cb(void *user, mgen_log_level level, const char *message) {
  (void)user;
  if (level == MGEN_LOG_WARN || verbose)
    fprintf(stderr, "\n%s: %s\n", level == MGEN_LOG_WARN ? "warning" : "info", message);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void progress(int done, int total, const char *what, double elapsed) {
  const int width = 30, filled = total ? done * width / total : width;
  if (isatty(2)) {
    fprintf(stderr, "\r[%.*s%.*s] %3d/%-3d %6.1f s  %-44.44s", filled,
            "##############################", width - filled, "..............................",
            done, total, elapsed, what);
    if (done == total) fputc('\n', stderr);
  } else {
    fprintf(stderr, "[%d/%d] %6.1f s  %s\n", done, total, elapsed, what);
  }
}

int main(int argc, char **argv) {
  tune_opts o = tune_parse_args(argc, argv);
  if (o.show != NULL) return marlin_tune_show(o.show);
  verbose = o.verbose;
  mgen_ctx *ctx = NULL;
  mgen_ctx_opts co = {.device = o.device, .log = log_cb};
  mgen_status st = mgen_ctx_create(&ctx, mgen_builtin_table(), &co);
  if (st != MGEN_OK) {
    fprintf(stderr, "marlin-tune: mgen_ctx_create: %s\n", mgen_status_str(st));
    return 1;
  }
  if (o.reps && (st = mgen_ctx_set_tune(ctx, MGEN_TUNE_NEVER, o.reps)) != MGEN_OK) {
    fprintf(stderr, "marlin-tune: mgen_ctx_set_tune: %s: %s\n", mgen_status_str(st),
            mgen_ctx_last_error(ctx));
    mgen_ctx_destroy(ctx);
    return 1;
  }
  cudaStream_t stream;
  if (cudaSetDevice(o.device) != cudaSuccess ||
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    fprintf(stderr, "marlin-tune: cannot create a stream on device %d\n", o.device);
    mgen_ctx_destroy(ctx);
    return 1;
  }
  const int total = o.nfmts * o.nshapes * o.nms;
  int done = 0, tuned = 0, failed = 0, changed = 0;
  double start = now(), log_speedup = 0;
  char what[128];
  for (int s = 0; s < o.nshapes; s++) {
    for (int f = 0; f < o.nfmts; f++) {
      mgen_weights w = {.wfmt = (mgen_wfmt)o.fmts[f].wfmt, .act = (mgen_act)o.act,
                        .scheme = (mgen_scheme)o.fmts[f].scheme, .group = o.fmts[f].group,
                        .n = o.shapes[s].n, .k = o.shapes[s].k};
      int lo[TUNE_MAX_LIST], hi[TUNE_MAX_LIST], nb = 0; /* buckets tuned for this shape and format */
      char key[48];
      mgen__format_text(o.act, o.fmts[f].wfmt, o.fmts[f].scheme, o.fmts[f].group, key, sizeof key);
      for (int i = 0; i < o.nms; i++, done++) {
        snprintf(what, sizeof what, "%s n=%d k=%d M=%d", key, w.n, w.k, o.ms[i]);
        progress(done, total, what, now() - start);
        int seen = 0;
        for (int b = 0; b < nb; b++) seen |= o.ms[i] >= lo[b] && o.ms[i] <= hi[b];
        if (seen) continue; /* its bucket is tuned already */
        mgen_tune_result r;
        st = mgen_tune(ctx, o.ms[i], &w, stream, &r);
        if (st != MGEN_OK) {
          fprintf(stderr, "\nmarlin-tune: %s: %s: %s\n", what, mgen_status_str(st),
                  mgen_ctx_last_error(ctx));
          failed++;
          continue;
        }
        lo[nb] = r.m_lo, hi[nb++] = r.m_hi;
        tuned++;
        changed += strcmp(r.kernel, r.default_kernel) != 0;
        if (r.default_us > 0) log_speedup += log(r.default_us / r.us);
      }
    }
    st = mgen_cache_save(ctx, o.output, o.replace && s == 0 ? MGEN_CACHE_REPLACE : 0);
    if (st != MGEN_OK) {
      fprintf(stderr, "\nmarlin-tune: saving %s: %s: %s\n", o.output, mgen_status_str(st),
              mgen_ctx_last_error(ctx));
      return 1;
    }
  }
  progress(total, total, "done", now() - start);
  printf("marlin-tune: %d keys tuned in %.1f s (%d failed); tuning changed the kernel for %d; "
         "geometric-mean speedup over the default %.3fx; wrote %s\n", tuned, now() - start,
         failed, changed, tuned ? exp(log_speedup / tuned) : 1.0, o.output);
  cudaStreamDestroy(stream);
  mgen_ctx_destroy(ctx);
  return failed ? 1 : 0;
}
