-- templates/mma/op_defaults.lua -- the mma family's kernels of operations beyond dense
-- (templates/formats.lua M.ops) in the default build: per op and key, the op's kernel names in
-- default_rank order (templates/default_set.lua).
-- Written by bench/moe_cover.py from moe-sweep-h200-v49.csv:
-- the measured cover of bf16_fe2m1_g16, bf16_fe2m1_g32, bf16_u4b8_g128, f16_fe2m1_g16, f16_fe2m1_g32, f16_u4b8_g128;
-- u4's moe kernels come as u4b8's format twins.
return {
  moe = {
    ["bf16_fe2m1_g16"] = {
      "mgen_sm80_moe_bf16_fe2m1_g16_8x64x128_s4_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g16_48x64x128_s4_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g16_16x64x128_s4_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g16_64x64x128_s4_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g16_8x256x128_s3_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g16_16x256x128_s2_w4_sw3x4x4",
      "mgen_sm90_moe_bf16_fe2m1_g16_48x256x128_s4_w8_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g16_64x256x128_s2_w8_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g16_8x128x256_s3_w4_sw3x4x5",
    },
    ["bf16_fe2m1_g32"] = {
      "mgen_sm80_moe_bf16_fe2m1_g32_8x64x128_s6_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g32_16x64x128_s6_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g32_48x64x128_s4_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g32_64x64x128_s4_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g32_8x256x128_s3_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g32_16x256x128_s3_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g32_48x256x128_s3_w8_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g32_64x256x128_s2_w8_sw3x4x4",
      "mgen_sm80_moe_bf16_fe2m1_g32_8x128x128_s6_w4_sw3x4x4",
    },
    ["bf16_u4b8_g128"] = {
      "mgen_sm80_moe_bf16_u4b8_g128_8x64x128_s8_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_u4b8_g128_48x64x128_s4_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_u4b8_g128_16x64x128_s6_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_u4b8_g128_64x64x128_s4_w8_sw3x4x4",
      "mgen_sm80_moe_bf16_u4b8_g128_8x128x256_s3_w4_sw3x4x5",
      "mgen_sm80_moe_bf16_u4b8_g128_16x256x128_s3_w4_sw3x4x4",
      "mgen_sm80_moe_bf16_u4b8_g128_48x256x128_s3_w8_sw3x4x4",
      "mgen_sm80_moe_bf16_u4b8_g128_64x256x128_s2_w8_sw3x4x4",
    },
    ["f16_fe2m1_g16"] = {
      "mgen_sm80_moe_f16_fe2m1_g16_8x64x128_s6_w4_sw3x4x4",
      "mgen_sm80_moe_f16_fe2m1_g16_48x64x128_s4_w4_sw3x4x4",
      "mgen_sm80_moe_f16_fe2m1_g16_16x64x128_s6_w4_sw3x4x4",
      "mgen_sm80_moe_f16_fe2m1_g16_8x256x128_s3_w4_sw3x4x4",
      "mgen_sm80_moe_f16_fe2m1_g16_16x256x128_s2_w4_sw3x4x4",
      "mgen_sm90_moe_f16_fe2m1_g16_48x256x128_s4_w8_sw3x4x4",
      "mgen_sm80_moe_f16_fe2m1_g16_64x256x128_s2_w8_sw3x4x4",
      "mgen_sm80_moe_f16_fe2m1_g16_8x128x256_s3_w4_sw3x4x5",
    },
    ["f16_fe2m1_g32"] = {
      "mgen_sm80_moe_f16_fe2m1_g32_8x64x128_s8_w4_sw3x4x4",
      "mgen_sm80_moe_f16_fe2m1_g32_48x64x128_s4_w4_sw3x4x4",
      "mgen_sm80_moe_f16_fe2m1_g32_16x64x128_s6_w4_sw3x4x4",
      "mgen_sm80_moe_f16_fe2m1_g32_8x256x128_s3_w4_sw3x4x4",
      "mgen_sm80_moe_f16_fe2m1_g32_16x256x128_s3_w4_sw3x4x4",
      "mgen_sm80_moe_f16_fe2m1_g32_48x256x128_s3_w8_sw3x4x4",
      "mgen_sm80_moe_f16_fe2m1_g32_64x256x128_s2_w8_sw3x4x4",
      "mgen_sm80_moe_f16_fe2m1_g32_8x128x128_s4_w4_sw3x4x4",
    },
    ["f16_u4b8_g128"] = {
      "mgen_sm80_moe_f16_u4b8_g128_8x64x128_s6_w4_sw3x4x4",
      "mgen_sm80_moe_f16_u4b8_g128_16x64x128_s6_w4_sw3x4x4",
      "mgen_sm80_moe_f16_u4b8_g128_64x64x128_s4_w8_sw3x4x4",
      "mgen_sm80_moe_f16_u4b8_g128_48x64x128_s4_w4_sw3x4x4",
      "mgen_sm80_moe_f16_u4b8_g128_8x128x256_s3_w4_sw3x4x5",
      "mgen_sm80_moe_f16_u4b8_g128_64x256x128_s2_w8_sw3x4x4",
      "mgen_sm80_moe_f16_u4b8_g128_16x256x128_s3_w4_sw3x4x4",
      "mgen_sm90_moe_f16_u4b8_g128_48x256x128_s4_w8_sw3x4x4",
    },
  },
}
