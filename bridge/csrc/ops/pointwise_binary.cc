// Binary pointwise ops: add/sub (with alpha) and rsub, mul, div (with
// rounding_mode), and the table of ops the runtime declares with
// TESSERA_POINTWISE_BINARY_DECL (remainder, fmod, pow, maximum, logaddexp,
// comparisons, logical and bitwise ops). Broadcasting, type promotion and their errors
// are the runtime's.
#include <c10/core/ScalarType.h>
#include <torch/library.h>

#include <string_view>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "bridge/csrc/ops/pointwise_registration.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace torch_tessera {
namespace {

using pointwise::Operand;
using pointwise::OpName;
using pointwise::RT;
using tessera::Scalar;

// -- Adapters giving every runtime form the free-function shape the
// templates take (the runtime has some as Tensor members, some not at all).
RT& mul_inplace(RT& self, const RT& other) { return self.mul_(other); }
RT& div_inplace(RT& self, const RT& other) { return self.div_(other); }
RT div_tensor(const RT& a, const RT& b) { return tessera::div(a, b); }
RT div_scalar(const RT& a, Scalar b) { return tessera::div(a, b); }
RT& div_scalar_inplace(RT& self, Scalar other) { return tessera::div_(self, other); }
RT& div_out(RT& out, const RT& a, const RT& b) { return tessera::div_out(out, a, b); }
RT& add_inplace(RT& self, const RT& other, Scalar alpha) { return self.add_(other, alpha); }
RT& sub_inplace(RT& self, const RT& other, Scalar alpha) { return self.sub_(other, alpha); }

// The out= form of an op the runtime has no out= for: compute, then cast
// into out (out was resized to the result's shape by the caller).
template <OpName kName, pointwise::BinaryScalarFn kFn>
RT& via_result(RT& out, const RT& a, Scalar b) {
  return tessera::write_out(kName.value, out, kFn(a, b));
}

// -- add, sub: a + alpha * b and a - alpha * b. rsub(a, b) is sub(b, a).
using AlphaFn = RT (*)(const RT&, const RT&, Scalar);
using AlphaScalarFn = RT (*)(const RT&, Scalar, Scalar);
using AlphaInplaceFn = RT& (*)(RT&, const RT&, Scalar);
using AlphaScalarInplaceFn = RT& (*)(RT&, Scalar, Scalar);
using AlphaOutFn = RT& (*)(RT&, const RT&, const RT&, Scalar);

template <OpName kName, AlphaFn kFn, AlphaScalarFn kScalarFn>
at::Tensor with_alpha(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  const OpScope scope(self, other);
  const Scalar a = to_runtime_scalar(alpha, kName.value);
  if (pointwise::is_wrapped_number(other)) {
    const Scalar v = pointwise::wrapped_value(other, kName.value);
    const CallView self_view(self, kName.value);
    return to_torch(call_runtime([&] { return kScalarFn(self_view.get(), v, a); }));
  }
  pointwise::check_device_mix(kName.value, self, other);
  const Operand x(self, kName.value), y(other, kName.value);
  return to_torch(call_runtime([&] { return kFn(x.value, y.value, a); }));
}

template <OpName kName, AlphaScalarFn kScalarFn>
at::Tensor with_alpha_scalar(const at::Tensor& self, const c10::Scalar& other,
                             const c10::Scalar& alpha) {
  const OpScope scope(self);
  const Scalar v = to_runtime_scalar(other, kName.value), a = to_runtime_scalar(alpha, kName.value);
  const CallView self_view(self, kName.value);
  return to_torch(call_runtime([&] { return kScalarFn(self_view.get(), v, a); }));
}

template <OpName kName, AlphaInplaceFn kFn, AlphaScalarInplaceFn kScalarFn>
at::Tensor& with_alpha_(at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  const OpScope scope(self);
  pointwise::check_written(kName.value, other, self);
  const Scalar a = to_runtime_scalar(alpha, kName.value);
  CallView self_view(self, kName.value);
  RT& s = self_view.get();
  if (pointwise::is_wrapped_number(other)) {
    const Scalar v = pointwise::wrapped_value(other, kName.value);
    call_runtime([&] { kScalarFn(s, v, a); });
    return self;
  }
  const CallView other_view(other, kName.value);
  const RT& o = other_view.get();
  call_runtime([&] { kFn(s, o, a); });
  return self;
}

template <OpName kName, AlphaScalarInplaceFn kScalarFn>
at::Tensor& with_alpha_scalar_(at::Tensor& self, const c10::Scalar& other,
                               const c10::Scalar& alpha) {
  const OpScope scope(self);
  CallView self_view(self, kName.value);
  RT& s = self_view.get();
  const Scalar v = to_runtime_scalar(other, kName.value), a = to_runtime_scalar(alpha, kName.value);
  call_runtime([&] { kScalarFn(s, v, a); });
  return self;
}

// add.Scalar_out reaches here with a wrapped number (aten's composite), for
// which the runtime's Scalar form gives PyTorch's promotion.
template <OpName kName, AlphaOutFn kFn, AlphaScalarFn kScalarFn>
at::Tensor& with_alpha_out(const at::Tensor& self, const at::Tensor& other,
                           const c10::Scalar& alpha, at::Tensor& out) {
  const OpScope scope(self, other, out);
  pointwise::check_device_mix(kName.value, self, other);
  pointwise::check_written(kName.value, self, out);
  resize_output(out, pointwise::broadcast_sizes(self, other));
  CallView out_view(out, kName.value);
  RT& o = out_view.get();
  const Scalar a = to_runtime_scalar(alpha, kName.value);
  if (pointwise::is_wrapped_number(other)) {
    const Scalar v = pointwise::wrapped_value(other, kName.value);
    const CallView self_view(self, kName.value);
    call_runtime([&] {
      tessera::write_out(kName.value, o, kScalarFn(self_view.get(), v, a));
    });
    return out;
  }
  const Operand x(self, kName.value), y(other, kName.value);
  call_runtime([&] { kFn(o, x.value, y.value, a); });
  return out;
}

at::Tensor rsub(const at::Tensor& self, const at::Tensor& other, const c10::Scalar& alpha) {
  return with_alpha<"rsub", &tessera::sub, &tessera::sub>(other, self, alpha);
}

// -- div with rounding_mode (nullopt: true division; "trunc"; "floor").
using Mode = std::optional<c10::string_view>;

std::optional<std::string_view> mode_of(const Mode& m) {
  if (!m.has_value()) return std::nullopt;
  return std::string_view(m->data(), m->size());
}

at::Tensor div_mode(const at::Tensor& self, const at::Tensor& other, Mode mode) {
  const OpScope scope(self, other);
  if (pointwise::is_wrapped_number(other)) {
    const Scalar v = pointwise::wrapped_value(other, "div");
    const CallView self_view(self, "div");
    return to_torch(
        call_runtime([&] { return tessera::div(self_view.get(), v, mode_of(mode)); }));
  }
  pointwise::check_device_mix("div", self, other);
  const Operand x(self, "div"), y(other, "div");
  return to_torch(call_runtime([&] { return tessera::div(x.value, y.value, mode_of(mode)); }));
}

at::Tensor div_scalar_mode(const at::Tensor& self, const c10::Scalar& other, Mode mode) {
  const OpScope scope(self);
  const Scalar v = to_runtime_scalar(other, "div");
  const CallView self_view(self, "div");
  return to_torch(
      call_runtime([&] { return tessera::div(self_view.get(), v, mode_of(mode)); }));
}

at::Tensor& div_mode_(at::Tensor& self, const at::Tensor& other, Mode mode) {
  const OpScope scope(self);
  pointwise::check_written("div_", other, self);
  CallView self_view(self, "div_");
  RT& s = self_view.get();
  if (pointwise::is_wrapped_number(other)) {
    const Scalar v = pointwise::wrapped_value(other, "div_");
    call_runtime([&] { tessera::div_(s, v, mode_of(mode)); });
    return self;
  }
  const CallView other_view(other, "div_");
  const RT& o = other_view.get();
  call_runtime([&] { tessera::div_(s, o, mode_of(mode)); });
  return self;
}

at::Tensor& div_scalar_mode_(at::Tensor& self, const c10::Scalar& other, Mode mode) {
  const OpScope scope(self);
  CallView self_view(self, "div_");
  RT& s = self_view.get();
  const Scalar v = to_runtime_scalar(other, "div_");
  call_runtime([&] { tessera::div_(s, v, mode_of(mode)); });
  return self;
}

at::Tensor& div_mode_out(const at::Tensor& self, const at::Tensor& other, Mode mode,
                         at::Tensor& out) {
  const OpScope scope(self, other, out);
  pointwise::check_device_mix("div", self, other);
  pointwise::check_written("div", self, out);
  resize_output(out, pointwise::broadcast_sizes(self, other));
  CallView out_view(out, "div");
  RT& o = out_view.get();
  const Operand x(self, "div"), y(other, "div");
  call_runtime([&] { tessera::div_out(o, x.value, y.value, mode_of(mode)); });
  return out;
}

// -- A Scalar first operand (pow.Scalar, remainder.Scalar_Tensor,
// bitwise_*.Scalar_Tensor): PyTorch treats it as a wrapped number.
at::Tensor wrapped(const c10::Scalar& s) { return wrapped_scalar_tensor(s); }

template <OpName kName, pointwise::BinaryFn kFn>
at::Tensor scalar_first(const c10::Scalar& self, const at::Tensor& other) {
  const OpScope scope(other);
  const Operand x(wrapped(self), kName.value), y(other, kName.value);
  return to_torch(call_runtime([&] { return kFn(x.value, y.value); }));
}

template <OpName kName, pointwise::BinaryOutFn kFn>
at::Tensor& scalar_first_out(const c10::Scalar& self, const at::Tensor& other, at::Tensor& out) {
  const OpScope scope(other, out);
  pointwise::check_written(kName.value, other, out);
  resize_output(out, other.sizes());
  CallView out_view(out, kName.value);
  RT& o = out_view.get();
  const Operand x(wrapped(self), kName.value), y(other, kName.value);
  call_runtime([&] { kFn(o, x.value, y.value); });
  return out;
}

at::Tensor pow_scalar_base(const c10::Scalar& base, const at::Tensor& exponent) {
  const OpScope scope(exponent);
  const Scalar b = to_runtime_scalar(base, "pow");
  const CallView exponent_view(exponent, "pow");
  return to_torch(call_runtime([&] { return tessera::pow(b, exponent_view.get()); }));
}

at::Tensor& pow_scalar_base_out(const c10::Scalar& base, const at::Tensor& exponent,
                                at::Tensor& out) {
  const OpScope scope(exponent, out);
  pointwise::check_written("pow", exponent, out);
  resize_output(out, exponent.sizes());
  CallView out_view(out, "pow");
  RT& o = out_view.get();
  const Scalar b = to_runtime_scalar(base, "pow");
  const CallView exponent_view(exponent, "pow");
  call_runtime([&] { tessera::write_out("pow", o, tessera::pow(b, exponent_view.get())); });
  return out;
}

}  // namespace
}  // namespace torch_tessera

