-- The mma family's W4A8 kernels in the default set (sm89: FP8 E4M3 activations, weights in the
-- e4m3 layout), by key, in default_rank order: the groups the wgmma family's W4A8 kernels do
-- not serve (g32, g64), where these decode tiles are the only W4A8 kernels. f16 g32 and g64:
-- bench/sweep_select.lua's cover (3%) of the H200 sweep
-- bench/results/sweep-h200-w4a8-mma-groups-v47.csv.xz (bench_gemm --sweep 10 --act e4m3 --fmt
-- g32,g64 --m 1,4,16,64,256,1024,4096, the 8 benchmark shapes, every f16 sm89 kernel of the
-- group; bench/notes/v47.md item 7): three kernels cover all 56 points of each. bf16 takes its
-- f16 key's picks (the same main loop; the output and scale types differ). At g128 and per
-- channel the wgmma kernels are faster at every M (v47 item 3): none of these there.
return {
  ["f16_u4b8_g32_e4m3"] = {
    "mgen_sm89_f16_u4b8_g32_16x128x128_s3_w4_sw3x4x3",
    "mgen_sm89_f16_u4b8_g32_8x128x256_s2_w4_sw3x4x4",
    "mgen_sm89_f16_u4b8_g32_16x64x256_s2_w4_sw3x4x4",
  },
  ["bf16_u4b8_g32_e4m3"] = {
    "mgen_sm89_bf16_u4b8_g32_16x128x128_s3_w4_sw3x4x3",
    "mgen_sm89_bf16_u4b8_g32_8x128x256_s2_w4_sw3x4x4",
    "mgen_sm89_bf16_u4b8_g32_16x64x256_s2_w4_sw3x4x4",
  },
  ["f16_u4b8_g64_e4m3"] = {
    "mgen_sm89_f16_u4b8_g64_16x128x128_s3_w4_sw3x4x3",
    "mgen_sm89_f16_u4b8_g64_8x128x256_s2_w4_sw3x4x4",
    "mgen_sm89_f16_u4b8_g64_16x64x256_s2_w4_sw3x4x4",
  },
  ["bf16_u4b8_g64_e4m3"] = {
    "mgen_sm89_bf16_u4b8_g64_16x128x128_s3_w4_sw3x4x3",
    "mgen_sm89_bf16_u4b8_g64_8x128x256_s2_w4_sw3x4x4",
    "mgen_sm89_bf16_u4b8_g64_16x64x256_s2_w4_sw3x4x4",
  },
}
