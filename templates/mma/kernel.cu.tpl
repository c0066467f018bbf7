${banner}
// ${k.name} -- ${k.summary}
//
// C[m,n] = A[m,k] * W^T. A, C: ${k.act} row-major. W: packed 4-bit codes (runtime/src/formats/layout.h),
// read with 16-byte cp.async into shared memory and dequantized in registers straight into
// mma.sync.m16n8k16 B fragments; A tiles pass through shared memory under a swizzle and are
// read with ldmatrix. FP32 accumulation. Requires n % 64 == 0 and n >= ${k.tile_n} (a last column
// tile past n is shifted to end at n: first_chunk), k % group == 0 (k % 16),
// weights packed for k_packed, a multiple of ${k.tile_k} (the layout's K padding); any m >= 1.
// Rows past m are zero-filled on load and never stored; the last of the ceil(k / ${k.tile_k}) K
// tiles may reach past k into the padding, where A is zero-filled too.
//
// Work partition (striped, as in Marlin). The output is cut into columns of tile_m x tile_n,
// each k_tiles deep; the (column, k-tile) units are numbered column by column and every block
// takes one contiguous run of `per` units, so all SMs get the same amount of streaming:
//
//    unit = col * k_tiles + kt          col = m_slab * n_tiles + n_tile
//    | col 0: kt 0 .. kt 7 | col 1: kt 0 .. kt 7 | col 2: kt 0 .. kt 7 |
//    [ block 0 ....... ][ block 1 ....... ][ block 2 ....... ][ ...
//
// A block finishing a column it did not cover whole writes its FP32 partial to its own slot
// (2*block for its first column, 2*block+1 for its last), bumps the column's arrival counter,
// and the last block to arrive sums the slots in block order and writes C. The sum order never
// depends on arrival order, so the output is bit-identical run to run; nobody spins.
//
// Inside a block: ${k.n_warps} warp columns of 64 output columns x ${k.k_warps} warps splitting each
// stage's K; their partial sums are added in a fixed warp order through shared memory.
//
// 8-row tiles (decode, M <= 8) swap the MMA's operands, C^T = W A^T: the dequantized codes of a
// 16x16 weight tile are the A fragment of m16n8k16 (16 output columns), the tile's 8 rows of A
// its B fragment (n8), so one mma.sync takes 256 weights against 8 live rows, where the
// unswapped tile takes 128 against 16 rows of which at most 8 are live. Where the spec says so
// (acc_scales) such a tile also applies the group scales to its FP32 sums once per group instead
// of to every dequantized weight.
//
// W4A8 kernels (kA8: sm89, weights in the e4m3 layout) take FP8 E4M3 activations, one byte
// each, with an FP32 scale per row (p.a_scales): swapped 8- and 16-row tiles, 32-deep steps.
// A stage's A rows are laid out and read as a 16-bit tile's (a step is 32 bytes of a row,
// ldmatrix .x2 gives lane (g, t) bytes 4t..4t+3 of row g in each 16-deep half); the weights'
// words of the step's two 16-deep rows become E4M3 bytes exactly (formats/<wfmt>/mma_e4m3.cuh:
// m16n8k32's A fragment, each byte the code's value times 2^Dequant::kLog2), and both sides
// are converted to FP16 (exact) for two mma.sync.m16n8k16 per 16 columns and 8 rows: on
// Hopper an FP8 mma.sync is no faster (ptxas expands it into the same conversions and HMMA),
// and FP16 keeps FP32 sums. Each HMMA reads K in the order the FP8 fragment holds it (lane t:
// K 4t, 4t+1 as its k16 pair 2t, 2t+1 and 4t+2, 4t+3 as 2t+8, 2t+9, the same on both sides),
// which a dot product does not see. A warp's run of steps (step_chunk) accumulates apart and is
// then added into the FP32 totals, times the group's scale where grouped, as the FP8 wgmma
// kernels do; MXFP4's block scales go into the E4M3 bytes instead (kFoldScales: exact, the
// partial's tables). The epilogue multiplies by 2^-kLog2, the row's activation scale and, per
// channel or for MXFP4, the column's scale or factor.
//
// The moe op (grouped GEMM over experts, mgen_moe_op_args in op_args) runs the same partition
// over the route's sorted list instead of A's rows: slab s of the list is one expert's
// (block_experts[s]; -1: the slab's columns are skipped whole, by every block alike, so that
// reduce_grid's counters stay balanced), its rows are pair ids whose A rows are gathered
// (padding ids zero-filled), or read in the list's order where A comes permuted (a_sorted),
// and whose C rows are written in place, times the router weight.
// The list's length is read on the device (num_padded), so the units are those of the live
// slabs; the grid comes from the host's bound. Unsorted (no list: decode, where the route would
// cost more than the few experts two pairs share), slab s is pair s alone and its expert comes
// from the tokens' ids: the rows and the expert are derived, not read (sorted_id, slab_expert).
//% for _, p in ipairs(k.partials) do
#include "${p}"
//% end
#include <cuda_runtime.h>

