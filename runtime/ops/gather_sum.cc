#include "runtime/ops/gather_sum.h"

#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace tessera::resample {

Tensor gather_sum(const Tensor& x, int64_t dim, const Groups& groups, bool weighted) {
  const int64_t d = wrap_dim(dim, x.dim(), "gather_sum");
  const int64_t rows = static_cast<int64_t>(groups.size());
  int64_t width = 1;
  for (const auto& g : groups) width = std::max<int64_t>(width, static_cast<int64_t>(g.size()));
  Tensor index = empty({rows * width}, TensorOptions(DType::kI64, host_device()));
  Tensor valid = empty({rows, width}, TensorOptions(DType::kBool, host_device()));
  Tensor weight = empty({rows, width}, TensorOptions(DType::kF64, host_device()));
  for (int64_t r = 0; r < rows; ++r) {
    const auto& g = groups[static_cast<size_t>(r)];
    for (int64_t k = 0; k < width; ++k) {
      const bool in_group = k < static_cast<int64_t>(g.size());
      // Padding repeats a real position (or 0), so the gather stays in bounds.
      const Term t = in_group ? g[k] : (g.empty() ? Term{0, 0.0} : Term{g[0].index, 0.0});
      TESSERA_CHECK(t.index >= 0 && t.index < x.size(d), ValueError,
                    "gather_sum: internal error: index ", t.index, " out of ", x.size(d));
      index.data<int64_t>()[r * width + k] = t.index;
      valid.data<bool>()[r * width + k] = in_group;
      weight.data<double>()[r * width + k] = t.weight;
    }
  }
  const Device device = x.device();
  Shape split = x.sizes();
  split[d] = rows;
  split.insert(split.begin() + d + 1, width);
  Shape table_shape(split.size(), 1);
  table_shape[d] = rows;
  table_shape[d + 1] = width;
  Tensor picked = index_select(x, d, index.to(device)).view(split);
  if (weighted) picked = mul(picked, weight.to(device, x.dtype()).view(table_shape));
  return sum(where(valid.to(device).view(table_shape), picked, 0), {d + 1});
}

Groups transpose(const Groups& groups, int64_t n) {
  Groups t(static_cast<size_t>(n));
  for (size_t r = 0; r < groups.size(); ++r) {
    for (const Term& term : groups[r]) {
      t[static_cast<size_t>(term.index)].push_back({static_cast<int64_t>(r), term.weight});
    }
  }
  return t;
}

}  // namespace tessera::resample
