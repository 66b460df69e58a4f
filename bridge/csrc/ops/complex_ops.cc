// The complex ops tessera runs natively, on real pairs (complex_views.h):
// building complex tensors (complex, polar), conj_physical, abs, angle,
// sums, the four arithmetic ops and matrix products. A complex model without FFTs (rotary
// embeddings written with torch.polar and view_as_complex, complex linear
// maps) runs on these with no CPU fallback. Every other op with a complex
// argument runs through the fallback (complex_routing.h).
#include <ATen/ops/constant_pad_nd.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/result_type.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <cmath>
#include <optional>
#include <vector>

#include "bridge/csrc/complex_views.h"
#include "bridge/csrc/device_mix.h"
#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pointwise_ops.h"

namespace torch_tessera {
namespace {

using RT = tessera::Tensor;

// An operand's real and imaginary parts; `imag` is empty for a real one.
// A CPU 0-d operand (a Python number, a scalar tensor) becomes host 0-d
// runtime tensors, which the runtime mixes with device tensors as it
// promotes Scalars.
struct Parts {
  RT real;
  std::optional<RT> imag;
};

Parts parts_of(const at::Tensor& t, const char* op) {
  if (!t.device().is_privateuseone()) {
    TORCH_CHECK(is_cpu_scalar(t), op, ": expected tessera tensors or 0-d CPU tensors, got a "
                "tensor of shape ", t.sizes(), " on ", t.device());
  }
  if (!t.is_complex()) return {to_runtime(t, op), std::nullopt};
  RT pairs = t.device().is_privateuseone() ? to_runtime_real_pairs(t.resolve_conj(), op)
                                           : borrow_host(physical_real_view(t.resolve_conj(), op));
  return {pairs.select(-1, 0), pairs.select(-1, 1)};
}

// A new complex tessera tensor holding real + i*imag (imag empty: 0).
at::Tensor assemble(c10::IntArrayRef sizes, c10::ScalarType dtype, const at::Tensor& like,
                    const RT& real, const std::optional<RT>& imag) {
  at::Tensor out = at::empty(sizes, like.options().dtype(dtype));
  if (out.numel() == 0) return out;
  const RT pairs = to_runtime_real_pairs(out, "complex");
  RT re = pairs.select(-1, 0), im = pairs.select(-1, 1);
  call_runtime([&] {
    re.copy_(real);
    if (imag.has_value()) {
      im.copy_(*imag);
    } else {
      im.zero_();
    }
  });
  return out;
}

// The tessera tensor among two operands (one may be a CPU scalar).
const at::Tensor& device_operand(const at::Tensor& a, const at::Tensor& b) {
  return a.device().is_privateuseone() ? a : b;
}

c10::DimVector result_sizes(const at::Tensor& a, const at::Tensor& b) {
  return broadcast_shape(a.sizes(), b.sizes());
}

c10::ScalarType complex_result_type(const at::Tensor& a, const at::Tensor& b) {
  return c10::toComplexType(at::result_type(a, b));
}

template <class Fn>
at::Tensor binary_complex(const char* op, const at::Tensor& self, const at::Tensor& other,
                          Fn&& combine) {
  const at::Tensor& like = device_operand(self, other);
  const c10::DeviceGuard guard(like.device());
  check_device_mix(op, self, other);
  const Parts a = parts_of(self, op), b = parts_of(other, op);
  std::optional<RT> re, im;
  call_runtime([&] { combine(a, b, re, im); });
  return assemble(result_sizes(self, other), complex_result_type(self, other), like, *re, im);
}

// (a + ib) + alpha (c + id); alpha real or complex.
at::Tensor add_like(const char* op, const at::Tensor& self, const at::Tensor& other,
                    const c10::Scalar& alpha, double sign) {
  const c10::complex<double> k = alpha.toComplexDouble() * sign;
  return binary_complex(op, self, other, [&](const Parts& a, const Parts& b, auto& re, auto& im) {
    // alpha * (c + id) = (kr c - ki d) + i (kr d + ki c)
    RT br = tessera::mul(b.real, tessera::Scalar(k.real()));
    std::optional<RT> bi;
    if (b.imag.has_value()) {
      bi = tessera::mul(*b.imag, tessera::Scalar(k.real()));
      if (k.imag() != 0) br = tessera::sub(br, tessera::mul(*b.imag, tessera::Scalar(k.imag())));
    }
    if (k.imag() != 0) {
      RT extra = tessera::mul(b.real, tessera::Scalar(k.imag()));
      bi = bi.has_value() ? tessera::add(*bi, extra) : extra;
    }
    re = tessera::add(a.real, br);
    if (a.imag.has_value() && bi.has_value()) {
      im = tessera::add(*a.imag, *bi);
    } else if (a.imag.has_value()) {
      im = *a.imag;
    } else {
      im = bi;
    }
  });
}

at::Tensor complex_add(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return add_like("add", self, other, alpha, 1.0);
}

at::Tensor complex_sub(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return add_like("sub", self, other, alpha, -1.0);
}

at::Tensor complex_mul(const at::Tensor& self, const at::Tensor& other) {
  return binary_complex("mul", self, other, [](const Parts& a, const Parts& b, auto& re, auto& im) {
    re = tessera::mul(a.real, b.real);
    if (a.imag && b.imag) {
      re = tessera::sub(*re, tessera::mul(*a.imag, *b.imag));
      im = tessera::add(tessera::mul(a.real, *b.imag), tessera::mul(*a.imag, b.real));
    } else if (a.imag) {
      im = tessera::mul(*a.imag, b.real);
    } else if (b.imag) {
      im = tessera::mul(a.real, *b.imag);
    }
  });
}

// (a + ib) / (c + id), with the divisor scaled by max(|c|, |d|) first so
// that |c|^2 + |d|^2 neither overflows nor underflows where the quotient
// is representable.
at::Tensor complex_div(const at::Tensor& self, const at::Tensor& other) {
  return binary_complex("div", self, other, [](const Parts& a, const Parts& b, auto& re, auto& im) {
    if (!b.imag.has_value()) {
      re = tessera::div(a.real, b.real);
      if (a.imag.has_value()) im = tessera::div(*a.imag, b.real);
      return;
    }
    const RT scale = tessera::maximum(tessera::abs(b.real), tessera::abs(*b.imag));
    const RT c = tessera::div(b.real, scale), d = tessera::div(*b.imag, scale);
    const RT denom = tessera::mul(tessera::add(tessera::mul(c, c), tessera::mul(d, d)), scale);
    if (a.imag.has_value()) {
      re = tessera::div(tessera::add(tessera::mul(a.real, c), tessera::mul(*a.imag, d)), denom);
      im = tessera::div(tessera::sub(tessera::mul(*a.imag, c), tessera::mul(a.real, d)), denom);
    } else {
      re = tessera::div(tessera::mul(a.real, c), denom);
      im = tessera::div(tessera::neg(tessera::mul(a.real, d)), denom);
    }
  });
}

// z * s for a Scalar s (real or complex), functional and in place.
// A Scalar as PyTorch passes a Python number: a wrapped 0-d CPU tensor,
// which never raises the result dtype (not even beside a 0-d tensor).
at::Tensor wrapped_number(const c10::Scalar& value) {
  at::Tensor t = at::scalar_tensor(
      value, at::TensorOptions().dtype(value.isComplex() ? at::kComplexDouble : at::kDouble));
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

at::Tensor complex_mul_scalar(const at::Tensor& self, const c10::Scalar& other) {
  return complex_mul(self, wrapped_number(other));
}

at::Tensor& complex_mul_scalar_(at::Tensor& self, const c10::Scalar& other) {
  self.copy_(complex_mul_scalar(self, other));  // self is complex: the product's dtype
  return self;
}

// Zero padding of a complex tensor pads its real pairs; other values go
// to the CPU.
at::Tensor complex_constant_pad_nd(const at::Tensor& self, c10::IntArrayRef pad,
                                   const c10::Scalar& value) {
  if (!(value.toComplexDouble() == c10::complex<double>(0, 0))) {
    return call_cpu_fallback<at::Tensor, const at::Tensor&, c10::IntArrayRef, const c10::Scalar&>(
        "constant_pad_nd", self, pad, value);
  }
  std::vector<int64_t> pairs_pad = {0, 0};  // the pair dim, last, unpadded
  pairs_pad.insert(pairs_pad.end(), pad.begin(), pad.end());
  const at::Tensor pairs = physical_real_view(self.resolve_conj(), "constant_pad_nd");
  return at::view_as_complex(at::constant_pad_nd(pairs, pairs_pad, 0).contiguous());
}

// 1 / z and -z.
at::Tensor complex_reciprocal(const at::Tensor& self) {
  return complex_div(wrapped_number(1.0), self);
}

at::Tensor complex_neg(const at::Tensor& self) {
  const OpScope scope(self);
  const at::Tensor out = at::empty_like(self.resolve_conj(), at::MemoryFormat::Contiguous);
  RT dst = to_runtime_real_pairs(out, "neg");
  const RT src = to_runtime_real_pairs(self.resolve_conj(), "neg");
  call_runtime([&] { dst.copy_(tessera::neg(src)); });
  return out;
}

// Products of complex matrices as four real products:
// (A + iB)(C + iD) = (AC - BD) + i(AD + BC).
template <RT (*kProduct)(const RT&, const RT&)>
at::Tensor complex_product(const char* op, const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), op,
              ": expected both operands to have the same dtype, got ", self.scalar_type(),
              " and ", other.scalar_type());
  const c10::DeviceGuard guard(self.device());
  check_device_mix(op, self, other);
  const Parts a = parts_of(self, op), b = parts_of(other, op);
  RT re, im;
  call_runtime([&] {
    re = tessera::sub(kProduct(a.real, b.real), kProduct(*a.imag, *b.imag));
    im = tessera::add(kProduct(a.real, *b.imag), kProduct(*a.imag, b.real));
  });
  return assemble(c10::IntArrayRef(re.sizes()), self.scalar_type(), self, re, im);
}

at::Tensor complex_mm(const at::Tensor& self, const at::Tensor& other) {
  return complex_product<&tessera::mm>("mm", self, other);
}

at::Tensor complex_bmm(const at::Tensor& self, const at::Tensor& other) {
  return complex_product<&tessera::bmm>("bmm", self, other);
}

// Sums of complex tensors: the real pairs summed over the same dims.
at::Tensor complex_sum(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                       std::optional<c10::ScalarType> dtype) {
  const OpScope scope(self);
  const c10::ScalarType out_type = dtype.value_or(self.scalar_type());
  TORCH_CHECK(c10::isComplexType(out_type), "sum: a complex tensor sums to a complex dtype, got ",
              out_type);
  const at::Tensor source = self.resolve_conj().to(out_type);
  tessera::Shape dims;  // empty for a 0-d tensor (its dim 0 wraps to nothing)
  if (self.dim() == 0) {
    for (const int64_t d : dim.value_or(c10::IntArrayRef{})) c10::maybe_wrap_dim(d, 0);
  } else if (dim.has_value() && !dim->empty()) {
    for (const int64_t d : *dim) dims.push_back(c10::maybe_wrap_dim(d, self.dim()));
  } else {
    for (int64_t d = 0; d < self.dim(); ++d) dims.push_back(d);
  }
  const RT pairs = to_runtime_real_pairs(source, "sum");
  RT summed;
  call_runtime([&] { summed = dims.empty() ? pairs.clone() : tessera::sum(pairs, dims, keepdim); });
  return complex_from_real_pairs(summed);
}

at::Tensor complex_sum_all(const at::Tensor& self, std::optional<c10::ScalarType> dtype) {
  return complex_sum(self, std::nullopt, false, dtype);
}

// Vector products through the matrix products and sums above.
at::Tensor complex_dot(const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1 && self.numel() == other.numel(),
              "dot: expected two 1-D tensors of one length, got ", self.sizes(), " and ",
              other.sizes());
  TORCH_CHECK(self.scalar_type() == other.scalar_type(), "dot: expected both vectors to have "
              "the same dtype, but found ", self.scalar_type(), " and ", other.scalar_type());
  return complex_sum_all(complex_mul(self, other), std::nullopt);
}

