/* fake_table.c -- see fake_table.h. */
#include "fake_table.h"

mgen_launch_args fake_last_args;
int fake_last_kernel = -1;
int fake_launches;
int fake_launch_result;
int fake_prepares;

static int fake_prepare(void) {
  fake_prepares++;
  return 0;
}

#define FAKE_LAUNCHER(i)                                                   \
  static int fake_launch_##i(const mgen_launch_args *args, void *stream) { \
    (void)stream;                                                          \
    fake_last_args = *args;                                                \
    fake_last_kernel = i;                                                  \
    fake_launches++;                                                       \
    return fake_launch_result;                                             \
  }
FAKE_LAUNCHER(0)
FAKE_LAUNCHER(1)
FAKE_LAUNCHER(2)
FAKE_LAUNCHER(3)
FAKE_LAUNCHER(4)
FAKE_LAUNCHER(5)
FAKE_LAUNCHER(6)
FAKE_LAUNCHER(7)
FAKE_LAUNCHER(8)
FAKE_LAUNCHER(9)
FAKE_LAUNCHER(10)
FAKE_LAUNCHER(11)

#define F16 MGEN_ACT_F16
#define BF16 MGEN_ACT_BF16
#define U4B8 MGEN_WFMT_U4B8
#define FAKE(i, nm, act_, group_, tm, tn, tk, sm, rank) FAKE_IN(i, nm, act_, group_, tm, tn, tk, sm, rank, MMA)
#define FAKE_IN(i, nm, act_, group_, tm, tn, tk, sm, rank, layout_)                                \
  [i] = {.name = nm, .family = MGEN_FAMILY_MMA, .act = act_, .wfmt = U4B8, .group = group_,        \
         .scheme = MGEN_SCHEME_GROUP, .layout = MGEN_LAYOUT_##layout_,                           \
         .tile_m = tm, .tile_n = tn, .tile_k = tk, .sm_min = sm, .smem_bytes = 0,              \
         .blocks_per_sm = 1, .default_rank = rank, .params = {4, 8, 3, 4, 3},                    \
         .launch = fake_launch_##i, .prepare = fake_prepare}

static const mgen_kernel_desc fake_kernels[FAKE_COUNT] = {
    FAKE(0, "fake_gc_a", F16, 0, 16, 64, 64, 80, 0),
    FAKE(1, "fake_gc_b", F16, 0, 64, 128, 128, 80, 0),
    FAKE(2, "fake_g64_sm90", F16, 64, 16, 256, 64, 90, 0),
    FAKE(3, "fake_g128_16_r1", F16, 128, 16, 128, 128, 80, 1),
    FAKE(4, "fake_g128_16_r0", F16, 128, 16, 128, 128, 80, 0),
    FAKE(5, "fake_g128_16_r0b", F16, 128, 16, 128, 128, 80, 0),
    FAKE(6, "fake_g128_32", F16, 128, 32, 128, 128, 80, 0),
    FAKE(7, "fake_g128_64", F16, 128, 64, 128, 128, 80, 0),
    FAKE(8, "fake_g128_128", F16, 128, 128, 128, 128, 80, 0),
    FAKE(9, "fake_g128_256_sm90", F16, 128, 256, 128, 128, 90, 0),
    FAKE(10, "fake_bf16_g128", BF16, 128, 16, 64, 64, 80, 0),
    FAKE_IN(11, "fake_e4m3_g128", F16, 128, 64, 128, 128, 80, 0, E4M3),
};

const mgen_table fake_table = {fake_kernels, FAKE_COUNT, 0x1234, "fake table"};

int fake_device_current = 0;
int fake_current_device(void) { return fake_device_current; }
