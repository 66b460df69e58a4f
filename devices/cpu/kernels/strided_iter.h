// Strided iteration over N operands of one shape, for the CPU kernels.
//
// The plan (in the spirit of PyTorch's TensorIterator, much smaller):
//  1. drop size-1 dims (their strides never matter); a size-0 dim makes the
//     iteration empty;
//  2. order the dims by the operands' strides, operand 0 first (the output),
//     so that the innermost loop walks memory with the smallest stride; a
//     transposed output is thus written in its memory order;
//  3. coalesce neighbouring dims that every operand walks as one (stride of
//     the outer == stride * size of the inner), so a contiguous tensor, or
//     a broadcast row, becomes one long inner loop;
//  4. run the flat index space [0, numel) in chunks (in parallel above a
//     grain size), each chunk as a sequence of inner-dim rows: the loop
//     body gets N byte pointers, N byte strides and a count, so it can pick
//     a contiguous (vectorized) or a strided inner loop per row.
//
// A 0-d tensor (or any one-element tensor) becomes one row of one element;
// a zero-size tensor an empty iteration.
#pragma once

#include <array>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>

#include "devices/cpu/kernels/parallel.h"
#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace tessera::cpu {

inline constexpr int kMaxDims = 64;

template <int N>
class StridedIter {
 public:
  // Operands given as tensors of identical sizes (checked; `op` names the
  // caller in the message). Dims are reordered by the strides of operand 0,
  // then 1, ...; pass reorder = false to keep row-major order (so that the
  // flat index of the iteration is the row-major element index).
  StridedIter(const std::array<const Tensor*, N>& ops, const char* op, bool reorder = true) {
    const Shape& sizes = ops[0]->sizes();
    std::array<const int64_t*, N> strides;
    std::array<int64_t, N> itemsizes;
    for (int k = 0; k < N; ++k) {
      TESSERA_CHECK(ops[k]->sizes() == sizes, ValueError, op, ": operand ", k, " is ",
                    describe(*ops[k]), " but operand 0 is ", describe(*ops[0]),
                    " (the cpu kernel needs equal sizes)");
      strides[k] = ops[k]->strides().data();
      itemsizes[k] = static_cast<int64_t>(ops[k]->itemsize());
    }
    init(static_cast<int>(sizes.size()), sizes.data(), strides, itemsizes, reorder, op);
  }

  // Operands given as raw layouts: sizes (ndim of them), per-operand element
  // strides (ndim each) and itemsizes.
  StridedIter(int ndim, const int64_t* sizes, const std::array<const int64_t*, N>& strides,
              const std::array<int64_t, N>& itemsizes, bool reorder, const char* op) {
    init(ndim, sizes, strides, itemsizes, reorder, op);
  }

  // The common case without a plan: when every operand is contiguous with
  // operand 0's sizes, runs loop over [0, numel) as flat rows (split over
  // threads above grain) and returns true; otherwise does nothing and
  // returns false. Planning costs more than a small op's arithmetic.
  template <typename Loop>
  static bool run_contiguous(const std::array<const Tensor*, N>& ops, const Loop& loop,
                             int64_t grain = kElementwiseGrain) {
    const Tensor& first = *ops[0];
    std::array<char*, N> base;
    std::array<int64_t, N> itemsizes;
    for (int k = 0; k < N; ++k) {
      if (!ops[k]->is_contiguous() || (k > 0 && ops[k]->sizes() != first.sizes())) return false;
      base[k] = static_cast<char*>(ops[k]->data_ptr());
      itemsizes[k] = static_cast<int64_t>(ops[k]->itemsize());
    }
    parallel_for_range(first.numel(), grain, [&](int64_t b, int64_t e) {
      std::array<char*, N> ptr;
      for (int k = 0; k < N; ++k) ptr[k] = base[k] + b * itemsizes[k];
      loop(ptr.data(), itemsizes.data(), e - b);
    });
    return true;
  }

  int64_t numel() const { return numel_; }
  int ndim() const { return ndim_; }
  int64_t size(int d) const { return size_[d]; }               // d = 0 is innermost
  int64_t stride(int d, int k) const { return stride_[d][k]; }  // bytes
  const int64_t* inner_strides() const { return stride_[0].data(); }

  // True when the whole iteration is one row in which operand k advances by
  // exactly its itemsize (operand k is contiguous in iteration order).
  bool is_flat_contiguous(int k, int64_t itemsize) const {
    return ndim_ == 1 && stride_[0][k] == itemsize;
  }

