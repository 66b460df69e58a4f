// Row kernels (softmax, layer_norm, rms_norm) view their input as [M, N]
// contiguous rows and give each row to a group of threads: a warp for a
// short row, the whole block for a long one. This header holds what those
// kernels share: the size thresholds, which rows a thread's group walks,
// combining a value across the group so every thread gets the result, and
// the launch that picks a warp or a block per row.
// Combination follows a fixed tree (warp_reduce.cuh), so results are the
// same bits on every run.
#pragma once

#include <cstdint>
#include <type_traits>

#include "devices/cuda/kernels/device_math.cuh"
#include "devices/cuda/kernels/launch.h"
#include "devices/cuda/kernels/warp_reduce.cuh"
#include "runtime/core/environment.h"

namespace tessera::cuda {

inline constexpr int64_t kWarpRowMax = 1024;  // rows up to this long get a warp
inline constexpr int kLongRowThreads = 1024;  // threads for rows of kLongRowMin or more
inline constexpr int64_t kLongRowMin = 8192;  // (shorter long rows get kBlockSize)

// The threads a block gives a row of kLongRowMin or more: kLongRowThreads,
// or TESSERA_CUDA_LONG_ROW_THREADS (64 to kLongRowThreads, rounded down to
// whole warps), to tune on a new GPU (fewer threads hold more of the row
// each and reduce over fewer warps).
inline int long_row_threads() {
  static const int threads = static_cast<int>(
      env_integer("TESSERA_CUDA_LONG_ROW_THREADS", kLongRowThreads, 64, kLongRowThreads) / 32 * 32);
  return threads;
}

template <typename C>
struct Add {
  __device__ C operator()(C a, C b) const { return a + b; }
};

template <typename C>
struct NanMax {
  __device__ C operator()(C a, C b) const { return dm::nan_max(a, b); }
};

// Which row a thread's group starts on, the group size and the thread's
// rank in it, and the row step of the grid-stride loop.
template <bool kBlock>
struct RowGroup {
  int64_t first_row, row_step;
  int rank, size;
  __device__ RowGroup() {
    if constexpr (kBlock) {
      first_row = blockIdx.x;
      row_step = gridDim.x;
      rank = threadIdx.x;
      size = blockDim.x;
    } else {
      const int64_t warps = blockDim.x / 32;
      first_row = static_cast<int64_t>(blockIdx.x) * warps + threadIdx.x / 32;
      row_step = static_cast<int64_t>(gridDim.x) * warps;
      rank = threadIdx.x % 32;
      size = 32;
    }
  }
};

// v combined by f over the group; every thread of the group gets it.
// kBlock: uses __syncthreads, so every thread of the block must call.
// Otherwise all 32 lanes of the warp must call. scratch[32] and result are
// __shared__.
template <bool kBlock, typename C, typename F>
__device__ __forceinline__ C group_all(C v, const F& f, C* scratch, C* result) {
  if constexpr (kBlock) {
    v = block_combine(v, f, scratch);
    // The next block_combine starts with a __syncthreads, so every thread
    // has read *result before thread 0 overwrites it.
    if (threadIdx.x == 0) *result = v;
    __syncthreads();
    return *result;
  } else {
    v = warp_combine(v, f);
    return __shfl_sync(0xffffffffu, v, 0);
  }
}

// Launches a row kernel: launch(kBlock, grid, threads, stream) with kBlock
// std::false_type (a warp per row, for rows up to kWarpRowMax) or
// std::true_type (a block per row); the grid is capped (grid_for) and the
// kernels stride over the rows.
template <typename Launch>
void launch_rows(const KernelContext& ctx, const char* name, int64_t rows, int64_t n,
                 const Launch& launch) {
  cudaStream_t stream = stream_of(ctx);
  if (n <= kWarpRowMax) {
    launch(std::false_type{}, grid_for(rows, kBlockSize / 32), kBlockSize, stream);
  } else {
    launch(std::true_type{}, grid_for(rows, 1), n >= kLongRowMin ? long_row_threads() : kBlockSize,
           stream);
  }
  after_launch(ctx, name);
}

// Threads that share a row in a launch of launch_rows: a warp, or the block.
template <typename Block>
constexpr int64_t row_group_size(Block, int threads) {
  return Block::value ? threads : 32;
}

}  // namespace tessera::cuda
