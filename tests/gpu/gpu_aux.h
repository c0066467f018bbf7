/* gpu_aux.h -- small device helpers of the GPU tests (gpu_aux.cu): data defined by a hash of
 * the element index, so that buffers of many GiB are written on the device and any element is
 * recomputed on the host without a copy (test_limits_gpu); a timed spin that lets the host
 * queue work ahead (test_tune_gpu); a copy kernel that is the "previous kernel" of a
 * programmatic dependent launch (test_launch_gpu); a device count of one value.
 * Each function enqueues on `stream` and returns a cudaError_t value (0 = success). */
#ifndef MGEN_TEST_GPU_AUX_H
#define MGEN_TEST_GPU_AUX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define GPU_AUX_HD __host__ __device__
#else
#define GPU_AUX_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A 64-bit mix of (index, seed) (splitmix64's finalizer): the same on host and device. */
static inline GPU_AUX_HD uint64_t aux_hash(uint64_t i, uint32_t seed) {
  uint64_t z = i * 0x9e3779b97f4a7c15ULL + ((uint64_t)seed << 32 | seed) + 0x632be59bd9b4e5f5ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* The hashed values. Activations: v / 16 with v in -16..16 (exact in FP16 and BF16, on the
 * grid 2^-4). u4b8 codes: 0..15. u4b8 scales: +-(1..4) / 1024 (exact in both types, on the
 * grid 2^-10), so every weight (code - 8) * scale is on the grid 2^-10 with at most 6
 * significant bits: exact in the act, and every product a * w is exact on the grid 2^-14. */
static inline GPU_AUX_HD double aux_act_value(uint64_t i, uint32_t seed) {
  return (double)((int)(aux_hash(i, seed) % 33) - 16) / 16.0;
}
static inline GPU_AUX_HD unsigned aux_code(uint64_t i, uint32_t seed) {
  return (unsigned)(aux_hash(i, seed) >> 7) & 15u;
}
static inline GPU_AUX_HD double aux_scale_value(uint64_t i, uint32_t seed) {
  const uint64_t h = aux_hash(i, seed);
  return (h & 1 ? -1.0 : 1.0) * (double)(1 + (h >> 9) % 4) / 1024.0;
}

/* dst[i] = act bits of aux_act_value(i, seed) (act: mgen_act), i < count. */
int aux_fill_act(uint16_t *dst, size_t count, uint32_t seed, int act, void *stream);
/* dst[i] = act bits of aux_scale_value(i, seed). */
int aux_fill_scales(uint16_t *dst, size_t count, uint32_t seed, int act, void *stream);
/* dst[i] = aux_code(i, seed), one code per byte. */
int aux_fill_codes(uint8_t *dst, size_t count, uint32_t seed, void *stream);
/* *out = number of i < count with (p[i] == value) == equal (out: device, overwritten). */
int aux_count(const uint16_t *p, size_t count, uint16_t value, int equal,
              unsigned long long *out, void *stream);
/* One thread that spins for `us` microseconds of the device's global timer. */
int aux_spin(double us, void *stream);
/* A kernel copying `bytes` (a multiple of 16, both pointers 16-byte aligned) after spinning
 * `delay_us`. On sm_90 and later its blocks first allow the stream's next kernel to launch
 * (griddepcontrol.launch_dependents): a programmatic dependent launch after it then starts
 * while it still spins, and reads dst correctly only if it waits for it
 * (griddepcontrol.wait) before touching memory. */
int aux_copy(void *dst, const void *src, size_t bytes, double delay_us, void *stream);
/* aux_copy on `blocks` blocks of 256 threads: few enough that the next kernel's blocks fit
 * beside them and start while they spin (test_fresh_weights_gpu). */
int aux_copy_blocks(void *dst, const void *src, size_t bytes, double delay_us, unsigned blocks,
                    void *stream);

#ifdef __cplusplus
}
#endif
#endif /* MGEN_TEST_GPU_AUX_H */
