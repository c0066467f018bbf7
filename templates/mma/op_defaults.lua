-- templates/mma/op_defaults.lua -- the mma family's kernels of operations beyond dense
-- (templates/formats.lua M.ops) in the default build: per op and key, the op's kernel names in
-- default_rank order (templates/default_set.lua). Hand picked, not measured: the sweep that
-- would measure the moe op's cover (bench/run_moe_sweep_device.sh, then bench/moe_cover.py
-- --out this file) has not run yet (issue #49). One 16x64 tile per key (any n of the shape
-- rule; 16-row blocks of the route). u4's moe kernels come as u4b8's format twins.
return {
  moe = {
    ["f16_u4b8_g128"] = { "mgen_sm80_moe_f16_u4b8_g128_16x64x128_s4_w4_sw3x4x4" },
    ["bf16_u4b8_g128"] = { "mgen_sm80_moe_bf16_u4b8_g128_16x64x128_s4_w4_sw3x4x4" },
    ["f16_fe2m1_g16"] = { "mgen_sm80_moe_f16_fe2m1_g16_16x64x128_s4_w4_sw3x4x4" },
    ["bf16_fe2m1_g16"] = { "mgen_sm80_moe_bf16_fe2m1_g16_16x64x128_s6_w4_sw3x4x4" },
    ["f16_fe2m1_g32"] = { "mgen_sm80_moe_f16_fe2m1_g32_16x64x128_s4_w4_sw3x4x4" },
    ["bf16_fe2m1_g32"] = { "mgen_sm80_moe_bf16_fe2m1_g32_16x64x128_s3_w4_sw3x4x4" },
  },
}
