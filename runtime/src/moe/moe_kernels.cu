// moe_kernels.cu -- the route and the top-k sum of the grouped GEMM (moe_kernels.h).
//
// The route sorts the (token, k) pairs, id = token * topk + k, by local expert into runs padded
// to block_rows, pairs in increasing id within a run, padding ids = pairs (past every pair):
//
//   sorted_ids     | e0: 3 9 12 P | e0: 17 P P P | e2: 1 4 P P | ... P P    (block_rows 4)
//   block_experts  |      0       |      0       |      2      | ... -1
//   num_padded     = 12
//
// One block does it all, so that no launch depends on a count on the host: counts per expert
// (shared-memory atomics: a count is the same in any order), a scan of the padded counts, then
// the pairs placed in id order, a chunk of one pair per thread at a time, the warps of a chunk
// taking their experts' cursors in warp order (deterministic, no global atomics). Entries
// past num_padded are written too (padding, expert -1), so the whole capacity is defined.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "mgen/mgen_kernel.h"
#include "moe/moe_kernels.h"

namespace {

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;

// The local expert of pair i, or -1 (not routed here, or an id out of range).
__device__ __forceinline__ int local_of(const int32_t* ids, const int32_t* map, int experts, int local, int i) {
  const int e = ids[i];
  if ((unsigned)e >= (unsigned)experts) return -1;
  const int l = map ? map[e] : e;
  return (unsigned)l < (unsigned)local ? l : -1;
}

// Exclusive scan of one int per thread over the block; *total gets the sum.
__device__ int block_exclusive_scan(int x, int* warp_sums, int* total) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int incl = x;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const int y = __shfl_up_sync(0xffffffffu, incl, d);
    if (lane >= d) incl += y;
  }
  if (lane == 31) warp_sums[warp] = incl;
  __syncthreads();
  if (warp == 0) {
    int w = warp_sums[lane];
    int wi = w;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const int y = __shfl_up_sync(0xffffffffu, wi, d);
      if (lane >= d) wi += y;
    }
    warp_sums[lane] = wi - w;  // exclusive, per warp
    if (lane == 31) warp_sums[32] = wi;
  }
  __syncthreads();
  *total = warp_sums[32];
  return warp_sums[warp] + incl - x;
}

__global__ void __launch_bounds__(kThreads) route_kernel(const mgen__moe_route_args a) {
  extern __shared__ int sh[];
  int* count = sh;              // [local]: pairs per expert, then the expert's cursor
  __shared__ int warp_sums[33];
  const int tid = threadIdx.x;
  for (int e = tid; e < a.local; e += kThreads) count[e] = 0;
  __syncthreads();
  for (int i = tid; i < a.pairs; i += kThreads) {
    const int l = local_of(a.topk_ids, a.expert_map, a.experts, a.local, i);
    if (l >= 0) atomicAdd(&count[l], 1);
  }
  __syncthreads();

  // Thread t owns experts [t * per, t * per + per): their padded runs in expert order.
  const int per = (a.local + kThreads - 1) / kThreads;
  const int e0 = min(a.local, tid * per), e1 = min(a.local, e0 + per);
  int mine = 0;
  for (int e = e0; e < e1; ++e) mine += (count[e] + a.block_rows - 1) / a.block_rows * a.block_rows;
  int total;
  int start = block_exclusive_scan(mine, warp_sums, &total);
  for (int e = e0; e < e1; ++e) {
    const int rows = (count[e] + a.block_rows - 1) / a.block_rows * a.block_rows;
    for (int b = start / a.block_rows; b < (start + rows) / a.block_rows; ++b) a.block_experts[b] = e;
    count[e] = start;  // from here on the expert's cursor
    start += rows;
  }
  for (int b = total / a.block_rows + tid; b < a.capacity / a.block_rows; b += kThreads) a.block_experts[b] = -1;
  for (int r = tid; r < a.capacity; r += kThreads) a.sorted_ids[r] = a.pairs;
  if (tid == 0) *a.num_padded = total;
  __syncthreads();  // the padding is written before the pairs overwrite their places

  const int lane = tid % 32, warp = tid / 32;
  const unsigned lower = (1u << lane) - 1;
  for (int base = 0; base < a.pairs; base += kThreads) {
    const int i = base + tid;
    const int l = i < a.pairs ? local_of(a.topk_ids, a.expert_map, a.experts, a.local, i) : -1;
    const unsigned peers = __match_any_sync(0xffffffffu, l);  // lanes of the same expert
    const int leader = __ffs(peers) - 1;
    for (int w = 0; w < kWarps; ++w) {
      if (warp == w) {
        int at = 0;
        if (lane == leader && l >= 0) {
          at = count[l];
          count[l] = at + __popc(peers);
        }
        at = __shfl_sync(0xffffffffu, at, leader);
        if (l >= 0) a.sorted_ids[at + __popc(peers & lower)] = i;
      }
      __syncthreads();  // the next warp reads the cursors this one moved
    }
  }
}

// One thread per 8 columns of one token.
template <class T>
__global__ void sum_kernel(int tokens, int topk, int n, const int32_t* ids, const int32_t* map, int experts,
                           int local, const T* c, T* out) {
  const int vecs = n / 8;
  const long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= (long long)tokens * vecs) return;
  const int t = (int)(v / vecs), col = (int)(v % vecs) * 8;
  float sum[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
  for (int j = 0; j < topk; ++j) {
    const int pair = t * topk + j;
    if (local_of(ids, map, experts, local, pair) < 0) continue;  // its C row was not written
    alignas(16) T x[8];
    *reinterpret_cast<int4*>(x) = *reinterpret_cast<const int4*>(c + (size_t)pair * n + col);
#pragma unroll
    for (int e = 0; e < 8; ++e) sum[e] += (float)x[e];
  }
  alignas(16) T y[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) y[e] = T(sum[e]);
  *reinterpret_cast<int4*>(out + (size_t)t * n + col) = *reinterpret_cast<const int4*>(y);
}

}  // namespace

extern "C" int mgen__moe_route_launch(const mgen__moe_route_args* a, void* stream) {
  const size_t smem = (size_t)a->local * sizeof(int);
  if (a->local > MGEN__MOE_MAX_EXPERTS) return (int)cudaErrorInvalidValue;
  route_kernel<<<1, kThreads, smem, static_cast<cudaStream_t>(stream)>>>(*a);
  return (int)cudaGetLastError();
}

extern "C" int mgen__moe_sum_launch(int act, int tokens, int topk, int n, const int32_t* ids, const int32_t* map,
                                    int experts, int local, const void* c, void* out, void* stream) {
  const long long threads = (long long)tokens * (n / 8);
  const int block = 256;
  const long long grid = (threads + block - 1) / block;
  if (grid < 1 || grid > 0x7fffffffLL) return (int)cudaErrorInvalidValue;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (act == MGEN_ACT_BF16)
    sum_kernel<<<(unsigned)grid, block, 0, s>>>(tokens, topk, n, ids, map, experts, local,
                                               static_cast<const __nv_bfloat16*>(c), static_cast<__nv_bfloat16*>(out));
  else
    sum_kernel<<<(unsigned)grid, block, 0, s>>>(tokens, topk, n, ids, map, experts, local,
                                               static_cast<const __half*>(c), static_cast<__half*>(out));
  return (int)cudaGetLastError();
}
