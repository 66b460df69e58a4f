// The layout of an elementwise operation's operands, simplified for the
// GPU: dims of size 1 dropped and adjacent dims merged wherever every
// operand is contiguous across them, innermost dim first, in elements.
// Index math on the GPU is 32-bit when every offset fits (far cheaper
// divisions), 64-bit otherwise.
#pragma once

#include <array>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace tessera::cuda {

// Dims of a layout after merging. A tensor of higher rank with no two
// mergeable dims is rare; kernels make such operands contiguous first.
inline constexpr int kMaxDims = 12;

template <int N, typename I>
struct StridedLayout {
  int ndim = 0;
  I sizes[kMaxDims] = {};
  I strides[N][kMaxDims] = {};
};

template <int N>
struct LayoutPlan {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[N][kMaxDims] = {};
  int64_t numel = 1;
  bool fits_32bit = true;  // numel and every operand's offsets below 2^31
  bool too_many_dims = false;
};

// The merged layout of N tensors of one shape (operand 0 is usually the
// output; inputs are already expanded to its sizes).
template <int N>
LayoutPlan<N> plan_layout(const std::array<const Tensor*, N>& ts) {
  LayoutPlan<N> p;
  const Shape& sizes = ts[0]->sizes();
  const int rank = static_cast<int>(sizes.size());
  // Walk from the innermost dim outwards, merging into the current dim.
  int64_t cur_size = 1;
  int64_t cur_strides[N] = {};
  bool have = false;
  for (int d = rank - 1; d >= 0; --d) {
    const int64_t size = sizes[d];
    p.numel *= size;
    if (size == 1) continue;
    if (!have) {
      cur_size = size;
      for (int k = 0; k < N; ++k) cur_strides[k] = ts[k]->strides()[d];
      have = true;
      continue;
    }
    bool mergeable = true;
    for (int k = 0; k < N; ++k) mergeable &= ts[k]->strides()[d] == cur_strides[k] * cur_size;
    if (mergeable) {
      cur_size *= size;
      continue;
    }
    if (p.ndim == kMaxDims) {
      p.too_many_dims = true;
      return p;
    }
    p.sizes[p.ndim] = cur_size;
    for (int k = 0; k < N; ++k) p.strides[k][p.ndim] = cur_strides[k];
    ++p.ndim;
    cur_size = size;
    for (int k = 0; k < N; ++k) cur_strides[k] = ts[k]->strides()[d];
  }
  if (have) {
    if (p.ndim == kMaxDims) {
      p.too_many_dims = true;
      return p;
    }
    p.sizes[p.ndim] = cur_size;
    for (int k = 0; k < N; ++k) p.strides[k][p.ndim] = cur_strides[k];
    ++p.ndim;
  }
  constexpr int64_t kLimit = int64_t{1} << 31;
  p.fits_32bit = p.numel < kLimit;
  for (int k = 0; k < N; ++k) {
    int64_t reach = 0;
    for (int d = 0; d < p.ndim; ++d) reach += (p.sizes[d] - 1) * (p.strides[k][d] < 0 ? -p.strides[k][d] : p.strides[k][d]);
    p.fits_32bit &= reach < kLimit;
  }
  return p;
}

template <int N, typename I>
StridedLayout<N, I> narrow_layout(const LayoutPlan<N>& p) {
  StridedLayout<N, I> l;
  l.ndim = p.ndim;
  for (int d = 0; d < p.ndim; ++d) {
    l.sizes[d] = static_cast<I>(p.sizes[d]);
    for (int k = 0; k < N; ++k) l.strides[k][d] = static_cast<I>(p.strides[k][d]);
  }
  return l;
}

// Every operand either unit-stride or a broadcast scalar (stride 0) along
// one merged dim: the case the vectorized kernels take.
template <int N>
bool is_flat(const LayoutPlan<N>& p) {
  if (p.ndim > 1) return false;
  if (p.ndim == 0) return true;
  if (p.strides[0][0] != 1) return false;  // the output is always dense
  for (int k = 1; k < N; ++k) {
    if (p.strides[k][0] != 1 && p.strides[k][0] != 0) return false;
  }
  return true;
}

}  // namespace tessera::cuda
