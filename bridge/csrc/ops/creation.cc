// Creation ops that fill a tensor with a pattern: arange, linspace, eye,
// tril and triu. aten's functional arange/linspace/eye are
// CompositeExplicitAutograd wrappers that allocate on tessera and call the
// out= variants registered here; tril/triu are structured ops, so their
// functional and in-place variants are registered too, bypassing the
// wrapper that would call tril.out.
//
// randint is not here: aten builds it from random_.from, which belongs with
// the other random kernels (uniform_, normal_, bernoulli_...).
#include <torch/library.h>

#include <cmath>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/device_list.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

tessera::TensorOptions options_like(const at::Tensor& out, const char* op) {
  return tessera::TensorOptions(to_runtime_dtype(out.scalar_type(), op),
                                runtime_device(out.device()));
}

// An integral arange as aten computes it: the values are start + i * step
// with start and step converted to integers; the length comes from the
// integer bounds for int64 and from the bounds as given (doubles) for the
// narrower types (arange(0.5, 4, 1.5, dtype=int32) is [0, 1, 2]).
tessera::Tensor integral_arange(const c10::Scalar& start, const c10::Scalar& end,
                                const c10::Scalar& step, const tessera::TensorOptions& options) {
  if (options.dtype == tessera::DType::kI64) {
    return tessera::arange(start.toLong(), end.toLong(), step.toLong(), options);
  }
  const double s = start.toDouble();
  const double e = end.toDouble();
  const double st = step.toDouble();
  TORCH_CHECK_VALUE(std::isfinite(s) && std::isfinite(e), "arange: unsupported range: ", s,
                    " -> ", e);
  TORCH_CHECK_VALUE(st != 0, "arange: step must be nonzero");
  TORCH_CHECK_VALUE((st > 0 && e >= s) || (st < 0 && e <= s), "arange: upper bound (", e,
                    ") and lower bound (", s, ") inconsistent with step sign (", st, ")");
  const auto length = static_cast<int64_t>(std::ceil((e - s) / st));
  const tessera::TensorOptions i64(tessera::DType::kI64, options.device);
  return call_runtime([&] {
    const tessera::Tensor positions = tessera::arange(0, length, 1, i64);
    return tessera::add(tessera::mul(positions, step.toLong()), start.toLong())
        .to(*options.dtype);
  });
}

at::Tensor& arange_out(const c10::Scalar& start, const c10::Scalar& end, const c10::Scalar& step,
                       at::Tensor& out) {
  const char* op = "arange";
  const OpScope scope(out);
  const tessera::TensorOptions options = options_like(out, op);
  tessera::Tensor result;
  if (c10::isIntegralType(out.scalar_type(), /*includeBool=*/false)) {
    result = call_runtime([&] { return integral_arange(start, end, step, options); });
  } else {
    result = call_runtime([&] {
      return tessera::arange(to_runtime_scalar(start, op), to_runtime_scalar(end, op),
                             to_runtime_scalar(step, op), options);
    });
  }
  return write_out(out, result);
}

at::Tensor& linspace_out(const c10::Scalar& start, const c10::Scalar& end, int64_t steps,
                         at::Tensor& out) {
  const char* op = "linspace";
  const OpScope scope(out);
  tessera::Tensor result = call_runtime([&] {
    return tessera::linspace(to_runtime_scalar(start, op), to_runtime_scalar(end, op), steps,
                             options_like(out, op));
  });
  return write_out(out, result);
}

at::Tensor& eye_m_out(int64_t n, int64_t m, at::Tensor& out) {
  const OpScope scope(out);
  tessera::Tensor result =
      call_runtime([&] { return tessera::eye(n, m, options_like(out, "eye")); });
  return write_out(out, result);
}

at::Tensor& eye_out(int64_t n, at::Tensor& out) { return eye_m_out(n, n, out); }

template <bool kUpper>
at::Tensor triangle(const at::Tensor& self, int64_t diagonal) {
  const OpScope scope(self);
  const char* op = kUpper ? "triu" : "tril";
  const tessera::Tensor src = to_runtime(self, op);
  return to_torch(call_runtime([&] {
    return kUpper ? tessera::triu(src, diagonal) : tessera::tril(src, diagonal);
  }));
}

template <bool kUpper>
at::Tensor& triangle_(at::Tensor& self, int64_t diagonal) {
  const OpScope scope(self);
  tessera::Tensor dst = to_runtime(self, kUpper ? "triu_" : "tril_");
  call_runtime([&] { kUpper ? tessera::triu_(dst, diagonal) : tessera::tril_(dst, diagonal); });
  return self;
}

template <bool kUpper>
at::Tensor& triangle_out(const at::Tensor& self, int64_t diagonal, at::Tensor& out) {
  const OpScope scope(self, out);
  const char* op = kUpper ? "triu" : "tril";
  resize_output(out, self.sizes());
  const tessera::Tensor src = to_runtime(self, op);
  tessera::Tensor dst = to_runtime(out, op);
  call_runtime([&] {
    kUpper ? tessera::triu_out(dst, src, diagonal) : tessera::tril_out(dst, src, diagonal);
  });
  return out;
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("arange.start_out", TORCH_FN(arange_out));
  m.impl("linspace.out", TORCH_FN(linspace_out));
  m.impl("eye.out", TORCH_FN(eye_out));
  m.impl("eye.m_out", TORCH_FN(eye_m_out));
  m.impl("tril", TORCH_FN(triangle<false>));
  m.impl("triu", TORCH_FN(triangle<true>));
  m.impl("tril_", TORCH_FN(triangle_<false>));
  m.impl("triu_", TORCH_FN(triangle_<true>));
  m.impl("tril.out", TORCH_FN(triangle_out<false>));
  m.impl("triu.out", TORCH_FN(triangle_out<true>));
}

}  // namespace
}  // namespace torch_tessera