  // Runs loop(ptrs, inner_strides, count) over the elements [begin, end)
  // of the iteration order, one call per (partial) inner row. base holds
  // the address of element 0 of each operand.
  template <typename Loop>
  void for_range(const std::array<char*, N>& base, int64_t begin, int64_t end,
                 const Loop& loop) const {
    if (begin >= end) return;
    int64_t coord[kMaxDims];
    std::array<char*, N> ptr = base;
    int64_t idx = begin;
    for (int d = 0; d < ndim_; ++d) {
      coord[d] = idx % size_[d];
      idx /= size_[d];
      for (int k = 0; k < N; ++k) ptr[k] += coord[d] * stride_[d][k];
    }
    int64_t remaining = end - begin;
    const int64_t n0 = size_[0];
    for (;;) {
      const int64_t count = std::min(n0 - coord[0], remaining);
      loop(ptr.data(), stride_[0].data(), count);
      remaining -= count;
      if (remaining == 0) return;
      // Back to the start of this row, then one step along the outer dims.
      for (int k = 0; k < N; ++k) ptr[k] -= coord[0] * stride_[0][k];
      coord[0] = 0;
      for (int d = 1; d < ndim_; ++d) {
        for (int k = 0; k < N; ++k) ptr[k] += stride_[d][k];
        if (++coord[d] < size_[d]) break;
        for (int k = 0; k < N; ++k) ptr[k] -= size_[d] * stride_[d][k];
        coord[d] = 0;
      }
    }
  }

  // for_range over all elements, split over threads above `grain`.
  template <typename Loop>
  void run(const std::array<char*, N>& base, const Loop& loop,
           int64_t grain = kElementwiseGrain) const {
    parallel_for_range(numel_, grain,
                       [&](int64_t b, int64_t e) { for_range(base, b, e, loop); });
  }

 private:
  void init(int ndim, const int64_t* sizes, const std::array<const int64_t*, N>& strides,
            const std::array<int64_t, N>& itemsizes, bool reorder, const char* op) {
    TESSERA_CHECK(ndim <= kMaxDims, ValueError, op, ": the cpu kernels support at most ",
                  kMaxDims, " dims, got ", ndim);
    // Kept dims, innermost first (reverse of the tensor's dim order).
    int perm[kMaxDims];
    int n = 0;
    numel_ = 1;
    for (int d = ndim - 1; d >= 0; --d) {
      if (sizes[d] == 0) {
        numel_ = 0;
      } else if (sizes[d] != 1) {
        perm[n++] = d;
        numel_ *= sizes[d];
      }
    }
    if (numel_ == 0) {
      ndim_ = 1;
      size_[0] = 0;
      for (int k = 0; k < N; ++k) stride_[0][k] = itemsizes[k];
      return;
    }
    if (reorder) {
      // Insertion sort: move a dim inwards while some operand (the first
      // one that tells them apart) walks it with a smaller stride. Stride-0
      // (broadcast) dims say nothing about memory order and are skipped.
      auto should_be_inner = [&](int a, int b) {
        for (int k = 0; k < N; ++k) {
          int64_t sa = std::abs(strides[k][a]), sb = std::abs(strides[k][b]);
          if (sa == 0 || sb == 0 || sa == sb) continue;
          return sa < sb;
        }
        return false;
      };
      for (int i = 1; i < n; ++i) {
        for (int j = i; j > 0 && should_be_inner(perm[j], perm[j - 1]); --j) {
          std::swap(perm[j], perm[j - 1]);
        }
      }
    }
    // Coalesce, innermost first.
    ndim_ = 0;
    for (int i = 0; i < n; ++i) {
      const int d = perm[i];
      if (ndim_ > 0) {
        bool merge = true;
        const int c = ndim_ - 1;
        for (int k = 0; k < N; ++k) {
          if (strides[k][d] != elem_stride_[c][k] * size_[c]) {
            merge = false;
            break;
          }
        }
        if (merge) {
          size_[c] *= sizes[d];
          continue;
        }
      }
      size_[ndim_] = sizes[d];
      for (int k = 0; k < N; ++k) elem_stride_[ndim_][k] = strides[k][d];
      ++ndim_;
    }
    if (ndim_ == 0) {  // one element (0-d or all sizes 1)
      ndim_ = 1;
      size_[0] = 1;
      for (int k = 0; k < N; ++k) elem_stride_[0][k] = 1;
    }
    for (int d = 0; d < ndim_; ++d) {
      for (int k = 0; k < N; ++k) stride_[d][k] = elem_stride_[d][k] * itemsizes[k];
    }
  }

  int ndim_ = 0;
  int64_t numel_ = 0;
  int64_t size_[kMaxDims];
  std::array<int64_t, N> elem_stride_[kMaxDims];
  std::array<int64_t, N> stride_[kMaxDims];
};

// Element address helpers for loop bodies.
template <typename T>
inline T& at(char* p, int64_t stride, int64_t i) {
  return *reinterpret_cast<T*>(p + i * stride);
}

}  // namespace tessera::cpu