#include <type_traits>

#include "mgen/mgen_kernel.h"

namespace ${k.name} {

constexpr int kThreads = ${k.threads};          // ${k.warps} warps
constexpr int kBlocksPerSm = ${k.blocks_per_sm};  // co-resident blocks: more warps to hide latency
constexpr int kTileM = ${k.tile_m};             // rows of A / C per column
constexpr int kTileN = ${k.tile_n};             // output columns per block
constexpr int kTileK = ${k.tile_k};             // K depth of one pipeline stage
constexpr int kStages = ${k.stages};            // cp.async pipeline depth
constexpr int kGroup = ${k.group};              // K elements per scale; 0 = per channel
constexpr bool kGrouped = ${k.grouped};
constexpr int kSGroup = kGrouped ? kGroup : kTileK;  // divisor-safe group depth
constexpr int kMBlocks = ${k.m_blocks};         // 16-row MMA blocks per tile
constexpr int kNWarps = ${k.n_warps};           // warps along N, 64 columns each
constexpr int kKWarps = ${k.k_warps};           // warps along K within a stage
constexpr int kKIters = ${k.k_iters};           // 16-deep steps per warp per stage
constexpr int kStepChunk = ${k.step_chunk};     // of them, taken in a row: with kAccScales a warp's
                                                // run of steps of one group, else 1 (interleaved)
constexpr int kARowBytes = ${k.a_row_vecs} * 16;  // one swizzled A row in shared memory
constexpr int kARowVecs = ${k.a_row_vecs};
constexpr int kAStageVecs = ${k.a_stage_vecs};
constexpr int kBRowVecs = ${k.b_row_vecs};      // one 16-deep packed row of the tile
constexpr int kBStageVecs = ${k.b_stage_vecs};
constexpr int kSRows = ${k.s_rows};             // scale rows per stage (grouped only)
constexpr int kSRowVecs = ${k.s_row_vecs};
constexpr int kSRowBytes = ${k.s_row_vecs} * 16;
constexpr int kSStageVecs = ${k.s_stage_vecs};
constexpr int kAStageBytes = ${k.a_stage_bytes};
constexpr int kBStageBytes = ${k.b_stage_bytes};
constexpr int kSStageBytes = ${k.s_stage_bytes};
constexpr bool kZeros = ${k.zeros};              // u4: zero points, subtracted in the dequantization
constexpr int kZRows = ${k.z_rows};             // zero rows per stage: one per scale row (per channel 1)
constexpr int kZRowVecs = ${k.z_row_vecs};      // 16-byte vectors of a zero row (4 bits a column)
constexpr int kZRowBytes = ${k.z_row_vecs} * 16;
constexpr int kZStageVecs = ${k.z_stage_vecs};
constexpr int kZStageBytes = ${k.z_stage_bytes};  // padded to 128 bytes
constexpr int kStageBytes = ${k.a_stage_bytes} + ${k.b_stage_bytes} + ${k.s_stage_bytes} + ${k.z_stage_bytes};
constexpr int kRedStride = ${k.red_stride};     // floats per row of the reduction tile
constexpr int kRedOffset = kStages * kStageBytes;
constexpr int kRedSlices = ${k.red_slices};     // reduction tiles: 1, or one per K-warp
constexpr int kRedSliceFloats = kTileM * kRedStride;
constexpr int kRedVecsPerRow = kTileN / 4;      // float4s per row of the reduction tile
constexpr int kSmemBytes = ${k.smem_bytes};
constexpr bool kSwapAB = ${k.swap_ab};          // weights as the MMA's A operand (8- and 16-row tiles)
constexpr int kTokBlocks = ${k.tok_blocks};     // swapped: 8-row B operands (rows of A) per tile
constexpr bool kAccScales = ${k.acc_scales};     // group scales on the FP32 sums, once per group
constexpr bool kMoe = ${k.moe};                  // grouped over experts: rows through the route
constexpr bool kA8 = ${k.a8};                    // FP8 E4M3 activations with FP32 row scales (W4A8)
constexpr bool kFoldScales = ${k.folds_scales};  // W4A8: the block scales folded into the E4M3 weights (MXFP4)
constexpr int kAElem = kA8 ? 1 : 2;             // bytes per element of A
constexpr int kStepK = ${k.step_k};             // K depth of one MMA step: 16, or 32 (E4M3)
constexpr int kRowsPerStep = kStepK / 16;       // 16-deep packed rows per step
constexpr bool kFoldRuns = ${k.fold_runs};       // a warp's runs of steps summed apart, then folded

using Act = ${k.act_type};
using Dequant = mgen::${k.dequant};
using Scales = mgen::${k.scales}<Act>;
using Swz = mgen::Swizzle<${k.swz_bits}, ${k.swz_base}, ${k.swz_shift}>;
constexpr int kScaleBytes = ${k.scale_bytes};  // bytes per stored scale
// The MMA of the kernel's types (mgen_ptx.cuh; W4A8 runs its E4M3 bytes as FP16: spec.lua).
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  mgen::${k.mma}(d, a, b0, b1);
}

