#include "devices/vulkan/kernels/strided_layout.h"

#include <cstdlib>
#include <limits>

namespace tessera::vulkan {

bool StridedLayout::fits(int max_rank) const {
  constexpr int64_t kLimit = std::numeric_limits<int32_t>::max();
  if (rank() > max_rank || numel > kLimit) return false;
  for (const auto& s : strides) {
    int64_t reach = 0;  // the largest |element offset| the shader computes
    for (int d = 0; d < rank(); ++d) {
      if (std::llabs(s[d]) > kLimit) return false;
      reach += (sizes[d] - 1) * std::llabs(s[d]);
      if (reach > kLimit) return false;
    }
  }
  return true;
}

StridedLayout coalesce(const Shape& sizes, std::initializer_list<const Shape*> strides) {
  StridedLayout out;
  out.strides.resize(strides.size());
  out.numel = 1;
  for (int64_t s : sizes) out.numel *= s;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    // Merge into the previous (outer) dim when, for every tensor, stepping
    // the outer dim once equals stepping this one sizes[d] times.
    bool merge = !out.sizes.empty();
    size_t k = 0;
    for (const Shape* s : strides) {
      if (merge && out.strides[k].back() != (*s)[d] * sizes[d]) merge = false;
      ++k;
    }
    k = 0;
    if (merge) {
      out.sizes.back() *= sizes[d];
      for (const Shape* s : strides) out.strides[k++].back() = (*s)[d];
    } else {
      out.sizes.push_back(sizes[d]);
      for (const Shape* s : strides) out.strides[k++].push_back((*s)[d]);
    }
  }
  return out;
}

}  // namespace tessera::vulkan
