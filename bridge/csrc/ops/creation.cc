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

#include "bridge/csrc/device_list.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

tessera::TensorOptions options_like(const at::Tensor& out, const char* op) {
  return tessera::TensorOptions(to_runtime_dtype(out.scalar_type(), op),
                                runtime_device(out.device()));
}

// aten computes an integral arange from its bounds and step converted to
// integers (arange(0.5, 4, 1.5, dtype=int64) is [0, 1, 2, 3]).
tessera::Scalar arange_scalar(const c10::Scalar& s, bool integral, const char* op) {
  if (integral) return tessera::Scalar(s.toLong());
  return to_runtime_scalar(s, op);
}

at::Tensor& arange_out(const c10::Scalar& start, const c10::Scalar& end, const c10::Scalar& step,
                       at::Tensor& out) {
  const char* op = "arange";
  const OpScope scope(out);
  const bool integral = c10::isIntegralType(out.scalar_type(), /*includeBool=*/false);
  tessera::Tensor result = call_runtime([&] {
    return tessera::arange(arange_scalar(start, integral, op), arange_scalar(end, integral, op),
                           arange_scalar(step, integral, op), options_like(out, op));
  });
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
  at::native::resize_output(out, self.sizes());
  const tessera::Tensor src = to_runtime(self, op);
  tessera::Tensor dst = to_runtime(out, op);
  call_runtime([&] {
    kUpper ? tessera::triu_out(dst, src, diagonal) : tessera::tril_out(dst, src, diagonal);
  });
  return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
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