at::Tensor complex_vdot(const at::Tensor& self, const at::Tensor& other) {
  return complex_dot(self.conj(), other);
}

at::Tensor complex_mv(const at::Tensor& self, const at::Tensor& vec) {
  TORCH_CHECK(self.dim() == 2 && vec.dim() == 1 && self.size(1) == vec.size(0),
              "mv: expected a matrix and a vector of matching size, got ", self.sizes(), " and ",
              vec.sizes());
  return complex_mm(self, vec.unsqueeze(1)).squeeze(1);
}

// |a + ib| (torch.abs of a complex tensor is real), as hypot: infinite
// when either part is, even beside a NaN. complex64 and complex32 square
// in float64, so no representable modulus overflows; complex128 squares
// in float64 too, so moduli past 1e154 overflow to inf.
RT modulus(const at::Tensor& self) {
  const Parts p = parts_of(self, "abs");
  RT modulus;
  call_runtime([&] {
    const RT re = p.real.to(tessera::DType::kF64), im = p.imag->to(tessera::DType::kF64);
    const RT root = tessera::sqrt(tessera::add(tessera::mul(re, re), tessera::mul(im, im)));
    const RT infinite = tessera::logical_or(tessera::isinf(re), tessera::isinf(im));
    modulus = tessera::where(infinite, tessera::Scalar(INFINITY), root).to(p.real.dtype());
  });
  return modulus;
}

