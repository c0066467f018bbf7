/* test_wgmma_plan.c -- prints the wgmma launch plan (templates/wgmma/include/mgen_wgmma_sched.h,
 * the C the launcher and the cost model use) for one problem, in the words of marlin-gen
 * --explain --shape, whose Lua mirror (templates/wgmma/smem.lua) tests/gen/plan_agree.sh
 * compares it with:
 *
 *   test_wgmma_plan TILE_M TILE_N M N K SMS   ->   "grid G, whole tiles D"
 *
 * max_splits and min_split_tiles are the spec's (templates/wgmma/spec.lua: 16, 4). Exit 2 on a
 * usage error. */
#include <stdio.h>
#include <stdlib.h>

#include "mgen_wgmma_sched.h" /* templates/wgmma/include: the source, not a generated copy */

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: test_wgmma_plan TILE_M TILE_N M N K SMS\n");
    return 2;
  }
  long long v[6];
  for (int i = 0; i < 6; i++) {
    char *end = NULL;
    v[i] = strtoll(argv[i + 1], &end, 10);
    if (end == argv[i + 1] || *end != '\0' || v[i] < 1) {
      fprintf(stderr, "test_wgmma_plan: '%s' is not a positive integer\n", argv[i + 1]);
      return 2;
    }
  }
  const long long tile_m = v[0], tile_n = v[1], m = v[2], n = v[3], k = v[4], sms = v[5];
  const long long tiles = (m + tile_m - 1) / tile_m * ((n + tile_n - 1) / tile_n);
  const mgen_wgmma_plan plan = mgen_wgmma_schedule(tiles, sms, (k + 63) / 64, 16, 4, 1);
  printf("grid %lld, whole tiles %lld\n", plan.grid, plan.dp_tiles);
  return 0;
}
