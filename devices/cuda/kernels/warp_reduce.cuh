// Combining values across a warp and a block with any accumulator type
// (scalars, and the small structs of arg-reductions, Welford and
// logsumexp): the value moves through shuffles word by word. The order of
// combination is fixed by the lane numbers, so results are the same bits
// on every run.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace tessera::cuda {

template <typename T>
__device__ __forceinline__ T shfl_down(const T& v, int delta) {
  constexpr int kWords = (sizeof(T) + 3) / 4;
  uint32_t w[kWords] = {};
  memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < kWords; ++i) w[i] = __shfl_down_sync(0xffffffffu, w[i], delta);
  T out;
  memcpy(&out, w, sizeof(T));
  return out;
}

// Lane 0 ends with the combination of all 32 lanes' values.
template <typename T, typename Combine>
__device__ __forceinline__ T warp_combine(T v, const Combine& combine) {
#pragma unroll
  for (int delta = 16; delta >= 1; delta /= 2) v = combine(v, shfl_down(v, delta));
  return v;
}

// Thread 0 ends with the combination of the block's values. `scratch`
// holds one T per warp (blockDim.x <= 1024, a multiple of 32).
template <typename T, typename Combine>
__device__ __forceinline__ T block_combine(T v, const Combine& combine, T* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  v = warp_combine(v, combine);
  __syncthreads();  // scratch may be in use by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    T w = lane < warps ? scratch[lane] : scratch[0];
    // Lanes past the last warp contribute nothing: combine only real ones.
    for (int delta = 16; delta >= 1; delta /= 2) {
      const T other = shfl_down(w, delta);
      if (lane + delta < warps) w = combine(w, other);
    }
    v = w;
  }
  return v;
}

}  // namespace tessera::cuda
