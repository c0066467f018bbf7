-- templates/mma/op_defaults.lua -- the mma family's kernels of operations beyond dense
-- (templates/formats.lua M.ops) in the default build: per op and key, dense default names whose
-- twin of that op enters the set (templates/default_set.lua), in default_rank order. Hand
-- picked, not measured: no sweep has timed the moe op yet, so the cover of this set is unknown
-- (issue #49). Small, because every kernel adds ~0.35 MB to libmgen.so (150 MB at most): per
-- key a 64-column tile (any n of the shape rule, few rows per expert) and, for u4b8, a 64x256
-- tile for many rows per expert. u4's moe kernels come as u4b8's format twins.
return {
  moe = {
    ["f16_u4b8_g128"] = {
      "mgen_sm80_f16_u4b8_g128_16x64x128_s4_w4_sw3x4x4",
      "mgen_sm80_f16_u4b8_g128_64x256x128_s2_w8_sw3x4x4",
    },
    ["bf16_u4b8_g128"] = {
      "mgen_sm80_bf16_u4b8_g128_16x64x128_s4_w4_sw3x4x4",
      "mgen_sm80_bf16_u4b8_g128_64x256x128_s2_w8_sw3x4x4",
    },
    ["f16_fe2m1_g16"] = { "mgen_sm80_f16_fe2m1_g16_16x64x128_s4_w4_sw3x4x4" },
    ["bf16_fe2m1_g16"] = { "mgen_sm80_bf16_fe2m1_g16_16x64x128_s6_w4_sw3x4x4" },
    ["f16_fe2m1_g32"] = { "mgen_sm80_f16_fe2m1_g32_16x64x128_s4_w4_sw3x4x4" },
    ["bf16_fe2m1_g32"] = { "mgen_sm80_bf16_fe2m1_g32_16x64x128_s3_w4_sw3x4x4" },
  },
}
