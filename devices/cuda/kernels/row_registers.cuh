// A thread's share of one contiguous row, held in registers, so that a row
// kernel (softmax, layer_norm) reads its row from memory once, with 16-byte
// vector loads, however many passes its arithmetic makes over it.
//
// The row is split into vectors of kVec elements; thread `rank` of a group
// of `size` threads holds vectors rank, rank + size, rank + 2 * size, ...
// (kIters of them at most), so each load instruction of a warp covers
// consecutive memory. Rows qualify when their length is a multiple of kVec,
// at most capacity(size) long, and every pointer involved is 16-byte
// aligned (row_registers_fit); other rows take the kernels' plain path.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/elementwise.cuh"

namespace tessera::cuda {

// Values a thread caches: 32 in float (f32, f16, bf16), 16 in double.
template <typename T>
struct RowRegisterShape {
  using C = compute_t<T>;
  static constexpr int kVec = static_cast<int>(16 / sizeof(T));
  static constexpr int kValues = sizeof(C) == 8 ? 16 : 32;
  static constexpr int kIters = kValues / kVec > 0 ? kValues / kVec : 1;
  static constexpr int64_t capacity(int64_t group_size) { return group_size * kVec * kIters; }
};

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

template <typename T>
bool row_registers_fit(int64_t n, int64_t group_size, std::initializer_list<const void*> ptrs) {
  using S = RowRegisterShape<T>;
  if (n <= 0 || n % S::kVec != 0 || n > S::capacity(group_size)) return false;
  for (const void* p : ptrs) {
    if (p != nullptr && !aligned16(p)) return false;
  }
  return true;
}

template <typename T>
struct RowRegisters {
  using S = RowRegisterShape<T>;
  using C = compute_t<T>;
  static constexpr int kVec = S::kVec, kIters = S::kIters;
  C v[kIters][kVec];
  int rank, size, n;

  __device__ RowRegisters(int rank_, int size_, int n_) : rank(rank_), size(size_), n(n_) {}

  // Index of the first element of vector `it`, and whether it is in the row.
  __device__ __forceinline__ int start(int it) const { return (it * size + rank) * kVec; }
  __device__ __forceinline__ bool holds(int it) const { return start(it) < n; }

  __device__ __forceinline__ void load(const T* row) {
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      if (!holds(it)) continue;
      const Vec<T, kVec> p = *reinterpret_cast<const Vec<T, kVec>*>(row + start(it));
#pragma unroll
      for (int j = 0; j < kVec; ++j) v[it][j] = convert<C>(p.v[j]);
    }
  }

  // The combination by f of the values held (init when none).
  template <typename F>
  __device__ __forceinline__ C fold(C init, const F& f) const {
    C acc = init;
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      if (!holds(it)) continue;
#pragma unroll
      for (int j = 0; j < kVec; ++j) acc = f(acc, v[it][j]);
    }
    return acc;
  }

  // row[i] = f(value, i) for each value held.
  template <typename F>
  __device__ __forceinline__ void store(T* row, const F& f) const {
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      if (!holds(it)) continue;
      Vec<T, kVec> p;
#pragma unroll
      for (int j = 0; j < kVec; ++j) p.v[j] = convert<T>(f(v[it][j], start(it) + j));
      *reinterpret_cast<Vec<T, kVec>*>(row + start(it)) = p;
    }
  }
};

}  // namespace tessera::cuda
