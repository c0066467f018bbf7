// mgen_tma.cuh -- the Hopper copy engine and its synchronization, as the wgmma family uses them:
// mbarriers (a stage's "full" and "empty" signals), the bulk tensor copy (TMA) of a 2-D box
// (activations, packed weights, packed scales) and the 1-D bulk copy, completing on an mbarrier, and the
// warpgroup register reallocation (setmaxnreg) that gives a producer's registers to the math
// warpgroups. Each device wrapper is one instruction (a wait is one instruction in a loop).
// The host part encodes the tensor maps (the driver's cuTensorMapEncodeTiled,
// reached through the runtime's entry-point query so that nothing links libcuda).
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>

namespace mgen {
namespace tma {

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}

// Makes the initialized barriers visible to the copy engine (the async proxy) and, after a
// block barrier, to every thread.
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival that also announces `bytes` of copies completing on this phase of `bar`.
__device__ __forceinline__ void mbar_expect(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Waits until the phase of `bar` with parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "MGEN_WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra MGEN_WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// The box of `map` at (inner, outer) element coordinates into shared memory at `dst`; rows
// outside the tensor arrive as zeros and count toward the barrier's bytes all the same.
__device__ __forceinline__ void load_2d(uint32_t dst, const CUtensorMap* map, int inner, int outer,
                                        uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(inner), "r"(outer), "r"(bar)
      : "memory");
}

// The same for a map of layers (encode_layers_plain): the box at (inner, outer) of layer
// `layer` (the moe op's expert).
__device__ __forceinline__ void load_3d(uint32_t dst, const CUtensorMap* map, int inner, int outer, int layer,
                                        uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(inner), "r"(outer), "r"(layer), "r"(bar)
      : "memory");
}

// `bytes` (a multiple of 16) contiguous bytes from global `src` (16-byte aligned) into shared
// memory at `dst`, completing on `bar`: the 1-D bulk copy, no tensor map (bench_ring measures
// it against load_2d).
__device__ __forceinline__ void load_1d(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

// Register reallocation between warpgroups (sm_90a): every warp of the warpgroup executes it.
template <int kRegs>
__device__ __forceinline__ void regs_release() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void regs_claim() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// --- host ---

typedef CUresult (*EncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                const cuuint64_t*, const cuuint32_t*, const cuuint32_t*,
                                CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,
                                CUtensorMapFloatOOBfill);

// The driver's encoder, looked up once per process (C++ guarantees the one initialization);
// null where the driver lacks it.
inline EncodeTiled encoder() {
  static const EncodeTiled fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050  // the by-version query: CUDA 12.5 on (the plain one is deprecated in 13)
    const cudaError_t looked = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000,
                                                                cudaEnableDefault, &found);
#else  // CUDA 12.0 .. 12.4, which the README's toolkit floor admits
    const cudaError_t looked = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &f, cudaEnableDefault, &found);
#endif
    if (looked != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return static_cast<EncodeTiled>(nullptr);
    return reinterpret_cast<EncodeTiled>(f);
  }();
  return fn;
}

// The element types of the swizzled activation maps: FP16, BF16, or one-byte FP8 E4M3 (read
// as raw bytes: the copy engine moves them, wgmma interprets them).
enum class AType { kF16, kBf16, kE4m3 };

// Tensor map of a row-major rows x cols matrix of activations of type `type` (the row pitch
// a multiple of 16 bytes, `base` 16-byte aligned), read in boxes of box_rows x 128 bytes
// (64 two-byte or 128 one-byte elements) that land in shared memory 128-byte swizzled: the
// K-major SWIZZLE_128B layout wgmma reads (16-byte chunk c of row r at chunk c ^ (r % 8);
// 8-row atoms of 1 KiB). Rows past `rows` and columns past `cols` read as zeros. Returns a
// cudaError_t value.
inline int encode_rows_sw128(CUtensorMap* map, const void* base, long long rows, long long cols,
                             int box_rows, AType type) {
  const EncodeTiled encode = encoder();
  if (encode == nullptr) return (int)cudaErrorNotSupported;
  const int bytes = type == AType::kE4m3 ? 1 : 2;
  const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
  const cuuint64_t strides[1] = {(cuuint64_t)cols * bytes};  // bytes between rows
  const cuuint32_t box[2] = {(cuuint32_t)(128 / bytes), (cuuint32_t)box_rows};
  const cuuint32_t step[2] = {1, 1};
  const CUtensorMapDataType dtype = type == AType::kE4m3   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                    : type == AType::kBf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                           : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const CUresult r = encode(map, dtype, 2, const_cast<void*>(base), dims, strides, box, step,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? (int)cudaSuccess : (int)cudaErrorInvalidValue;
}

// Tensor map of a row-major rows x cols matrix of `elem_bytes`-byte elements (1, 2 or 8; the
// row pitch cols * elem_bytes a multiple of 16, `base` 16-byte aligned), read in boxes of
// box_rows x box_cols elements that land in shared memory as they are, row after row: the
// packed weights (8-byte elements: a stage's steps x the tile's columns) and the packed scales
// (a stage's scale rows x the tile's columns). Columns and rows past the matrix read as zeros.
// Returns a cudaError_t value. With layers > 0, a third dimension: `layers` such matrices
// `layer_bytes` apart (a multiple of 16; the moe op's experts in one allocation), read by
// load_3d, a box never crossing from one layer into the next.
inline int encode_layers_plain(CUtensorMap* map, const void* base, int elem_bytes, long long rows, long long cols,
                               long long layers, long long layer_bytes, int box_rows, int box_cols) {
  const EncodeTiled encode = encoder();
  if (encode == nullptr) return (int)cudaErrorNotSupported;
  const CUtensorMapDataType type = elem_bytes == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                   : elem_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                                     : CU_TENSOR_MAP_DATA_TYPE_UINT64;
  const cuuint64_t dims[3] = {(cuuint64_t)cols, (cuuint64_t)rows, (cuuint64_t)(layers > 0 ? layers : 1)};
  const cuuint64_t strides[2] = {(cuuint64_t)cols * (cuuint64_t)elem_bytes,  // bytes between rows
                                 (cuuint64_t)layer_bytes};                  // and between layers
  const cuuint32_t box[3] = {(cuuint32_t)box_cols, (cuuint32_t)box_rows, 1};
  const cuuint32_t step[3] = {1, 1, 1};
  const CUresult r = encode(map, type, layers > 0 ? 3 : 2, const_cast<void*>(base), dims, strides, box, step,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? (int)cudaSuccess : (int)cudaErrorInvalidValue;
}
inline int encode_rows_plain(CUtensorMap* map, const void* base, int elem_bytes, long long rows, long long cols,
                             int box_rows, int box_cols) {
  return encode_layers_plain(map, base, elem_bytes, rows, cols, 0, 0, box_rows, box_cols);
}

}  // namespace tma
}  // namespace mgen