#include "mma/mgen_mma_body.cuh"  // the fetcher, main loops, reduction, epilogue

__global__ void __launch_bounds__(kThreads, kBlocksPerSm) ${k.name}_kernel(const Params p) {
  extern __shared__ __align__(128) unsigned char smem[];
  if constexpr (kMoe) mgen::grid_dependency_wait();  // the route's length and experts first
  const int n_tiles = (p.n + kTileN - 1) / kTileN;  // the last may be shifted (first_chunk)
  const int k_tiles = (p.k + kTileK - 1) / kTileK;  // the last may end in the K padding
  const int m_slabs = m_slabs_of(p);
  const int units = m_slabs * n_tiles * k_tiles;
  const int per = (units + gridDim.x - 1) / gridDim.x;
  const int u_begin = blockIdx.x * per;
  const int u_end = min(units, u_begin + per);
  if (u_begin >= u_end) return;

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warp_n = warp % kNWarps, warp_k = warp / kNWarps;
  float* red = reinterpret_cast<float*>(smem + kRedOffset);
  Acc acc = {};

  // Prologue: kStages - 1 units in flight. The first unit's weights are copied before the
  // grid-dependency wait (mgen_launch.cuh), so that under PDL they stream while the previous
  // kernel drains; its activations after it, in the same commit group. Only the first: the
  // activations come after the wait and cp.async groups complete in order, so early weights of
  // later units would hold the first unit back until they all land (all early stages: 2-3%
  // slower between back-to-back GEMMs, the first only: 0-2% faster; in a decoder layer 1-7%
  // faster, bench/notes/v39.md). A commit per slot, even when empty, keeps the group count (and
  // so cp_async_wait's meaning) uniform.
  Fetcher fc(p, u_begin, k_tiles, n_tiles);
  fc.issue_w(smem);
  mgen::grid_dependency_wait();  // before the first access to A, C or the workspace
  int next = u_begin;
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (next < u_end) {
      if (s == 0) fc.issue_a(p, smem);
      else fc.issue(p, smem + s * kStageBytes);
    }
    if (next + 1 < u_end) fc.advance(p, k_tiles, n_tiles);
    ++next;
    mgen::cp_async_commit();
  }

  Cursor cc(u_begin, k_tiles, n_tiles);  // unit being computed
  int fetch_stage = kStages - 1, compute_stage = 0;
  for (int u = u_begin; u < u_end; ++u) {
    mgen::cp_async_wait<kStages - 2>();
    __syncthreads();  // unit u has landed, and every warp is done with the stage refilled next
    if (next < u_end) fc.issue(p, smem + fetch_stage * kStageBytes);
    if (next + 1 < u_end) fc.advance(p, k_tiles, n_tiles);
    ++next;
    fetch_stage = fetch_stage == kStages - 1 ? 0 : fetch_stage + 1;
    mgen::cp_async_commit();

    compute(smem + compute_stage * kStageBytes, warp_n, warp_k, lane, acc);
    compute_stage = compute_stage == kStages - 1 ? 0 : compute_stage + 1;

    if (cc.kt == k_tiles - 1 || u == u_end - 1) {  // end of this block's part of the column
      reduce_block(red, warp_n, warp_k, lane, acc);
      const int col = cc.col(n_tiles);
      const int rows = min(kTileM, p.m - cc.m_slab * kTileM);
      const bool whole = col * k_tiles >= u_begin && (col + 1) * k_tiles <= u_end;
      // A dead slab (moe, expert -1) is skipped by every block of its columns alike.
      if (slab_live(p, cc.m_slab) && (whole || reduce_grid(p, red, col, rows, per, k_tiles)))
        store_c(p, red, cc, rows);
    }
    cc.advance(k_tiles, n_tiles);
  }
  mgen::launch_dependents();  // this block's work is done: the next kernel may start its blocks
  mgen::cp_async_wait<0>();
}

}  // namespace ${k.name}

