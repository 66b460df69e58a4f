// The iteration space of an elementwise kernel in the form its shader
// takes: sizes and per-tensor element strides, with size-1 dims dropped and
// neighbouring dims merged where every tensor is contiguous across them
// (a contiguous tensor becomes rank 1). Fewer dims means fewer divisions
// per element and fits the fixed-size arrays of the push constants.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "runtime/core/tensor.h"

namespace tessera::vulkan {

struct StridedLayout {
  std::vector<int64_t> sizes;                 // row-major, outermost first
  std::vector<std::vector<int64_t>> strides;  // per tensor, per dim
  int64_t numel = 0;

  int rank() const { return static_cast<int>(sizes.size()); }
  // True when the shader's 32-bit arithmetic can address it: rank at most
  // max_rank, numel and every element offset below 2^31.
  bool fits(int max_rank) const;
};

// The layout of tensors that all have `sizes`, given each one's strides.
StridedLayout coalesce(const Shape& sizes, std::initializer_list<const Shape*> strides);

// Fills an elementwise shader's push constants from a layout coalesced over
// (out, a, b): the addresses, numel, rank, sizes and each tensor's strides
// (the caller has checked layout.fits for the shader's rank).
template <typename Params>
void fill_layout(Params& p, const StridedLayout& layout, const Tensor& out, const Tensor& a,
                 const Tensor& b) {
  p.out = reinterpret_cast<uint64_t>(out.data_ptr());
  p.a = reinterpret_cast<uint64_t>(a.data_ptr());
  p.b = reinterpret_cast<uint64_t>(b.data_ptr());
  p.numel = static_cast<uint32_t>(layout.numel);
  p.rank = static_cast<uint32_t>(layout.rank());
  for (int d = 0; d < layout.rank(); ++d) {
    p.sizes[d] = static_cast<uint32_t>(layout.sizes[d]);
    p.out_strides[d] = static_cast<int32_t>(layout.strides[0][d]);
    p.a_strides[d] = static_cast<int32_t>(layout.strides[1][d]);
    p.b_strides[d] = static_cast<int32_t>(layout.strides[2][d]);
  }
}

// The same over (out, a, b, c).
template <typename Params>
void fill_layout(Params& p, const StridedLayout& layout, const Tensor& out, const Tensor& a,
                 const Tensor& b, const Tensor& c) {
  fill_layout(p, layout, out, a, b);
  p.c = reinterpret_cast<uint64_t>(c.data_ptr());
  for (int d = 0; d < layout.rank(); ++d) {
    p.c_strides[d] = static_cast<int32_t>(layout.strides[3][d]);
  }
}

}  // namespace tessera::vulkan
