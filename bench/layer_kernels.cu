// layer_kernels.cu -- bench_layer's stand-in kernels (layer_kernels.h): the non-GEMM kernels of a
// decoder layer at decode, with the memory traffic of the real ones (each reads its inputs and
// writes its outputs once, in 16-byte vectors), launched as programmatic dependent launches.
// They stand in for an engine's kernels around the GEMMs, so that a GEMM is timed after the
// kind of kernel it follows in a model (a short one of a few blocks, or attention's wide
// stream), not after itself.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "layer_kernels.h"

namespace {

template <class T> struct Conv;
template <> struct Conv<__half> {
  static __device__ float in(__half x) { return __half2float(x); }
  static __device__ __half out(float x) { return __float2half_rn(x); }
};
template <> struct Conv<__nv_bfloat16> {
  static __device__ float in(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __nv_bfloat16 out(float x) { return __float2bfloat16_rn(x); }
};

// 8 elements of T in one 16-byte vector.
template <class T> struct Vec8 {
  static_assert(sizeof(T) == 2, "16-bit data: 8 elements per 16-byte vector");
  uint4 raw;
  __device__ float get(int i) const { return Conv<T>::in(reinterpret_cast<const T*>(&raw)[i]); }
  __device__ void set(int i, float v) { reinterpret_cast<T*>(&raw)[i] = Conv<T>::out(v); }
};
template <class T> __device__ Vec8<T> load8(const T* p) { return {*reinterpret_cast<const uint4*>(p)}; }
template <class T> __device__ void store8(T* p, const Vec8<T>& v) { *reinterpret_cast<uint4*>(p) = v.raw; }

// The kernel's dependency on the stream's previous kernel (a no-op without PDL or before
// sm_90), and where it lets the next kernel start: at its start (right after the wait) or
// after its last write.
__device__ __forceinline__ void dep_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void dep_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void stand_begin(int trigger_start) {
  dep_wait();
  if (trigger_start) dep_trigger();
}
__device__ __forceinline__ void stand_end(int trigger_start) {
  if (!trigger_start) dep_trigger();
}

// The block's sum of v (blockDim.x a multiple of 32, at most 1024), in every thread.
__device__ float block_sum(float v) {
  __shared__ float part[32];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  if (lane == 0) part[warp] = v;
  __syncthreads();
  v = lane < warps ? part[lane] : 0.f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

template <class T>
__global__ void rmsnorm_kernel(int hidden, const T* x, const T* add, const T* gamma, T* sum, T* y,
                               int trigger_start) {
  stand_begin(trigger_start);
  const size_t row = blockIdx.x * (size_t)hidden;
  float ss = 0.f;
  for (int c = threadIdx.x * 8; c < hidden; c += blockDim.x * 8) {
    Vec8<T> v = load8(x + row + c);
    if (add) {
      const Vec8<T> a = load8(add + row + c);
      for (int i = 0; i < 8; i++) v.set(i, v.get(i) + a.get(i));
      store8(sum + row + c, v);
    }
    for (int i = 0; i < 8; i++) ss += v.get(i) * v.get(i);
  }
  const float r = rsqrtf(block_sum(ss) / hidden + 1e-5f);
  const T* s = add ? sum : x;  // this thread's own writes above, or the input again (L1/L2)
  for (int c = threadIdx.x * 8; c < hidden; c += blockDim.x * 8) {
    const Vec8<T> v = load8(s + row + c), g = load8(gamma + c);
    Vec8<T> o;
    for (int i = 0; i < 8; i++) o.set(i, v.get(i) * r * g.get(i));
    store8(y + row + c, o);
  }
  stand_end(trigger_start);
}

template <class T>
__global__ void attention_kernel(int m, int q_dim, int qkv_ld, const T* qkv, const int4* kv, size_t kv_vecs,
                                 T* o, unsigned* sink, int trigger_start) {
  stand_begin(trigger_start);
  const size_t stride = (size_t)gridDim.x * blockDim.x, first = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (size_t i = first; i < kv_vecs; i += stride) {
    const int4 v = kv[i];
    acc ^= (unsigned)v.x ^ (unsigned)v.y ^ (unsigned)v.z ^ (unsigned)v.w;
  }
  const size_t per_row = q_dim / 8;
  for (size_t i = first; i < m * per_row; i += stride) {
    const size_t r = i / per_row, c = (i % per_row) * 8;
    store8(o + r * q_dim + c, load8(qkv + r * qkv_ld + c));
  }
  if (acc == 0x9e3779b9u) sink[blockIdx.x] = acc;
  stand_end(trigger_start);
}

template <class T>
__global__ void silu_mul_kernel(int m, int inter, const T* gate_up, T* out, int trigger_start) {
  stand_begin(trigger_start);
  const size_t per_row = inter / 8;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < m * per_row; i += (size_t)gridDim.x * blockDim.x) {
    const size_t r = i / per_row, c = (i % per_row) * 8;
    const Vec8<T> g = load8(gate_up + r * 2 * inter + c), u = load8(gate_up + r * 2 * inter + inter + c);
    Vec8<T> v;
    for (int j = 0; j < 8; j++) {
      const float x = g.get(j);
      v.set(j, x / (1.f + __expf(-x)) * u.get(j));
    }
    store8(out + r * inter + c, v);
  }
  stand_end(trigger_start);
}

template <class T>
__global__ void add_kernel(size_t vecs, const T* a, const T* b, T* out, int trigger_start) {
  stand_begin(trigger_start);
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < vecs; i += (size_t)gridDim.x * blockDim.x) {
    const Vec8<T> x = load8(a + 8 * i), y = load8(b + 8 * i);
    Vec8<T> v;
    for (int j = 0; j < 8; j++) v.set(j, x.get(j) + y.get(j));
    store8(out + 8 * i, v);
  }
  stand_end(trigger_start);
}

__global__ void spin_kernel(long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  while ((long long)(t - t0) < ns);
}

struct Values { float v[16]; };

template <class T>
__global__ void dequant_kernel(int n, int k, int group, const uint8_t* codes, Values values, const float* scales,
                               const uint8_t* zeros, float global, T* w) {
  const int groups = k / group;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < (size_t)n * k; i += (size_t)gridDim.x * blockDim.x) {
    const size_t r = i / k, g = r * groups + (i % k) / group;
    const float q = values.v[codes[i] & 15] - (zeros ? (float)zeros[g] : 0.f);
    w[i] = Conv<T>::out(q * scales[g] * global);
  }
}

