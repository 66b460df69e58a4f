// index_add, index_copy and index_fill: whole slices of self along one dim
// written at a vector of indices. Each is an index_put_ on a view of self
// with that dim moved first, so every device with the IndexPut kernel runs
// them, in index order: duplicate indices accumulate in order for
// index_add, and the last write wins for index_copy, as on PyTorch's CPU.
#include <algorithm>

#include "runtime/core/error.h"
#include "runtime/ops/indexing_checks.h"
#include "runtime/ops/indexing_ops.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace tessera {
namespace {

// self (0-d as 1-D) with dim first, and the index as an int64 vector on
// self's device, after PyTorch's checks of self and index.
struct SlicesAlongDim {
  Tensor target;  // a view of self
  Tensor index;
  int64_t dim = 0;
};

SlicesAlongDim slices_along_dim(const char* op, const Tensor& self, int64_t dim,
                                const Tensor& index, bool allow_negative) {
  TESSERA_CHECK(self.defined(), ValueError, op, ": undefined tensor");
  indexing::check_index_vector(op, index, self.device());
  const Tensor s = indexing::as_at_least_1d(self);
  SlicesAlongDim slices;
  slices.dim = wrap_dim(dim, s.dim(), op);
  slices.target = s.transpose(0, slices.dim);
  slices.index = index.reshape({-1}).to(DType::kI64);
  if (slices.index.numel() > 0) {
    indexing::check_index_bounds(op, slices.index, s.size(slices.dim), slices.dim,
                                 allow_negative);
  }
  return slices;
}

// source with dim first, after checking that it holds one slice of self
// per index: self's dtype and rank, self's sizes but along dim.
Tensor source_slices(const char* op, const Tensor& self, const SlicesAlongDim& slices,
                     const Tensor& source) {
  TESSERA_CHECK(source.defined(), ValueError, op, ": undefined source tensor");
  indexing::check_same_device(op, source, self.device(), "source");
  TESSERA_CHECK(source.dtype() == self.dtype(), TypeError, op, ": self (", describe(self),
                ") and source (", describe(source), ") must have the same scalar type");
  TESSERA_CHECK(source.dim() == self.dim(), ValueError, op, ": source ", describe(source),
                " must have as many dims as self ", describe(self));
  const Tensor src = indexing::as_at_least_1d(source);
  const int64_t d = slices.dim;
  TESSERA_CHECK(src.size(d) == slices.index.numel(), ValueError, op, ": Number of indices (",
                slices.index.numel(), ") should be equal to source.size(dim) (", src.size(d),
                "), for dim ", d);
  for (int64_t i = 0; i < src.dim(); ++i) {
    TESSERA_CHECK(i == d || src.size(i) == slices.target.size(i == 0 ? d : i), ValueError, op,
                  ": source ", describe(source), " must have self's sizes ",
                  shape_to_string(self.sizes()), " except along dim ", d);
  }
  return src.transpose(0, d);
}


}  // namespace

Tensor& index_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                   Scalar alpha) {
  const char* op = "index_add_";
  SlicesAlongDim slices = slices_along_dim(op, self, dim, index, /*allow_negative=*/false);
  Tensor values = source_slices(op, self, slices, source);
  if (slices.index.numel() == 0) return self;
  const bool unit_alpha = alpha.is_floating() ? alpha.to<double>() == 1.0
                          : alpha.is_bool()   ? alpha.to<bool>()
                                              : alpha.to<int64_t>() == 1;
  if (!unit_alpha) {
    // Integer tensors scale by alpha's integer part, as PyTorch's do.
    const Scalar scale = is_integral(self.dtype()) && self.dtype() != DType::kBool
                             ? Scalar(alpha.to<int64_t>())
                             : alpha;
    values = mul(values, scale).to(self.dtype());
  }
  if (is_reduced_float(self.dtype()) && unit_alpha && self.dim() > 1) {
    // PyTorch's CPU kernel sums float16/bfloat16 slices of a self with more
    // than one dim in float and rounds once (with alpha != 1 or a 1-D self
    // it rounds every step, as index_put_ does).
    Tensor wide = slices.target.to(DType::kF32);
    index_put_(wide, {slices.index}, values.to(DType::kF32), /*accumulate=*/true);
    slices.target.copy_(wide);
    return self;
  }
  index_put_(slices.target, {slices.index}, values, /*accumulate=*/true);
  return self;
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 Scalar alpha) {
  TESSERA_CHECK(self.defined(), ValueError, "index_add: undefined tensor");
  Tensor out = self.clone();
  return index_add_(out, dim, index, source, alpha);
}

Tensor& index_add_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                      const Tensor& source, Scalar alpha) {
  return write_out("index_add", out, index_add(self, dim, index, source, alpha));
}

Tensor& index_copy_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  const char* op = "index_copy_";
  SlicesAlongDim slices = slices_along_dim(op, self, dim, index, /*allow_negative=*/false);
  const Tensor values = source_slices(op, self, slices, source);
  if (slices.index.numel() > 0) index_put_(slices.target, {slices.index}, values);
  return self;
}

Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  TESSERA_CHECK(self.defined(), ValueError, "index_copy: undefined tensor");
  Tensor out = self.clone();
  return index_copy_(out, dim, index, source);
}

Tensor& index_copy_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                       const Tensor& source) {
  return write_out("index_copy", out, index_copy(self, dim, index, source));
}

Tensor& index_fill_(Tensor& self, int64_t dim, const Tensor& index, Scalar value) {
  const char* op = "index_fill_";
  SlicesAlongDim slices = slices_along_dim(op, self, dim, index, /*allow_negative=*/true);
  if (slices.index.numel() == 0) return self;
  const Tensor fill = full({}, value, TensorOptions(self.dtype(), self.device()));
  index_put_(slices.target, {slices.index}, fill);
  return self;
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, Scalar value) {
  TESSERA_CHECK(self.defined(), ValueError, "index_fill: undefined tensor");
  Tensor out = self.clone();
  return index_fill_(out, dim, index, value);
}

Tensor& index_fill_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                       Scalar value) {
  return write_out("index_fill", out, index_fill(self, dim, index, value));
}

}  // namespace tessera
