// sort, argsort, topk: front ends of the Sort kernel, which writes the
// first k entries of the sorted order (k = n for sort).
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace tessera {

std::pair<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  TESSERA_CHECK(self.defined(), ValueError, "sort: undefined tensor");
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1), "sort");
  Tensor values = empty(self.sizes(), TensorOptions(self.dtype(), self.device()));
  Tensor indices = empty(self.sizes(), TensorOptions(DType::kI64, self.device()));
  if (self.numel() > 0) {
    call_kernel<kernels::Sort>(self.device(), values, indices, self, self.dim() == 0 ? 0 : d,
                               descending, stable);
  }
  return {values, indices};
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  return sort(self, dim, descending, stable).second;
}

std::pair<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest,
                               bool sorted) {
  (void)sorted;  // the result is always sorted, which PyTorch allows
  TESSERA_CHECK(self.defined(), ValueError, "topk: undefined tensor");
  TESSERA_CHECK(self.dtype() != DType::kBool, TypeError,
                "topk: topk does not support bool dtypes, got ", describe(self));
  const int64_t d = wrap_dim(dim, std::max<int64_t>(self.dim(), 1), "topk");
  const int64_t n = self.dim() == 0 ? 1 : self.sizes()[d];
  TESSERA_CHECK(k >= 0 && k <= n, IndexError, "topk: selected index k out of range: k = ", k,
                " for dimension ", d, " of size ", n, " (", describe(self), ")");
  Shape sizes = self.sizes();
  if (self.dim() > 0) sizes[d] = k;
  Tensor values = empty(sizes, TensorOptions(self.dtype(), self.device()));
  Tensor indices = empty(sizes, TensorOptions(DType::kI64, self.device()));
  if (values.numel() > 0) {
    call_kernel<kernels::Sort>(self.device(), values, indices, self, self.dim() == 0 ? 0 : d,
                               /*descending=*/largest, /*stable=*/true);
  }
  return {values, indices};
}

namespace {

void write_values_indices(const char* op, Tensor& values, Tensor& indices,
                          const std::pair<Tensor, Tensor>& result) {
  TESSERA_CHECK(!indices.defined() || indices.dtype() == DType::kI64, TypeError, op,
                ": indices must be int64, got ", describe(indices));
  write_out(op, values, result.first);
  write_out(op, indices, result.second);
}

}  // namespace

void sort_out(Tensor& values, Tensor& indices, const Tensor& self, int64_t dim, bool descending,
              bool stable) {
  write_values_indices("sort", values, indices, sort(self, dim, descending, stable));
}

void topk_out(Tensor& values, Tensor& indices, const Tensor& self, int64_t k, int64_t dim,
              bool largest, bool sorted) {
  write_values_indices("topk", values, indices, topk(self, k, dim, largest, sorted));
}

}  // namespace tessera
