// Pointwise ops that everyday models call beyond the first op set: log10,
// the hyperbolic and inverse trigonometric functions, hardswish and
// hardsigmoid with their gradients, isneginf/isposinf, fmod and
// logaddexp(2); with Scalar operands, in-place and out= forms, and errors.
#include <cmath>
#include <cstdint>
#include <limits>

#include "tests/conformance/conformance.h"
#include "tests/conformance/pointwise_cases.h"

namespace tessera::conformance {
namespace {

using namespace pointwise_cases;

double relu6(double v) { return std::isnan(v) ? v : std::min(std::max(v, 0.0), 6.0); }
double hardswish_ref(double x) { return x * relu6(x + 3) / 6; }
double hardsigmoid_ref(double x) { return relu6(x + 3) / 6; }

// PyTorch's gradients: NaN self passes the gradient for hardswish and
// gives 0 for hardsigmoid (both through ordered comparisons).
double hardswish_backward_ref(double g, double x) {
  if (x <= -3) return 0;
  return x < 3 ? g * (x / 3 + 0.5) : g;
}
double hardsigmoid_backward_ref(double g, double x) { return x > -3 && x < 3 ? g / 6 : 0; }

double logaddexp_ref(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (std::isinf(a) && a == b) return a;
  return std::max(a, b) + std::log1p(std::exp(-std::fabs(a - b)));
}
double logaddexp2_ref(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  if (std::isinf(a) && a == b) return a;
  return std::max(a, b) + std::log1p(std::exp2(-std::fabs(a - b))) / std::log(2.0);
}

// A floating sample of the values where the activations change formula.
void add_activation_edges(std::vector<Sample>& samples, DType dtype, int arity) {
  const std::vector<double> v = {-3.0, 3.0, -3.5, 3.5, -2.75, 2.75, 0.0, NAN};
  Sample s;
  s.description = "values at the activation's edges (+-3)";
  for (int k = 0; k < arity; ++k) {
    Tensor t = empty({static_cast<int64_t>(v.size())}, TensorOptions(DType::kF64, host_device()));
    for (size_t i = 0; i < v.size(); ++i) t.data<double>()[i] = k == 0 && arity == 2 ? 1.5 : v[i];
    s.inputs.push_back(t.to(dtype));
  }
  samples.push_back(std::move(s));
}

OpCase with_activation_edges(OpCase c, int arity) {
  auto base = c.samples;
  c.samples = [base, arity](DType t) {
    std::vector<Sample> s = base(t);
    add_activation_edges(s, t, arity);
    return s;
  };
  return c;
}

}  // namespace

#define UNARY_FLOAT_OP(label, fn, expr, lo, hi)                                          \
  TESSERA_CONFORMANCE_OP(label) {                                                        \
    return unary_case(all_dtypes(), [](const Tensor& x) { return fn(x); },               \
                      [](double x) { return expr; }, to_float, lo, hi);                  \
  }

UNARY_FLOAT_OP("log10", log10, std::log10(x), 0.25, 5.0)
UNARY_FLOAT_OP("sinh", sinh, std::sinh(x), -3.0, 3.0)
UNARY_FLOAT_OP("cosh", cosh, std::cosh(x), -3.0, 3.0)
UNARY_FLOAT_OP("asin", asin, std::asin(x), -1.0, 1.0)
UNARY_FLOAT_OP("acos", acos, std::acos(x), -1.0, 1.0)
UNARY_FLOAT_OP("atan", atan, std::atan(x), -3.0, 3.0)
UNARY_FLOAT_OP("asinh", asinh, std::asinh(x), -3.0, 3.0)
UNARY_FLOAT_OP("acosh", acosh, std::acosh(x), 1.0, 5.0)
UNARY_FLOAT_OP("atanh", atanh, std::atanh(x), -0.99, 0.99)

#undef UNARY_FLOAT_OP

// Wide ranges reach the formulas kernels use far from 0 (sinh and cosh
// near the f32 overflow, atan through 1/x, asinh and acosh of large x).
#define UNARY_WIDE_OP(label, fn, expr, lo, hi)                                           \
  TESSERA_CONFORMANCE_OP(label) {                                                        \
    return unary_case(floating_dtypes(), [](const Tensor& x) { return fn(x); },          \
                      [](double x) { return expr; }, same, lo, hi, false);               \
  }

UNARY_WIDE_OP("sinh wide range", sinh, std::sinh(x), -89.0, 89.0)
UNARY_WIDE_OP("cosh wide range", cosh, std::cosh(x), -89.0, 89.0)
UNARY_WIDE_OP("atan wide range", atan, std::atan(x), -1.0e4, 1.0e4)
UNARY_WIDE_OP("asinh wide range", asinh, std::asinh(x), -1.0e4, 1.0e4)
UNARY_WIDE_OP("acosh wide range", acosh, std::acosh(x), 1.0, 1.0e4)

#undef UNARY_WIDE_OP

TESSERA_CONFORMANCE_OP("hardswish") {
  return with_activation_edges(unary_case(floating_dtypes(),
                                          [](const Tensor& x) { return hardswish(x); },
                                          hardswish_ref, same, -5.0, 5.0),
                               1);
}
TESSERA_CONFORMANCE_OP("hardsigmoid") {
  return with_activation_edges(unary_case(floating_dtypes(),
                                          [](const Tensor& x) { return hardsigmoid(x); },
                                          hardsigmoid_ref, same, -5.0, 5.0),
                               1);
}
TESSERA_CONFORMANCE_OP("isneginf") {
  return unary_case(all_dtypes(), [](const Tensor& x) { return isneginf(x); },
                    [](double x) { return x == -INFINITY ? 1.0 : 0.0; }, to_bool);
}
TESSERA_CONFORMANCE_OP("isposinf") {
  return unary_case(all_dtypes(), [](const Tensor& x) { return isposinf(x); },
                    [](double x) { return x == INFINITY ? 1.0 : 0.0; }, to_bool);
}

// -- Binary.
TESSERA_CONFORMANCE_OP("fmod") {
  // Exact in every dtype: C's fmod of doubles holding integers is C's %.
  return binary_case(numeric_dtypes(), [](const Tensor& a, const Tensor& b) { return fmod(a, b); },
                     [](double a, double b) { return std::fmod(a, b); }, same, -9.0, 9.0, true,
                     true);
}
TESSERA_CONFORMANCE_OP("fmod scalar divisor") {
  return unary_case(numeric_dtypes(), [](const Tensor& a) { return fmod(a, 4); },
                    [](double a) { return std::fmod(a, 4); }, same, -9.0, 9.0);
}
TESSERA_CONFORMANCE_OP("fmod float scalar of an integer tensor") {
  // A float Scalar makes the result float32, as result_type.
  return unary_case(integral_and_bool_dtypes(), [](const Tensor& a) { return fmod(a, 2.5); },
                    [](double a) { return std::fmod(a, 2.5); }, to_float, -9.0, 9.0);
}
TESSERA_CONFORMANCE_OP("logaddexp") {
  return binary_case(floating_dtypes(),
                     [](const Tensor& a, const Tensor& b) { return logaddexp(a, b); },
                     logaddexp_ref, same, -20.0, 20.0);
}
TESSERA_CONFORMANCE_OP("logaddexp2") {
  return binary_case(floating_dtypes(),
                     [](const Tensor& a, const Tensor& b) { return logaddexp2(a, b); },
                     logaddexp2_ref, same, -20.0, 20.0);
}
TESSERA_CONFORMANCE_OP("hardswish_backward") {
  return with_activation_edges(
      binary_case(floating_dtypes(),
                  [](const Tensor& g, const Tensor& x) { return hardswish_backward(g, x); },
                  hardswish_backward_ref, same, -5.0, 5.0),
      2);
}
TESSERA_CONFORMANCE_OP("hardsigmoid_backward") {
  return with_activation_edges(
      binary_case(floating_dtypes(),
                  [](const Tensor& g, const Tensor& x) { return hardsigmoid_backward(g, x); },
                  hardsigmoid_backward_ref, same, -5.0, 5.0),
      2);
}

// -- In-place and out= forms.
TESSERA_CONFORMANCE_OP("atanh_ in place") {
  return variant_of(
      unary_case(floating_dtypes(), nullptr, [](double x) { return std::atanh(x); }, same, -0.9, 0.9),
      Variant::kInPlace, [](Tensor& dst, const std::vector<Tensor>&) { atanh_(dst); }, same);
}
TESSERA_CONFORMANCE_OP("log10_out") {
  return variant_of(
      unary_case(all_dtypes(), nullptr, [](double x) { return std::log10(x); }, to_float, 0.25, 5.0),
      Variant::kOut, [](Tensor& dst, const std::vector<Tensor>& in) { log10_out(dst, in[0]); },
      to_float);
}
TESSERA_CONFORMANCE_OP("hardswish_ in place") {
  return variant_of(unary_case(floating_dtypes(), nullptr, hardswish_ref, same, -5.0, 5.0),
                    Variant::kInPlace, [](Tensor& dst, const std::vector<Tensor>&) { hardswish_(dst); },
                    same);
}
TESSERA_CONFORMANCE_OP("isposinf_out") {
  return variant_of(
      unary_case(all_dtypes(), nullptr, [](double x) { return x == INFINITY ? 1.0 : 0.0; }, to_bool),
      Variant::kOut, [](Tensor& dst, const std::vector<Tensor>& in) { isposinf_out(dst, in[0]); },
      to_bool);
}
TESSERA_CONFORMANCE_OP("fmod_ in place") {
  return variant_of(binary_case(numeric_dtypes(), nullptr,
                                [](double a, double b) { return std::fmod(a, b); }, same, -9, 9,
                                false, true),
                    Variant::kInPlace,
                    [](Tensor& dst, const std::vector<Tensor>& in) { fmod_(dst, in[1]); }, same);
}
TESSERA_CONFORMANCE_OP("logaddexp_out") {
  return variant_of(binary_case(floating_dtypes(), nullptr, logaddexp_ref, same, -20.0, 20.0),
                    Variant::kOut,
                    [](Tensor& dst, const std::vector<Tensor>& in) { logaddexp_out(dst, in[0], in[1]); },
                    same);
}

TESSERA_CONFORMANCE_ERRORS("pointwise ext") {
  auto i64 = [](Device d, std::vector<double> v) {
    Tensor t = empty({static_cast<int64_t>(v.size())}, TensorOptions(DType::kI64, host_device()));
    for (size_t k = 0; k < v.size(); ++k) t.data<int64_t>()[k] = static_cast<int64_t>(v[k]);
    return t.to(d);
  };
  auto i = [](Device d) { return ones({2}, TensorOptions(DType::kI32, d)); };
  auto b = [](Device d) { return ones({2}, TensorOptions(DType::kBool, d)); };
  return std::vector<ErrorCase>{
      {"integer fmod by zero", [i64](Device d) { fmod(i64(d, {5, -5}), i64(d, {2, 0})); },
       ErrorKind::kValue, {"fmod", "ZeroDivisionError"}},
      {"integer fmod by a zero scalar", [i64](Device d) { fmod(i64(d, {5}), 0); },
       ErrorKind::kValue, {"fmod", "ZeroDivisionError"}},
      {"fmod of bool", [b](Device d) { fmod(b(d), b(d)); }, ErrorKind::kType, {"fmod", "bool"}},
      {"logaddexp of int", [i](Device d) { logaddexp(i(d), i(d)); }, ErrorKind::kType,
       {"logaddexp", "int32"}},
      {"logaddexp2 of bool", [b](Device d) { logaddexp2(b(d), b(d)); }, ErrorKind::kType,
       {"logaddexp2", "bool"}},
      {"hardswish of int", [i](Device d) { hardswish(i(d)); }, ErrorKind::kType,
       {"hardswish", "int32"}},
      {"hardsigmoid of bool", [b](Device d) { hardsigmoid(b(d)); }, ErrorKind::kType,
       {"hardsigmoid", "bool"}},
      {"hardswish_backward of int", [i](Device d) { hardswish_backward(i(d), i(d)); },
       ErrorKind::kType, {"hardswish_backward", "int32"}},
      {"asin_ of int can't hold float", [i](Device d) { Tensor t = i(d); asin_(t); },
       ErrorKind::kType, {"asin", "float32", "int32"}},
      {"isposinf_out into float",
       [](Device d) { Tensor o = empty({2}, d); isposinf_out(o, ones({2}, d)); }, ErrorKind::kType,
       {"isposinf", "non-boolean"}},
      {"logaddexp incompatible shapes", [](Device d) { logaddexp(ones({2, 3}, d), ones({4}, d)); },
       ErrorKind::kValue, {"logaddexp", "[2, 3]", "[4]"}},
  };
}

}  // namespace tessera::conformance
