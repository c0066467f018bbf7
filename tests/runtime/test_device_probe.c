/* test_device_probe.c -- the verdicts of device_probe.c: which cudaGetDeviceCount results mean
 * "no GPU here" (the GPU tests skip) and which mean "a GPU machine whose CUDA is broken" (they
 * fail). A driver that is installed but older than the runtime used to read as "skip".
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "base/device_probe.h"
#include "mgen/mgen.h"

int main(void) {
  static const struct {
    cudaError_t err;
    int count, driver;
    mgen__probe want;
  } cases[] = {
      {cudaSuccess, 1, 1, MGEN__PROBE_DEVICE},
      {cudaSuccess, 8, 1, MGEN__PROBE_DEVICE},
      {cudaSuccess, 0, 1, MGEN__PROBE_NONE},
      {cudaErrorNoDevice, 0, 1, MGEN__PROBE_NONE}, /* e.g. CUDA_VISIBLE_DEVICES="" */
      {cudaErrorNoDevice, 0, 0, MGEN__PROBE_NONE},
      {cudaErrorInsufficientDriver, 0, 0, MGEN__PROBE_NONE}, /* a build machine: no driver */
      {cudaErrorInsufficientDriver, 0, 1, MGEN__PROBE_BROKEN}, /* old or damaged driver */
      {cudaErrorInitializationError, 0, 1, MGEN__PROBE_BROKEN},
      {cudaErrorSystemDriverMismatch, 0, 1, MGEN__PROBE_BROKEN},
      {cudaErrorCompatNotSupportedOnDevice, 0, 1, MGEN__PROBE_BROKEN},
      {cudaErrorDevicesUnavailable, 0, 1, MGEN__PROBE_BROKEN},
      {cudaErrorUnknown, 0, 0, MGEN__PROBE_BROKEN},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mgen__probe got = mgen__probe_classify(cases[i].err, cases[i].count, cases[i].driver);
    CHECK(got == cases[i].want, "%s, %d device(s), driver %s: verdict %d, expected %d",
          cudaGetErrorName(cases[i].err), cases[i].count,
          cases[i].driver ? "installed" : "absent", (int)got, (int)cases[i].want);
  }
  /* On this machine, whatever it is, the probe gives a verdict with a reason. */
  int count = -1;
  char why[256] = "";
  mgen__probe here = mgen__device_probe(&count, why, sizeof why);
  printf("this machine: verdict %d, %d device(s): %s\n", (int)here, count, why);
  CHECK(why[0] != '\0', "the probe of this machine gave no reason");
  CHECK(here == MGEN__PROBE_DEVICE ? count > 0 : count == 0, "verdict %d with count %d",
        (int)here, count);
  /* mgen_device_count (mgen.h) is the probe's public face: the same count and reason, and
   * ERR_CUDA exactly where the probe finds CUDA broken. */
  int public_count = -1;
  char public_why[256] = "";
  const mgen_status st = mgen_device_count(&public_count, public_why, sizeof public_why);
  CHECK(st == (here == MGEN__PROBE_BROKEN ? MGEN_ERR_CUDA : MGEN_OK),
        "mgen_device_count: %s, the probe's verdict %d", mgen_status_str(st), (int)here);
  CHECK(st != MGEN_OK || public_count == count, "mgen_device_count: %d device(s), the probe %d",
        public_count, count);
  CHECK(strcmp(public_why, why) == 0, "mgen_device_count's reason '%s', the probe's '%s'",
        public_why, why);
  CHECK(mgen_device_count(NULL, NULL, 0) == MGEN_ERR_NULL_POINTER, "a NULL count");
  return check_exit("test_device_probe");
}