at::Tensor complex_abs(const at::Tensor& self) {
  const OpScope scope(self);
  return to_torch(modulus(self));
}

at::Tensor& complex_abs_out(const at::Tensor& self, at::Tensor& out) {
  if (!self.is_complex()) {  // a real input with a complex out: the CPU's rules and error
    return call_cpu_fallback<at::Tensor&, const at::Tensor&, at::Tensor&>("abs.out", self, out);
  }
  const OpScope scope(self, out);
  return write_out(out, modulus(self));
}

// torch.angle: atan2(imag, real) of a complex tensor; of a real one, pi
// for negative values, 0 otherwise, NaN kept (integers compute in float32).
RT angle_value(const at::Tensor& self) {
  if (self.is_complex()) {
    const Parts p = parts_of(self, "angle");
    return call_runtime([&] { return tessera::atan2(*p.imag, p.real); });
  }
  RT x = to_runtime(self, "angle");
  return call_runtime([&] {
    if (!tessera::is_floating(x.dtype())) x = x.to(tessera::DType::kF32);
    const RT zero = tessera::full_like(x, tessera::Scalar(0.0));
    const RT half_turn =
        tessera::where(tessera::lt(x, tessera::Scalar(0.0)), tessera::Scalar(M_PI), zero);
    return tessera::where(tessera::isnan(x), x, half_turn);
  });
}

