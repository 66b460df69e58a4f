#include "runtime/ops/indexing_checks.h"

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera::indexing {

std::pair<int64_t, int64_t> index_min_max(const Tensor& index) {
  Tensor bounds = empty({2}, TensorOptions(DType::kI64, index.device()));
  call_kernel<kernels::IndexBounds>(index.device(), bounds, index);
  std::vector<int64_t> v = bounds.to_vector<int64_t>();
  return {v[0], v[1]};
}

void check_index_bounds(const char* op, const Tensor& index, int64_t size, int64_t dim,
                        bool allow_negative) {
  if (index.numel() == 0) return;
  auto [lo, hi] = index_min_max(index);
  const int64_t min_ok = allow_negative ? -size : 0;
  int64_t bad = lo < min_ok ? lo : hi;
  TESSERA_CHECK(lo >= min_ok && hi < size, IndexError, op, ": index ", bad,
                " is out of bounds for dimension ", dim, " with size ", size);
}

void check_same_device(const char* op, const Tensor& t, Device device, const char* what) {
  TESSERA_CHECK(t.device() == device, DeviceError, op, ": expected ", what, " on ",
                device.to_string(), ", got ", describe(t));
}

void check_int64_index(const char* op, const Tensor& index) {
  TESSERA_CHECK(index.defined(), ValueError, op, ": undefined index tensor");
  TESSERA_CHECK(index.dtype() == DType::kI64, TypeError, op,
                ": Expected dtype int64 for index, got ", describe(index));
}

void check_index_fits(const char* op, const Tensor& index, const Tensor& other, int64_t dim,
                      const char* other_name) {
  TESSERA_CHECK(index.dim() == other.dim(), ValueError, op,
                ": Index tensor must have the same number of dimensions as ", other_name,
                " tensor (index ", describe(index), ", ", other_name, " ", describe(other), ")");
  for (int64_t d = 0; d < index.dim(); ++d) {
    if (d == dim) continue;
    TESSERA_CHECK(index.sizes()[d] <= other.sizes()[d], ValueError, op,
                  ": Size does not match at dimension ", d, " expected index ",
                  shape_to_string(index.sizes()), " to be no larger than ", other_name, " ",
                  shape_to_string(other.sizes()), " apart from dimension ", dim);
  }
}

void check_index_vector(const char* op, const Tensor& index, Device device) {
  TESSERA_CHECK(index.defined(), ValueError, op, ": undefined index tensor");
  check_same_device(op, index, device, "index");
  TESSERA_CHECK(index.dtype() == DType::kI64 || index.dtype() == DType::kI32, TypeError, op,
                ": Expected dtype int32/int64 for index, got ", describe(index));
  TESSERA_CHECK(index.dim() <= 1, IndexError, op, ": Index is supposed to be a vector, got ",
                describe(index));
}

}  // namespace tessera::indexing
