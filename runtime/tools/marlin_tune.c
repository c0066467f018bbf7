/* marlin_tune.c -- marlin-tune: tunes libmgen's kernel choice on this GPU for a list of weight
 * shapes and M values, and writes (by default merges into) an autotune cache file; with
 * --show FILE it prints which kernel won where (tune_show.c).
 *
 *   marlin-tune --preset llama-70b -o h200.cache            tune, merge into h200.cache
 *   marlin-tune 12288x4096 4096x4096 --m 1,16,256 --fmt g128,gc,nvfp4
 *   marlin-tune --show h200.cache [--json]
 *
 * Shapes are NxK, nn.Linear's weight.shape (N = out_features, K = in_features; cli.h). M values
 * falling in one bucket are tuned once, at the bucket's upper M: a key is (format, shape, M
 * bucket). The file is saved after every shape, so an interrupted run keeps what it measured.
 * A terminal shows a progress line (progress.h). Every argument is checked before CUDA is
 * touched (tune_args.c), and so is the output path (check_output). Exit status: 0; 1 on a
 * runtime error (a key that failed to tune, a write error on stdout included); 2 on a usage
 * error.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "cli.h"
#include "marlin_tune.h"
#include "mgen_internal.h"
#include "progress.h"
#include "tune_args.h"

static int verbose;
static progress report; /* messages end its redrawn line first */
static void log_cb(void *user, mgen_log_level level, const char *message) {
  (void)user;
  if (level == MGEN_LOG_WARN || verbose) {
    progress_break(&report);
    fprintf(stderr, "%s: %s\n", level == MGEN_LOG_WARN ? "warning" : "info", message);
  }
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Whether the save after the first shape can write `path`, found before any tuning (a run of
 * minutes otherwise ends at its first save): an existing path must be a regular file
 * (symbolic links followed, as the save does), readable where its records are merged, and the
 * directory the save writes its temporary file in must be writable. Only stat and access:
 * nothing is created. 0, or -1 with the reason in `why`. */
static int check_output(const char *path, int replace, char *why, size_t size) {
  struct stat sb;
  char real[PATH_MAX], dir[PATH_MAX];
  const int exists = stat(path, &sb) == 0;
  if (!exists && errno != ENOENT) return snprintf(why, size, "%s", strerror(errno)), -1;
  if (exists && S_ISDIR(sb.st_mode)) return snprintf(why, size, "is a directory"), -1;
  if (exists && !S_ISREG(sb.st_mode)) return snprintf(why, size, "is not a regular file"), -1;
  if (exists && !replace && access(path, R_OK) != 0)
    return snprintf(why, size, "cannot be read to merge into (%s); --replace does not read it",
                    strerror(errno)), -1;
  /* The directory of the file itself: a link's target is replaced in the target's directory. */
  snprintf(dir, sizeof dir, "%s", exists && realpath(path, real) != NULL ? real : path);
  char *slash = strrchr(dir, '/');
  if (slash == NULL) snprintf(dir, sizeof dir, ".");
  else slash[slash == dir] = '\0'; /* "/x" keeps "/" */
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return snprintf(why, size, "its directory %s does not exist", dir), -1;
  if (access(dir, W_OK | X_OK) != 0)
    return snprintf(why, size, "its directory %s is not writable (%s)", dir, strerror(errno)), -1;
  return 0;
}

/* A write error on stdout (a full disk, a closed pipe) fails the run: the table, JSON or
 * summary that a script reads would be cut short. */
static int close_stdout(int code) {
  errno = 0;
  int failed = fflush(stdout) != 0 || ferror(stdout), err = errno;
  if (fclose(stdout) != 0 && !failed) failed = 1, err = errno;
  if (!failed) return code;
  fprintf(stderr, "marlin-tune: writing stdout: %s\n", err ? strerror(err) : "write error");
  return code ? code : 1;
}

/* Tunes every key of `o` and saves after each shape: marlin-tune without --show. A format that
 * only "all" brought and the table has no kernel of (W4A8 u4 outside --space full) is skipped,
 * said once; one named fails as any key that cannot be tuned. */
static int tune(tune_opts o) {
  char why[PATH_MAX + 128];
  if (check_output(o.output, o.replace, why, sizeof why) != 0) {
    fprintf(stderr, "marlin-tune: cannot save to %s: %s\n", o.output, why);
    return 1;
  }
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
  const int total = o.nfmts * o.nshapes * o.nms; /* keys: tune_parse_args left one M per bucket */
  report = progress_start(stderr, progress_choose(o.progress, isatty(2), getenv("CI"),
                                                  getenv("TERM")), total);
  int done = 0, tuned = 0, failed = 0, changed = 0;
  double start = now(), log_speedup = 0;
  char what[128];
  for (int s = 0; s < o.nshapes; s++) {
    for (int f = 0; f < o.nfmts; f++) {
      mgen_weights w = {.wfmt = (mgen_wfmt)o.fmts[f].wfmt, .act = (mgen_act)o.act,
                        .scheme = (mgen_scheme)o.fmts[f].scheme, .group = o.fmts[f].group,
                        .n = o.shapes[s].n, .k = o.shapes[s].k, .layout = (mgen_layout)o.layout};
      const mgen__key k = {.act = o.act, .wfmt = o.fmts[f].wfmt, .scheme = o.fmts[f].scheme,
                           .group = o.fmts[f].group, .op = MGEN_OP_DENSE,
                           .layout = mgen__layout_resolve(o.fmts[f].wfmt, o.layout)};
      char key[64]; /* as the cache file writes it */
      mgen__cache_key_text(&k, key, sizeof key);
      const char *any; /* the library's own key match: ERR_UNSUPPORTED_FORMAT is "no kernel for" */
      if (o.fmts[f].from_all &&
          mgen_gemm_choice(ctx, (mgen_act)o.act, 1, &w, &any) == MGEN_ERR_UNSUPPORTED_FORMAT) {
        if (s == 0) {
          progress_break(&report);
          fprintf(stderr, "marlin-tune: %s (from --fmt all) skipped: this build's table has no kernel of it\n", key);
        }
        done += o.nms;
        continue;
      }
      for (int i = 0; i < o.nms; i++, done++) {
        snprintf(what, sizeof what, "%s n=%d k=%d M=%d", key, w.n, w.k, o.ms[i]);
        progress_update(&report, done, now() - start, what);
        mgen_tune_result r;
        st = mgen_tune(ctx, o.ms[i], &w, stream, &r);
        if (st != MGEN_OK) {
          progress_break(&report);
          fprintf(stderr, "marlin-tune: %s: %s: %s\n", what, mgen_status_str(st),
                  mgen_ctx_last_error(ctx));
          failed++;
          continue;
        }
        tuned++;
        changed += strcmp(r.kernel, r.default_kernel) != 0;
        if (r.default_us > 0) log_speedup += log(r.default_us / r.us);
      }
    }
    st = mgen_cache_save(ctx, o.output, o.replace && s == 0 ? MGEN_CACHE_REPLACE : 0);
    if (st != MGEN_OK) {
      progress_break(&report);
      fprintf(stderr, "marlin-tune: saving %s: %s: %s\n", o.output, mgen_status_str(st),
              mgen_ctx_last_error(ctx));
      return 1;
    }
  }
  progress_update(&report, done, now() - start, "");
  progress_break(&report);
  printf("marlin-tune: %d keys tuned in %.1f s (%d failed); tuning changed the kernel for %d; "
         "geometric-mean speedup over the default %.3fx; wrote %s\n", tuned, now() - start,
         failed, changed, tuned ? exp(log_speedup / tuned) : 1.0, o.output);
  cudaStreamDestroy(stream);
  mgen_ctx_destroy(ctx);
  return failed ? 1 : 0;
}

int main(int argc, char **argv) {
  /* The internals it calls in libmgen.so (mgen_internal.h) are no ABI: only the library of its
   * own release has them as this program was compiled against. */
  if (mgen_version_number() != MGEN_VERSION_NUMBER) {
    fprintf(stderr, "marlin-tune: built for libmgen %d but loaded libmgen %d: install the "
            "marlin-tune of that libmgen release\n", MGEN_VERSION_NUMBER, mgen_version_number());
    return 1;
  }
  tune_opts o = tune_parse_args(argc, argv);
  return close_stdout(o.show != NULL ? marlin_tune_show(o.show, o.json) : tune(o));
}
