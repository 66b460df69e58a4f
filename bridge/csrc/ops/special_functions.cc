// torch.special and the elementwise math beside it (erfinv, digamma,
// lgamma, Bessel functions, orthogonal polynomials, hypot, nextafter...),
// on the runtime's special_function. Only the out= kernels are registered:
// aten derives the functional and in-place forms of these structured ops
// from them (rare ops, where the extra dispatch does not matter).
// logit and nan_to_num are composed of runtime ops.
#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include <cmath>
#include <limits>
#include <optional>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "bridge/csrc/ops/pointwise_registration.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

using pointwise::OpName;
using pointwise::Operand;
using RT = tessera::Tensor;
using tessera::SpecialOp;

template <OpName kName, SpecialOp kOp>
at::Tensor& unary_out(const at::Tensor& self, at::Tensor& out) {
  const OpScope scope(self, out);
  pointwise::check_written(kName.value, self, out);
  resize_output(out, self.sizes());
  RT o = to_runtime(out, kName.value);
  call_runtime([&] { tessera::special_function_out(o, kOp, to_runtime(self, kName.value)); });
  return out;
}

template <OpName kName, SpecialOp kOp>
at::Tensor& binary_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  const OpScope scope(self, other, out);
  check_device_mix(kName.value, self, other);
  pointwise::check_written(kName.value, self.device().is_privateuseone() ? self : other, out);
  resize_output(out, broadcast_shape(self.sizes(), other.sizes()));
  RT o = to_runtime(out, kName.value);
  const Operand a(self, kName.value), b(other, kName.value);
  call_runtime([&] { tessera::special_function_out(o, kOp, a.value, b.value); });
  return out;
}

at::Tensor& polygamma_out(int64_t n, const at::Tensor& self, at::Tensor& out) {
  const OpScope scope(self, out);
  pointwise::check_written("polygamma", self, out);
  resize_output(out, self.sizes());
  RT o = to_runtime(out, "polygamma");
  call_runtime([&] { tessera::polygamma_out(o, n, to_runtime(self, "polygamma")); });
  return out;
}

// PyTorch refuses heaviside of mixed dtypes rather than promoting.
at::Tensor& heaviside_out(const at::Tensor& self, const at::Tensor& values, at::Tensor& out) {
  TORCH_CHECK(self.scalar_type() == values.scalar_type(),
              "heaviside is not yet implemented for tensors with different dtypes (input ",
              self.scalar_type(), ", values ", values.scalar_type(), ")");
  return binary_out<"heaviside", SpecialOp::kHeaviside>(self, values, out);
}

// logit(x) = log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps
// is given (NaN stays NaN); integer inputs compute in float32.
RT logit_value(const at::Tensor& self, std::optional<double> eps) {
  RT x = to_runtime(self, "logit");
  return call_runtime([&] {
    if (!tessera::is_floating(x.dtype())) x = x.to(tessera::DType::kF32);
    if (eps.has_value()) x = tessera::clamp(x, tessera::Scalar(*eps), tessera::Scalar(1 - *eps));
    const RT one_minus_x = tessera::add(tessera::neg(x), tessera::Scalar(1.0));  // +0 at x = 1
    return tessera::log(tessera::div(x, one_minus_x));
  });
}

at::Tensor logit(const at::Tensor& self, std::optional<double> eps) {
  const OpScope scope(self);
  return to_torch(logit_value(self, eps));
}

at::Tensor& logit_(at::Tensor& self, std::optional<double> eps) {
  const OpScope scope(self);
  RT s = to_runtime(self, "logit_");
  const RT value = logit_value(self, eps);
  call_runtime([&] { s.copy_(value); });
  return self;
}

at::Tensor& logit_out(const at::Tensor& self, std::optional<double> eps, at::Tensor& out) {
  const OpScope scope(self, out);
  pointwise::check_written("logit", self, out);
  return write_out(out, logit_value(self, eps));
}

// NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest
// finite values unless given); integer tensors are copied.
at::Tensor& nan_to_num_out(const at::Tensor& self, std::optional<double> nan,
                           std::optional<double> posinf, std::optional<double> neginf,
                           at::Tensor& out) {
  const OpScope scope(self, out);
  pointwise::check_written("nan_to_num", self, out);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "nan_to_num: expected out of dtype ",
              self.scalar_type(), ", got ", out.scalar_type());
  const RT x = to_runtime(self, "nan_to_num");
  if (!self.is_floating_point()) return write_out(out, x);
  double largest = std::numeric_limits<double>::max();
  switch (self.scalar_type()) {
    case at::kHalf: largest = 65504.0; break;
    case at::kBFloat16: largest = 3.3895313892515355e38; break;
    case at::kFloat: largest = std::numeric_limits<float>::max(); break;
    default: break;
  }
  const RT result = call_runtime([&] {
    RT r = tessera::where(tessera::isnan(x), tessera::Scalar(nan.value_or(0.0)), x);
    r = tessera::where(tessera::isposinf(x), tessera::Scalar(posinf.value_or(largest)), r);
    return tessera::where(tessera::isneginf(x), tessera::Scalar(neginf.value_or(-largest)), r);
  });
  return write_out(out, result);
}