// kernel<<<grid, block, 0, l->stream>>>(args...), as a programmatic dependent launch if l->pdl.
template <class... Params, class... Args>
int stand_launch(const layer_launch* l, void (*kernel)(Params...), unsigned grid, unsigned block,
                 Args... args) {
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(block);
  config.stream = l->stream;
  config.attrs = attr;
  config.numAttrs = l->pdl ? 1 : 0;
  return (int)cudaLaunchKernelEx(&config, kernel, args...);
}

// Blocks of 256 threads for a grid-stride loop over `vecs` vectors: one vector per thread up
// to 1024 blocks (more than an H200's 132 SMs hold at once).
unsigned stand_blocks(size_t vecs) {
  const size_t b = (vecs + 255) / 256;
  return (unsigned)(b < 1 ? 1 : b > 1024 ? 1024 : b);
}

}  // namespace

#define LAYER_DISPATCH(bf16, call) ((bf16) ? call(__nv_bfloat16) : call(__half))

extern "C" int layer_rmsnorm(const layer_launch* l, int m, int hidden, const void* x, const void* add,
                             const void* gamma, void* sum, void* y) {
  // One vector per thread where the row allows (at most 1024 threads), as engines size a norm.
  unsigned threads = (unsigned)((hidden / 8 + 31) / 32 * 32);
  threads = threads > 1024 ? 1024 : threads;
#define CALL(T)                                                                                \
  stand_launch(l, rmsnorm_kernel<T>, (unsigned)m, threads, hidden, (const T*)x, (const T*)add, \
               (const T*)gamma, (T*)sum, (T*)y, l->trigger_start)
  return LAYER_DISPATCH(l->bf16, CALL);
#undef CALL
}

extern "C" int layer_attention(const layer_launch* l, int m, int q_dim, int qkv_ld, const void* qkv,
                               const void* kv, size_t kv_bytes, int blocks, void* o, unsigned* sink) {
#define CALL(T)                                                                                  \
  stand_launch(l, attention_kernel<T>, (unsigned)blocks, 256u, m, q_dim, qkv_ld, (const T*)qkv, \
               (const int4*)kv, kv_bytes / 16, (T*)o, sink, l->trigger_start)
  return LAYER_DISPATCH(l->bf16, CALL);
#undef CALL
}

extern "C" int layer_silu_mul(const layer_launch* l, int m, int inter, const void* gate_up, void* out) {
#define CALL(T)                                                                                     \
  stand_launch(l, silu_mul_kernel<T>, stand_blocks((size_t)m * inter / 8), 256u, m, inter,         \
               (const T*)gate_up, (T*)out, l->trigger_start)
  return LAYER_DISPATCH(l->bf16, CALL);
#undef CALL
}

extern "C" int layer_add(const layer_launch* l, int m, int hidden, const void* a, const void* b, void* out) {
  const size_t vecs = (size_t)m * hidden / 8;
#define CALL(T)                                                                                    \
  stand_launch(l, add_kernel<T>, stand_blocks(vecs), 256u, vecs, (const T*)a, (const T*)b, (T*)out, \
               l->trigger_start)
  return LAYER_DISPATCH(l->bf16, CALL);
#undef CALL
}

extern "C" int layer_spin(long long ns, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(ns);
  return (int)cudaGetLastError();
}

extern "C" int layer_dequant(int bf16, int n, int k, int group, const uint8_t* codes, const float values[16],
                             const float* scales, const uint8_t* zeros, float global, void* w, cudaStream_t stream) {
  Values v;
  for (int i = 0; i < 16; i++) v.v[i] = values[i];
  const unsigned blocks = 4096;
  if (bf16)
    dequant_kernel<<<blocks, 256, 0, stream>>>(n, k, group, codes, v, scales, zeros, global, (__nv_bfloat16*)w);
  else
    dequant_kernel<<<blocks, 256, 0, stream>>>(n, k, group, codes, v, scales, zeros, global, (__half*)w);
  return (int)cudaGetLastError();
}
