#include "runtime/ops/scatter_operands.h"

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/indexing_checks.h"
#include "runtime/ops/memory_overlap.h"
#include "runtime/ops/ops.h"

namespace tessera::indexing {

ScatterOperands scatter_operands(const char* op, const Tensor& self, int64_t dim,
                                 const Tensor& index, const Tensor& src) {
  TESSERA_CHECK(self.defined() && src.defined(), ValueError, op, ": undefined tensor");
  check_int64_index(op, index);
  check_same_device(op, index, self.device(), "index");
  check_same_device(op, src, self.device(), "src");
  TESSERA_CHECK(self.dtype() == src.dtype(), TypeError, op,
                ": Expected self.dtype to be equal to src.dtype (self ", describe(self), ", src ",
                describe(src), ")");
  ScatterOperands o;
  o.self = as_at_least_1d(self);
  o.index = as_at_least_1d(index);
  const Tensor sr = as_at_least_1d(src);
  o.dim = wrap_dim(dim, o.self.dim(), op);
  if (o.index.numel() == 0) {
    o.empty = true;
    return o;
  }
  check_index_fits(op, o.index, o.self, o.dim, "self");
  check_index_fits(op, o.index, sr, -1, "src");
  check_index_bounds(op, o.index, o.self.sizes()[o.dim], o.dim, /*allow_negative=*/false);
  check_no_internal_overlap(op, self);
  // Only the leading index-sized block of src takes part.
  o.src = sr.as_strided(o.index.sizes(), sr.strides(), sr.storage_offset());
  return o;
}

Tensor value_as_src(const char* op, const Tensor& self, const Tensor& index, Scalar value) {
  TESSERA_CHECK(self.defined(), ValueError, op, ": undefined tensor");
  check_int64_index(op, index);
  return full({}, value, TensorOptions(self.dtype(), self.device())).expand(index.sizes());
}

void run_scatter(const ScatterOperands& o, kernels::ScatterReduce reduce, HalfRounding rounding) {
  if (o.empty) return;
  const Device device = o.self.device();
  const bool sums_or_products =
      reduce == kernels::ScatterReduce::kAdd || reduce == kernels::ScatterReduce::kMul;
  const DType dtype = o.self.dtype();
  if (rounding == HalfRounding::kOnce && sums_or_products &&
      is_reduced_float(dtype)) {
    Tensor wide = o.self.to(DType::kF32);
    call_kernel<kernels::Scatter>(device, wide, o.dim, o.index, o.src.to(DType::kF32), reduce);
    Tensor target = o.self;
    target.copy_(wide);
    return;
  }
  Tensor target = o.self;
  call_kernel<kernels::Scatter>(device, target, o.dim, o.index, o.src, reduce);
}

}  // namespace tessera::indexing
