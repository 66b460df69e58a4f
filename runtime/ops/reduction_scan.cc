// cumsum and cumprod: inclusive scans along one dim.
#include <optional>

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace tessera {

namespace {

Tensor scan(kernels::ScanOp op, const char* name, const Tensor& t, int64_t dim,
            std::optional<DType> dtype) {
  TESSERA_CHECK(t.defined(), ValueError, name, ": undefined tensor");
  const int64_t d = wrap_dim(dim, t.dim(), name);
  // Integers and bool promote to int64, as PyTorch, so that scans do not
  // wrap around in the input's narrow type.
  const DType out_dtype = dtype.value_or(is_floating(t.dtype()) ? t.dtype() : DType::kI64);
  const Tensor in = t.dtype() == out_dtype ? t : t.to(out_dtype);
  Tensor out = empty(t.sizes(), TensorOptions(out_dtype, t.device()));
  if (out.numel() == 0) return out;
  if (t.dim() == 0) {
    out.copy_(in);
    return out;
  }
  call_kernel<kernels::Scan>(t.device(), op, out, in, d);
  return out;
}

}  // namespace

Tensor cumsum(const Tensor& t, int64_t dim, std::optional<DType> dtype) {
  return scan(kernels::ScanOp::kSum, "cumsum", t, dim, dtype);
}
Tensor cumprod(const Tensor& t, int64_t dim, std::optional<DType> dtype) {
  return scan(kernels::ScanOp::kProd, "cumprod", t, dim, dtype);
}
Tensor& cumsum_out(Tensor& out, const Tensor& t, int64_t dim, std::optional<DType> dtype) {
  return write_out("cumsum", out, cumsum(t, dim, dtype));
}
Tensor& cumprod_out(Tensor& out, const Tensor& t, int64_t dim, std::optional<DType> dtype) {
  return write_out("cumprod", out, cumprod(t, dim, dtype));
}

}  // namespace tessera
