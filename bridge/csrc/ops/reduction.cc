// Reductions and scans on tessera: sum, mean, prod, max/min, argmax/argmin,
// amax/amin, aminmax, var/std (and their _mean pairs), vector norms, all/any,
// logsumexp, cumsum and cumprod, each as the functional op and its out=
// form. The functional forms are registered too (not only .out, which the
// structured default wrappers would call) so that a result is allocated
// once, by the runtime, with no copy into a wrapper-allocated output.
#include <c10/util/OptionalArrayRef.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <tuple>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "bridge/csrc/ops/vector_norm.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

// `dim=None` and `dim=[]` both mean every dim, for aten as for the runtime.
tessera::Shape to_dims(at::OptionalIntArrayRef dim) {
  if (!dim.has_value()) return {};
  return to_runtime_shape(*dim);
}

tessera::Shape all_dims(int64_t ndim) {
  tessera::Shape dims(static_cast<size_t>(ndim));
  std::iota(dims.begin(), dims.end(), int64_t{0});
  return dims;
}

std::optional<tessera::DType> to_dtype(std::optional<c10::ScalarType> dtype, const char* op) {
  if (!dtype.has_value()) return std::nullopt;
  return to_runtime_dtype(*dtype, op);
}

// An out= reduction without dtype computes in out's dtype, as aten's
// sum/prod out kernels do (sum(int, out=float) sums in float).
std::optional<tessera::DType> dtype_or_out(std::optional<c10::ScalarType> dtype,
                                           const at::Tensor& out, const char* op) {
  return to_dtype(dtype.has_value() ? dtype : std::optional(out.scalar_type()), op);
}

double to_correction(const std::optional<c10::Scalar>& correction) {
  return correction.has_value() ? correction->toDouble() : 1.0;
}

template <typename F>
std::tuple<at::Tensor, at::Tensor> fresh_pair(F&& fn) {
  auto [a, b] = call_runtime(std::forward<F>(fn));
  return {to_torch(a), to_torch(b)};
}

// -- sum / mean / prod --------------------------------------------------------

at::Tensor sum_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                   std::optional<c10::ScalarType> dtype) {
  OpScope scope(self);
  return fresh([&] {
    return tessera::sum(to_runtime(self, "sum"), to_dims(dim), keepdim, to_dtype(dtype, "sum"));
  });
}

at::Tensor nansum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                  std::optional<c10::ScalarType> dtype) {
  OpScope scope(self);
  return fresh([&] {
    return tessera::nansum(to_runtime(self, "nansum"), to_dims(dim), keepdim,
                           to_dtype(dtype, "nansum"));
  });
}

at::Tensor& nansum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  OpScope scope(self, out);
  return write_out(out, call_runtime([&] {
                     return tessera::nansum(to_runtime(self, "nansum"), to_dims(dim), keepdim,
                                            dtype_or_out(dtype, out, "nansum"));
                   }));
}

// torch.equal; a tessera tensor against a CPU one is torch's device error.
bool equal(const at::Tensor& self, const at::Tensor& other) {
  OpScope scope(self, other);
  TORCH_CHECK(self.device() == other.device(), "equal: Expected all tensors to be on the same "
              "device, but found at least two devices, ", self.device(), " and ", other.device());
  return call_runtime(
      [&] { return tessera::equal(to_runtime(self, "equal"), to_runtime(other, "equal")); });
}

at::Tensor sum_all(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  return sum_dim(self, std::nullopt, false, dtype);
}

at::Tensor& sum_dim_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                        std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  OpScope scope(self, out);
  return write_out(out, call_runtime([&] {
                     return tessera::sum(to_runtime(self, "sum"), to_dims(dim), keepdim,
                                         dtype_or_out(dtype, out, "sum"));
                   }));
}

at::Tensor& sum_all_out(const at::Tensor& self, std::optional<c10::ScalarType> dtype,
                        at::Tensor& out) {
  return sum_dim_out(self, std::nullopt, false, dtype, out);
}

at::Tensor mean_dim(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype) {
  OpScope scope(self);
  return fresh([&] {
    return tessera::mean(to_runtime(self, "mean"), to_dims(dim), keepdim,
                         to_dtype(dtype, "mean"));
  });
}

at::Tensor mean_all(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  return mean_dim(self, std::nullopt, false, dtype);
}

