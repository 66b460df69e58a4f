#include "runtime/ops/reduction_common.h"

#include <algorithm>
#include <vector>

#include "runtime/core/error.h"

namespace tessera::reduction {

Shape normalize_dims(const char* op, const Tensor& t, const Shape& dims) {
  Shape out;
  if (dims.empty()) {
    for (int64_t d = 0; d < t.dim(); ++d) out.push_back(d);
    return out;
  }
  std::vector<bool> seen(std::max<int64_t>(t.dim(), 1), false);
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, t.dim(), op);
    TESSERA_CHECK(!seen[w], ValueError, op, ": dim ", w,
                  " appears multiple times in the list of dims ", shape_to_string(dims));
    seen[w] = true;
    if (t.dim() > 0) out.push_back(w);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Shape keepdim_sizes(const Tensor& t, const Shape& rdims) {
  Shape s = t.sizes();
  for (int64_t d : rdims) s[d] = 1;
  return s;
}

Shape result_sizes(const Tensor& t, const Shape& rdims, bool keepdim) {
  if (keepdim) return keepdim_sizes(t, rdims);
  Shape s;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (!std::binary_search(rdims.begin(), rdims.end(), d)) s.push_back(t.sizes()[d]);
  }
  return s;
}

Tensor drop_dims(const Tensor& kept, const Tensor& t, const Shape& rdims, bool keepdim) {
  if (keepdim) return kept;
  return kept.view(result_sizes(t, rdims, false));
}

void check_nonempty(const char* op, const Tensor& t, const Shape& rdims, bool all_dims) {
  if (all_dims && t.numel() == 0) {
    TESSERA_CHECK(false, ValueError, op,
                  "(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                  "reduction dim with the 'dim' argument, got ",
                  describe(t));
  }
  for (int64_t d : rdims) {
    TESSERA_CHECK(t.sizes()[d] != 0, IndexError, op, "(): Expected reduction dim ", d,
                  " to have non-zero size, got ", describe(t));
  }
}

}  // namespace tessera::reduction
