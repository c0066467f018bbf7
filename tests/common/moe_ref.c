/* moe_ref.c -- the CPU reference of the MoE route (moe_ref.h). */
#include "moe_ref.h"

int moe_ref_local(const int32_t *ids, const int32_t *map, int experts, int local, int pair) {
  const int32_t e = ids[pair];
  if (e < 0 || e >= experts) return -1;
  const int32_t l = map ? map[e] : e;
  return l >= 0 && l < local ? l : -1;
}

int moe_ref_route(const int32_t *ids, const int32_t *map, int pairs, int experts, int local,
                  int block_rows, int capacity, int32_t *sorted, int32_t *blocks,
                  int32_t *num_padded) {
  int at = 0;
  for (int e = 0; e < local; e++) {
    const int start = at;
    for (int i = 0; i < pairs; i++) {
      if (moe_ref_local(ids, map, experts, local, i) != e) continue;
      if (at >= capacity) return -1;
      sorted[at++] = i;
    }
    while ((at - start) % block_rows != 0) {
      if (at >= capacity) return -1;
      sorted[at++] = pairs;
    }
    for (int b = start / block_rows; b < at / block_rows; b++) blocks[b] = e;
  }
  *num_padded = at;
  for (int b = at / block_rows; b < capacity / block_rows; b++) blocks[b] = -1;
  for (int r = at; r < capacity; r++) sorted[r] = pairs;
  return 0;
}