at::Tensor& mean_dim_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                         std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  OpScope scope(self, out);
  // aten's mean.out requires a floating self (or dtype), then computes in
  // out's dtype; the runtime's mean makes the first check.
  std::optional<c10::ScalarType> compute_dtype = dtype;
  if (!dtype.has_value() && self.is_floating_point() && out.is_floating_point()) {
    compute_dtype = out.scalar_type();
  }
  return write_out(out, call_runtime([&] {
                     return tessera::mean(to_runtime(self, "mean"), to_dims(dim), keepdim,
                                          to_dtype(compute_dtype, "mean"));
                   }));
}

at::Tensor& mean_all_out(const at::Tensor& self, std::optional<c10::ScalarType> dtype,
                         at::Tensor& out) {
  return mean_dim_out(self, std::nullopt, false, dtype, out);
}

at::Tensor prod_all(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  OpScope scope(self);
  return fresh([&] { return tessera::prod(to_runtime(self, "prod"), to_dtype(dtype, "prod")); });
}

at::Tensor prod_dim(const at::Tensor& self, int64_t dim, bool keepdim,
                    std::optional<c10::ScalarType> dtype) {
  OpScope scope(self);
  return fresh([&] {
    return tessera::prod(to_runtime(self, "prod"), dim, keepdim, to_dtype(dtype, "prod"));
  });
}

at::Tensor& prod_dim_out(const at::Tensor& self, int64_t dim, bool keepdim,
                         std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  OpScope scope(self, out);
  return write_out(out, call_runtime([&] {
                     return tessera::prod(to_runtime(self, "prod"), dim, keepdim,
                                          dtype_or_out(dtype, out, "prod"));
                   }));
}

at::Tensor& prod_all_out(const at::Tensor& self, std::optional<c10::ScalarType> dtype,
                         at::Tensor& out) {
  OpScope scope(self, out);
  return write_out(out, call_runtime([&] {
                     return tessera::prod(to_runtime(self, "prod"),
                                          dtype_or_out(dtype, out, "prod"));
                   }));
}

// -- max / min / argmax / argmin / amax / amin ---------------------------------

at::Tensor max_all(const at::Tensor& self) {
  OpScope scope(self);
  return fresh([&] { return tessera::max(to_runtime(self, "max")); });
}

at::Tensor min_all(const at::Tensor& self) {
  OpScope scope(self);
  return fresh([&] { return tessera::min(to_runtime(self, "min")); });
}

at::Tensor& max_all_out(const at::Tensor& self, at::Tensor& out) {
  OpScope scope(self, out);
  return write_out(out, call_runtime([&] { return tessera::max(to_runtime(self, "max")); }));
}

at::Tensor& min_all_out(const at::Tensor& self, at::Tensor& out) {
  OpScope scope(self, out);
  return write_out(out, call_runtime([&] { return tessera::min(to_runtime(self, "min")); }));
}

std::tuple<at::Tensor, at::Tensor> max_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  OpScope scope(self);
  return fresh_pair([&] { return tessera::max(to_runtime(self, "max"), dim, keepdim); });
}

std::tuple<at::Tensor, at::Tensor> min_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  OpScope scope(self);
  return fresh_pair([&] { return tessera::min(to_runtime(self, "min"), dim, keepdim); });
}

std::tuple<at::Tensor&, at::Tensor&> write_pair(at::Tensor& a, at::Tensor& b,
                                                const std::tuple<tessera::Tensor, tessera::Tensor>& r) {
  write_out_exact(a, std::get<0>(r));
  write_out_exact(b, std::get<1>(r));
  return {a, b};
}

std::tuple<at::Tensor&, at::Tensor&> max_dim_out(const at::Tensor& self, int64_t dim,
                                                 bool keepdim, at::Tensor& values,
                                                 at::Tensor& indices) {
  OpScope scope(self, values);
  return write_pair(values, indices, call_runtime([&] {
                      return tessera::max(to_runtime(self, "max"), dim, keepdim);
                    }));
}

std::tuple<at::Tensor&, at::Tensor&> min_dim_out(const at::Tensor& self, int64_t dim,
                                                 bool keepdim, at::Tensor& values,
                                                 at::Tensor& indices) {
  OpScope scope(self, values);
  return write_pair(values, indices, call_runtime([&] {
                      return tessera::min(to_runtime(self, "min"), dim, keepdim);
                    }));
}

