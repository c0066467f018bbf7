// consumer.cpp -- a C++ program outside this project that uses an installed libmgen
// (install_test.sh builds it with find_package(MarlinGen) in a project declared
// `LANGUAGES CXX`): mgen.h compiles as C++ and its functions link with C names.
// Exit status: 0 all checked; 77 no usable GPU (the part before it was checked); 1 a failure.
#include <cstdio>
#include <memory>
#include <string>

#include <cuda_runtime_api.h>
#include <mgen/mgen.h>

static int failed(int line, const char *what) {
  std::fprintf(stderr, "consumer.cpp:%d: check failed: %s\n", line, what);
  return 1;
}
#define CHECK(cond) \
  if (!(cond)) return failed(__LINE__, #cond)

int main() {
  CHECK(mgen_version_number() == MGEN_VERSION_NUMBER);
  CHECK(std::string(mgen_status_str(MGEN_OK)) == "success");
  const mgen_table *table = mgen_builtin_table();
  CHECK(table != nullptr && table->count > 0);
  const std::string name = table->kernels[table->count - 1].name;
  CHECK(mgen_table_find(table, name.c_str()) == table->count - 1);
  CHECK(mgen_table_find(table, "mgen_no_such_kernel") == -1);
  std::printf("consumer (C++): libmgen %d, %d kernels, %s\n", mgen_version_number(),
              table->count, name.c_str());

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("consumer (C++): no usable GPU: context not checked\n");
    return 77;
  }
  mgen_ctx *raw = nullptr;
  CHECK(mgen_ctx_create(&raw, table, nullptr) == MGEN_OK);
  // The context's owner: mgen_ctx_destroy on every path out.
  std::unique_ptr<mgen_ctx, void (*)(mgen_ctx *)> ctx(raw, mgen_ctx_destroy);
  CHECK(mgen_ctx_sm(ctx.get()) >= 80);
  std::printf("consumer (C++): context on sm_%d\n", mgen_ctx_sm(ctx.get()));
  return 0;
}
