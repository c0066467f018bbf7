-- templates/wgmma/op_defaults.lua -- the wgmma family's kernels of operations beyond dense
-- (templates/formats.lua M.ops) in the default build: per op and key, the op's kernel names in
-- default_rank order (templates/default_set.lua).
-- Written by bench/moe_cover.py from moe-sweep-h200-v49.csv:
-- the measured cover of bf16_fe2m1_g16, bf16_fe2m1_g32, bf16_u4b8_g128, f16_fe2m1_g16, f16_fe2m1_g32, f16_u4b8_g128;
-- u4's moe kernels come as u4b8's format twins.
return {
  moe = {
    ["bf16_fe2m1_g16"] = {
      "mgen_sm90a_moe_bf16_fe2m1_g16_64x256x64_wg4_s8",
      "mgen_sm90a_moe_bf16_fe2m1_g16_128x192x64_wg3_s8",
    },
    ["bf16_fe2m1_g32"] = {
      "mgen_sm90a_moe_bf16_fe2m1_g32_64x256x64_wg4_s8",
      "mgen_sm90a_moe_bf16_fe2m1_g32_128x192x64_wg3_s8",
    },
    ["bf16_u4b8_g128"] = {
      "mgen_sm90a_moe_bf16_u4b8_g128_64x256x64_wg2_s8",
      "mgen_sm90a_moe_bf16_u4b8_g128_128x192x64_wg3_s8",
    },
    ["f16_fe2m1_g16"] = {
      "mgen_sm90a_moe_f16_fe2m1_g16_64x256x64_wg4_s8",
    },
    ["f16_fe2m1_g32"] = {
      "mgen_sm90a_moe_f16_fe2m1_g32_64x256x64_wg4_s8",
      "mgen_sm90a_moe_f16_fe2m1_g32_128x192x64_wg3_s8",
    },
    ["f16_u4b8_g128"] = {
      "mgen_sm90a_moe_f16_u4b8_g128_128x192x64_wg3_s8",
      "mgen_sm90a_moe_f16_u4b8_g128_64x256x64_wg4_s8",
      "mgen_sm90a_moe_f16_u4b8_g128_64x192x64_wg3_s8",
    },
  },
}
