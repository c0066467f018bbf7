-- The wgmma family's W4A8 kernels in the default set (FP8 E4M3 activations, weights in the e4m3
-- layout: tile_k 128), by key, in default_rank order. f16 g128: bench/sweep_select.lua's cover
-- (3% tolerance) of the H200 sweep bench/results/sweep-h200-w4a8-v44.csv.xz (bench_gemm --act
-- e4m3 --sweep 10, the 8 benchmark shapes, M 1-4096; bench/notes/v44.md), less its two picks
-- that covered one point each (16x256 wg4 s12, 128x64 wg1 s6). Not yet swept: bf16 g128 and
-- f16 / bf16 per channel take the three picks of f16 g128 that cover the most points (the
-- same main loop; the output and scale types differ, and per channel has no scale rows).
return {
  ["f16_u4b8_g128_e4m3"] = {
    "mgen_sm90a_f16_u4b8_g128_128x128x128_wg2_s6",
    "mgen_sm90a_f16_u4b8_g128_16x256x128_wg4_s6",
    "mgen_sm90a_f16_u4b8_g128_192x128x128_wg2_s4",
    "mgen_sm90a_f16_u4b8_g128_32x256x128_wg4_s6",
    "mgen_sm90a_f16_u4b8_g128_64x128x128_wg2_s6",
    "mgen_sm90a_f16_u4b8_g128_192x128x128_wg2_s6",
    "mgen_sm90a_f16_u4b8_g128_64x256x128_wg4_s4",
  },
  ["bf16_u4b8_g128_e4m3"] = {
    "mgen_sm90a_bf16_u4b8_g128_128x128x128_wg2_s6",
    "mgen_sm90a_bf16_u4b8_g128_16x256x128_wg4_s6",
    "mgen_sm90a_bf16_u4b8_g128_192x128x128_wg2_s4",
  },
  ["f16_u4b8_gc_e4m3"] = {
    "mgen_sm90a_f16_u4b8_gc_128x128x128_wg2_s6",
    "mgen_sm90a_f16_u4b8_gc_16x256x128_wg4_s6",
    "mgen_sm90a_f16_u4b8_gc_192x128x128_wg2_s4",
  },
  ["bf16_u4b8_gc_e4m3"] = {
    "mgen_sm90a_bf16_u4b8_gc_128x128x128_wg2_s6",
    "mgen_sm90a_bf16_u4b8_gc_16x256x128_wg4_s6",
    "mgen_sm90a_bf16_u4b8_gc_192x128x128_wg2_s4",
  },
}
