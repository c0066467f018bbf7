/* test_family_seam.c -- a new kernel family through the real seams. The build
 * (tests/CMakeLists.txt, "the family seam") adds the toy family tests/gen/fixtures/families/ref/
 * (spec, kernel template, partial: a plain FP32 loop kernel for sm_75..sm_79; its runtime file
 * ref.c) to a copy of the source tree as a newcomer adds one: its folder into templates/, its
 * runtime file into runtime/src/families/, one line X(ref) in registry.c, nothing else
 * (tests/scripts/toy_family_tree.sh fails on any other difference). It runs the real
 * marlin-gen on that tree for one mma kernel and the ref kernel, compiles each family's shard
 * for the architectures its spec names (mma: sm_80 here, ref: sm_75) and links the generated
 * table here with every .c file of the tree's families/ (the library's registry with the toy's
 * line) and the runtime's selection and cost model. No GPU: the device is a model.
 *
 * Checks: the registry holds exactly the tree's families (its template folders and the toy);
 * both kernel families are in one table with their architecture ranges, their own name fields
 * and their params (read by the generated mgen_params_<family>.h names); every kernel's family
 * is registered; selection picks by architecture range (sm_75: ref, sm_80 and sm_90: mma,
 * sm_70: none, naming the ranges); the workspace rule and the cost model dispatch by family.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "dispatch/select.h"
#include "mma.h" /* the tree's families/ (the library's own, unchanged) */
#include "ref.h" /* the toy's runtime file's header, there beside them */
#include "wgmma.h"

extern const mgen_table mgen__builtin_table; /* the generated toy table (mgen_table.c) */

static const mgen_kernel_desc *pick(int sm, int m, mgen_status *st, char *why, size_t size) {
  const mgen__device dev = mgen__device_model(sm, 40, 0, 0, 0, 0);
  const mgen__key key = {.act = MGEN_ACT_F16, .wfmt = MGEN_WFMT_U4B8, .scheme = MGEN_SCHEME_GROUP,
                         .group = 128, .layout = MGEN_LAYOUT_MMA};
  int index = -1;
  *st = mgen__select(&mgen__builtin_table, &dev, &key, m, 4096, 4096, &index, why, size);
  return *st == MGEN_OK ? &mgen__builtin_table.kernels[index] : NULL;
}

/* The tree's template folders and the toy, comma-separated (the build defines it). */
#ifndef TOY_TREE_FAMILIES
#error "TOY_TREE_FAMILIES: tests/CMakeLists.txt defines it"
#endif

static void test_registry(void) {
  /* The registry holds exactly the tree's families: each folder's, nothing else. */
  size_t folders = 0;
  for (const char *s = TOY_TREE_FAMILIES; *s != '\0'; folders++) {
    const size_t len = strcspn(s, ",");
    int found = 0;
    for (size_t i = 0; i < mgen__family_count; i++)
      found |= strlen(mgen__families[i]->name) == len &&
               strncmp(mgen__families[i]->name, s, len) == 0;
    CHECK(found, "family %.*s (a folder of the tree's templates/) is registered", (int)len, s);
    s += len + (s[len] == ',');
  }
  CHECK(mgen__family_count == folders, "the registry has %zu families, the tree %zu (%s)",
        mgen__family_count, folders, TOY_TREE_FAMILIES);
  const mgen__family *want[] = {&mgen__family_mma, &mgen__family_wgmma, &mgen__family_ref};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    CHECK(mgen__family_of(want[i]->id) == want[i], "%s (id %d) registered", want[i]->name,
          want[i]->id);
  CHECK(mgen__family_ref.param_names[0] != NULL &&
            strcmp(mgen__family_ref.param_names[0], "block_threads") == 0 &&
            mgen__family_ref.param_names[MGEN_REF_PARAMS] == NULL,
        "ref's param names come from its spec (mgen_params_ref.h)");
}

