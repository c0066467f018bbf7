// moe_kernels.cu -- the route, A's permutation into its order and the top-k sum of the grouped
// GEMM (moe_kernels.h).
//
// The route sorts the (token, k) pairs, id = token * topk + k, by local expert into runs padded
// to block_rows, pairs in increasing id within a run, padding ids = pairs (past every pair):
//
//   sorted_ids     | e0: 3 9 12 P | e0: 17 P P P | e2: 1 4 P P | ... P P    (block_rows 4)
//   block_experts  |      0       |      0       |      2      | ... -1
//   num_padded     = 12
//
// No launch depends on a count on the host, and there are no global atomics (deterministic).
// The pairs are cut into one contiguous slice per block (one block up to kPairsPerBlock pairs,
// then one more per kPairsPerBlock, at most kMaxBlocks), and a block's slice into one segment per
// warp (up to the block's 32 warps, 8 in a short route's block; fewer where the counts of every
// local expert would not fit the shared memory a block gets without opting in, or where segments
// would be shorter than kPairsPerSegment pairs). Each warp counts its segment's pairs per expert;
// each block also counts every pair outside its slice (those before it apart): so every block
// knows every expert's total, and the same scan over the experts' padded totals in every block
// gives each run's start. A segment's cursor in a run is the start plus the pairs before
// the block's slice plus the earlier segments' counts; then each warp places its pairs in id
// order, 32 at a time, lanes of one expert in lane order. A block writes the padding entries
// and block experts of the runs of its experts (e mod blocks) and its stripe of the tail past
// num_padded: no entry is written by two blocks, nor a pair's entry as padding, so nothing
// orders the blocks, and the whole capacity is defined. No block-wide barrier inside the walks
// over the pairs: a warp's segment is its own. Recounting every pair in every block costs a
// block what the one-block route's counting cost it; the placing, whose warp-wide matches are
// what a large route spends its time on, is spread over the blocks.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "mgen/mgen_kernel.h"
#include "mgen_launch.cuh"  // (generated/include: the templates' moe row and expert rules)
#include "moe/moe_kernels.h"

