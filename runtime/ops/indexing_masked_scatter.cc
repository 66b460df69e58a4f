// masked_scatter: self's elements where mask is true replaced, in row-major
// order, by source's first elements. A composite over cumsum, index_select
// and where, so every device runs it natively: the i-th true position of
// the mask takes source's element i (the inclusive cumsum of the mask,
// minus 1), every other position keeps self's. The number of true
// positions is read back to check source is long enough (an error, as in
// PyTorch, rather than reading past source).
#include "runtime/core/error.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

// self (of the result's shape) with mask (of the same shape) scattered.
Tensor scatter_masked(const char* op, const Tensor& self, const Tensor& mask,
                      const Tensor& source) {
  const Tensor flat_mask = mask.reshape({-1});
  const int64_t count = sum(flat_mask).item<int64_t>();
  TESSERA_CHECK(count <= source.numel(), ValueError, op,
                ": number of elements of source < number of ones in mask (", source.numel(),
                " < ", count, ")");
  if (count == 0) return self.clone();
  const Tensor position = clamp_min(sub(cumsum(flat_mask, 0), 1), 0);  // int64
  const Tensor picked = index_select(source.reshape({-1}), 0, position);
  return where(flat_mask, picked, self.reshape({-1})).view(self.sizes());
}

void check_arguments(const char* op, const Tensor& self, const Tensor& mask,
                     const Tensor& source) {
  TESSERA_CHECK(self.defined() && mask.defined() && source.defined(), ValueError, op,
                ": undefined tensor argument");
  nn_detail::check_same_device(op, self, mask);
  nn_detail::check_same_device(op, self, source);
  TESSERA_CHECK(mask.dtype() == DType::kBool, TypeError, op,
                ": only supports boolean masks, but got mask ", describe(mask));
  TESSERA_CHECK(self.dtype() == source.dtype(), TypeError, op,
                ": expected self and source to have same dtypes, but got ", describe(self),
                " and ", describe(source));
}

}  // namespace

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  const char* op = "masked_scatter";
  check_arguments(op, self, mask, source);
  const Shape shape = broadcast_shapes(self.sizes(), mask.sizes(), op);
  return scatter_masked(op, self.expand(shape), mask.expand(shape), source);
}

Tensor& masked_scatter_(Tensor& self, const Tensor& mask, const Tensor& source) {
  const char* op = "masked_scatter_";
  check_arguments(op, self, mask, source);
  TESSERA_CHECK(nn_detail::broadcasts_to(mask.sizes(), self.sizes()), ValueError, op,
                ": mask of shape ", shape_to_string(mask.sizes()),
                " does not broadcast to self's shape ", shape_to_string(self.sizes()));
  return self.copy_(scatter_masked(op, self, mask.expand(self.sizes()), source));
}

}  // namespace tessera