at::Tensor angle(const at::Tensor& self) {
  const OpScope scope(self);
  return to_torch(angle_value(self));
}

at::Tensor& angle_out(const at::Tensor& self, at::Tensor& out) {
  const OpScope scope(self, out);
  return write_out(out, angle_value(self));
}

// conj_physical.out: the imaginary parts negated; real tensors copied.
at::Tensor& conj_physical_out(const at::Tensor& self, at::Tensor& out) {
  const OpScope scope(self, out);
  TORCH_CHECK(out.scalar_type() == self.scalar_type(), "conj_physical: expected out of dtype ",
              self.scalar_type(), ", got ", out.scalar_type());
  resize_output(out, self.sizes());
  if (!self.is_complex()) {
    RT dst = to_runtime(out, "conj_physical");
    call_runtime([&] { dst.copy_(to_runtime(self, "conj_physical")); });
    return out;
  }
  const RT src = to_runtime_real_pairs(self, "conj_physical");
  const RT dst = to_runtime_real_pairs(out, "conj_physical");
  RT re = dst.select(-1, 0), im = dst.select(-1, 1);
  call_runtime([&] {
    const RT negated = tessera::neg(src.select(-1, 1));  // before writing: out may be self
    re.copy_(src.select(-1, 0));
    im.copy_(negated);
  });
  return out;
}

