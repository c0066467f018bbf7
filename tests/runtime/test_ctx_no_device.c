/* test_ctx_no_device.c -- mgen_ctx_create on a machine where CUDA cannot start: it fails with
 * MGEN_ERR_CUDA, leaves *out alone, and its message gives device_probe.c's reason and the CUDA
 * error's name, both in the log callback's warning and in mgen_ctx_last_error(NULL) (a failed
 * create leaves no context to ask; a program without a log callback reads it there). Without
 * a driver that is "no NVIDIA driver installed", not the runtime's "CUDA driver version is
 * insufficient", which sends a user to update a driver that is not there. Exits 77 where a device is usable.
 *   test_ctx_no_device            this machine as it is
 *   test_ctx_no_device --broken   under tests/runtime/fake_libcuda.c (LD_LIBRARY_PATH): a driver
 *                                 installed but unusable is named as such, never "no driver" */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "base/device_probe.h"
#include "mgen/mgen.h"

static char warning[1024];
static int warnings;

static void log_cb(void *user, mgen_log_level level, const char *message) {
  (void)user;
  if (level != MGEN_LOG_WARN) return;
  warnings++;
  snprintf(warning, sizeof warning, "%s", message);
}

int main(int argc, char **argv) {
  const int broken = argc > 1 && strcmp(argv[1], "--broken") == 0;
  int count = 0;
  char why[256] = "";
  const mgen__probe verdict = mgen__device_probe(&count, why, sizeof why);
  if (verdict == MGEN__PROBE_DEVICE && !broken) {
    printf("SKIPPED: %s here (this test is for machines where CUDA cannot start)\n", why);
    return 77;
  }
  printf("this machine: %s\n", why);
  CHECK(verdict != MGEN__PROBE_DEVICE, "the fake driver left a usable device: %s", why);
  if (broken)
    CHECK(verdict == MGEN__PROBE_BROKEN, "the fake driver's verdict is %d: %s", (int)verdict, why);

  mgen_ctx *ctx = (mgen_ctx *)&warnings; /* a sentinel: a failed create must not write it */
  const mgen_ctx_opts opts = {.device = -1, .log = log_cb};
  const mgen_status st = mgen_ctx_create(&ctx, mgen_builtin_table(), &opts);
  printf("mgen_ctx_create: %s; warning: %s\n", mgen_status_str(st), warning);
  CHECK(st == MGEN_ERR_CUDA, "mgen_ctx_create: %s, expected MGEN_ERR_CUDA", mgen_status_str(st));
  CHECK(ctx == (mgen_ctx *)&warnings, "a failed mgen_ctx_create wrote *out");
  CHECK(warnings == 1, "%d warnings", warnings);
  CHECK(strstr(warning, why) != NULL, "the message lacks the probe's reason '%s': '%s'", why,
        warning);
  const char *last = mgen_ctx_last_error(NULL);
  printf("mgen_ctx_last_error(NULL): %s\n", last);
  char prefix[64];
  snprintf(prefix, sizeof prefix, "mgen_ctx_create: %s: ", mgen_status_str(MGEN_ERR_CUDA));
  CHECK(strncmp(last, prefix, strlen(prefix)) == 0 && strstr(last, why) != NULL,
        "mgen_ctx_last_error(NULL) lacks the status or the probe's reason '%s': '%s'", why, last);
  CHECK(strstr(last, "cudaError") != NULL, "mgen_ctx_last_error(NULL) names no CUDA error: '%s'",
        last);
  /* The next create clears it: a thread with a context is not told why it has none. */
  CHECK(mgen_ctx_create(NULL, mgen_builtin_table(), &opts) == MGEN_ERR_NULL_POINTER, "NULL out");
  last = mgen_ctx_last_error(NULL);
  CHECK(strstr(last, "out is NULL") != NULL && strstr(last, why) == NULL,
        "after a second create: '%s'", last);
  if (broken) {
    CHECK(strstr(warning, "although an NVIDIA driver is installed") != NULL,
          "a broken driver's message: '%s'", warning);
  } else if (strstr(why, "no NVIDIA driver installed") != NULL) {
    CHECK(strstr(warning, "CUDA driver version is insufficient") == NULL,
          "without a driver the message speaks of the driver's version: '%s'", warning);
  }
  return check_exit("test_ctx_no_device");
}
