// main.cpp -- examples/cpp: libmgen from C++17, as an inference engine would hold it: the
// context and device buffers owned by RAII handles, failures as exceptions carrying the
// library's message, weights quantized once and GEMMs at a decode, a batch and a prefill M on
// a stream of the program's own, each checked against the CPU's product of the unquantized
// weights. Build and run: README.md beside it.
// Exit status: 0 done; 1 an error, named on stderr ("no CUDA GPU here" among them).
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <mgen/mgen.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {

// N x K: an nn.Linear weight (out_features x in_features); C[m, N] = A[m, K] * W^T.
constexpr int kN = 4096, kK = 4096, kGroup = 128;
// 4-bit weights give ~6.5% relative error on these uniform random data (examples/c says why).
constexpr double kMaxRelativeError = 0.1;

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(mgen_status status, const mgen_ctx *ctx, const char *what) {
  if (status != MGEN_OK)
    throw Error(std::string(what) + ": " + mgen_status_str(status) + ": " +
                mgen_ctx_last_error(ctx));
}
void check_cuda(cudaError_t error, const char *what) {
  if (error != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(error));
}

struct CtxDelete {
  void operator()(mgen_ctx *ctx) const { mgen_ctx_destroy(ctx); }
};
using Context = std::unique_ptr<mgen_ctx, CtxDelete>;

struct CudaFree {
  void operator()(void *p) const { cudaFree(p); }
};
using DeviceBuffer = std::unique_ptr<void, CudaFree>;

DeviceBuffer device_alloc(size_t bytes) {
  void *p = nullptr;
  check_cuda(cudaMalloc(&p, bytes), "cudaMalloc");
  return DeviceBuffer(p);
}
// A copy in `stream`'s order, so that the stream's work after it sees the data (a plain
// cudaMemcpy runs on the legacy default stream, which a non-blocking stream does not wait for).
template <typename T> DeviceBuffer to_device(const std::vector<T> &host, cudaStream_t stream) {
  DeviceBuffer d = device_alloc(host.size() * sizeof(T));
  check_cuda(cudaMemcpyAsync(d.get(), host.data(), host.size() * sizeof(T),
                             cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync");
  return d;
}

struct StreamDestroy {
  void operator()(cudaStream_t s) const { cudaStreamDestroy(s); }
};
using Stream = std::unique_ptr<std::remove_pointer_t<cudaStream_t>, StreamDestroy>;

// Packed 4-bit weights: their description and the device buffers it points into.
struct PackedWeights {
  mgen_weights desc{};
  DeviceBuffer q, scales;
};

PackedWeights quantize(mgen_ctx *ctx, const std::vector<__half> &w, cudaStream_t stream) {
  PackedWeights p;
  p.desc.wfmt = MGEN_WFMT_U4B8;
  p.desc.act = MGEN_ACT_F16;
  p.desc.scheme = MGEN_SCHEME_GROUP;
  p.desc.group = kGroup;
  p.desc.n = kN;
  p.desc.k = kK;
  size_t qbytes = 0, sbytes = 0;
  check(mgen_weights_bytes(&p.desc, &qbytes, &sbytes), ctx, "mgen_weights_bytes");
  p.q = device_alloc(qbytes);
  p.scales = device_alloc(sbytes);
  p.desc.d_q = p.q.get();
  p.desc.d_scales = p.scales.get();
  DeviceBuffer d_w = to_device(w, stream);
  check(mgen_quantize(ctx, d_w.get(), &p.desc, stream), ctx, "mgen_quantize");
  // d_w must outlive the quantization, which runs on `stream`.
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return p;
}

// Relative error of rows 0 and m-1 of C against the CPU's product of the unquantized weights.
double relative_error(const std::vector<__half> &a, const std::vector<__half> &w,
                      const std::vector<__half> &c, int m) {
  double err2 = 0, ref2 = 0;
  for (int i : {0, m - 1}) {
    for (int j = 0; j < kN; j++) {
      double ref = 0;
      for (int k = 0; k < kK; k++)
        ref += double(__half2float(a[size_t(i) * kK + k])) * __half2float(w[size_t(j) * kK + k]);
      const double d = __half2float(c[size_t(i) * kN + j]) - ref;
      err2 += d * d;
      ref2 += ref * ref;
    }
  }
  return std::sqrt(err2 / ref2);
}

void run() {
  int devices = 0;
  char why[256] = "";
  const mgen_status probe = mgen_device_count(&devices, why, sizeof why);
  if (probe != MGEN_OK) throw Error(std::string("CUDA cannot start here: ") + why);
  if (devices == 0) throw Error(std::string("no CUDA GPU here (") + why + "): nothing to run");

  mgen_ctx *raw = nullptr;
  // Its message says "mgen_ctx_create: <status>: <why>" itself.
  if (mgen_ctx_create(&raw, mgen_builtin_table(), nullptr) != MGEN_OK)
    throw Error(mgen_ctx_last_error(nullptr));
  Context ctx(raw);
  cudaStream_t s = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  Stream stream(s);

  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<__half> w(size_t(kN) * kK);
  for (__half &x : w) x = __float2half(uniform(rng));
  const PackedWeights weights = quantize(ctx.get(), w, stream.get());
  std::printf("example (C++): sm_%d; %dx%d FP16 weights quantized to u4b8/g%d\n",
              mgen_ctx_sm(ctx.get()), kN, kK, kGroup);

  for (int m : {1, 16, 256}) {
    std::vector<__half> a(size_t(m) * kK), c(size_t(m) * kN);
    for (__half &x : a) x = __float2half(uniform(rng));
    DeviceBuffer d_a = to_device(a, stream.get()), d_c = device_alloc(c.size() * sizeof(__half));
    const char *kernel = nullptr;
    check(mgen_gemm_choice(ctx.get(), MGEN_ACT_F16, m, &weights.desc, &kernel), ctx.get(),
          "mgen_gemm_choice");
    check(mgen_gemm(ctx.get(), MGEN_ACT_F16, m, d_a.get(), &weights.desc, d_c.get(),
                    stream.get()),
          ctx.get(), "mgen_gemm");
    check_cuda(cudaMemcpyAsync(c.data(), d_c.get(), c.size() * sizeof(__half),
                               cudaMemcpyDeviceToHost, stream.get()),
               "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize");
    const double rel = relative_error(a, w, c, m);
    std::printf("example (C++): M = %3d ran %s; relative error %.4f\n", m, kernel, rel);
    if (!(rel <= kMaxRelativeError))
      throw Error("M = " + std::to_string(m) + ": relative error above " +
                  std::to_string(kMaxRelativeError) + ": wrong results");
  }
  std::printf("example (C++): ok\n");
}

}  // namespace

int main() {
  try {
    run();
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "example (C++): %s\n", e.what());
    return 1;
  }
}