// argmax over everything with keepdim gives a tensor of self's rank with
// all sizes 1 (aten); the runtime's flat argmax is reshaped to that.
tessera::Tensor arg_extreme(bool is_max, const at::Tensor& self, std::optional<int64_t> dim,
                            bool keepdim) {
  const char* op = is_max ? "argmax" : "argmin";
  const tessera::Tensor t = to_runtime(self, op);
  tessera::Tensor r = is_max ? tessera::argmax(t, dim, keepdim) : tessera::argmin(t, dim, keepdim);
  if (!dim.has_value() && keepdim && r.dim() != t.dim()) {
    r = r.reshape(tessera::Shape(static_cast<size_t>(t.dim()), 1));
  }
  return r;
}

at::Tensor argmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  OpScope scope(self);
  return fresh([&] { return arg_extreme(true, self, dim, keepdim); });
}

at::Tensor argmin(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  OpScope scope(self);
  return fresh([&] { return arg_extreme(false, self, dim, keepdim); });
}

at::Tensor& argmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                       at::Tensor& out) {
  OpScope scope(self, out);
  return write_out_exact(out, call_runtime([&] { return arg_extreme(true, self, dim, keepdim); }));
}

at::Tensor& argmin_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim,
                       at::Tensor& out) {
  OpScope scope(self, out);
  return write_out_exact(out, call_runtime([&] { return arg_extreme(false, self, dim, keepdim); }));
}

at::Tensor amax(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  OpScope scope(self);
  return fresh([&] { return tessera::amax(to_runtime(self, "amax"), to_dims(dim), keepdim); });
}

at::Tensor amin(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  OpScope scope(self);
  return fresh([&] { return tessera::amin(to_runtime(self, "amin"), to_dims(dim), keepdim); });
}

at::Tensor& amax_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  OpScope scope(self, out);
  return write_out_exact(out, call_runtime([&] {
                     return tessera::amax(to_runtime(self, "amax"), to_dims(dim), keepdim);
                   }));
}

at::Tensor& amin_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  OpScope scope(self, out);
  return write_out_exact(out, call_runtime([&] {
                     return tessera::amin(to_runtime(self, "amin"), to_dims(dim), keepdim);
                   }));
}

std::tuple<at::Tensor, at::Tensor> aminmax(const at::Tensor& self, std::optional<int64_t> dim,
                                           bool keepdim) {
  OpScope scope(self);
  return fresh_pair([&] { return tessera::aminmax(to_runtime(self, "aminmax"), dim, keepdim); });
}

std::tuple<at::Tensor&, at::Tensor&> aminmax_out(const at::Tensor& self,
                                                 std::optional<int64_t> dim, bool keepdim,
                                                 at::Tensor& min, at::Tensor& max) {
  OpScope scope(self, min);
  return write_pair(min, max, call_runtime([&] {
                      return tessera::aminmax(to_runtime(self, "aminmax"), dim, keepdim);
                    }));
}

// -- var / std -----------------------------------------------------------------

at::Tensor var(const at::Tensor& self, at::OptionalIntArrayRef dim,
               const std::optional<c10::Scalar>& correction, bool keepdim) {
  OpScope scope(self);
  return fresh([&] {
    return tessera::var(to_runtime(self, "var"), to_dims(dim), to_correction(correction),
                        keepdim);
  });
}

at::Tensor std_(const at::Tensor& self, at::OptionalIntArrayRef dim,
                const std::optional<c10::Scalar>& correction, bool keepdim) {
  OpScope scope(self);
  return fresh([&] {
    return tessera::std(to_runtime(self, "std"), to_dims(dim), to_correction(correction),
                        keepdim);
  });
}

at::Tensor& var_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                    const std::optional<c10::Scalar>& correction, bool keepdim, at::Tensor& out) {
  OpScope scope(self, out);
  return write_out(out, call_runtime([&] {
                     return tessera::var(to_runtime(self, "var"), to_dims(dim),
                                         to_correction(correction), keepdim);
                   }));
}

at::Tensor& std_out(const at::Tensor& self, at::OptionalIntArrayRef dim,
                    const std::optional<c10::Scalar>& correction, bool keepdim, at::Tensor& out) {
  OpScope scope(self, out);
  return write_out(out, call_runtime([&] {
                     return tessera::std(to_runtime(self, "std"), to_dims(dim),
                                         to_correction(correction), keepdim);
                   }));
}

