/* test_ctx_no_device.c -- mgen_ctx_create on a machine where CUDA cannot start: it fails with
 * MGEN_ERR_CUDA, leaves *out alone, and its message (the log callback's warning: a failed
 * create leaves no context to ask) gives device_probe.c's reason. Without a driver that is
 * "no NVIDIA driver installed", not the runtime's "CUDA driver version is insufficient", which
 * sends a user to update a driver that is not there. Exits 77 where a device is usable.
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
  if (broken) {
    CHECK(strstr(warning, "although an NVIDIA driver is installed") != NULL,
          "a broken driver's message: '%s'", warning);
  } else if (strstr(why, "no NVIDIA driver installed") != NULL) {
    CHECK(strstr(warning, "CUDA driver version is insufficient") == NULL,
          "without a driver the message speaks of the driver's version: '%s'", warning);
  }
  return check_exit("test_ctx_no_device");
}
