// eye, linspace, tril/triu: creation ops beyond the first slice.
// eye is zeros plus a fill of the diagonal viewed with stride m + 1, so it
// needs no kernel of its own.
#include <cmath>

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/memory_overlap.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace tessera {

Tensor eye(int64_t n, TensorOptions options) { return eye(n, n, options); }

Tensor eye(int64_t n, int64_t m, TensorOptions options) {
  TESSERA_CHECK(n >= 0, ValueError, "eye: n must be greater or equal to 0, got ", n);
  TESSERA_CHECK(m >= 0, ValueError, "eye: m must be greater or equal to 0, got ", m);
  options.dtype = options.dtype_or(DType::kF32);
  Tensor out = zeros({n, m}, options);
  const int64_t diag = std::min(n, m);
  if (diag > 0) {
    Tensor d = out.as_strided({diag}, {checked_add(m, 1, "eye")}, out.storage_offset());
    d.fill_(1);
  }
  return out;
}

Tensor linspace(Scalar start, Scalar end, int64_t steps, TensorOptions options) {
  TESSERA_CHECK(steps >= 0, ValueError, "linspace: number of steps must be non-negative, got ",
                steps);
  DType dtype = options.dtype_or(DType::kF32);
  TESSERA_CHECK(dtype != DType::kBool, TypeError, "linspace: not implemented for 'bool'");
  // Integer results are computed from the ends converted to integers, as
  // PyTorch does (linspace(-3, 7.5, 11) in int64 steps by exactly 1).
  const bool integral = is_integral(dtype);
  const double s = integral ? static_cast<double>(start.to<int64_t>()) : start.to<double>();
  const double e = integral ? static_cast<double>(end.to<int64_t>()) : end.to<double>();
  Tensor out = empty({steps}, TensorOptions(dtype, options.device));
  if (steps > 0) call_kernel<kernels::Linspace>(out.device(), out, s, e);
  return out;
}

namespace {
void check_matrix(const char* op, const Tensor& self) {
  TESSERA_CHECK(self.defined(), ValueError, op, ": undefined tensor");
  TESSERA_CHECK(self.dim() >= 2, ValueError, op,
                ": input tensor must have at least 2 dimensions, got ", describe(self));
}

Tensor& triangle_out(const char* op, Tensor& out, const Tensor& self, int64_t diagonal,
                     bool upper) {
  check_matrix(op, self);
  check_out(op, out, self.sizes(), self.dtype(), self.device());
  if (out.numel() == 0) return out;
  if (!out.is_same(self)) check_no_partial_overlap(op, out, self);
  if (out.dtype() == self.dtype()) {
    call_kernel<kernels::Triangle>(self.device(), out, self, diagonal, upper);
  } else {
    Tensor tmp = empty_like(self);
    call_kernel<kernels::Triangle>(self.device(), tmp, self, diagonal, upper);
    out.copy_(tmp);
  }
  return out;
}

Tensor triangle(const char* op, const Tensor& self, int64_t diagonal, bool upper) {
  check_matrix(op, self);
  Tensor out = empty_like(self);
  return triangle_out(op, out, self, diagonal, upper);
}
}  // namespace

Tensor tril(const Tensor& self, int64_t diagonal) { return triangle("tril", self, diagonal, false); }
Tensor triu(const Tensor& self, int64_t diagonal) { return triangle("triu", self, diagonal, true); }
Tensor& tril_(Tensor& self, int64_t diagonal) { return triangle_out("tril_", self, self, diagonal, false); }
Tensor& triu_(Tensor& self, int64_t diagonal) { return triangle_out("triu_", self, self, diagonal, true); }
Tensor& tril_out(Tensor& out, const Tensor& self, int64_t diagonal) {
  return triangle_out("tril", out, self, diagonal, false);
}
Tensor& triu_out(Tensor& out, const Tensor& self, int64_t diagonal) {
  return triangle_out("triu", out, self, diagonal, true);
}

}  // namespace tessera
