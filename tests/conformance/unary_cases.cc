// Unary ops: math, activations, rounding, clamp, predicates, bitwise_not,
// with their in-place and out= forms and error cases.
#include <cmath>

#include "tests/conformance/conformance.h"
#include "tests/conformance/pointwise_cases.h"

namespace tessera::conformance {
namespace {

using namespace pointwise_cases;

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

double sign_ref(double x) { return (0 < x) - (x < 0); }
double round_half_even(double x) { return std::nearbyint(x); }

// Integer and bool math in the dtype's own arithmetic: neg/abs wrap, which
// round_to_dtype reproduces from the exact double.
std::vector<DType> numeric() { return numeric_dtypes(); }

}  // namespace

#define UNARY_FLOAT_OP(label, fn, expr, lo, hi)                                          \
  TESSERA_CONFORMANCE_OP(label) {                                                        \
    return unary_case(all_dtypes(), [](const Tensor& x) { return fn(x); },               \
                      [](double x) { return expr; }, to_float, lo, hi);                  \
  }

UNARY_FLOAT_OP("exp", exp, std::exp(x), -3.0, 3.0)
UNARY_FLOAT_OP("expm1", expm1, std::expm1(x), -3.0, 3.0)
UNARY_FLOAT_OP("log", log, std::log(x), 0.25, 5.0)
UNARY_FLOAT_OP("log1p", log1p, std::log1p(x), -0.5, 5.0)
UNARY_FLOAT_OP("log2", log2, std::log2(x), 0.25, 5.0)
UNARY_FLOAT_OP("sqrt", sqrt, std::sqrt(x), 0.0, 5.0)
UNARY_FLOAT_OP("rsqrt", rsqrt, 1.0 / std::sqrt(x), 0.25, 5.0)
UNARY_FLOAT_OP("reciprocal", reciprocal, 1.0 / x, 0.25, 5.0)
UNARY_FLOAT_OP("sin", sin, std::sin(x), -3.0, 3.0)
UNARY_FLOAT_OP("cos", cos, std::cos(x), -3.0, 3.0)
UNARY_FLOAT_OP("tan", tan, std::tan(x), -1.2, 1.2)
UNARY_FLOAT_OP("tanh", tanh, std::tanh(x), -3.0, 3.0)
UNARY_FLOAT_OP("sigmoid", sigmoid, 1.0 / (1.0 + std::exp(-x)), -6.0, 6.0)
UNARY_FLOAT_OP("erf", erf, std::erf(x), -3.0, 3.0)

#undef UNARY_FLOAT_OP

TESSERA_CONFORMANCE_OP("neg") {
  return unary_case(numeric(), [](const Tensor& x) { return neg(x); }, [](double x) { return -x; },
                    same);
}
TESSERA_CONFORMANCE_OP("abs") {
  return unary_case(numeric(), [](const Tensor& x) { return abs(x); },
                    [](double x) { return std::fabs(x); }, same);
}
TESSERA_CONFORMANCE_OP("sign") {
  return unary_case(all_dtypes(), [](const Tensor& x) { return sign(x); }, sign_ref, same);
}
TESSERA_CONFORMANCE_OP("relu") {
  return unary_case(numeric(), [](const Tensor& x) { return relu(x); },
                    [](double x) { return x < 0 ? 0.0 : x; }, same);
}
TESSERA_CONFORMANCE_OP("gelu") {
  return unary_case(floating_dtypes(), [](const Tensor& x) { return gelu(x); },
                    [](double x) { return 0.5 * x * (1 + std::erf(x * kInvSqrt2)); }, same);
}
TESSERA_CONFORMANCE_OP("gelu tanh") {
  return unary_case(floating_dtypes(), [](const Tensor& x) { return gelu(x, "tanh"); },
                    [](double x) {
                      return 0.5 * x * (1 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
                    },
                    same);
}
TESSERA_CONFORMANCE_OP("silu") {
  return unary_case(floating_dtypes(), [](const Tensor& x) { return silu(x); },
                    [](double x) { return x / (1 + std::exp(-x)); }, same);
}
TESSERA_CONFORMANCE_OP("floor") {
  return unary_case(numeric(), [](const Tensor& x) { return floor(x); },
                    [](double x) { return std::floor(x); }, same);
}
TESSERA_CONFORMANCE_OP("ceil") {
  return unary_case(numeric(), [](const Tensor& x) { return ceil(x); },
                    [](double x) { return std::ceil(x); }, same);
}
TESSERA_CONFORMANCE_OP("round") {
  return unary_case(numeric(), [](const Tensor& x) { return round(x); }, round_half_even, same);
}
TESSERA_CONFORMANCE_OP("trunc") {
  return unary_case(numeric(), [](const Tensor& x) { return trunc(x); },
                    [](double x) { return std::trunc(x); }, same);
}
TESSERA_CONFORMANCE_OP("clamp") {
  return unary_case(numeric(), [](const Tensor& x) { return clamp(x, 0, 2); },
                    [](double x) { return std::isnan(x) ? x : std::min(std::max(x, 0.0), 2.0); },
                    same);
}
TESSERA_CONFORMANCE_OP("clamp min only with float bound") {
  // A float bound makes an integer result float32, as result_type.
  return unary_case(numeric(), [](const Tensor& x) { return clamp(x, 0.5); },
                    [](double x) { return std::isnan(x) ? x : std::max(x, 0.5); }, to_float);
}
TESSERA_CONFORMANCE_OP("clamp max only") {
  return unary_case(numeric(), [](const Tensor& x) { return clamp(x, std::nullopt, 1); },
                    [](double x) { return std::isnan(x) ? x : std::min(x, 1.0); }, same);
}
TESSERA_CONFORMANCE_OP("clamp_min and clamp_max") {
  OpCase c = unary_case(numeric(), [](const Tensor& x) { return clamp_min(x, 0); }, nullptr, same);
  c.run = [](const std::vector<Tensor>& in, const Sample&) {
    Tensor max_in_place = in[0].clone();
    clamp_max_(max_in_place, 1);
    const Tensor zero = zeros({}, TensorOptions(in[0].dtype(), in[0].device()));
    return std::vector<Tensor>{clamp_min(in[0], 0), max_in_place, clamp_max(in[0], zero)};
  };
  c.reference = [](const Sample& s) {
    const DType t = s.inputs[0].dtype();
    auto bound = [&](double lo, double hi) {
      return map_reference(s.inputs, t, [lo, hi](const std::vector<double>& v) {
        return std::isnan(v[0]) ? v[0] : std::min(std::max(v[0], lo), hi);
      });
    };
    const double inf = std::numeric_limits<double>::infinity();
    return std::vector<Expected>{bound(0, inf), bound(-inf, 1), bound(-inf, 0)};
  };
  return c;
}
TESSERA_CONFORMANCE_OP("logical_not") {
  return unary_case(all_dtypes(), [](const Tensor& x) { return logical_not(x); },
                    [](double x) { return x == 0 ? 1.0 : 0.0; }, to_bool);
}
TESSERA_CONFORMANCE_OP("isnan") {
  return unary_case(all_dtypes(), [](const Tensor& x) { return isnan(x); },
                    [](double x) { return std::isnan(x) ? 1.0 : 0.0; }, to_bool);
}
TESSERA_CONFORMANCE_OP("isinf") {
  return unary_case(all_dtypes(), [](const Tensor& x) { return isinf(x); },
                    [](double x) { return std::isinf(x) ? 1.0 : 0.0; }, to_bool);
}
TESSERA_CONFORMANCE_OP("isfinite") {
  return unary_case(all_dtypes(), [](const Tensor& x) { return isfinite(x); },
                    [](double x) { return std::isfinite(x) ? 1.0 : 0.0; }, to_bool);
}
TESSERA_CONFORMANCE_OP("bitwise_not") {
  return unary_case(integral_dtypes(), [](const Tensor& x) { return bitwise_not(x); },
                    [](double x) { return -x - 1; }, same);
}
TESSERA_CONFORMANCE_OP("bitwise_not bool") {
  return unary_case({DType::kBool}, [](const Tensor& x) { return bitwise_not(x); },
                    [](double x) { return x == 0 ? 1.0 : 0.0; }, same);
}

// -- In-place and out= forms.
TESSERA_CONFORMANCE_OP("exp_ in place") {
  return variant_of(
      unary_case(floating_dtypes(), [](const Tensor& x) { return exp(x); },
                 [](double x) { return std::exp(x); }, same),
      Variant::kInPlace, [](Tensor& dst, const std::vector<Tensor>&) { exp_(dst); }, same);
}
TESSERA_CONFORMANCE_OP("neg_ in place") {
  return variant_of(
      unary_case(numeric(), [](const Tensor& x) { return neg(x); }, [](double x) { return -x; }, same),
      Variant::kInPlace, [](Tensor& dst, const std::vector<Tensor>&) { neg_(dst); }, same);
}
TESSERA_CONFORMANCE_OP("sqrt_out") {
  return variant_of(
      unary_case(all_dtypes(), [](const Tensor& x) { return sqrt(x); },
                 [](double x) { return std::sqrt(x); }, to_float, 0.0, 5.0),
      Variant::kOut, [](Tensor& dst, const std::vector<Tensor>& in) { sqrt_out(dst, in[0]); },
      to_float);
}
TESSERA_CONFORMANCE_OP("sigmoid_out into float64") {
  // out of a wider dtype than the result: computed, then cast.
  return variant_of(
      unary_case({DType::kF32}, [](const Tensor& x) { return sigmoid(x); },
                 [](double x) { return static_cast<float>(1.0 / (1.0 + std::exp(-x))); },
                 [](DType) { return DType::kF64; }),
      Variant::kOut, [](Tensor& dst, const std::vector<Tensor>& in) { sigmoid_out(dst, in[0]); },
      [](DType) { return DType::kF64; });
}
TESSERA_CONFORMANCE_OP("relu_ in place") {
  return variant_of(
      unary_case(numeric(), [](const Tensor& x) { return relu(x); },
                 [](double x) { return x < 0 ? 0.0 : x; }, same),
      Variant::kInPlace, [](Tensor& dst, const std::vector<Tensor>&) { relu_(dst); }, same);
}
TESSERA_CONFORMANCE_OP("clamp_ in place") {
  return variant_of(
      unary_case(numeric(), [](const Tensor& x) { return clamp(x, 0, 1); },
                 [](double x) { return std::isnan(x) ? x : std::min(std::max(x, 0.0), 1.0); }, same),
      Variant::kInPlace, [](Tensor& dst, const std::vector<Tensor>&) { clamp_(dst, 0, 1); }, same);
}
TESSERA_CONFORMANCE_OP("gelu_out tanh") {
  return variant_of(
      unary_case(floating_dtypes(), [](const Tensor& x) { return gelu(x, "tanh"); },
                 [](double x) {
                   return 0.5 * x * (1 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
                 },
                 same),
      Variant::kOut, [](Tensor& dst, const std::vector<Tensor>& in) { gelu_out(dst, in[0], "tanh"); },
      same);
}
TESSERA_CONFORMANCE_OP("floor_ in place") {
  return variant_of(
      unary_case(numeric(), [](const Tensor& x) { return floor(x); },
                 [](double x) { return std::floor(x); }, same),
      Variant::kInPlace, [](Tensor& dst, const std::vector<Tensor>&) { floor_(dst); }, same);
}

TESSERA_CONFORMANCE_ERRORS("unary") {
  auto b = [](Device d) { return ones({2}, TensorOptions(DType::kBool, d)); };
  auto i = [](Device d) { return ones({2}, TensorOptions(DType::kI32, d)); };
  return std::vector<ErrorCase>{
      {"neg of bool", [b](Device d) { neg(b(d)); }, ErrorKind::kType, {"neg", "bool"}},
      {"abs of bool", [b](Device d) { abs(b(d)); }, ErrorKind::kType, {"abs", "bool"}},
      {"relu of bool", [b](Device d) { relu(b(d)); }, ErrorKind::kType, {"relu", "bool"}},
      {"floor of bool", [b](Device d) { floor(b(d)); }, ErrorKind::kType, {"floor", "bool"}},
      {"gelu of int", [i](Device d) { gelu(i(d)); }, ErrorKind::kType, {"gelu", "int32"}},
      {"silu of int", [i](Device d) { silu(i(d)); }, ErrorKind::kType, {"silu", "int32"}},
      {"gelu bad approximate", [](Device d) { gelu(ones({2}, d), "fast"); }, ErrorKind::kValue,
       {"gelu", "none or tanh", "fast"}},
      {"bitwise_not of float", [](Device d) { bitwise_not(ones({2}, d)); }, ErrorKind::kType,
       {"bitwise_not", "float32"}},
      {"exp_ of int can't hold float", [i](Device d) { Tensor t = i(d); exp_(t); },
       ErrorKind::kType, {"exp", "float32", "int32"}},
      {"clamp without bounds", [](Device d) { clamp(ones({2}, d), std::optional<Scalar>(), std::optional<Scalar>()); },
       ErrorKind::kValue, {"clamp", "min", "max"}},
      {"clamp bound out of the dtype's range",
       [](Device d) { clamp(ones({2}, TensorOptions(DType::kI8, d)), 0, 200); },
       ErrorKind::kValue, {"clamp", "200", "int8"}},
      {"clamp_ of int with float bound", [i](Device d) { Tensor t = i(d); clamp_(t, 0.5); },
       ErrorKind::kType, {"clamp", "float32", "int32"}},
      {"out of wrong shape", [](Device d) { Tensor o = empty({3}, d); exp_out(o, ones({2}, d)); },
       ErrorKind::kValue, {"exp", "[3]", "[2]"}},
      {"out of a dtype the result can't cast to",
       [](Device d) { Tensor o = empty({2}, TensorOptions(DType::kI64, d)); sqrt_out(o, ones({2}, d)); },
       ErrorKind::kType, {"sqrt", "float32", "int64"}},
      {"in-place on an expanded tensor",
       [](Device d) { Tensor t = ones({1, 3}, d).expand({2, 3}); exp_(t); },
       ErrorKind::kValue, {"exp", "single memory location"}},
  };
}

}  // namespace tessera::conformance
