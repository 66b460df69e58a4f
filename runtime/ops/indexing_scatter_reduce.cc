// scatter_reduce, scatter with reduce=, and index_reduce: PyTorch's
// scatter reductions over the Scatter kernel's folds (kAdd, kMul, kMax,
// kMin), so every device that folds gets them. What the kernel does not
// do is composed here, as PyTorch's CPU implementation composes it:
// include_self = false first scatters the fold's identity into every
// position index names; "mean" is a sum divided by a count made with a
// second scatter of ones. index_reduce is a scatter_reduce whose 1-D index
// is viewed along dim and expanded (stride 0) over source's other dims,
// except that it rounds float16/bfloat16 after every step where
// scatter_reduce rounds once (PyTorch's CPU kernels differ so).
#include <limits>

#include "runtime/core/error.h"
#include "runtime/ops/indexing_checks.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"
#include "runtime/ops/scatter_operands.h"
#include "runtime/ops/type_promotion.h"

namespace tessera {
namespace {

using kernels::ScatterReduce;

enum class Reduction { kSum, kProd, kMean, kAmax, kAmin };

Reduction parse_reduction(const char* op, std::string_view reduce, bool sum_allowed) {
  if (reduce == "sum" && sum_allowed) return Reduction::kSum;
  if (reduce == "prod") return Reduction::kProd;
  if (reduce == "mean") return Reduction::kMean;
  if (reduce == "amax") return Reduction::kAmax;
  if (reduce == "amin") return Reduction::kAmin;
  throw ValueError(detail::concat(op, ": reduce argument must be one of ",
                                  sum_allowed ? "sum, " : "", "prod, mean, amax or amin, got '",
                                  reduce, "'"));
}

// scatter's older reduce= names.
Reduction parse_scatter_reduce(std::string_view reduce) {
  if (reduce == "add") return Reduction::kSum;
  if (reduce == "multiply") return Reduction::kProd;
  throw ValueError(detail::concat("scatter: reduce argument must be either add or multiply, got '",
                                  reduce, "'"));
}

ScatterReduce fold_of(Reduction r) {
  switch (r) {
    case Reduction::kProd: return ScatterReduce::kMul;
    case Reduction::kAmax: return ScatterReduce::kMax;
    case Reduction::kAmin: return ScatterReduce::kMin;
    default: return ScatterReduce::kAdd;  // sum, and mean's sum
  }
}

// What a position holds before the fold when self is left out: the fold's
// identity in dtype (infinities for floating max/min, the integer range's
// ends otherwise; for bool, false for max and true for min).
Scalar identity_of(Reduction r, DType dtype) {
  if (r == Reduction::kProd) return Scalar(int64_t{1});
  if (r != Reduction::kAmax && r != Reduction::kAmin) return Scalar(int64_t{0});
  const bool max = r == Reduction::kAmax;
  if (dtype == DType::kBool) return Scalar(!max);
  if (is_floating(dtype)) {
    const double inf = std::numeric_limits<double>::infinity();
    return Scalar(max ? -inf : inf);
  }
  return dispatch_dtype(dtype, [&](auto tag) -> Scalar {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      return Scalar(max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max());
    } else {
      return Scalar(int64_t{0});  // not reached: floating and bool return above
    }
  });
}

Tensor& scatter_reduce_impl(const char* op, Tensor& self, int64_t dim, const Tensor& index,
                            const Tensor& src, Reduction r, bool include_self,
                            indexing::HalfRounding rounding) {
  const indexing::ScatterOperands o = indexing::scatter_operands(op, self, dim, index, src);
  TESSERA_CHECK(r != Reduction::kMean || self.dtype() != DType::kBool, TypeError, op,
                ": reduce 'mean' is not defined for bool tensors, got self ", describe(self));
  if (o.empty) return self;
  const TensorOptions options(self.dtype(), self.device());
  if (!include_self) {
    indexing::ScatterOperands fill = o;
    fill.src = full({}, identity_of(r, self.dtype()), options).expand(o.index.sizes());
    indexing::run_scatter(fill, ScatterReduce::kNone, rounding);
  }
  indexing::run_scatter(o, fold_of(r), rounding);
  if (r == Reduction::kMean) {
    indexing::ScatterOperands counting = o;
    counting.self = full(o.self.sizes(), include_self ? 1 : 0, options);
    counting.src = full({}, 1, options).expand(o.index.sizes());
    indexing::run_scatter(counting, ScatterReduce::kAdd, rounding);
    Tensor& count = counting.self;
    masked_fill_(count, eq(count, Scalar(int64_t{0})), Scalar(int64_t{1}));
    Tensor sum = o.self;
    if (is_floating(self.dtype())) {
      div_(sum, count, std::nullopt);
    } else {
      div_(sum, count, "floor");
    }
  }
  return self;
}

}  // namespace

Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        std::string_view reduce, bool include_self) {
  const char* op = "scatter_reduce";
  return scatter_reduce_impl(op, self, dim, index, src, parse_reduction(op, reduce, true),
                             include_self, indexing::HalfRounding::kOnce);
}

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self) {
  TESSERA_CHECK(self.defined(), ValueError, "scatter_reduce: undefined tensor");
  Tensor out = self.clone();
  return scatter_reduce_(out, dim, index, src, reduce, include_self);
}

