// prod, all, any, norm, logsumexp, var, std, and the out variants of sum
// and mean: the reductions that have an identity (or a defined empty value).
#include <cmath>
#include <optional>

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"
#include "runtime/ops/reduction_common.h"

namespace tessera {

namespace {

using kernels::ReduceExtOp;

// Runs ReduceExt with a keepdim output of out_dtype and drops the dims.
Tensor reduce_ext(ReduceExtOp op, const Tensor& in, const Shape& rdims, bool keepdim,
                  DType out_dtype) {
  Tensor out = empty(reduction::keepdim_sizes(in, rdims), TensorOptions(out_dtype, in.device()));
  if (out.numel() > 0) call_kernel<kernels::ReduceExt>(in.device(), op, out, in, rdims);
  return reduction::drop_dims(out, in, rdims, keepdim);
}

void check_defined(const char* op, const Tensor& t) {
  TESSERA_CHECK(t.defined(), ValueError, op, ": undefined tensor");
}

Tensor prod_impl(const Tensor& t, const Shape& rdims, bool keepdim, std::optional<DType> dtype) {
  const DType out = dtype.value_or(is_floating(t.dtype()) ? t.dtype() : DType::kI64);
  // Integers multiply in int64 and need no conversion; anything else
  // converts first so that the product is taken in the requested type.
  Tensor in = t;
  if (t.dtype() != out && (is_floating(out) || is_floating(t.dtype()) || out == DType::kBool)) {
    in = t.to(out);
  }
  return reduce_ext(ReduceExtOp::kProd, in, rdims, keepdim, out);
}

Tensor all_any(ReduceExtOp op, const char* name, const Tensor& t, const Shape& dims,
               bool keepdim) {
  check_defined(name, t);
  const Shape rdims = reduction::normalize_dims(name, t, dims);
  return reduce_ext(op, t, rdims, keepdim, t.dtype() == DType::kU8 ? DType::kU8 : DType::kBool);
}

Tensor var_std(bool take_sqrt, const char* name, const Tensor& t, const Shape& dims,
               double correction, bool keepdim) {
  check_defined(name, t);
  TESSERA_CHECK(is_floating(t.dtype()), TypeError, name,
                ": std and var only support floating point and complex dtypes, got ", describe(t));
  const Shape rdims = reduction::normalize_dims(name, t, dims);
  Tensor out = empty(reduction::keepdim_sizes(t, rdims), TensorOptions(t.dtype(), t.device()));
  if (out.numel() > 0) {
    call_kernel<kernels::VarStd>(t.device(), take_sqrt, out, t, rdims, correction);
  }
  return reduction::drop_dims(out, t, rdims, keepdim);
}

}  // namespace

Tensor prod(const Tensor& t, std::optional<DType> dtype) {
  check_defined("prod", t);
  return prod_impl(t, reduction::normalize_dims("prod", t, {}), false, dtype);
}

Tensor prod(const Tensor& t, int64_t dim, bool keepdim, std::optional<DType> dtype) {
  check_defined("prod", t);
  return prod_impl(t, reduction::normalize_dims("prod", t, {dim}), keepdim, dtype);
}

Tensor& prod_out(Tensor& out, const Tensor& t, int64_t dim, bool keepdim,
                 std::optional<DType> dtype) {
  return write_out("prod", out, prod(t, dim, keepdim, dtype));
}

Tensor& sum_out(Tensor& out, const Tensor& t, const Shape& dims, bool keepdim,
                std::optional<DType> dtype) {
  return write_out("sum", out, sum(t, dims, keepdim, dtype));
}

Tensor& mean_out(Tensor& out, const Tensor& t, const Shape& dims, bool keepdim,
                 std::optional<DType> dtype) {
  return write_out("mean", out, mean(t, dims, keepdim, dtype));
}

Tensor all(const Tensor& t, const Shape& dims, bool keepdim) {
  return all_any(ReduceExtOp::kAll, "all", t, dims, keepdim);
}
Tensor any(const Tensor& t, const Shape& dims, bool keepdim) {
  return all_any(ReduceExtOp::kAny, "any", t, dims, keepdim);
}
Tensor& all_out(Tensor& out, const Tensor& t, const Shape& dims, bool keepdim) {
  return write_out("all", out, all(t, dims, keepdim));
}
Tensor& any_out(Tensor& out, const Tensor& t, const Shape& dims, bool keepdim) {
  return write_out("any", out, any(t, dims, keepdim));
}

Tensor var(const Tensor& t, const Shape& dims, double correction, bool keepdim) {
  return var_std(false, "var", t, dims, correction, keepdim);
}
Tensor std(const Tensor& t, const Shape& dims, double correction, bool keepdim) {
  return var_std(true, "std", t, dims, correction, keepdim);
}
Tensor& var_out(Tensor& out, const Tensor& t, const Shape& dims, double correction,
                bool keepdim) {
  return write_out("var", out, var(t, dims, correction, keepdim));
}
Tensor& std_out(Tensor& out, const Tensor& t, const Shape& dims, double correction,
                bool keepdim) {
  return write_out("std", out, tessera::std(t, dims, correction, keepdim));
}

namespace {

// The inf and -inf norms are a max and a min: no value over zero elements.
void check_extremum_norm(const Tensor& t, double p, const Shape& dims, const Shape& rdims) {
  for (int64_t d : rdims) {
    TESSERA_CHECK(t.sizes()[d] != 0, IndexError, "norm: cannot compute the ", p, " norm on dim ",
                  d, " because this dimension is empty and the operation does not have an "
                  "identity, got ", describe(t));
  }
  TESSERA_CHECK(!(dims.empty() && t.numel() == 0), IndexError, "norm: cannot compute the ", p,
                " norm of an empty tensor ", describe(t));
}

}  // namespace

Tensor norm(const Tensor& t, double p, const Shape& dims, bool keepdim) {
  check_defined("norm", t);
  TESSERA_CHECK(is_floating(t.dtype()), TypeError,
                "norm: Expected a floating point tensor as input, got ", describe(t));
  TESSERA_CHECK(!std::isnan(p), ValueError, "norm: p must not be NaN, for ", describe(t));
  const Shape rdims = reduction::normalize_dims("norm", t, dims);
  if (std::isinf(p)) check_extremum_norm(t, p, dims, rdims);
  // 1, 2 and inf have fused kernels; other orders are composites.
  if (p == 1.0) return reduce_ext(ReduceExtOp::kNorm1, t, rdims, keepdim, t.dtype());
  if (p == 2.0) return reduce_ext(ReduceExtOp::kNorm2, t, rdims, keepdim, t.dtype());
  if (std::isinf(p) && p > 0) return reduce_ext(ReduceExtOp::kNormInf, t, rdims, keepdim, t.dtype());
  // Half-precision inputs are computed in float32, as PyTorch does.
  const bool half = is_reduced_float(t.dtype());
  const Tensor a = half ? abs(t).to(DType::kF32) : abs(t);
  Tensor r;
  if (std::isinf(p)) {
    r = amin(a, rdims, keepdim);
  } else if (p == 0.0) {
    r = sum(ne(a, 0).to(a.dtype()), rdims, keepdim);
  } else {
    r = pow(sum(pow(a, p), rdims, keepdim), 1.0 / p);
  }
  return r.to(t.dtype());
}

Tensor& norm_out(Tensor& out, const Tensor& t, double p, const Shape& dims, bool keepdim) {
  return write_out("norm", out, norm(t, p, dims, keepdim));
}

Tensor logsumexp(const Tensor& t, const Shape& dims, bool keepdim) {
  check_defined("logsumexp", t);
  // Integers and bool compute in the default float dtype, as PyTorch.
  const Tensor in = is_floating(t.dtype()) ? t : t.to(DType::kF32);
  const Shape rdims = reduction::normalize_dims("logsumexp", in, dims);
  return reduce_ext(ReduceExtOp::kLogSumExp, in, rdims, keepdim, in.dtype());
}

Tensor& logsumexp_out(Tensor& out, const Tensor& t, const Shape& dims, bool keepdim) {
  return write_out("logsumexp", out, logsumexp(t, dims, keepdim));
}

}  // namespace tessera