// (var or std, mean): two runtime reductions; the runtime has no fused one.
std::tuple<at::Tensor, at::Tensor> spread_mean(bool is_std, const at::Tensor& self,
                                               at::OptionalIntArrayRef dim,
                                               const std::optional<c10::Scalar>& correction,
                                               bool keepdim) {
  OpScope scope(self);
  const char* op = is_std ? "std_mean" : "var_mean";
  return fresh_pair([&] {
    const tessera::Tensor t = to_runtime(self, op);
    const tessera::Shape dims = to_dims(dim);
    tessera::Tensor spread = is_std ? tessera::std(t, dims, to_correction(correction), keepdim)
                                    : tessera::var(t, dims, to_correction(correction), keepdim);
    return std::make_tuple(spread, tessera::mean(t, dims, keepdim));
  });
}

std::tuple<at::Tensor, at::Tensor> var_mean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<c10::Scalar>& correction,
                                            bool keepdim) {
  return spread_mean(false, self, dim, correction, keepdim);
}

std::tuple<at::Tensor, at::Tensor> std_mean(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                            const std::optional<c10::Scalar>& correction,
                                            bool keepdim) {
  return spread_mean(true, self, dim, correction, keepdim);
}

}  // namespace

// -- vector norms ----------------------------------------------------------------

// The runtime's norm takes any order p (1, 2 and inf fused, the others
// composed of runtime ops).
tessera::Tensor vector_norm(const at::Tensor& self, const c10::Scalar& ord,
                            at::OptionalIntArrayRef dim, bool keepdim,
                            std::optional<c10::ScalarType> dtype, const char* op) {
  tessera::Tensor t = to_runtime(self, op);
  const tessera::Shape dims = to_dims(dim);
  // aten wants a floating input even when dtype asks for a cast; the
  // runtime's norm rejects anything else with the norm's message.
  if (!tessera::is_floating(t.dtype())) tessera::norm(t, 1.0, dims, keepdim);
  if (dtype.has_value()) t = t.to(to_runtime_dtype(*dtype, op));
  return tessera::norm(t, ord.toDouble(), dims, keepdim);
}

namespace {

at::Tensor linalg_vector_norm(const at::Tensor& self, const c10::Scalar& ord,
                              at::OptionalIntArrayRef dim, bool keepdim,
                              std::optional<c10::ScalarType> dtype) {
  OpScope scope(self);
  return fresh([&] { return vector_norm(self, ord, dim, keepdim, dtype, "linalg.vector_norm"); });
}

at::Tensor& linalg_vector_norm_out(const at::Tensor& self, const c10::Scalar& ord,
                                   at::OptionalIntArrayRef dim, bool keepdim,
                                   std::optional<c10::ScalarType> dtype, at::Tensor& out) {
  OpScope scope(self, out);
  return write_out_exact(out, call_runtime([&] {
                     return vector_norm(self, ord, dim, keepdim, dtype, "linalg.vector_norm");
                   }));
}

// torch.norm's aten overloads with a dim list: p=None means 2.
at::Tensor norm_dim(const at::Tensor& self, const std::optional<c10::Scalar>& p,
                    at::IntArrayRef dim, bool keepdim) {
  OpScope scope(self);
  return fresh([&] {
    return vector_norm(self, p.value_or(2.0), dim, keepdim, std::nullopt, "norm");
  });
}

at::Tensor norm_dim_dtype(const at::Tensor& self, const std::optional<c10::Scalar>& p,
                          at::IntArrayRef dim, bool keepdim, c10::ScalarType dtype) {
  OpScope scope(self);
  return fresh([&] { return vector_norm(self, p.value_or(2.0), dim, keepdim, dtype, "norm"); });
}

at::Tensor& norm_dim_out(const at::Tensor& self, const std::optional<c10::Scalar>& p,
                         at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  OpScope scope(self, out);
  return write_out_exact(out, call_runtime([&] {
                     return vector_norm(self, p.value_or(2.0), dim, keepdim, std::nullopt, "norm");
                   }));
}

at::Tensor& norm_dim_dtype_out(const at::Tensor& self, const std::optional<c10::Scalar>& p,
                               at::IntArrayRef dim, bool keepdim, c10::ScalarType dtype,
                               at::Tensor& out) {
  OpScope scope(self, out);
  return write_out_exact(out, call_runtime([&] {
                     return vector_norm(self, p.value_or(2.0), dim, keepdim, dtype, "norm");
                   }));
}

// -- all / any -------------------------------------------------------------------

tessera::Tensor logical_reduce(bool is_all, const at::Tensor& self, const tessera::Shape& dims,
                               bool keepdim) {
  const tessera::Tensor t = to_runtime(self, is_all ? "all" : "any");
  return is_all ? tessera::all(t, dims, keepdim) : tessera::any(t, dims, keepdim);
}

// all/any write bool results, or uint8 ones into a uint8 out, as aten.
at::Tensor& write_logical_out(at::Tensor& out, const tessera::Tensor& result, bool is_all) {
  TORCH_CHECK(out.scalar_type() == at::kBool || out.scalar_type() == at::kByte,
              is_all ? "all" : "any", " only supports bool tensor for result, got: ",
              out.scalar_type());
  return write_out(out, result);
}

template <bool kAll>
at::Tensor logical_all_dims(const at::Tensor& self) {
  OpScope scope(self);
  return fresh([&] { return logical_reduce(kAll, self, {}, false); });
}

template <bool kAll>
at::Tensor logical_dim(const at::Tensor& self, int64_t dim, bool keepdim) {
  OpScope scope(self);
  return fresh([&] { return logical_reduce(kAll, self, {dim}, keepdim); });
}

template <bool kAll>
at::Tensor logical_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  OpScope scope(self);
  return fresh([&] { return logical_reduce(kAll, self, to_dims(dim), keepdim); });
}

