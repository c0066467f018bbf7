-- templates/mma/op_defaults.lua -- the mma family's kernels of operations beyond dense
-- (templates/formats.lua M.ops) in the default build: per op and key, dense default names whose
-- twin of that op enters the set (templates/default_set.lua), in default_rank order. Hand
-- picked, not measured: no sweep has timed the moe op yet, so the cover of this set is unknown
-- (issue #49). One 16x64 tile per key (any n of the shape rule; 16-row blocks of the route):
-- each kernel adds ~0.4-0.5 MB to libmgen.so, which must stay within 150 MB (144.7 MB before
-- the moe op). u4's moe kernels come as u4b8's format twins.
return {
  moe = {
    ["f16_u4b8_g128"] = { "mgen_sm80_f16_u4b8_g128_16x64x128_s4_w4_sw3x4x4" },
    ["bf16_u4b8_g128"] = { "mgen_sm80_bf16_u4b8_g128_16x64x128_s4_w4_sw3x4x4" },
    ["f16_fe2m1_g16"] = { "mgen_sm80_f16_fe2m1_g16_16x64x128_s4_w4_sw3x4x4" },
    ["bf16_fe2m1_g16"] = { "mgen_sm80_bf16_fe2m1_g16_16x64x128_s6_w4_sw3x4x4" },
    ["f16_fe2m1_g32"] = { "mgen_sm80_f16_fe2m1_g32_16x64x128_s4_w4_sw3x4x4" },
    ["bf16_fe2m1_g32"] = { "mgen_sm80_bf16_fe2m1_g32_16x64x128_s3_w4_sw3x4x4" },
  },
}