#define TT_UNARY(schema, op) \
  m.impl(schema ".out", TORCH_FN((unary_out<schema, SpecialOp::op>)))
#define TT_BINARY(schema, op) \
  m.impl(schema ".out", TORCH_FN((binary_out<schema, SpecialOp::op>)))

TESSERA_ATEN_KERNELS(m) {
  TT_UNARY("erfc", kErfc);
  TT_UNARY("erfinv", kErfinv);
  TT_UNARY("exp2", kExp2);
  TT_UNARY("frac", kFrac);
  TT_UNARY("sinc", kSinc);
  TT_UNARY("digamma", kDigamma);
  TT_UNARY("lgamma", kLgamma);
  TT_UNARY("i0", kI0);
  TT_UNARY("special_i0e", kI0e);
  TT_UNARY("special_i1", kI1);
  TT_UNARY("special_i1e", kI1e);
  TT_UNARY("special_ndtri", kNdtri);
  TT_UNARY("special_log_ndtr", kLogNdtr);
  TT_UNARY("special_erfcx", kErfcx);
  TT_UNARY("special_entr", kEntr);
  TT_UNARY("special_airy_ai", kAiryAi);
  TT_UNARY("special_bessel_j0", kBesselJ0);
  TT_UNARY("special_bessel_j1", kBesselJ1);
  TT_UNARY("special_bessel_y0", kBesselY0);
  TT_UNARY("special_bessel_y1", kBesselY1);
  TT_UNARY("special_modified_bessel_i0", kModifiedBesselI0);
  TT_UNARY("special_modified_bessel_i1", kModifiedBesselI1);
  TT_UNARY("special_modified_bessel_k0", kModifiedBesselK0);
  TT_UNARY("special_modified_bessel_k1", kModifiedBesselK1);
  TT_UNARY("special_scaled_modified_bessel_k0", kScaledModifiedBesselK0);
  TT_UNARY("special_scaled_modified_bessel_k1", kScaledModifiedBesselK1);
  TT_UNARY("special_spherical_bessel_j0", kSphericalBesselJ0);
  TT_UNARY("signbit", kSignbit);
  m.impl("polygamma.out", TORCH_FN(polygamma_out));
  TT_BINARY("special_zeta", kZeta);
  TT_BINARY("igamma", kIgamma);
  TT_BINARY("igammac", kIgammac);
  TT_BINARY("special_xlog1py", kXlog1py);
  TT_BINARY("hypot", kHypot);
  TT_BINARY("copysign", kCopysign);
  TT_BINARY("nextafter", kNextafter);
  TT_BINARY("fmax", kFmax);
  TT_BINARY("fmin", kFmin);
  m.impl("heaviside.out", TORCH_FN(heaviside_out));
  TT_BINARY("special_chebyshev_polynomial_t", kChebyshevT);
  TT_BINARY("special_chebyshev_polynomial_u", kChebyshevU);
  TT_BINARY("special_chebyshev_polynomial_v", kChebyshevV);
  TT_BINARY("special_chebyshev_polynomial_w", kChebyshevW);
  TT_BINARY("special_shifted_chebyshev_polynomial_t", kShiftedChebyshevT);
  TT_BINARY("special_shifted_chebyshev_polynomial_u", kShiftedChebyshevU);
  TT_BINARY("special_shifted_chebyshev_polynomial_v", kShiftedChebyshevV);
  TT_BINARY("special_shifted_chebyshev_polynomial_w", kShiftedChebyshevW);
  TT_BINARY("special_hermite_polynomial_h", kHermiteH);
  TT_BINARY("special_hermite_polynomial_he", kHermiteHe);
  TT_BINARY("special_laguerre_polynomial_l", kLaguerreL);
  TT_BINARY("special_legendre_polynomial_p", kLegendreP);
  m.impl("logit", TORCH_FN(logit));
  m.impl("logit_", TORCH_FN(logit_));
  m.impl("logit.out", TORCH_FN(logit_out));
  m.impl("nan_to_num.out", TORCH_FN(nan_to_num_out));
}

#undef TT_UNARY
#undef TT_BINARY

}  // namespace
}  // namespace torch_tessera