template <bool kAll>
at::Tensor& logical_all_dims_out(const at::Tensor& self, at::Tensor& out) {
  OpScope scope(self, out);
  return write_logical_out(
      out, call_runtime([&] { return logical_reduce(kAll, self, {}, false); }), kAll);
}

template <bool kAll>
at::Tensor& logical_dim_out(const at::Tensor& self, int64_t dim, bool keepdim, at::Tensor& out) {
  OpScope scope(self, out);
  return write_logical_out(
      out, call_runtime([&] { return logical_reduce(kAll, self, {dim}, keepdim); }), kAll);
}

template <bool kAll>
at::Tensor& logical_dims_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                             at::Tensor& out) {
  OpScope scope(self, out);
  return write_logical_out(out, call_runtime([&] {
                             return logical_reduce(kAll, self, to_dims(dim), keepdim);
                           }),
                           kAll);
}

// -- logsumexp / cumsum / cumprod ---------------------------------------------------

// aten's logsumexp reads an empty dim list as every dim; the runtime
// insists on a non-empty list, so spell every dim out.
tessera::Tensor logsumexp_of(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  const tessera::Tensor t = to_runtime(self, "logsumexp");
  const tessera::Shape dims = dim.empty() ? all_dims(t.dim()) : to_dims(dim);
  return tessera::logsumexp(t, dims, keepdim);
}

at::Tensor logsumexp(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  OpScope scope(self);
  return fresh([&] { return logsumexp_of(self, dim, keepdim); });
}

at::Tensor& logsumexp_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim,
                          at::Tensor& out) {
  OpScope scope(self, out);
  return write_out(out, call_runtime([&] { return logsumexp_of(self, dim, keepdim); }));
}

at::Tensor cumsum(const at::Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  OpScope scope(self);
  return fresh([&] {
    return tessera::cumsum(to_runtime(self, "cumsum"), dim, to_dtype(dtype, "cumsum"));
  });
}

at::Tensor cumprod(const at::Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype) {
  OpScope scope(self);
  return fresh([&] {
    return tessera::cumprod(to_runtime(self, "cumprod"), dim, to_dtype(dtype, "cumprod"));
  });
}

// cumsum_(dtype) and cumsum(out=) reach these; like sum, out's dtype is
// the accumulation dtype when none is given.
at::Tensor& cumsum_out(const at::Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype,
                       at::Tensor& out) {
  OpScope scope(self, out);
  return write_out(out, call_runtime([&] {
                     return tessera::cumsum(to_runtime(self, "cumsum"), dim,
                                            dtype_or_out(dtype, out, "cumsum"));
                   }));
}

