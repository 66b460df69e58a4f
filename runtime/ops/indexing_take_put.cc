// take and put: self read or written as its row-major flattening at int64
// indices (negative ones counting from the end), as torch.take and
// Tensor.put_. They are index_select and index_put_ on a flat view of self
// (on a contiguous copy, written back, where self has no flat view), so
// put's duplicates accumulate in index order or the last write wins, as
// on PyTorch's CPU.
#include "runtime/core/error.h"
#include "runtime/ops/indexing_checks.h"
#include "runtime/ops/memory_overlap.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace tessera {
namespace {

// index flattened, checked against self's element count and wrapped into
// [0, numel).
Tensor flat_positions(const char* op, const Tensor& self, const Tensor& index) {
  TESSERA_CHECK(self.numel() > 0, IndexError, op, ": cannot index into an empty tensor ",
                describe(self), " (index ", describe(index), ")");
  const Tensor flat = index.reshape({-1});
  indexing::check_index_bounds(op, flat, self.numel(), 0, /*allow_negative=*/true);
  return remainder(flat, Scalar(self.numel()));
}

void check_index(const char* op, const Tensor& self, const Tensor& index) {
  TESSERA_CHECK(self.defined(), ValueError, op, ": undefined tensor");
  TESSERA_CHECK(index.defined(), ValueError, op, ": undefined index tensor");
  indexing::check_same_device(op, index, self.device(), "index");
  TESSERA_CHECK(index.dtype() == DType::kI64, TypeError, op, ": expected an int64 index, got ",
                describe(index));
}

}  // namespace

Tensor take(const Tensor& self, const Tensor& index) {
  const char* op = "take";
  check_index(op, self, index);
  if (index.numel() == 0) return empty(index.sizes(), TensorOptions(self.dtype(), self.device()));
  return index_select(self.reshape({-1}), 0, flat_positions(op, self, index)).view(index.sizes());
}

Tensor& take_out(Tensor& out, const Tensor& self, const Tensor& index) {
  return write_out("take", out, take(self, index));
}

Tensor& put_(Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  const char* op = "put_";
  check_index(op, self, index);
  TESSERA_CHECK(source.defined(), ValueError, op, ": undefined source tensor");
  indexing::check_same_device(op, source, self.device(), "source");
  TESSERA_CHECK(source.dtype() == self.dtype(), TypeError, op, ": self ", describe(self),
                " and source ", describe(source), " must have the same dtype");
  TESSERA_CHECK(source.numel() == index.numel(), ValueError, op,
                ": source and index must have the same number of elements, got source ",
                describe(source), " and index ", describe(index));
  check_no_internal_overlap(op, self);
  if (index.numel() == 0) return self;
  const Tensor positions = flat_positions(op, self, index);
  const Tensor values = source.reshape({-1});
  if (self.is_contiguous()) {
    Tensor flat = self.view({-1});
    index_put_(flat, {positions}, values, accumulate);
    return self;
  }
  Tensor flat = self.contiguous().view({-1});
  index_put_(flat, {positions}, values, accumulate);
  self.copy_(flat.view(self.sizes()));
  return self;
}

Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  TESSERA_CHECK(self.defined(), ValueError, "put: undefined tensor");
  Tensor out = self.clone();
  return put_(out, index, source, accumulate);
}

}  // namespace tessera
