// nansum (sum with NaN counted as 0; torch.nanmean is nansum over the
// count of non-NaN values) and equal (same sizes and every element equal),
// composed from the pointwise ops and reductions every device has.
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace tessera {

Tensor nansum(const Tensor& t, const Shape& dims, bool keepdim, std::optional<DType> dtype) {
  TESSERA_CHECK(t.defined(), ValueError, "nansum: undefined tensor argument");
  if (!is_floating(t.dtype())) return sum(t, dims, keepdim, dtype);  // no NaN to skip
  return sum(where(isnan(t), Scalar(0), t), dims, keepdim, dtype);
}

Tensor& nansum_out(Tensor& out, const Tensor& t, const Shape& dims, bool keepdim,
                   std::optional<DType> dtype) {
  return write_out("nansum", out, nansum(t, dims, keepdim, dtype));
}

bool equal(const Tensor& a, const Tensor& b) {
  TESSERA_CHECK(a.defined() && b.defined(), ValueError, "equal: undefined tensor argument");
  TESSERA_CHECK(a.device() == b.device(), DeviceError,
                "equal: expected both tensors on the same device, got ", describe(a), " and ",
                describe(b));
  if (a.sizes() != b.sizes()) return false;
  if (a.numel() == 0) return true;
  return all(eq(a, b)).item<bool>();
}

}  // namespace tessera
