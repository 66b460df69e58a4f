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

}  // namespace tessera::vulkan