static void test_table(void) {
  const mgen_table *t = &mgen__builtin_table;
  int mma = 0, ref = 0;
  CHECK(t->count == 2, "the toy table has %zu kernels, expected one per family", t->count);
  for (size_t i = 0; i < t->count; i++) {
    const mgen_kernel_desc *d = &t->kernels[i];
    const mgen__family *f = mgen__family_of(d->family);
    CHECK(f != NULL, "%s: family %d is not registered", d->name, d->family);
    CHECK(d->launch != NULL && d->prepare != NULL, "%s: launcher linked", d->name);
    if (d->family == MGEN_FAMILY_MMA) {
      mma++;
      CHECK(strncmp(d->name, "mgen_sm80_", 10) == 0, "%s: mma name", d->name);
      CHECK(d->sm_min == 80 && d->sm_max == MGEN_SM_NO_MAX, "%s: sm %d..%d", d->name, d->sm_min,
            d->sm_max);
      CHECK(d->params[MGEN_MMA_STAGES] >= 2 && d->params[MGEN_MMA_WARPS] >= 4, "%s: params",
            d->name);
    } else if (d->family == REF_FAMILY_ID) {
      ref++;
      CHECK(strcmp(d->name, "mgen_sm75ref_f16_u4b8_g128_1x64x16") == 0, "ref name %s", d->name);
      CHECK(d->sm_min == 75 && d->sm_max == 79, "%s: sm %d..%d", d->name, d->sm_min, d->sm_max);
      CHECK(d->params[MGEN_REF_BLOCK_THREADS] == d->tile_n, "%s: block_threads %d, tile_n %d",
            d->name, d->params[MGEN_REF_BLOCK_THREADS], d->tile_n);
    }
  }
  CHECK(mma == 1 && ref == 1, "%d mma and %d ref kernels", mma, ref);
}

static void test_selection_by_architecture(void) {
  char why[512];
  mgen_status st;
  const mgen_kernel_desc *d;
  d = pick(75, 1, &st, why, sizeof why);
  CHECK(d != NULL && d->family == REF_FAMILY_ID, "sm_75: %s (%s)", d ? d->name : "none", why);
  d = pick(79, 100, &st, why, sizeof why);
  CHECK(d != NULL && d->family == REF_FAMILY_ID, "sm_79: %s (%s)", d ? d->name : "none", why);
  for (int sm = 80; sm <= 100; sm += 10) {
    d = pick(sm, 7, &st, why, sizeof why);
    CHECK(d != NULL && d->family == MGEN_FAMILY_MMA, "sm_%d: %s (%s)", sm, d ? d->name : "none",
          why);
  }
  d = pick(70, 1, &st, why, sizeof why);
  CHECK(d == NULL && st == MGEN_ERR_NO_KERNEL, "sm_70: %s", mgen_status_str(st));
  CHECK(strstr(why, "run on sm_80 and later, sm_75 to sm_79") != NULL ||
            strstr(why, "run on sm_75 to sm_79, sm_80 and later") != NULL,
        "sm_70: the message names both ranges: %s", why);
  for (size_t i = 0; i < mgen__builtin_table.count; i++) {
    char range[48];
    mgen__arch_range(&mgen__builtin_table.kernels[i], range, sizeof range);
    CHECK(strcmp(range, mgen__builtin_table.kernels[i].family == REF_FAMILY_ID
                            ? "sm_75 to sm_79" : "sm_80 and later") == 0,
          "%s: %s", mgen__builtin_table.kernels[i].name, range);
  }
}

static void test_hooks_by_family(void) {
  const mgen__device dev = mgen__device_model(90, 132, 0, 0, 0, 0);
  for (size_t i = 0; i < mgen__builtin_table.count; i++) {
    const mgen_kernel_desc *d = &mgen__builtin_table.kernels[i];
    const mgen__family *f = mgen__family_of(d->family);
    size_t floats = 1, ints = 1;
    if (f == NULL) continue;
    f->workspace(d, 132, &floats, &ints);
    if (d->family == REF_FAMILY_ID)
      CHECK(floats == 0 && ints == 0, "ref needs no workspace: %zu, %zu", floats, ints);
    else
      CHECK(floats == 2 * 132 * (size_t)d->blocks_per_sm * d->tile_m * d->tile_n &&
                ints == 132 * (size_t)d->blocks_per_sm,
            "%s: workspace %zu floats, %zu ints", d->name, floats, ints);
    CHECK(mgen__cost_ns(d, 16, 4096, 4096, &dev) == f->cost_ns(d, 16, 4096, 4096, &dev),
          "%s: cost through its family", d->name);
  }
  const mgen_kernel_desc stranger = {.name = "stranger", .family = 7, .sm_min = 0};
  CHECK(!mgen__kernel_runs(&stranger, 90), "a kernel of an unknown family never runs");
}

int main(void) {
  test_registry();
  test_table();
  test_selection_by_architecture();
  test_hooks_by_family();
  return check_exit("test_family_seam");
}
