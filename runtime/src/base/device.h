/* device.h -- the device model: the few numbers of a GPU that the cost models read
 * (dispatch/cost.h, the families' models). Plain data and one conversion (device.c), on the
 * ground floor (LAYERS) so that families and dispatch share it without depending on each other.
 */
#ifndef MGEN_DEVICE_H
#define MGEN_DEVICE_H

/* What the model needs to know about the device. Zero fields take the defaults of the
 * device's architecture row in cost.c (so a context built by hand in a test still works). */
typedef struct mgen__device {
  int sm;          /* compute capability, 10*major + minor */
  int sm_count;    /* multiprocessors (0: 1) */
  double clock_hz; /* SM clock */
  double mem_bw;   /* achievable DRAM bandwidth, bytes/s (read + written) */
  double l2_bytes; /* L2 size */
} mgen__device;

/* The model of a device from what CUDA reports: SM clock and memory clock in kHz, memory bus
 * width in bits, L2 bytes (zeros take the architecture's defaults). One place for the
 * conversion, used by the context (ctx.c) and by the tests that model a known GPU. */
mgen__device mgen__device_model(int sm, int sm_count, int clock_khz, int mem_khz, int bus_bits,
                                int l2_bytes);

#endif /* MGEN_DEVICE_H */
