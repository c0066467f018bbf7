-- templates/mma/defaults_w4a8.lua -- the mma family's W4A8 kernels in the default set (FP8 E4M3
-- activations, sm_89 mma.sync, weights in the e4m3 layout), by key, in default_rank order: the
-- groups the wgmma family's W4A8 kernels do not take (g32, g64; wgmma: g128 and per channel,
-- templates/wgmma/defaults_w4a8.lua). f16: bench/sweep_select.lua's cover (3% tolerance) of the
-- H200 sweep bench/results/sweep-h200-w4a8-mma-groups-v47.csv.xz (bench_gemm --sweep 10 --act
-- f16,e4m3 --fmt g128,gc,g64,g32, M 1-4096, every f16 sm89 kernel; bench/notes/v47.md item 8),
-- whose first cover is the every-k sm89 kernels and whose 16x64x128 tile runs every shape
-- mgen_pack accepts. Not swept: bf16 takes f16's picks (the same main loop; the output type
-- differs). MXFP4 (fe2m1 g32, the block scales folded into the E4M3 weights): the sm89 every-k
-- cover of the same H100 run as the wgmma family's MXFP4 W4A8 picks
-- (bench/results/w4a8-mxfp4-h100-v59.csv.xz, templates/wgmma/defaults_w4a8.lua): the tiles for
-- GPUs without wgmma, 16x64x128 the one that runs every shape.
local f16 = {
  ["e4m3_fe2m1_g32"] = {
    "mgen_sm89_f16_fe2m1_g32_16x128x128_s3_w4_sw3x4x3",
    "mgen_sm89_f16_fe2m1_g32_8x256x128_s2_w4_sw3x4x3",
    "mgen_sm89_f16_fe2m1_g32_16x64x128_s3_w4_sw3x4x3",
  },
  ["e4m3_u4b8_g32"] = {
    "mgen_sm89_f16_u4b8_g32_16x128x128_s3_w4_sw3x4x3",
    "mgen_sm89_f16_u4b8_g32_8x256x128_s2_w4_sw3x4x3",
    "mgen_sm89_f16_u4b8_g32_16x64x128_s3_w4_sw3x4x3",
    "mgen_sm89_f16_u4b8_g32_8x128x128_s2_w4_sw3x4x3",
    "mgen_sm89_f16_u4b8_g32_16x64x256_s2_w4_sw3x4x4",
    "mgen_sm89_f16_u4b8_g32_8x128x256_s2_w4_sw3x4x4",
  },
  ["e4m3_u4b8_g64"] = {
    "mgen_sm89_f16_u4b8_g64_16x128x128_s3_w4_sw3x4x3",
    "mgen_sm89_f16_u4b8_g64_8x128x128_s4_w4_sw3x4x3",
    "mgen_sm89_f16_u4b8_g64_8x256x128_s2_w4_sw3x4x3",
    "mgen_sm89_f16_u4b8_g64_16x64x128_s3_w4_sw3x4x3",
    "mgen_sm89_f16_u4b8_g64_16x128x128_s2_w8_sw3x4x3",
    "mgen_sm89_f16_u4b8_g64_8x128x256_s2_w4_sw3x4x4",
    "mgen_sm89_f16_u4b8_g64_16x64x256_s2_w4_sw3x4x4",
  },
}

-- bf16 output: the f16 picks, the names' act token swapped
local set = {}
for key, names in pairs(f16) do
  local bf16 = {}
  for i, name in ipairs(names) do bf16[i] = (name:gsub("^(mgen_sm89_)f16_", "%1bf16_")) end
  set[key], set["bf16_" .. key] = names, bf16
end
return set
