// index_select, gather, scatter, scatter_add, one_hot: front ends of the
// Gather and Scatter kernels. index_select is a gather whose 1-D index is
// viewed along dim and expanded (stride 0) over the other dims, so it needs
// no kernel of its own; one_hot is a scatter of ones into zeros.
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/indexing_checks.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"
#include "runtime/ops/scatter_operands.h"
#include "runtime/ops/type_promotion.h"

namespace tessera {

namespace {

using indexing::as_at_least_1d;
using indexing::check_index_bounds;
using indexing::check_index_fits;
using indexing::check_int64_index;
using indexing::check_same_device;

Tensor index_select_impl(const Tensor& self, int64_t dim, const Tensor& index) {
  const char* op = "index_select";
  TESSERA_CHECK(self.defined(), ValueError, op, ": undefined tensor");
  TESSERA_CHECK(index.defined(), ValueError, op, ": undefined index tensor");
  check_same_device(op, index, self.device(), "index");
  TESSERA_CHECK(index.dtype() == DType::kI64 || index.dtype() == DType::kI32, TypeError, op,
                ": Expected dtype int32 or int64 for index, got ", describe(index));
  TESSERA_CHECK(index.dim() <= 1, IndexError, op, ": Index is supposed to be a vector, got ",
                describe(index));
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1), op);
  const Tensor src = as_at_least_1d(self);
  check_index_bounds(op, index, src.sizes()[d], d, /*allow_negative=*/false);
  const int64_t n = index.numel();
  Shape out_sizes = src.sizes();
  out_sizes[d] = n;
  Tensor out = empty(out_sizes, TensorOptions(self.dtype(), self.device()));
  if (out.numel() > 0) {
    Shape along(static_cast<size_t>(src.dim()), 1);
    along[d] = n;
    Tensor idx = prepare_operand(index, self.device(), DType::kI64).reshape(along).expand(out_sizes);
    call_kernel<kernels::Gather>(self.device(), out, src, d, idx);
  }
  if (self.dim() == 0) {
    TESSERA_CHECK(n == 1 || n == 0, IndexError, op,
                  ": Index to scalar can have only 1 value, got ", n, " value(s)");
    return n == 1 ? out.reshape({}) : out;
  }
  return out;
}

Tensor& scatter_impl(const char* op, Tensor& self, int64_t dim, const Tensor& index,
                     const Tensor& src, kernels::ScatterReduce reduce) {
  const indexing::ScatterOperands o = indexing::scatter_operands(op, self, dim, index, src);
  indexing::run_scatter(o, reduce, indexing::HalfRounding::kOnce);
  return self;
}

}  // namespace

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  return index_select_impl(self, dim, index);
}

Tensor& index_select_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  return write_out("index_select", out, index_select_impl(self, dim, index));
}

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  const char* op = "gather";
  TESSERA_CHECK(self.defined(), ValueError, op, ": undefined tensor");
  check_int64_index(op, index);
  check_same_device(op, index, self.device(), "index");
  const Tensor src = as_at_least_1d(self);
  const Tensor idx = as_at_least_1d(index);
  const int64_t d = wrap_dim(dim, src.dim(), op);
  check_index_fits(op, idx, src, d, "input");
  check_index_bounds(op, idx, src.sizes()[d], d, /*allow_negative=*/false);
  Tensor out = empty(idx.sizes(), TensorOptions(self.dtype(), self.device()));
  if (out.numel() > 0) call_kernel<kernels::Gather>(self.device(), out, src, d, idx);
  return index.dim() == 0 ? out.reshape({}) : out;
}

Tensor& gather_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index) {
  return write_out("gather", out, gather(self, dim, index));
}

Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_impl("scatter", self, dim, index, src, kernels::ScatterReduce::kNone);
}

Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, Scalar value) {
  return scatter_impl("scatter", self, dim, index,
                      indexing::value_as_src("scatter", self, index, value),
                      kernels::ScatterReduce::kNone);
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = self.clone();
  return scatter_(out, dim, index, src);
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, Scalar value) {
  Tensor out = self.clone();
  return scatter_(out, dim, index, value);
}

Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_impl("scatter_add", self, dim, index, src, kernels::ScatterReduce::kAdd);
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = self.clone();
  return scatter_add_(out, dim, index, src);
}

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  const char* op = "one_hot";
  TESSERA_CHECK(self.defined(), ValueError, op, ": undefined tensor");
  TESSERA_CHECK(self.dtype() == DType::kI64, TypeError, op,
                ": one_hot is only applicable to index tensor of type LongTensor, got ",
                describe(self));
  TESSERA_CHECK(num_classes >= -1, ValueError, op,
                ": num_classes should be positive or -1, got ", num_classes);
  if (self.numel() == 0) {
    TESSERA_CHECK(num_classes != -1, ValueError, op,
                  ": Can not infer total number of classes from empty tensor.");
  } else {
    auto [lo, hi] = indexing::index_min_max(self);
    TESSERA_CHECK(lo >= 0, IndexError, op, ": Class values must be non-negative, got ", lo);
    if (num_classes == -1) num_classes = hi + 1;
    TESSERA_CHECK(hi < num_classes, IndexError, op, ": Class values must be smaller than "
                  "num_classes, got class ", hi, " with num_classes ", num_classes);
  }
  Shape sizes = self.sizes();
  sizes.push_back(num_classes);
  Tensor out = zeros(sizes, TensorOptions(DType::kI64, self.device()));
  if (out.numel() > 0) {
    Tensor idx = self.unsqueeze(-1);
    Tensor ones_v = full({}, 1, TensorOptions(DType::kI64, self.device())).expand(idx.sizes());
    Tensor target = out;
    call_kernel<kernels::Scatter>(self.device(), target, out.dim() - 1, idx, ones_v,
                                  kernels::ScatterReduce::kNone);
  }
  return out;
}

Tensor& scatter_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                    const Tensor& src) {
  return write_out("scatter", out, scatter(self, dim, index, src));
}
Tensor& scatter_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                    Scalar value) {
  return write_out("scatter", out, scatter(self, dim, index, value));
}
Tensor& scatter_add_out(Tensor& out, const Tensor& self, int64_t dim, const Tensor& index,
                        const Tensor& src) {
  return write_out("scatter_add", out, scatter_add(self, dim, index, src));
}

}  // namespace tessera
