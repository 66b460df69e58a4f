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

namespace {

Tensor& scan_in_place(kernels::ScanOp op, const char* name, Tensor& self, int64_t dim,
                      std::optional<DType> dtype) {
  TESSERA_CHECK(self.defined(), ValueError, name, ": undefined tensor");
  TESSERA_CHECK(!dtype.has_value() || *dtype == self.dtype(), TypeError, name,
                ": dtype ", dtype_name(*dtype), " differs from self's ", describe(self),
                " (an in-place scan keeps self's dtype)");
  // The scan reads values it has already overwritten if done in place, so
  // it runs into a new tensor that is then copied back.
  return self.copy_(scan(op, name, self, dim, self.dtype()));
}

}  // namespace

Tensor& cumsum_(Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan_in_place(kernels::ScanOp::kSum, "cumsum_", self, dim, dtype);
}
Tensor& cumprod_(Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan_in_place(kernels::ScanOp::kProd, "cumprod_", self, dim, dtype);
}

}  // namespace tessera