Tensor& scatter_reduce_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                           const Tensor& src, std::string_view reduce, bool include_self) {
  return write_out("scatter_reduce", out,
                   scatter_reduce(self, dim, index, src, reduce, include_self));
}

Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                 std::string_view reduce) {
  return scatter_reduce_impl("scatter", self, dim, index, src, parse_scatter_reduce(reduce),
                             /*include_self=*/true, indexing::HalfRounding::kOnce);
}

Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, Scalar value,
                 std::string_view reduce) {
  return scatter_reduce_impl("scatter", self, dim, index,
                             indexing::value_as_src("scatter", self, index, value),
                             parse_scatter_reduce(reduce), /*include_self=*/true,
                             indexing::HalfRounding::kOnce);
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               std::string_view reduce) {
  TESSERA_CHECK(self.defined(), ValueError, "scatter: undefined tensor");
  Tensor out = self.clone();
  return scatter_(out, dim, index, src, reduce);
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value,
               std::string_view reduce) {
  TESSERA_CHECK(self.defined(), ValueError, "scatter: undefined tensor");
  Tensor out = self.clone();
  return scatter_(out, dim, index, value, reduce);
}

Tensor& index_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                      std::string_view reduce, bool include_self) {
  const char* op = "index_reduce";
  const Reduction r = parse_reduction(op, reduce, /*sum_allowed=*/false);
  TESSERA_CHECK(self.defined() && source.defined(), ValueError, op, ": undefined tensor");
  indexing::check_index_vector(op, index, self.device());
  TESSERA_CHECK(self.dtype() == source.dtype(), TypeError, op, ": self (", describe(self),
                ") and source (", describe(source), ") must have the same scalar type");
  const Tensor s = indexing::as_at_least_1d(self);
  const Tensor src = indexing::as_at_least_1d(source);
  const int64_t d = wrap_dim(dim, s.dim(), op);
  TESSERA_CHECK(src.dim() == s.dim(), ValueError, op,
                ": source must have as many dimensions as self (self ", describe(self),
                ", source ", describe(source), ")");
  TESSERA_CHECK(index.numel() == src.size(d), ValueError, op, ": Number of indices (",
                index.numel(), ") should be equal to source.size(dim) (", src.size(d),
                "), for dim ", d);
  // source's slices broadcast to self's (size-1 dims), as PyTorch's do.
  Shape sizes = s.sizes();
  sizes[d] = src.size(d);
  for (int64_t i = 0; i < s.dim(); ++i) {
    TESSERA_CHECK(i == d || src.size(i) == sizes[i] || src.size(i) == 1, ValueError, op,
                  ": source slices of shape ", shape_to_string(src.sizes()),
                  " do not match self's of shape ", shape_to_string(s.sizes()),
                  " apart from dim ", d);
  }
  Shape along(static_cast<size_t>(s.dim()), 1);
  along[d] = src.size(d);
  const Tensor idx =
      prepare_operand(index, self.device(), DType::kI64).reshape(along).expand(sizes);
  return scatter_reduce_impl(op, self, d, idx, src.expand(sizes), r, include_self,
                             indexing::HalfRounding::kEveryStep);
}

Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                    std::string_view reduce, bool include_self) {
  TESSERA_CHECK(self.defined(), ValueError, "index_reduce: undefined tensor");
  Tensor out = self.clone();
  return index_reduce_(out, dim, index, source, reduce, include_self);
}

Tensor& index_reduce_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                         const Tensor& source, std::string_view reduce, bool include_self) {
  return write_out("index_reduce", out,
                   index_reduce(self, dim, index, source, reduce, include_self));
}

}  // namespace tessera
