// Helpers shared by the indexing kernels (gather, scatter, index_put,
// sort, nonzero, triangle, embedding, nll_loss):
//  - LinearOffsets: the element offset of a row-major linear index in a
//    tensor, over its dims merged where contiguous. Layouts that keep more
//    than kMaxDims dims fall back to contiguous copies (fitted_input,
//    StagedOutput), which always merge to one dim.
//  - sort_by_destination: how duplicate destinations resolve without
//    atomics, deterministically. Each source gets its destination offset
//    as a key; a stable radix sort groups equal keys while keeping the
//    sources' row-major order, so the last entry of a run is the CPU's
//    last write, and summing a run in order is the CPU's summation order.
//  - BadIndexFlag: the first row-major position of an out-of-range index,
//    found on the device and read back, for the kernels whose CPU version
//    raises IndexError itself (embedding, nll_loss).
// Kernels here are templates so that every .cu including this header can
// instantiate them without clashing symbols.
#pragma once

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>

#include "devices/cuda/cuda_check.h"
#include "devices/cuda/kernels/device_types.cuh"
#include "devices/cuda/kernels/launch.h"
#include "devices/cuda/kernels/strided_layout.h"
#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_context.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::cuda {

// -- Grid-stride loops over int64 counts.

__device__ __forceinline__ int64_t grid_index() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t grid_step() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

// -- Row-major linear index -> element offset.

struct LinearOffsets {
  int ndim = 0;  // merged dims, innermost first
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};

  __device__ __forceinline__ int64_t operator()(int64_t linear) const {
    int64_t off = 0;
    for (int d = 0; d + 1 < ndim; ++d) {
      const int64_t q = linear / sizes[d];
      off += (linear - q * sizes[d]) * strides[d];
      linear = q;
    }
    // linear < numel, so what is left indexes the outermost dim directly.
    if (ndim > 0) off += linear * strides[ndim - 1];
    return off;
  }
};

// Plans dims [begin, end) of (sizes, strides): drops size-1 dims and merges
// neighbours whose strides nest. False when more than kMaxDims remain.
inline bool plan_offsets(const Shape& sizes, const Shape& strides, size_t begin, size_t end,
                         LinearOffsets& o) {
  o = LinearOffsets{};
  int64_t cur_size = 1, cur_stride = 0;
  bool have = false;
  for (size_t d = end; d-- > begin;) {
    const int64_t size = sizes[d], stride = strides[d];
    if (size == 1) continue;
    if (have && stride == cur_stride * cur_size) {
      cur_size *= size;
      continue;
    }
    if (have) {
      if (o.ndim == kMaxDims) return false;
      o.sizes[o.ndim] = cur_size;
      o.strides[o.ndim] = cur_stride;
      ++o.ndim;
    }
    cur_size = size;
    cur_stride = stride;
    have = true;
  }
  if (have) {
    if (o.ndim == kMaxDims) return false;
    o.sizes[o.ndim] = cur_size;
    o.strides[o.ndim] = cur_stride;
    ++o.ndim;
  }
  return true;
}

inline bool plan_offsets(const Tensor& t, LinearOffsets& o) {
  return plan_offsets(t.sizes(), t.strides(), 0, t.sizes().size(), o);
}

// An input readable through LinearOffsets: t itself, or (rarely, for a
// layout of too many dims) a contiguous copy, which always fits.
inline Tensor fitted_input(const Tensor& t, LinearOffsets& o) {
  if (plan_offsets(t, o)) return t;
  Tensor c = t.contiguous();
  plan_offsets(c, o);
  return c;
}

// An output written through LinearOffsets: the output itself, or a
// contiguous temporary that finish() copies into it.
class StagedOutput {
 public:
  explicit StagedOutput(const Tensor& out) : out_(out), work_(out) {
    if (!plan_offsets(work_, off_)) {
      work_ = empty(out.sizes(), TensorOptions(out.dtype(), out.device()));
      plan_offsets(work_, off_);
    }
  }
  const Tensor& work() const { return work_; }
  const LinearOffsets& offsets() const { return off_; }
  void finish() {
    if (!work_.is_same(out_)) out_.copy_(work_);
  }

 private:
  Tensor out_, work_;
  LinearOffsets off_;
};

// The largest element offset of t (strides are never negative here).
inline int64_t max_offset(const Tensor& t) {
  int64_t reach = 0;
  for (int64_t d = 0; d < t.dim(); ++d) reach += (t.sizes()[d] - 1) * t.strides()[d];
  return reach;
}

// Radix-sort bits that hold every key in [0, max_key].
inline int key_bits(uint64_t max_key) { return std::max(1, static_cast<int>(std::bit_width(max_key))); }

// Calls f(W{}) with the unsigned type of the dtype's width: for kernels
// that only move elements (bool as its byte, floats as their bits).
template <typename F>
decltype(auto) dispatch_width(size_t itemsize, F&& f) {
  switch (itemsize) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    case 8: return f(uint64_t{});
    default: break;
  }
  throw TypeError(detail::concat("cuda: no element type of ", itemsize, " bytes"));
}

// a + b as the CPU's scatter_add/index_put accumulate compute it: logical
// or for bool, wrapping for integers, the compute type rounded back to T
// for floats.
template <typename T>
__device__ __forceinline__ T add_as_cpu(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else if constexpr (is_int_v<T>) {
    return wrap_add(a, b);
  } else {
    using C = compute_t<T>;
    return convert<T>(convert<C>(a) + convert<C>(b));
  }
}

