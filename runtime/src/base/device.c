/* device.c -- the device model from what CUDA reports (device.h). */
#include "base/device.h"

mgen__device mgen__device_model(int sm, int sm_count, int clock_khz, int mem_khz, int bus_bits,
                                int l2_bytes) {
  mgen__device dev = {sm, sm_count, clock_khz * 1e3,
                      /* DDR peak, times the fraction a copy achieves (H200: 4.26 of 4.92 TB/s) */
                      2.0 * mem_khz * 1e3 * bus_bits / 8.0 * 0.87, l2_bytes};
  return dev;
}