namespace {

// A block's threads: 1,024, or 256 for a short route (kShortPairs pairs and kShortExperts local
// experts at most). Every warp runs the common path (zeroing, scan, cursors, tail) whatever the
// route's length, and at M = 1 that path is the kernel's time: 32 warps issue ~12,000
// instructions for 8 pairs (bench/notes/v73.md item 2), 8 warps a quarter of them. A short
// route still gets a segment a warp (8 of kPairsPerSegment pairs) and a thread an expert or two.
constexpr int kThreads = 1024, kShortThreads = 256;
// The segments' counts (and, with several blocks, the pairs before the block's slice): within
// the 48 KB a block has without opting in, beside the scan's.
constexpr int kCountBytes = 46 * 1024;
static_assert(kCountBytes / (4 * MGEN__MOE_MAX_EXPERTS) >= 2, "a segment's counts and the pairs before the slice fit");
constexpr int kPairsPerBlock = 2048;
constexpr int kMaxBlocks = 32;

__host__ __device__ constexpr int blocks_of(int pairs) {
  return pairs <= kPairsPerBlock ? 1 : (pairs + kPairsPerBlock - 1) / kPairsPerBlock < kMaxBlocks ? (pairs + kPairsPerBlock - 1) / kPairsPerBlock : kMaxBlocks;
}

// Pairs in one block's slice of the route.
__host__ __device__ constexpr int slice_of(int pairs, int blocks) { return (pairs + blocks - 1) / blocks; }

// Segments a block of a route of `local` experts over `blocks` blocks cuts its slice into (one
// count row of `local` ints each; several blocks keep one more row: the pairs before the slice):
// one per warp, fewer where the counts of every local expert would not fit, and none shorter than
// kPairsPerSegment (two loads a lane): each expert's walk over the segments' counts (its total,
// then its cursors) is serial, and a short route's time is mostly such chains (bench/notes/v54.md).
constexpr int kPairsPerSegment = 64;
constexpr int kShortPairs = kShortThreads / 32 * kPairsPerSegment, kShortExperts = 2 * kShortThreads;
__host__ __device__ constexpr int segments_of(int local, int blocks, int slice, int warps) {
  const int fit = kCountBytes / (4 * local) - (blocks > 1) < warps ? kCountBytes / (4 * local) - (blocks > 1) : warps;
  const int want = slice > kPairsPerSegment ? (slice + kPairsPerSegment - 1) / kPairsPerSegment : 1;
  return want < fit ? want : fit;
}

__host__ __device__ constexpr int count_rows(int local, int blocks, int slice, int warps) {
  return segments_of(local, blocks, slice, warps) + (blocks > 1);
}

// Adds each pair of [begin, end) routed here to row[its expert], `step` threads striding from
// `first` (a warp's lanes over its segment, or the block's threads). Any order: shared-memory
// atomics, a count is the same; unrolled, so that a thread's loads of ids are in flight together.
__device__ __forceinline__ void count_pairs(const mgen__moe_route_args& a, int begin, int end, int* row, int first,
                                            int step) {
#pragma unroll 8
  for (int i = begin + first; i < end; i += step) {
    const int l = mgen::moe_local_expert(a.topk_ids, a.expert_map, a.experts, a.local, i);
    if (l >= 0) atomicAdd(&row[l], 1);
  }
}

// Exclusive scan of one int per thread over the block (kWarps warps); *total gets the sum.
template <int kWarps>
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
    int w = lane < kWarps ? warp_sums[lane] : 0;
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

template <int kThreads>
__global__ void __launch_bounds__(kThreads) route_kernel(const mgen__moe_route_args a) {
  constexpr int kWarps = kThreads / 32;
  extern __shared__ int sh[];
  __shared__ int warp_sums[33];
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int blocks = (int)gridDim.x, block = (int)blockIdx.x;
  const int slice = slice_of(a.pairs, blocks);
  const int segs = segments_of(a.local, blocks, slice, kWarps);
  // [segs][local]: each warp's segment's pairs per expert, then its cursor in each expert's run;
  // then, with several blocks, [local]: the pairs before the block's slice.
  int* count = sh + warp * a.local;
  int* before = sh + segs * a.local;
  for (int e = tid; e < count_rows(a.local, blocks, slice, kWarps) * a.local; e += kThreads) sh[e] = 0;
  __syncthreads();

  // The block's slice and the warp's segment of it.
  const int slice_begin = min(a.pairs, block * slice), slice_end = min(a.pairs, slice_begin + slice);
  const int seg = (slice_end - slice_begin + segs - 1) / segs;
  const int seg_begin = warp < segs ? min(slice_end, slice_begin + warp * seg) : slice_end;
  const int seg_end = min(slice_end, seg_begin + seg);
  count_pairs(a, seg_begin, seg_end, count, lane, 32);
  if (blocks > 1) {
    // The pairs after the slice go into the last segment's row: they follow its pairs in every
    // run, so they move only the run's end, never a segment's cursor.
    count_pairs(a, 0, slice_begin, before, tid, kThreads);
    count_pairs(a, slice_end, a.pairs, sh + (segs - 1) * a.local, tid, kThreads);
  }
  __syncthreads();

  // Thread t owns experts [t * per, t * per + per): their padded runs in expert order.
  const int per = (a.local + kThreads - 1) / kThreads;
  const int e0 = min(a.local, tid * per), e1 = min(a.local, e0 + per);
  int mine = 0;
  for (int e = e0; e < e1; ++e) {
    int pairs_e = blocks > 1 ? before[e] : 0;
    for (int g = 0; g < segs; ++g) pairs_e += sh[g * a.local + e];
    mine += (pairs_e + a.block_rows - 1) / a.block_rows * a.block_rows;
  }
  int total;
  int start = block_exclusive_scan<kWarps>(mine, warp_sums, &total);
  for (int e = e0; e < e1; ++e) {
    int cursor = start + (blocks > 1 ? before[e] : 0);  // segment g's pairs of e follow the
    for (int g = 0; g < segs; ++g) {                     // earlier slices' and segments'
      const int n = sh[g * a.local + e];
      sh[g * a.local + e] = cursor;
      cursor += n;
    }
    const int rows = (cursor - start + a.block_rows - 1) / a.block_rows * a.block_rows;
    if (e % blocks == block) {
      for (int b = start / a.block_rows; b < (start + rows) / a.block_rows; ++b) a.block_experts[b] = e;
      for (int r = cursor; r < start + rows; ++r) a.sorted_ids[r] = a.pairs;  // the run's padding
    }
    start += rows;
  }
  const int stride = blocks * kThreads, first = block * kThreads + tid;
  for (int b = total / a.block_rows + first; b < a.capacity / a.block_rows; b += stride) a.block_experts[b] = -1;
  for (int r = total + first; r < a.capacity; r += stride) a.sorted_ids[r] = a.pairs;
  if (block == 0 && tid == 0) *a.num_padded = total;
  __syncthreads();  // the cursors are set

  // Placing: chunks of 32 pairs in order (base is warp-uniform: whole-warp matches), kBatch
  // chunks' experts loaded before the first is placed.
  constexpr int kBatch = 8;
  const unsigned lower = (1u << lane) - 1;
  for (int base = seg_begin; base < seg_end; base += 32 * kBatch) {
    int ls[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = base + 32 * j + lane;
      ls[j] = i < seg_end ? mgen::moe_local_expert(a.topk_ids, a.expert_map, a.experts, a.local, i) : -1;
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
    if (mgen::moe_local_expert(ids, map, experts, local, pair) < 0) continue;  // its C row was not written
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

// Rows of the sorted list in turn over the grid's warps, a lane 16 bytes at a time: row r gets
// A's row of pair sorted_ids[r], zeros for padding. The list's length is the route's output
// (bounded by its capacity: device data).
__global__ void permute_kernel(const int32_t* __restrict__ sorted_ids, const int32_t* __restrict__ num_padded,
                               int capacity, int pairs, int a_div, int vecs, const int4* __restrict__ a,
                               int4* __restrict__ out) {
  const int rows = mgen::moe_live_rows(num_padded, capacity);
  const int lane = threadIdx.x % 32, warps = (int)(gridDim.x * blockDim.x / 32);
  for (int r = (int)((blockIdx.x * blockDim.x + threadIdx.x) / 32); r < rows; r += warps) {
    const int id = sorted_ids[r];
    int4* dst = out + (size_t)r * vecs;
    if (mgen::moe_is_pair(id, pairs)) {
      const int4* src = a + (size_t)(id / a_div) * vecs;
#pragma unroll 4
      for (int v = lane; v < vecs; v += 32) dst[v] = src[v];
    } else {
      for (int v = lane; v < vecs; v += 32) dst[v] = make_int4(0, 0, 0, 0);
    }
  }
}

}  // namespace

extern "C" int mgen__moe_permute_launch(const int32_t* sorted_ids, const int32_t* num_padded, int capacity,
                                        int pairs, int a_div, int k, const void* a, void* out, void* stream) {
  constexpr int kBlock = 256, kMaxGrid = 1024;  // (8 warps a block: a row each in turn)
  const int grid = (capacity + kBlock / 32 - 1) / (kBlock / 32);
  permute_kernel<<<grid < kMaxGrid ? grid : kMaxGrid, kBlock, 0, static_cast<cudaStream_t>(stream)>>>(
      sorted_ids, num_padded, capacity, pairs, a_div, k / 8, static_cast<const int4*>(a), static_cast<int4*>(out));
  return (int)cudaGetLastError();
}

extern "C" int mgen__moe_route_launch(const mgen__moe_route_args* a, void* stream) {
  if (a->local < 1 || a->local > MGEN__MOE_MAX_EXPERTS) return (int)cudaErrorInvalidValue;
  const int blocks = blocks_of(a->pairs), slice = slice_of(a->pairs, blocks);
  const bool short_route = a->pairs <= kShortPairs && a->local <= kShortExperts;
  const int threads = short_route ? kShortThreads : kThreads;
  const size_t smem = (size_t)count_rows(a->local, blocks, slice, threads / 32) * a->local * sizeof(int);
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (short_route)
    route_kernel<kShortThreads><<<blocks, kShortThreads, smem, s>>>(*a);
  else
    route_kernel<kThreads><<<blocks, kThreads, smem, s>>>(*a);
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