// One registration per aten overload; `fn` names the runtime function(s).
#define TT_FN(m, schema, name, fn, scalar_fn) \
  m.impl(schema, TORCH_FN((::torch_tessera::pointwise::binary<#name, fn, scalar_fn>)))
#define TT_SCALAR(m, schema, name, scalar_fn) \
  m.impl(schema, TORCH_FN((::torch_tessera::pointwise::binary_scalar<#name, scalar_fn>)))
#define TT_INPLACE(m, schema, name, fn, scalar_fn) \
  m.impl(schema, TORCH_FN((::torch_tessera::pointwise::binary_<#name "_", fn, scalar_fn>)))
#define TT_SCALAR_INPLACE(m, schema, name, scalar_fn) \
  m.impl(schema, TORCH_FN((::torch_tessera::pointwise::binary_scalar_<#name "_", scalar_fn>)))
#define TT_OUT(m, schema, name, fn, scalar_fn) \
  m.impl(schema, TORCH_FN((::torch_tessera::pointwise::binary_out<#name, fn, scalar_fn>)))
#define TT_SCALAR_OUT(m, schema, name, scalar_fn) \
  m.impl(schema, TORCH_FN((::torch_tessera::pointwise::binary_scalar_out<#name, scalar_fn>)))

// An op with all six forms of TESSERA_POINTWISE_BINARY_DECL, under aten's
// overload names (which differ between ops).
#define TESSERA_REGISTER_BINARY(m, name, fn_ov, scalar_ov, inplace_ov, scalar_inplace_ov,     \
                                out_ov, scalar_out_ov)                                      \
  TT_FN(m, fn_ov, name, &tessera::name, &tessera::name);                                    \
  TT_SCALAR(m, scalar_ov, name, &tessera::name);                                            \
  TT_INPLACE(m, inplace_ov, name, &tessera::name##_, &tessera::name##_);                    \
  TT_SCALAR_INPLACE(m, scalar_inplace_ov, name, &tessera::name##_);                         \
  TT_OUT(m, out_ov, name, &tessera::name##_out, &tessera::name##_out);                      \
  TT_SCALAR_OUT(m, scalar_out_ov, name, &tessera::name##_out)

// Ops whose aten overloads are .Tensor/.Scalar/_.Tensor/_.Scalar/
// .Tensor_out/.Scalar_out.
#define TESSERA_REGISTER_BINARY_TS(m, name)                                                   \
  TESSERA_REGISTER_BINARY(m, name, #name ".Tensor", #name ".Scalar", #name "_.Tensor",        \
                          #name "_.Scalar", #name ".Tensor_out", #name ".Scalar_out")

// Ops with a Scalar-first overload .Scalar_Tensor (and its out=).
#define TESSERA_REGISTER_SCALAR_FIRST(m, name)                                                \
  m.impl(#name ".Scalar_Tensor",                                                              \
         TORCH_FN((::torch_tessera::scalar_first<#name, &tessera::name>)));                   \
  m.impl(#name ".Scalar_Tensor_out",                                                          \
         TORCH_FN((::torch_tessera::scalar_first_out<#name, &tessera::name##_out>)))

// Ops with Tensor forms only: name, name_, name.out.
#define TESSERA_REGISTER_BINARY_TENSOR_ONLY(m, name)                                          \
  TT_FN(m, #name, name, &tessera::name, &tessera::name);                                     \
  TT_INPLACE(m, #name "_", name, &tessera::name##_, &tessera::name##_);                      \
  TT_OUT(m, #name ".out", name, &tessera::name##_out, &tessera::name##_out)

namespace torch_tessera {
namespace {

TESSERA_ATEN_KERNELS(m) {
  // add, sub (alpha), rsub.
  m.impl("add.Tensor", TORCH_FN((with_alpha<"add", &tessera::add, &tessera::add>)));
  m.impl("add.Scalar", TORCH_FN((with_alpha_scalar<"add", &tessera::add>)));
  m.impl("add_.Tensor", TORCH_FN((with_alpha_<"add_", &add_inplace, &tessera::add_>)));
  m.impl("add_.Scalar", TORCH_FN((with_alpha_scalar_<"add_", &tessera::add_>)));
  m.impl("add.out", TORCH_FN((with_alpha_out<"add", &tessera::add_out, &tessera::add>)));
  m.impl("sub.Tensor", TORCH_FN((with_alpha<"sub", &tessera::sub, &tessera::sub>)));
  m.impl("sub.Scalar", TORCH_FN((with_alpha_scalar<"sub", &tessera::sub>)));
  m.impl("sub_.Tensor", TORCH_FN((with_alpha_<"sub_", &sub_inplace, &tessera::sub_>)));
  m.impl("sub_.Scalar", TORCH_FN((with_alpha_scalar_<"sub_", &tessera::sub_>)));
  m.impl("sub.out", TORCH_FN((with_alpha_out<"sub", &tessera::sub_out, &tessera::sub>)));
  m.impl("rsub.Tensor", TORCH_FN(rsub));

  // mul, div.
  TT_FN(m, "mul.Tensor", mul, &tessera::mul, &tessera::mul);
  TT_SCALAR(m, "mul.Scalar", mul, &tessera::mul);
  TT_INPLACE(m, "mul_.Tensor", mul, &mul_inplace, &tessera::mul_);
  TT_SCALAR_INPLACE(m, "mul_.Scalar", mul, &tessera::mul_);
  TT_OUT(m, "mul.out", mul, &tessera::mul_out, (&via_result<"mul", &tessera::mul>));
  TT_FN(m, "div.Tensor", div, &div_tensor, &div_scalar);
  TT_SCALAR(m, "div.Scalar", div, &div_scalar);
  TT_INPLACE(m, "div_.Tensor", div, &div_inplace, &div_scalar_inplace);
  TT_SCALAR_INPLACE(m, "div_.Scalar", div, &div_scalar_inplace);
  TT_OUT(m, "div.out", div, &div_out, (&via_result<"div", &div_scalar>));
  m.impl("div.Tensor_mode", TORCH_FN(div_mode));
  m.impl("div.Scalar_mode", TORCH_FN(div_scalar_mode));
  m.impl("div_.Tensor_mode", TORCH_FN(div_mode_));
  m.impl("div_.Scalar_mode", TORCH_FN(div_scalar_mode_));
  m.impl("div.out_mode", TORCH_FN(div_mode_out));

  // The TESSERA_POINTWISE_BINARY_DECL ops.
  TESSERA_REGISTER_BINARY(m, floor_divide, "floor_divide", "floor_divide.Scalar",
                          "floor_divide_.Tensor", "floor_divide_.Scalar", "floor_divide.out",
                          "floor_divide.Scalar_out");
  TESSERA_REGISTER_BINARY_TS(m, remainder);
  TESSERA_REGISTER_SCALAR_FIRST(m, remainder);
  TESSERA_REGISTER_BINARY(m, pow, "pow.Tensor_Tensor", "pow.Tensor_Scalar", "pow_.Tensor",
                          "pow_.Scalar", "pow.Tensor_Tensor_out", "pow.Tensor_Scalar_out");
  m.impl("pow.Scalar", TORCH_FN(pow_scalar_base));
  m.impl("pow.Scalar_out", TORCH_FN(pow_scalar_base_out));
  TT_FN(m, "maximum", maximum, &tessera::maximum, &tessera::maximum);
  TT_OUT(m, "maximum.out", maximum, &tessera::maximum_out, &tessera::maximum_out);
  TT_FN(m, "minimum", minimum, &tessera::minimum, &tessera::minimum);
  TT_OUT(m, "minimum.out", minimum, &tessera::minimum_out, &tessera::minimum_out);
  TESSERA_REGISTER_BINARY_TENSOR_ONLY(m, atan2);
  TESSERA_REGISTER_BINARY_TS(m, fmod);
  TT_FN(m, "logaddexp", logaddexp, &tessera::logaddexp, &tessera::logaddexp);
  TT_OUT(m, "logaddexp.out", logaddexp, &tessera::logaddexp_out, &tessera::logaddexp_out);
  TT_FN(m, "logaddexp2", logaddexp2, &tessera::logaddexp2, &tessera::logaddexp2);
  TT_OUT(m, "logaddexp2.out", logaddexp2, &tessera::logaddexp2_out, &tessera::logaddexp2_out);
  TESSERA_REGISTER_BINARY_TS(m, eq);
  TESSERA_REGISTER_BINARY_TS(m, ne);
  TESSERA_REGISTER_BINARY_TS(m, lt);
  TESSERA_REGISTER_BINARY_TS(m, le);
  TESSERA_REGISTER_BINARY_TS(m, gt);
  TESSERA_REGISTER_BINARY_TS(m, ge);
  TESSERA_REGISTER_BINARY_TENSOR_ONLY(m, logical_and);
  TESSERA_REGISTER_BINARY_TENSOR_ONLY(m, logical_or);
  TESSERA_REGISTER_BINARY_TENSOR_ONLY(m, logical_xor);
  TESSERA_REGISTER_BINARY_TS(m, bitwise_and);
  TESSERA_REGISTER_BINARY_TS(m, bitwise_or);
  TESSERA_REGISTER_BINARY_TS(m, bitwise_xor);
  TESSERA_REGISTER_SCALAR_FIRST(m, bitwise_and);
  TESSERA_REGISTER_SCALAR_FIRST(m, bitwise_or);
  TESSERA_REGISTER_SCALAR_FIRST(m, bitwise_xor);
  TESSERA_REGISTER_BINARY(m, bitwise_left_shift, "bitwise_left_shift.Tensor",
                          "bitwise_left_shift.Tensor_Scalar", "bitwise_left_shift_.Tensor",
                          "bitwise_left_shift_.Tensor_Scalar", "bitwise_left_shift.Tensor_out",
                          "bitwise_left_shift.Tensor_Scalar_out");
  TESSERA_REGISTER_BINARY(m, bitwise_right_shift, "bitwise_right_shift.Tensor",
                          "bitwise_right_shift.Tensor_Scalar", "bitwise_right_shift_.Tensor",
                          "bitwise_right_shift_.Tensor_Scalar", "bitwise_right_shift.Tensor_out",
                          "bitwise_right_shift.Tensor_Scalar_out");
  TESSERA_REGISTER_SCALAR_FIRST(m, bitwise_left_shift);
  TESSERA_REGISTER_SCALAR_FIRST(m, bitwise_right_shift);
  // x << y and x >> y (the semantics of the bitwise_*_shift ops).
  TT_FN(m, "__lshift__.Tensor", bitwise_left_shift, &tessera::bitwise_left_shift,
        &tessera::bitwise_left_shift);
  TT_SCALAR(m, "__lshift__.Scalar", bitwise_left_shift, &tessera::bitwise_left_shift);
  TT_FN(m, "__rshift__.Tensor", bitwise_right_shift, &tessera::bitwise_right_shift,
        &tessera::bitwise_right_shift);
  TT_SCALAR(m, "__rshift__.Scalar", bitwise_right_shift, &tessera::bitwise_right_shift);
  // x <<= y and x >>= y.
  TT_INPLACE(m, "__ilshift__.Tensor", bitwise_left_shift, &tessera::bitwise_left_shift_,
             &tessera::bitwise_left_shift_);
  TT_SCALAR_INPLACE(m, "__ilshift__.Scalar", bitwise_left_shift, &tessera::bitwise_left_shift_);
  TT_INPLACE(m, "__irshift__.Tensor", bitwise_right_shift, &tessera::bitwise_right_shift_,
             &tessera::bitwise_right_shift_);
  TT_SCALAR_INPLACE(m, "__irshift__.Scalar", bitwise_right_shift, &tessera::bitwise_right_shift_);
}

}  // namespace
}  // namespace torch_tessera