namespace ${k.name} {
// The kernel's parameters from the launch's (moe: and the route in op_args, by value).
inline bool params_of(const mgen_launch_args* args, mgen_launch_args& p) {
  p = *args;
  return args->op_args == nullptr;
}
inline bool params_of(const mgen_launch_args* args, MoeParams& p) {
  static_cast<mgen_launch_args&>(p) = *args;
  if (args->op_args == nullptr || args->m % kTileM != 0) return false;  // capacity: whole slabs
  p.moe = *static_cast<const mgen_moe_op_args*>(args->op_args);
  if (p.moe.unsorted)  // one slab per pair, A gathered (no list to be in the order of)
    return p.moe.topk_ids && p.moe.num_experts > 0 && !p.moe.a_sorted && p.moe.a_div > 0 &&
           (long long)p.moe.pairs * kTileM == args->m;
  return p.moe.sorted_ids && p.moe.block_experts && p.moe.num_padded && p.moe.a_div > 0;
}
}  // namespace ${k.name}

// Grid: kBlocksPerSm blocks per SM, all co-resident, fewer when there are fewer units (moe:
// the units of the list's capacity, args->m).
extern "C" int ${k.name}_launch(const mgen_launch_args* args, void* stream) {
  using namespace ${k.name};
  Params p;
  if (!params_of(args, p)) return (int)cudaErrorInvalidValue;
  const long long m_slabs = (args->m + kTileM - 1) / kTileM, k_tiles = (args->k + kTileK - 1) / kTileK;
  const long long units = m_slabs * ((args->n + kTileN - 1) / kTileN) * k_tiles;
  if (units <= 0 || units > 0x7fffffffLL || args->sm_count <= 0 || args->n % 64 != 0 || args->n < kTileN ||
      args->k_packed < k_tiles * kTileK)
    return (int)cudaErrorInvalidValue;  // (the K tiles must stay inside the packed weights)
  const long long slots = (long long)args->sm_count * kBlocksPerSm;
  const int grid = units < slots ? (int)units : (int)slots;
  return (int)mgen::launch(${k.name}_kernel, grid, kThreads, kSmemBytes, static_cast<cudaStream_t>(stream),
                           args->pdl != 0, p);
}

extern "C" int ${k.name}_prepare(void) {
  using namespace ${k.name};
  return (int)cudaFuncSetAttribute(${k.name}_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
}
