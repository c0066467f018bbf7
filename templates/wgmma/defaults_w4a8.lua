-- The wgmma family's W4A8 kernels in the default set (FP8 E4M3 activations, weights in the e4m3
-- layout: tile_k 128), by key, in default_rank order. f16 g128 and f16 per channel:
-- bench/sweep_select.lua's cover (3% tolerance) of the H200 sweep
-- bench/results/sweep-h200-w4a8-v46.csv.xz (bench_gemm --act e4m3 --fmt g128,gc --sweep 10
-- --reps 15, the 8 benchmark shapes, M 1-4096, the full space with the 8- and 16-row decode
-- tiles; bench/notes/v46.md), less the picks that covered one point each (g128: 160x128 wg2 s4,
-- 16x256 wg2 s4, 32x256 wg2 s6). Not swept: bf16 g128 and bf16 per channel take the three picks
-- of their f16 key that cover the most points (the same main loop; the output and scale types
-- differ). MXFP4 (fe2m1 g32, its block scales folded into the E4M3 weights): the same cover of
-- the H100 run bench/results/w4a8-mxfp4-h100-v59.csv.xz (bench_gemm --act e4m3 --fmt mxfp4,g128
-- --all-kernels --reps 15 over the --space full candidates: the tiles of u4b8's cover and the
-- sm89 decode tiles; bench/notes/v59.md); bf16 takes the three f16 picks that cover the most
-- points, as above. u4 (zero points subtracted in the E4M3 bytes) g128 and per channel: the same
-- cover, all its picks, of the H100 run bench/results/w4a8-u4-h100-v60.csv.xz (bench_gemm --act
-- e4m3 --fmt g128,u4_g128,gc,u4_gc --all-kernels --reps 15 over the --space full candidates:
-- the wgmma tiles of u4b8's cover; bench/notes/v60.md; its u4 rows only), bf16 as above. (u4
-- has no sm89 W4A8 kernel of these groups in the set: on a GPU without wgmma it stays refused.)
return {
  ["f16_fe2m1_g32_e4m3"] = {
    "mgen_sm90a_f16_fe2m1_g32_192x128x128_wg2_s4",
    "mgen_sm90a_f16_fe2m1_g32_128x128x128_wg2_s6",
    "mgen_sm90a_f16_fe2m1_g32_64x128x128_wg2_s8",
    "mgen_sm90a_f16_fe2m1_g32_16x128x128_wg2_s8",
    "mgen_sm90a_f16_fe2m1_g32_128x64x128_wg1_s6",
  },
  ["bf16_fe2m1_g32_e4m3"] = {
    "mgen_sm90a_bf16_fe2m1_g32_192x128x128_wg2_s4",
    "mgen_sm90a_bf16_fe2m1_g32_16x128x128_wg2_s8",
    "mgen_sm90a_bf16_fe2m1_g32_128x128x128_wg2_s6",
  },
  ["f16_u4b8_g128_e4m3"] = {
    "mgen_sm90a_f16_u4b8_g128_128x128x128_wg2_s6",
    "mgen_sm90a_f16_u4b8_g128_192x128x128_wg2_s4",
    "mgen_sm90a_f16_u4b8_g128_16x128x128_wg2_s8",
    "mgen_sm90a_f16_u4b8_g128_64x128x128_wg2_s8",
    "mgen_sm90a_f16_u4b8_g128_8x256x128_wg2_s4",
    "mgen_sm90a_f16_u4b8_g128_32x256x128_wg2_s4",
    "mgen_sm90a_f16_u4b8_g128_128x64x128_wg1_s6",
    "mgen_sm90a_f16_u4b8_g128_64x192x128_wg3_s6",
  },
  ["bf16_u4b8_g128_e4m3"] = {
    "mgen_sm90a_bf16_u4b8_g128_128x128x128_wg2_s6",
    "mgen_sm90a_bf16_u4b8_g128_192x128x128_wg2_s4",
    "mgen_sm90a_bf16_u4b8_g128_16x128x128_wg2_s8",
  },
  ["f16_u4_g128_e4m3"] = {
    "mgen_sm90a_f16_u4_g128_128x128x128_wg2_s6",
    "mgen_sm90a_f16_u4_g128_16x128x128_wg2_s8",
    "mgen_sm90a_f16_u4_g128_192x128x128_wg2_s4",
    "mgen_sm90a_f16_u4_g128_64x128x128_wg2_s8",
    "mgen_sm90a_f16_u4_g128_8x256x128_wg2_s4",
    "mgen_sm90a_f16_u4_g128_128x64x128_wg1_s6",
    "mgen_sm90a_f16_u4_g128_64x192x128_wg3_s6",
  },
  ["bf16_u4_g128_e4m3"] = {
    "mgen_sm90a_bf16_u4_g128_128x128x128_wg2_s6",
    "mgen_sm90a_bf16_u4_g128_16x128x128_wg2_s8",
    "mgen_sm90a_bf16_u4_g128_192x128x128_wg2_s4",
  },
  ["f16_u4_gc_e4m3"] = {
    "mgen_sm90a_f16_u4_gc_16x128x128_wg2_s8",
    "mgen_sm90a_f16_u4_gc_128x128x128_wg2_s6",
    "mgen_sm90a_f16_u4_gc_192x128x128_wg2_s6",
    "mgen_sm90a_f16_u4_gc_64x128x128_wg2_s6",
    "mgen_sm90a_f16_u4_gc_16x256x128_wg4_s6",
    "mgen_sm90a_f16_u4_gc_128x64x128_wg1_s6",
    "mgen_sm90a_f16_u4_gc_64x192x128_wg3_s6",
  },
  ["bf16_u4_gc_e4m3"] = {
    "mgen_sm90a_bf16_u4_gc_16x128x128_wg2_s8",
    "mgen_sm90a_bf16_u4_gc_128x128x128_wg2_s6",
    "mgen_sm90a_bf16_u4_gc_192x128x128_wg2_s6",
  },
  ["f16_u4b8_gc_e4m3"] = {
    "mgen_sm90a_f16_u4b8_gc_128x128x128_wg2_s6",
    "mgen_sm90a_f16_u4b8_gc_16x128x128_wg2_s8",
    "mgen_sm90a_f16_u4b8_gc_192x128x128_wg2_s6",
    "mgen_sm90a_f16_u4b8_gc_64x192x128_wg3_s6",
    "mgen_sm90a_f16_u4b8_gc_32x256x128_wg4_s6",
    "mgen_sm90a_f16_u4b8_gc_128x64x128_wg1_s6",
    "mgen_sm90a_f16_u4b8_gc_8x128x128_wg2_s8",
    "mgen_sm90a_f16_u4b8_gc_16x256x128_wg4_s6",
    "mgen_sm90a_f16_u4b8_gc_64x128x128_wg2_s6",
  },
  ["bf16_u4b8_gc_e4m3"] = {
    "mgen_sm90a_bf16_u4b8_gc_128x128x128_wg2_s6",
    "mgen_sm90a_bf16_u4b8_gc_16x128x128_wg2_s8",
    "mgen_sm90a_bf16_u4b8_gc_192x128x128_wg2_s6",
  },
}