// torch.complex(real, imag) and torch.polar(abs, angle) into out.
void check_parts(const char* op, const at::Tensor& a, const at::Tensor& b, const at::Tensor& out) {
  TORCH_CHECK(a.scalar_type() == b.scalar_type(), op,
              ": expected both inputs to have the same dtype, got ", a.scalar_type(), " and ",
              b.scalar_type());
  const c10::ScalarType t = a.scalar_type();
  TORCH_CHECK(t == c10::kFloat || t == c10::kDouble || t == c10::kHalf, op,
              ": expected float16, float32 or float64 inputs, got ", t);
  TORCH_CHECK(out.scalar_type() == c10::toComplexType(t), op, ": expected out of dtype ",
              c10::toComplexType(t), ", got ", out.scalar_type());
  check_device_mix(op, a, b);
  check_device_mix(op, a, out);
}

template <class Fn>
at::Tensor& write_parts(const char* op, const at::Tensor& a, const at::Tensor& b, at::Tensor& out,
                        Fn&& parts) {
  const OpScope scope(a, b, out);
  check_parts(op, a, b, out);
  resize_output(out, broadcast_shape(a.sizes(), b.sizes()));
  if (out.numel() == 0) return out;
  const RT x = to_runtime(a, op), y = to_runtime(b, op);
  const RT dst = to_runtime_real_pairs(out, op);
  RT re = dst.select(-1, 0), im = dst.select(-1, 1);
  call_runtime([&] {
    auto [real, imag] = parts(x, y);
    re.copy_(real);
    im.copy_(imag);
  });
  return out;
}

at::Tensor& complex_out(const at::Tensor& real, const at::Tensor& imag, at::Tensor& out) {
  return write_parts("complex", real, imag, out,
                     [](const RT& x, const RT& y) { return std::pair<RT, RT>(x, y); });
}

at::Tensor& polar_out(const at::Tensor& abs, const at::Tensor& angle, at::Tensor& out) {
  return write_parts("polar", abs, angle, out, [](const RT& r, const RT& theta) {
    return std::pair<RT, RT>(tessera::mul(r, tessera::cos(theta)),
                             tessera::mul(r, tessera::sin(theta)));
  });
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("complex.out", TORCH_FN(complex_out));
  m.impl("polar.out", TORCH_FN(polar_out));
  m.impl("conj_physical.out", TORCH_FN(conj_physical_out));
  m.impl("angle", TORCH_FN(angle));
  m.impl("angle.out", TORCH_FN(angle_out));
}

// Complex calls of kernels registered elsewhere (complex_routing.h).
const bool registered = register_complex_kernel("add.Tensor", TORCH_FN(complex_add)) &&
                        register_complex_kernel("sub.Tensor", TORCH_FN(complex_sub)) &&
                        register_complex_kernel("mul.Tensor", TORCH_FN(complex_mul)) &&
                        register_complex_kernel("mul.Scalar", TORCH_FN(complex_mul_scalar)) &&
                        register_complex_kernel("mul_.Scalar", TORCH_FN(complex_mul_scalar_)) &&
                        register_complex_kernel("constant_pad_nd",
                                                TORCH_FN(complex_constant_pad_nd)) &&
                        register_complex_kernel("div.Tensor", TORCH_FN(complex_div)) &&
                        register_complex_kernel("reciprocal", TORCH_FN(complex_reciprocal)) &&
                        register_complex_kernel("neg", TORCH_FN(complex_neg)) &&
                        register_complex_kernel("mm", TORCH_FN(complex_mm)) &&
                        register_complex_kernel("bmm", TORCH_FN(complex_bmm)) &&
                        register_complex_kernel("dot", TORCH_FN(complex_dot)) &&
                        register_complex_kernel("vdot", TORCH_FN(complex_vdot)) &&
                        register_complex_kernel("mv", TORCH_FN(complex_mv)) &&
                        register_complex_kernel("abs", TORCH_FN(complex_abs)) &&
                        register_complex_kernel("sum", TORCH_FN(complex_sum_all)) &&
                        register_complex_kernel("sum.dim_IntList", TORCH_FN(complex_sum)) &&
                        register_complex_kernel("abs.out", TORCH_FN(complex_abs_out));

}  // namespace
}  // namespace torch_tessera
