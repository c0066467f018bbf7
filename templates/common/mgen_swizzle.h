/* mgen_swizzle.h -- Swizzle<bits, base, shift> (CuTe's Swizzle<B,M,S>; swizzle-bits-base-shift.zh.md),
 * the one C/CUDA statement of the formula: the kernels (mgen_swizzle.cuh), the host tests and
 * tools include this file. Its Lua twin is templates/mma/smem.lua's M.swizzle (the bank proof);
 * gen.swizzle_agree compares the two over the whole parameter range.
 *
 *   offset' = offset ^ ((offset & yyy_mask) >> shift), yyy_mask = (2^bits - 1) << (base + shift)
 *
 * The `bits` bits starting at base + shift are XORed into the `bits` bits starting at base;
 * groups of 2^base consecutive offsets stay together. bits, base, shift >= 0.
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

static inline MGEN_HD int mgen_swizzle(int bits, int base, int shift, int offset) {
  const int yyy_mask = ((1 << bits) - 1) << (base + shift);
  return offset ^ ((offset & yyy_mask) >> shift);
}

#endif /* MGEN_SWIZZLE_H */
