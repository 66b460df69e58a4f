// Elementwise ops that torch.nn's modules call and the runtime has no
// single kernel for, composed of tessera ops (sign, where, comparisons,
// log), so L1Loss, Softsign and LPPool (sgn), Threshold, Hardshrink,
// Softshrink and KLDivLoss (xlogy) run without the CPU fallback on every
// tessera device. NaN follows PyTorch's CPU kernels: each comparison that
// NaN fails leaves the NaN in place.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <limits>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"

namespace torch_tessera {
namespace {

at::Tensor& write_in_place(at::Tensor& self, const at::Tensor& result) {
  self.copy_(result);
  return self;
}

at::Tensor zero_like_scalar(const at::Tensor& x) { return at::zeros({}, x.options()); }

// -- sgn: the sign of a real tensor (tessera has no complex dtypes).

at::Tensor composite_sgn(const at::Tensor& self) {
  TORCH_CHECK(!self.is_complex(), "sgn: tessera has no complex dtypes, got ", self.dtype());
  return at::sign(self);
}
at::Tensor& composite_sgn_(at::Tensor& self) { return write_in_place(self, composite_sgn(self)); }
at::Tensor& composite_sgn_out(const at::Tensor& self, at::Tensor& out) { return write_out(out, composite_sgn(self)); }

// -- threshold: x > threshold ? x : value.

at::Tensor composite_threshold(const at::Tensor& self, const at::Scalar& threshold, const at::Scalar& value) {
  return at::where(self <= threshold, at::scalar_tensor(value, self.options()), self);
}
at::Tensor& composite_threshold_(at::Tensor& self, const at::Scalar& th, const at::Scalar& value) {
  return write_in_place(self, composite_threshold(self, th, value));
}
at::Tensor& composite_threshold_out(const at::Tensor& self, const at::Scalar& th, const at::Scalar& value,
                          at::Tensor& out) {
  return write_out(out, composite_threshold(self, th, value));
}

// -- hardshrink: 0 inside [-lambd, lambd], x outside; softshrink moves x
// towards 0 by lambd outside. Both backward ops pass the gradient outside
// the band.

at::Tensor inside_band(const at::Tensor& x, const at::Scalar& lambd) {
  return (x >= -lambd.toDouble()) & (x <= lambd);
}

at::Tensor composite_hardshrink(const at::Tensor& self, const at::Scalar& lambd) {
  return at::where(inside_band(self, lambd), zero_like_scalar(self), self);
}
at::Tensor& composite_hardshrink_out(const at::Tensor& self, const at::Scalar& lambd, at::Tensor& out) {
  return write_out(out, composite_hardshrink(self, lambd));
}
at::Tensor composite_shrink_backward(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& lambd) {
  return at::where(inside_band(self, lambd), zero_like_scalar(grad), grad);
}
at::Tensor& composite_shrink_backward_out(const at::Tensor& grad, const at::Tensor& self,
                                const at::Scalar& lambd, at::Tensor& grad_input) {
  return write_out(grad_input, composite_shrink_backward(grad, self, lambd));
}

at::Tensor composite_softshrink(const at::Tensor& self, const at::Scalar& lambd) {
  const double l = lambd.toDouble();
  // x * 0 keeps NaN (and the sign of zero) where neither branch applies.
  return at::where(self > l, self - l, at::where(self < -l, self + l, self * 0));
}
at::Tensor& composite_softshrink_out(const at::Tensor& self, const at::Scalar& lambd, at::Tensor& out) {
  return write_out(out, composite_softshrink(self, lambd));
}

// -- xlogy: x * log(y), 0 where x == 0, NaN where y is NaN.

at::Tensor composite_xlogy(const at::Tensor& self, const at::Tensor& other) {
  const at::ScalarType dtype = at::result_type(self, other);
  const at::ScalarType compute = at::isFloatingType(dtype) ? dtype : at::kFloat;
  // One operand may be a 0-d CPU tensor (a Python number): compute on the
  // tessera operand's device.
  const c10::Device device = self.device().is_privateuseone() ? self.device() : other.device();
  const at::Tensor x = self.to(device, compute), y = other.to(device, compute);
  const at::Tensor product = at::where(x == 0, at::zeros({}, x.options()), x * at::log(y));
  return at::where(at::isnan(y), at::full({}, std::numeric_limits<double>::quiet_NaN(), x.options()),
                   product);
}
at::Tensor& composite_xlogy_(at::Tensor& self, const at::Tensor& other) {
  return write_in_place(self, composite_xlogy(self, other));
}
at::Tensor& composite_xlogy_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return write_out(out, composite_xlogy(self, other));
}

}  // namespace

TESSERA_ATEN_KERNELS(m) {
  m.impl("sgn", TORCH_FN(composite_sgn));
  m.impl("sgn_", TORCH_FN(composite_sgn_));
  m.impl("sgn.out", TORCH_FN(composite_sgn_out));
  m.impl("threshold", TORCH_FN(composite_threshold));
  m.impl("threshold_", TORCH_FN(composite_threshold_));
  m.impl("threshold.out", TORCH_FN(composite_threshold_out));
  m.impl("hardshrink", TORCH_FN(composite_hardshrink));
  m.impl("hardshrink.out", TORCH_FN(composite_hardshrink_out));
  m.impl("hardshrink_backward", TORCH_FN(composite_shrink_backward));
  m.impl("hardshrink_backward.grad_input", TORCH_FN(composite_shrink_backward_out));
  m.impl("softshrink", TORCH_FN(composite_softshrink));
  m.impl("softshrink.out", TORCH_FN(composite_softshrink_out));
  m.impl("softshrink_backward", TORCH_FN(composite_shrink_backward));
  m.impl("softshrink_backward.grad_input", TORCH_FN(composite_shrink_backward_out));
  m.impl("xlogy.Tensor", TORCH_FN(composite_xlogy));
  m.impl("xlogy_.Tensor", TORCH_FN(composite_xlogy_));
  m.impl("xlogy.OutTensor", TORCH_FN(composite_xlogy_out));
}

}  // namespace torch_tessera