// a (op) b for a ScatterReduce other than kNone, as the CPU device's
// scatter folds one element: kAdd is add_as_cpu; kMul multiplies (bool:
// and; integers wrap); kMax/kMin keep the larger/smaller, a NaN on either
// side winning (bool: or/and).
template <kernels::ScatterReduce kReduce, typename T>
__device__ __forceinline__ T fold_as_cpu(T a, T b) {
  using kernels::ScatterReduce;
  if constexpr (kReduce == ScatterReduce::kAdd) {
    return add_as_cpu(a, b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return kReduce == ScatterReduce::kMax ? (a || b) : (a && b);
  } else if constexpr (kReduce == ScatterReduce::kMul) {
    if constexpr (is_int_v<T>) {
      return wrap_mul(a, b);
    } else {
      using C = compute_t<T>;
      return convert<T>(convert<C>(a) * convert<C>(b));
    }
  } else {
    using C = compute_t<T>;
    const C x = convert<C>(a), y = convert<C>(b);
    if constexpr (!is_int_v<T>) {
      if (y != y) return b;  // NaN
    }
    const bool take_b = kReduce == ScatterReduce::kMax ? x < y : y < x;
    return take_b ? b : a;
  }
}

// -- Sorting (CUB radix sort: stable, on ctx's stream).

template <typename K, typename V>
void radix_sort_pairs(const KernelContext& ctx, const K* keys_in, K* keys_out, const V* values_in,
                      V* values_out, int64_t n, int end_bit) {
  cudaStream_t stream = stream_of(ctx);
  size_t bytes = 0;
  TESSERA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, values_in,
                                                     values_out, n, 0, end_bit, stream),
                     ctx.device.index);
  Tensor temp = empty({static_cast<int64_t>(std::max<size_t>(bytes, 1))},
                      TensorOptions(DType::kU8, ctx.device));
  TESSERA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data_ptr(), bytes, keys_in, keys_out,
                                                     values_in, values_out, n, 0, end_bit, stream),
                     ctx.device.index);
}

template <typename I>
__global__ void iota_kernel(I* out, int64_t n) {
  for (int64_t i = grid_index(); i < n; i += grid_step()) out[i] = static_cast<I>(i);
}

// int64 [n] = 0, 1, ..., n - 1.
inline Tensor iota(const KernelContext& ctx, int64_t n) {
  Tensor out = empty({n}, TensorOptions(DType::kI64, ctx.device));
  if (n == 0) return out;
  iota_kernel<int64_t><<<grid_for(n), kBlockSize, 0, stream_of(ctx)>>>(out.data<int64_t>(), n);
  after_launch(ctx, "iota");
  return out;
}

inline const uint64_t* as_keys(const Tensor& t) {
  return reinterpret_cast<const uint64_t*>(t.data_ptr());
}
inline uint64_t* as_keys(Tensor& t) { return reinterpret_cast<uint64_t*>(t.data_ptr()); }

// (keys, values) sorted by key, stably. keys: destinations as uint64 in
// [0, max_key], stored in an int64 tensor [n]; values: int64 [n].
struct SortedPairs {
  Tensor keys, values;
};

inline SortedPairs sort_by_destination(const KernelContext& ctx, const Tensor& keys,
                                       const Tensor& values, uint64_t max_key) {
  const int64_t n = keys.numel();
  SortedPairs s{empty({n}, TensorOptions(DType::kI64, ctx.device)),
                empty({n}, TensorOptions(DType::kI64, ctx.device))};
  if (n == 0) return s;
  radix_sort_pairs(ctx, as_keys(keys), as_keys(s.keys), values.data<int64_t>(),
                   s.values.data<int64_t>(), n, key_bits(max_key));
  return s;
}

// Run boundaries in sorted keys: the first entry of a run sums it, the
// last one is the last write.
__device__ __forceinline__ bool first_of_run(const uint64_t* keys, int64_t p) {
  return p == 0 || keys[p - 1] != keys[p];
}
__device__ __forceinline__ bool last_of_run(const uint64_t* keys, int64_t p, int64_t n) {
  return p + 1 == n || keys[p + 1] != keys[p];
}
// One past the last entry of the run that entry p starts. Summing over a
// known range lets the compiler issue the loads of several entries ahead
// of the (ordered, hence serial) additions.
__device__ __forceinline__ int64_t run_end(const uint64_t* keys, int64_t p, int64_t n) {
  const uint64_t key = keys[p];
  int64_t end = p + 1;
  while (end < n && keys[end] == key) ++end;
  return end;
}

// -- Out-of-range indices found on the device.

// Holds the smallest row-major position of a bad index (all bits set,
// read as -1: none), so the error names the same index as the CPU's.
class BadIndexFlag {
 public:
  explicit BadIndexFlag(const KernelContext& ctx)
      : flag_(empty({1}, TensorOptions(DType::kI64, ctx.device))) {
    TESSERA_CUDA_CHECK(cudaMemsetAsync(flag_.data_ptr(), 0xFF, sizeof(int64_t), stream_of(ctx)),
                       ctx.device.index);
  }
  unsigned long long* device_ptr() const {
    return reinterpret_cast<unsigned long long*>(flag_.data_ptr());
  }
  // The position, or -1. Waits for the GPU (item() copies to the host).
  int64_t first() const { return flag_.item<int64_t>(); }

 private:
  Tensor flag_;
};

__device__ __forceinline__ void note_bad_index(unsigned long long* flag, int64_t pos) {
  atomicMin(flag, static_cast<unsigned long long>(pos));
}

}  // namespace tessera::cuda
