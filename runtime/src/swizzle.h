/* swizzle.h -- CuTe's Swizzle<bits, base, shift> on integer offsets, in plain C.
 *
 * offset' = offset ^ ((offset & yyy_mask) >> shift), yyy_mask = (2^bits - 1) << (base +
 * max(0, shift)): the `bits` bits starting at base+shift are XORed into the `bits` bits
 * starting at base; groups of 2^base consecutive offsets stay together. A negative shift
 * moves bits left instead. Kernels apply it to the byte (or element) offsets of the A tile
 * in shared memory; the generator's proof and tests/runtime/test_swizzle.c mirror this
 * definition (tables of swizzle-bits-base-shift.zh.md).
 */
#ifndef MGEN_SWIZZLE_H
#define MGEN_SWIZZLE_H

#if !defined(MGEN_HD)
#if defined(__CUDACC__)
#define MGEN_HD __host__ __device__
#else
#define MGEN_HD
#endif
#endif

static inline MGEN_HD int mgen__swizzle(int bits, int base, int shift, int offset) {
  const int bit_mask = (1 << bits) - 1;
  const int yyy_mask = bit_mask << (base + (shift > 0 ? shift : 0));
  const int moved = offset & yyy_mask;
  return offset ^ (shift >= 0 ? moved >> shift : moved << -shift);
}

#endif /* MGEN_SWIZZLE_H */
