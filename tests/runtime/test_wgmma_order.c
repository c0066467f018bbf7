/* test_wgmma_order.c -- the wgmma kernels' tile order (templates/wgmma/include/mgen_wgmma_sched.h,
 * the C both kernels' Schedule::place and this test compile): mgen_wgmma_tile_place visits every
 * (slab, column tile) once for any band, one band is the slab-fastest order, a band's tiles stay
 * in it; and the dense op's band rule (mgen_wgmma_band): one band wherever A fits the budget,
 * else bands whose A fits, never fewer slabs than make a wave's bytes least, 1 to m_slabs. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "mgen_wgmma_sched.h" /* templates/wgmma/include: the source, not a generated copy */

/* Every tile of m_slabs x n_tiles placed once, band by band, slab fastest within a band. */
static void check_order(int m_slabs, int n_tiles, int band) {
  const int tiles = m_slabs * n_tiles;
  char *seen = calloc((size_t)tiles, 1);
  int placed = 0;
  for (int t = 0; t < tiles; t++, placed++) {
    const mgen_wgmma_place p = mgen_wgmma_tile_place(t, m_slabs, n_tiles, band);
    const int first = t / (band * n_tiles) * band; /* the band's first slab */
    const int rows = m_slabs - first < band ? m_slabs - first : band;
    if (p.slab < first || p.slab >= first + rows || p.col_tile < 0 || p.col_tile >= n_tiles ||
        seen[p.slab * n_tiles + p.col_tile]++) {
      CHECK(0, "m_slabs %d n_tiles %d band %d: tile %d at (%d, %d)", m_slabs, n_tiles, band, t,
            p.slab, p.col_tile);
      break;
    }
    /* slab fastest: the next tile of the same band is the next slab, or the next column tile */
    if (band >= m_slabs) {
      CHECK(p.slab == t % m_slabs && p.col_tile == t / m_slabs, "one band (%d >= %d slabs): tile %d",
            band, m_slabs, t);
    }
  }
  CHECK(placed == tiles, "m_slabs %d n_tiles %d band %d: %d of %d tiles placed", m_slabs, n_tiles,
        band, placed, tiles);
  free(seen);
}

/* The W bytes of a 128-column tile of u4b8 g128 over K (4-bit weights, FP16 scales a group). */
static long long col_bytes(long long k) { return 128 * k / 2 + (k / 128) * 128 * 2; }

int main(void) {
  for (int m = 1; m <= 24; m++)
    for (int n = 1; n <= 9; n++)
      for (int band = 1; band <= m + 2; band++) check_order(m, n, band);
  check_order(37, 448, 6); /* (8192, 57344) at M = 4736 in 128-row slabs */

  const long long mib = 1 << 20, budget = 24 * mib;
  /* Where A fits the budget: one band, whatever the grid (the order of old). */
  CHECK(mgen_wgmma_band(16, 132, 1 * mib, col_bytes(4096), budget) == 16, "16 x 1 MiB fits");
  CHECK(mgen_wgmma_band(1, 132, 30 * mib, col_bytes(8192), budget) == 1, "one slab: one band");
  CHECK(mgen_wgmma_band(0, 132, 4 * mib, col_bytes(8192), budget) == 1, "no slab: still >= 1");
  /* M = 4096 on 256-row slabs, K = 8192: 4 MiB a slab, 64 MiB of A; 6 slabs fit 24 MiB. */
  const long long s8192 = 256LL * 8192 * 2;
  CHECK(mgen_wgmma_band(16, 132, s8192, col_bytes(8192), budget) == 6, "M 4096 K 8192: %d",
        mgen_wgmma_band(16, 132, s8192, col_bytes(8192), budget));
  /* K = 28672 (14 MiB a slab): not one fits; the wave's fewest bytes: a * a >= 132 / 8 -> 5. */
  const long long s28672 = 256LL * 28672 * 2;
  const int b28672 = mgen_wgmma_band(16, 132, s28672, col_bytes(28672), budget);
  CHECK(b28672 == 5, "M 4096 K 28672: %d", b28672);
  CHECK(b28672 * b28672 * s28672 >= 132 * col_bytes(28672) &&
            (b28672 - 1) * (b28672 - 1) * s28672 < 132 * col_bytes(28672),
        "the fewest bytes' band is the least a with a * a * slab >= wave * col");
  /* The rule's bounds over a sweep: 1..m_slabs; one band iff A fits; else the band's A fits or
   * the band is the fewest-bytes one. */
  for (int m_slabs = 1; m_slabs <= 64; m_slabs++)
    for (long long k = 256; k <= 65536; k *= 2)
      for (int tile_m = 64; tile_m <= 256; tile_m *= 2) {
        const long long slab = (long long)tile_m * k * 2, col = col_bytes(k);
        const int band = mgen_wgmma_band(m_slabs, 132, slab, col, budget);
        int fewest = 1;
        while (fewest < m_slabs && (long long)fewest * fewest * slab < 132 * col) ++fewest;
        const int fits = m_slabs * slab <= budget;
        CHECK(band >= 1 && band <= m_slabs, "band %d of %d slabs", band, m_slabs);
        CHECK(fits == (band == m_slabs) || (!fits && band == m_slabs && fewest == m_slabs),
              "m_slabs %d k %lld tile_m %d: band %d, A %s", m_slabs, k, tile_m, band,
              fits ? "fits" : "does not fit");
        CHECK(fits || band >= fewest, "m_slabs %d k %lld tile_m %d: band %d < %d", m_slabs, k, tile_m, band,
              fewest);
        CHECK(band * slab <= budget || band == fewest || band == 1, "m_slabs %d k %lld: band %d", m_slabs,
              k, band);
      }
  return check_exit("test_wgmma_order");
}