at::Tensor& cumprod_out(const at::Tensor& self, int64_t dim, std::optional<c10::ScalarType> dtype,
                        at::Tensor& out) {
  OpScope scope(self, out);
  return write_out(out, call_runtime([&] {
                     return tessera::cumprod(to_runtime(self, "cumprod"), dim,
                                             dtype_or_out(dtype, out, "cumprod"));
                   }));
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("sum", TORCH_FN(sum_all));
  m.impl("sum.dim_IntList", TORCH_FN(sum_dim));
  m.impl("nansum", TORCH_FN(nansum));
  m.impl("nansum.out", TORCH_FN(nansum_out));
  m.impl("equal", TORCH_FN(equal));
  m.impl("sum.IntList_out", TORCH_FN(sum_dim_out));
  m.impl("sum.out", TORCH_FN(sum_all_out));
  m.impl("mean", TORCH_FN(mean_all));
  m.impl("mean.dim", TORCH_FN(mean_dim));
  m.impl("mean.out", TORCH_FN(mean_dim_out));
  m.impl("mean.dtype_out", TORCH_FN(mean_all_out));
  m.impl("prod", TORCH_FN(prod_all));
  m.impl("prod.dim_int", TORCH_FN(prod_dim));
  m.impl("prod.int_out", TORCH_FN(prod_dim_out));
  m.impl("prod.out", TORCH_FN(prod_all_out));

  m.impl("max", TORCH_FN(max_all));
  m.impl("max.unary_out", TORCH_FN(max_all_out));
  m.impl("max.dim", TORCH_FN(max_dim));
  m.impl("max.dim_max", TORCH_FN(max_dim_out));
  m.impl("min", TORCH_FN(min_all));
  m.impl("min.unary_out", TORCH_FN(min_all_out));
  m.impl("min.dim", TORCH_FN(min_dim));
  m.impl("min.dim_min", TORCH_FN(min_dim_out));
  m.impl("argmax", TORCH_FN(argmax));
  m.impl("argmax.out", TORCH_FN(argmax_out));
  m.impl("argmin", TORCH_FN(argmin));
  m.impl("argmin.out", TORCH_FN(argmin_out));
  m.impl("amax", TORCH_FN(amax));
  m.impl("amax.out", TORCH_FN(amax_out));
  m.impl("amin", TORCH_FN(amin));
  m.impl("amin.out", TORCH_FN(amin_out));
  m.impl("aminmax", TORCH_FN(aminmax));
  m.impl("aminmax.out", TORCH_FN(aminmax_out));

  m.impl("var.correction", TORCH_FN(var));
  m.impl("var.correction_out", TORCH_FN(var_out));
  m.impl("std.correction", TORCH_FN(std_));
  m.impl("std.correction_out", TORCH_FN(std_out));
  m.impl("var_mean.correction", TORCH_FN(var_mean));
  m.impl("std_mean.correction", TORCH_FN(std_mean));

  m.impl("linalg_vector_norm", TORCH_FN(linalg_vector_norm));
  m.impl("linalg_vector_norm.out", TORCH_FN(linalg_vector_norm_out));
  m.impl("norm.ScalarOpt_dim", TORCH_FN(norm_dim));
  m.impl("norm.ScalarOpt_dim_dtype", TORCH_FN(norm_dim_dtype));
  m.impl("norm.out", TORCH_FN(norm_dim_out));
  m.impl("norm.dtype_out", TORCH_FN(norm_dim_dtype_out));

  m.impl("all", TORCH_FN(logical_all_dims<true>));
  m.impl("all.dim", TORCH_FN(logical_dim<true>));
  m.impl("all.dims", TORCH_FN(logical_dims<true>));
  m.impl("all.all_out", TORCH_FN(logical_all_dims_out<true>));
  m.impl("all.out", TORCH_FN(logical_dim_out<true>));
  m.impl("all.dims_out", TORCH_FN(logical_dims_out<true>));
  m.impl("any", TORCH_FN(logical_all_dims<false>));
  m.impl("any.dim", TORCH_FN(logical_dim<false>));
  m.impl("any.dims", TORCH_FN(logical_dims<false>));
  m.impl("any.all_out", TORCH_FN(logical_all_dims_out<false>));
  m.impl("any.out", TORCH_FN(logical_dim_out<false>));
  m.impl("any.dims_out", TORCH_FN(logical_dims_out<false>));

  m.impl("logsumexp", TORCH_FN(logsumexp));
  m.impl("logsumexp.out", TORCH_FN(logsumexp_out));
  m.impl("cumsum", TORCH_FN(cumsum));
  m.impl("cumsum.out", TORCH_FN(cumsum_out));
  m.impl("cumprod", TORCH_FN(cumprod));
  m.impl("cumprod.out", TORCH_FN(cumprod_out));
}

}  // namespace
}  // namespace torch_tessera
