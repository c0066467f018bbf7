/* consumer.c -- a C program outside this project that uses an installed libmgen the way a user
 * would (install_test.sh builds it with find_package(MarlinGen) in a project declared
 * `LANGUAGES C`, and with pkg-config). The library's calls that need no GPU are checked here
 * everywhere; with a GPU it also creates a context and asks for a kernel choice.
 * Exit status: 0 all checked; 77 no usable GPU (the part before it was checked); 1 a failure. */
#include <stdio.h>
#include <string.h>

#include <cuda_runtime_api.h>
#include <mgen/mgen.h>

#define CHECK(cond)                                                                            \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      fprintf(stderr, "consumer.c:%d: check failed: %s\n", __LINE__, #cond);                   \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)

int main(void) {
  /* The header and the library linked are one release. */
  CHECK(mgen_version_number() == MGEN_VERSION_NUMBER);
  CHECK(strcmp(mgen_status_str(MGEN_ERR_IO), "file input/output error") == 0);
  /* The kernels are in the library: the table finds its first kernel by name. */
  const mgen_table *table = mgen_builtin_table();
  CHECK(table != NULL && table->count > 0);
  const mgen_kernel_desc *first = &table->kernels[0];
  CHECK(mgen_table_find(table, first->name) == 0);
  /* A weight of the first kernel's format, 4096 x 4096: 4 bits per weight. */
  mgen_weights w = {.wfmt = (mgen_wfmt)first->wfmt, .act = (mgen_act)first->act,
                    .scheme = (mgen_scheme)first->scheme, .group = first->group,
                    .n = 4096, .k = 4096};
  size_t qbytes = 0, sbytes = 0;
  CHECK(mgen_weights_bytes(&w, &qbytes, &sbytes) == MGEN_OK);
  CHECK(qbytes == (size_t)4096 * 4096 / 2 && sbytes > 0);
  printf("consumer (C): libmgen %d, %d kernels, %s\n", mgen_version_number(), table->count,
         first->name);

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("consumer (C): no usable GPU: context and kernel choice not checked\n");
    return 77;
  }
  mgen_ctx *ctx = NULL;
  mgen_status st = mgen_ctx_create(&ctx, table, NULL);
  CHECK(st == MGEN_OK);
  const char *kernel = NULL;
  st = mgen_gemm_choice(ctx, w.act, 16, &w, &kernel);
  /* The first kernel may be built for another architecture than this GPU's. */
  CHECK(st == MGEN_OK || st == MGEN_ERR_NO_KERNEL);
  printf("consumer (C): sm_%d, M = 16 runs %s\n", mgen_ctx_sm(ctx),
         st == MGEN_OK ? kernel : "(no kernel of that format for this GPU)");
  mgen_ctx_destroy(ctx);
  return 0;
}
