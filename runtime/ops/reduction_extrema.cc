// max, min (full and over one dim with indices), argmax, argmin, amax, amin,
// aminmax.
#include <optional>
#include <tuple>

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"
#include "runtime/ops/reduction_common.h"

namespace tessera {

namespace {

using kernels::ReduceExtOp;

Tensor extreme(ReduceExtOp op, const char* name, const Tensor& t, const Shape& dims,
               bool keepdim) {
  TESSERA_CHECK(t.defined(), ValueError, name, ": undefined tensor");
  const Shape rdims = reduction::normalize_dims(name, t, dims);
  // No identity: every reduced dim must be non-empty.
  reduction::check_nonempty(name, t, rdims, dims.empty());
  Tensor out = empty(reduction::keepdim_sizes(t, rdims), TensorOptions(t.dtype(), t.device()));
  if (out.numel() > 0) call_kernel<kernels::ReduceExt>(t.device(), op, out, t, rdims);
  return reduction::drop_dims(out, t, rdims, keepdim);
}

Tensor full_extreme(ReduceExtOp op, const char* name, const Tensor& t) {
  return extreme(op, name, t, {}, false);
}

std::tuple<Tensor, Tensor> extreme_dim(bool is_max, const char* name, const Tensor& t,
                                       int64_t dim, bool keepdim, bool want_values) {
  TESSERA_CHECK(t.defined(), ValueError, name, ": undefined tensor");
  const int64_t d = wrap_dim(dim, t.dim(), name);
  if (t.dim() > 0) {
    TESSERA_CHECK(t.sizes()[d] != 0, IndexError, name, "(): Expected reduction dim ", d,
                  " to have non-zero size, got ", describe(t));
  }
  const Shape rdims = t.dim() > 0 ? Shape{d} : Shape{};
  const Shape ks = reduction::keepdim_sizes(t, rdims);
  Tensor values;
  if (want_values) values = empty(ks, TensorOptions(t.dtype(), t.device()));
  Tensor indices = empty(ks, TensorOptions(DType::kI64, t.device()));
  if (indices.numel() > 0) {
    call_kernel<kernels::ArgReduce>(t.device(), is_max, values, indices, t, t.dim() > 0 ? d : 0);
  }
  if (want_values) values = reduction::drop_dims(values, t, rdims, keepdim);
  return {values, reduction::drop_dims(indices, t, rdims, keepdim)};
}

Tensor arg_extreme(bool is_max, const char* name, const Tensor& t, std::optional<int64_t> dim,
                   bool keepdim) {
  TESSERA_CHECK(t.defined(), ValueError, name, ": undefined tensor");
  TESSERA_CHECK(t.dtype() != DType::kBool, TypeError, name, "(): does not support bool input, got ",
                describe(t));
  if (dim) return std::get<1>(extreme_dim(is_max, name, t, *dim, keepdim, false));
  TESSERA_CHECK(t.numel() > 0, IndexError, name,
                "(): Expected reduction dim to be specified for input.numel() == 0, got ",
                describe(t));
  // Over the flattened tensor; keepdim gives t's rank with all sizes 1.
  Tensor idx = std::get<1>(extreme_dim(is_max, name, t.reshape({-1}), 0, false, false));
  if (!keepdim) return idx;
  return idx.view(Shape(static_cast<size_t>(t.dim()), 1));
}

std::tuple<Tensor&, Tensor&> extreme_dim_out(bool is_max, const char* name, Tensor& values,
                                             Tensor& indices, const Tensor& t, int64_t dim,
                                             bool keepdim) {
  auto [v, i] = extreme_dim(is_max, name, t, dim, keepdim, true);
  check_out(name, indices, i.sizes(), DType::kI64, t.device());
  TESSERA_CHECK(indices.dtype() == DType::kI64, TypeError, name,
                ": expected indices out of dtype int64, got ", describe(indices));
  TESSERA_CHECK(values.defined() && values.dtype() == t.dtype(), TypeError, name,
                ": expected values out of dtype ", dtype_name(t.dtype()), ", got ",
                describe(values));
  write_out(name, values, v);
  indices.copy_(i);
  return {values, indices};
}

}  // namespace

Tensor max(const Tensor& t) { return full_extreme(ReduceExtOp::kAmax, "max", t); }
Tensor min(const Tensor& t) { return full_extreme(ReduceExtOp::kAmin, "min", t); }

std::tuple<Tensor, Tensor> max(const Tensor& t, int64_t dim, bool keepdim) {
  return extreme_dim(true, "max", t, dim, keepdim, true);
}
std::tuple<Tensor, Tensor> min(const Tensor& t, int64_t dim, bool keepdim) {
  return extreme_dim(false, "min", t, dim, keepdim, true);
}
std::tuple<Tensor&, Tensor&> max_out(Tensor& values, Tensor& indices, const Tensor& t,
                                     int64_t dim, bool keepdim) {
  return extreme_dim_out(true, "max", values, indices, t, dim, keepdim);
}
std::tuple<Tensor&, Tensor&> min_out(Tensor& values, Tensor& indices, const Tensor& t,
                                     int64_t dim, bool keepdim) {
  return extreme_dim_out(false, "min", values, indices, t, dim, keepdim);
}

Tensor argmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  return arg_extreme(true, "argmax", t, dim, keepdim);
}
Tensor argmin(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  return arg_extreme(false, "argmin", t, dim, keepdim);
}

Tensor amax(const Tensor& t, const Shape& dims, bool keepdim) {
  return extreme(ReduceExtOp::kAmax, "amax", t, dims, keepdim);
}
Tensor amin(const Tensor& t, const Shape& dims, bool keepdim) {
  return extreme(ReduceExtOp::kAmin, "amin", t, dims, keepdim);
}
Tensor& amax_out(Tensor& out, const Tensor& t, const Shape& dims, bool keepdim) {
  return write_out("amax", out, amax(t, dims, keepdim));
}
Tensor& amin_out(Tensor& out, const Tensor& t, const Shape& dims, bool keepdim) {
  return write_out("amin", out, amin(t, dims, keepdim));
}

// Two reductions (amin, then amax) under aminmax's name; a fused kernel
// would read t once, not worth a kernel slot while the two are this cheap.
std::tuple<Tensor, Tensor> aminmax(const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
  const char* name = "aminmax";
  TESSERA_CHECK(t.defined(), ValueError, name, ": undefined tensor");
  TESSERA_CHECK(dim || t.numel() > 0, ValueError, name,
                "(): cannot compute aminmax over an empty dimension as the operation has no "
                "identity, got ", describe(t));
  const Shape dims = dim ? Shape{*dim} : Shape{};
  return {extreme(ReduceExtOp::kAmin, name, t, dims, keepdim),
          extreme(ReduceExtOp::kAmax, name, t, dims, keepdim)};
}
std::tuple<Tensor&, Tensor&> aminmax_out(Tensor& min, Tensor& max, const Tensor& t,
                                         std::optional<int64_t> dim, bool keepdim) {
  auto [lo, hi] = aminmax(t, dim, keepdim);
  write_out("aminmax", min, lo);
  write_out("aminmax", max, hi);
  return {min, max};
}

}  // namespace tessera
