// moe_kernels.cu -- the route and the top-k sum of the grouped GEMM (moe_kernels.h).
//
// The route sorts the (token, k) pairs, id = token * topk + k, by local expert into runs padded
// to block_rows, pairs in increasing id within a run, padding ids = pairs (past every pair):
//
//   sorted_ids     | e0: 3 9 12 P | e0: 17 P P P | e2: 1 4 P P | ... P P    (block_rows 4)
//   block_experts  |      0       |      0       |      2      | ... -1
//   num_padded     = 12
//
// One block does it all, so that no launch depends on a count on the host, and without global
// atomics (deterministic): the pairs are cut into G contiguous segments, one per warp (G up to
// the block's 32 warps, fewer where G counts of every local expert would not fit the shared
// memory a block gets without opting in). Each warp counts its segment's pairs per expert; a
// scan over the experts' padded totals gives each run's start, and each segment's cursor in a
// run is the start plus the earlier segments' counts; then each warp places its pairs in id
// order, 32 at a time, lanes of one expert in lane order. No block-wide barrier inside the
// walks over the pairs: a warp's segment is its own. Entries past num_padded are written too
// (padding, expert -1), so the whole capacity is defined.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "mgen/mgen_kernel.h"
#include "moe/moe_kernels.h"

namespace {

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;
// The segments' counts: within the 48 KB a block has without opting in, beside the scan's.
constexpr int kCountBytes = 46 * 1024;
static_assert(kCountBytes / (4 * MGEN__MOE_MAX_EXPERTS) >= 1, "one segment's counts fit");

// Segments the route of `local` experts cuts the pairs into.
__host__ __device__ constexpr int segments_of(int local) {
  return kCountBytes / (4 * local) < kWarps ? kCountBytes / (4 * local) : kWarps;
}

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
  __shared__ int warp_sums[33];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int segs = segments_of(a.local);
  int* count = sh + warp * a.local;  // [segs][local]: this warp's segment's pairs per expert,
                                     // then its cursor in each expert's run
  for (int e = tid; e < segs * a.local; e += kThreads) sh[e] = 0;
  __syncthreads();

  // The warp's segment. Counting: any order (shared-memory atomics, a count is the same);
  // unrolled, so that a thread's loads of ids are in flight together.
  const int seg = (a.pairs + segs - 1) / segs;
  const int seg_begin = warp < segs ? warp * seg : a.pairs;
  const int seg_end = min(a.pairs, seg_begin + seg);
#pragma unroll 8
  for (int i = seg_begin + lane; i < seg_end; i += 32) {
    const int l = local_of(a.topk_ids, a.expert_map, a.experts, a.local, i);
    if (l >= 0) atomicAdd(&count[l], 1);
  }
  __syncthreads();

  // Thread t owns experts [t * per, t * per + per): their padded runs in expert order.
  const int per = (a.local + kThreads - 1) / kThreads;
  const int e0 = min(a.local, tid * per), e1 = min(a.local, e0 + per);
  int mine = 0;
  for (int e = e0; e < e1; ++e) {
    int pairs_e = 0;
    for (int g = 0; g < segs; ++g) pairs_e += sh[g * a.local + e];
    mine += (pairs_e + a.block_rows - 1) / a.block_rows * a.block_rows;
  }
  int total;
  int start = block_exclusive_scan(mine, warp_sums, &total);
  for (int e = e0; e < e1; ++e) {
    int cursor = start;  // segment g's pairs of e follow the earlier segments'
    for (int g = 0; g < segs; ++g) {
      const int n = sh[g * a.local + e];
      sh[g * a.local + e] = cursor;
      cursor += n;
    }
    const int rows = (cursor - start + a.block_rows - 1) / a.block_rows * a.block_rows;
    for (int b = start / a.block_rows; b < (start + rows) / a.block_rows; ++b) a.block_experts[b] = e;
    start += rows;
  }
  for (int b = total / a.block_rows + tid; b < a.capacity / a.block_rows; b += kThreads) a.block_experts[b] = -1;
  for (int r = tid; r < a.capacity; r += kThreads) a.sorted_ids[r] = a.pairs;
  if (tid == 0) *a.num_padded = total;
  __syncthreads();  // the cursors are set, and the padding is written before the pairs overwrite it

  // Placing: chunks of 32 pairs in order (base is warp-uniform: whole-warp matches), kBatch
  // chunks' experts loaded before the first is placed.
  constexpr int kBatch = 8;
  const unsigned lower = (1u << lane) - 1;
  for (int base = seg_begin; base < seg_end; base += 32 * kBatch) {
    int ls[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = base + 32 * j + lane;
      ls[j] = i < seg_end ? local_of(a.topk_ids, a.expert_map, a.experts, a.local, i) : -1;
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int l = ls[j];
      const unsigned peers = __match_any_sync(0xffffffffu, l);  // lanes of the same expert
      const int leader = __ffs(peers) - 1;
      int at = 0;
      if (lane == leader && l >= 0) {
        at = count[l];
        count[l] = at + __popc(peers);
      }
      at = __shfl_sync(0xffffffffu, at, leader);
      if (l >= 0) a.sorted_ids[at + __popc(peers & lower)] = base + 32 * j + lane;
      __syncwarp();  // the next chunk's leader of l reads the cursor this one moved
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
  if (a->local < 1 || a->local > MGEN__MOE_MAX_EXPERTS) return (int)cudaErrorInvalidValue;
  const size_t smem = (size_t)segments_of(a->local) * a->local * sizeof(int);
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
