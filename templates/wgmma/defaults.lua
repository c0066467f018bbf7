-- The Hopper family's default kernel set, by key (act_wfmt_group), in default_rank order.
-- bench/sweep_select.lua --wgmma writes this file from a sweep of both families' candidates
-- (bench/notes.md v28 item 5); until then it holds version 5's set (notes v17 item 1): the six
-- tiles chosen by hand for every key from the H200 candidate sweep
-- (bench/sweep-h200-wgmma-candidates.csv.xz, 168 kernels), which came within 3% of the best
-- of all 168 at all but 14 of its points.
return {
  ["bf16_fe2m1_g16"] = {
    "mgen_sm90a_bf16_fe2m1_g16_64x128x64_wg2_s8",
    "mgen_sm90a_bf16_fe2m1_g16_128x128x64_wg2_s8",
    "mgen_sm90a_bf16_fe2m1_g16_256x128x64_wg2_s4",
    "mgen_sm90a_bf16_fe2m1_g16_32x256x64_wg4_s8",
    "mgen_sm90a_bf16_fe2m1_g16_64x256x64_wg4_s8",
    "mgen_sm90a_bf16_fe2m1_g16_64x256x64_wg2_s6",
  },
  ["bf16_fe2m1_g32"] = {
    "mgen_sm90a_bf16_fe2m1_g32_64x128x64_wg2_s8",
    "mgen_sm90a_bf16_fe2m1_g32_128x128x64_wg2_s8",
    "mgen_sm90a_bf16_fe2m1_g32_256x128x64_wg2_s4",
    "mgen_sm90a_bf16_fe2m1_g32_32x256x64_wg4_s8",
    "mgen_sm90a_bf16_fe2m1_g32_64x256x64_wg4_s8",
    "mgen_sm90a_bf16_fe2m1_g32_64x256x64_wg2_s6",
  },
  ["bf16_u4b8_g128"] = {
    "mgen_sm90a_bf16_u4b8_g128_64x128x64_wg2_s8",
    "mgen_sm90a_bf16_u4b8_g128_128x128x64_wg2_s8",
    "mgen_sm90a_bf16_u4b8_g128_256x128x64_wg2_s4",
    "mgen_sm90a_bf16_u4b8_g128_32x256x64_wg4_s8",
    "mgen_sm90a_bf16_u4b8_g128_64x256x64_wg4_s8",
    "mgen_sm90a_bf16_u4b8_g128_64x256x64_wg2_s6",
  },
  ["bf16_u4b8_g32"] = {
    "mgen_sm90a_bf16_u4b8_g32_64x128x64_wg2_s8",
    "mgen_sm90a_bf16_u4b8_g32_128x128x64_wg2_s8",
    "mgen_sm90a_bf16_u4b8_g32_256x128x64_wg2_s4",
    "mgen_sm90a_bf16_u4b8_g32_32x256x64_wg4_s8",
    "mgen_sm90a_bf16_u4b8_g32_64x256x64_wg4_s8",
    "mgen_sm90a_bf16_u4b8_g32_64x256x64_wg2_s6",
  },
  ["bf16_u4b8_g64"] = {
    "mgen_sm90a_bf16_u4b8_g64_64x128x64_wg2_s8",
    "mgen_sm90a_bf16_u4b8_g64_128x128x64_wg2_s8",
    "mgen_sm90a_bf16_u4b8_g64_256x128x64_wg2_s4",
    "mgen_sm90a_bf16_u4b8_g64_32x256x64_wg4_s8",
    "mgen_sm90a_bf16_u4b8_g64_64x256x64_wg4_s8",
    "mgen_sm90a_bf16_u4b8_g64_64x256x64_wg2_s6",
  },
  ["bf16_u4b8_gc"] = {
    "mgen_sm90a_bf16_u4b8_gc_64x128x64_wg2_s8",
    "mgen_sm90a_bf16_u4b8_gc_128x128x64_wg2_s8",
    "mgen_sm90a_bf16_u4b8_gc_256x128x64_wg2_s4",
    "mgen_sm90a_bf16_u4b8_gc_32x256x64_wg4_s8",
    "mgen_sm90a_bf16_u4b8_gc_64x256x64_wg4_s8",
    "mgen_sm90a_bf16_u4b8_gc_64x256x64_wg2_s6",
  },
  ["f16_fe2m1_g16"] = {
    "mgen_sm90a_f16_fe2m1_g16_64x128x64_wg2_s8",
    "mgen_sm90a_f16_fe2m1_g16_128x128x64_wg2_s8",
    "mgen_sm90a_f16_fe2m1_g16_256x128x64_wg2_s4",
    "mgen_sm90a_f16_fe2m1_g16_32x256x64_wg4_s8",
    "mgen_sm90a_f16_fe2m1_g16_64x256x64_wg4_s8",
    "mgen_sm90a_f16_fe2m1_g16_64x256x64_wg2_s6",
  },
  ["f16_fe2m1_g32"] = {
    "mgen_sm90a_f16_fe2m1_g32_64x128x64_wg2_s8",
    "mgen_sm90a_f16_fe2m1_g32_128x128x64_wg2_s8",
    "mgen_sm90a_f16_fe2m1_g32_256x128x64_wg2_s4",
    "mgen_sm90a_f16_fe2m1_g32_32x256x64_wg4_s8",
    "mgen_sm90a_f16_fe2m1_g32_64x256x64_wg4_s8",
    "mgen_sm90a_f16_fe2m1_g32_64x256x64_wg2_s6",
  },
  ["f16_u4b8_g128"] = {
    "mgen_sm90a_f16_u4b8_g128_64x128x64_wg2_s8",
    "mgen_sm90a_f16_u4b8_g128_128x128x64_wg2_s8",
    "mgen_sm90a_f16_u4b8_g128_256x128x64_wg2_s4",
    "mgen_sm90a_f16_u4b8_g128_32x256x64_wg4_s8",
    "mgen_sm90a_f16_u4b8_g128_64x256x64_wg4_s8",
    "mgen_sm90a_f16_u4b8_g128_64x256x64_wg2_s6",
  },
  ["f16_u4b8_g32"] = {
    "mgen_sm90a_f16_u4b8_g32_64x128x64_wg2_s8",
    "mgen_sm90a_f16_u4b8_g32_128x128x64_wg2_s8",
    "mgen_sm90a_f16_u4b8_g32_256x128x64_wg2_s4",
    "mgen_sm90a_f16_u4b8_g32_32x256x64_wg4_s8",
    "mgen_sm90a_f16_u4b8_g32_64x256x64_wg4_s8",
    "mgen_sm90a_f16_u4b8_g32_64x256x64_wg2_s6",
  },
  ["f16_u4b8_g64"] = {
    "mgen_sm90a_f16_u4b8_g64_64x128x64_wg2_s8",
    "mgen_sm90a_f16_u4b8_g64_128x128x64_wg2_s8",
    "mgen_sm90a_f16_u4b8_g64_256x128x64_wg2_s4",
    "mgen_sm90a_f16_u4b8_g64_32x256x64_wg4_s8",
    "mgen_sm90a_f16_u4b8_g64_64x256x64_wg4_s8",
    "mgen_sm90a_f16_u4b8_g64_64x256x64_wg2_s6",
  },
  ["f16_u4b8_gc"] = {
    "mgen_sm90a_f16_u4b8_gc_64x128x64_wg2_s8",
    "mgen_sm90a_f16_u4b8_gc_128x128x64_wg2_s8",
    "mgen_sm90a_f16_u4b8_gc_256x128x64_wg2_s4",
    "mgen_sm90a_f16_u4b8_gc_32x256x64_wg4_s8",
    "mgen_sm90a_f16_u4b8_gc_64x256x64_wg4_s8",
    "mgen_sm90a_f16_u4b8_gc_64x256x64_wg2_s6",
  },
}
