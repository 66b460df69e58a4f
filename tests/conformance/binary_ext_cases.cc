// Binary ops beyond add/sub/mul/div: rounding division, remainder, pow,
// maximum/minimum, atan2, bitwise ops and shifts, activation gradients;
// with Scalar operands, in-place and out= forms, and error cases.
#include <cmath>
#include <cstdint>

#include "tests/conformance/conformance.h"
#include "tests/conformance/pointwise_cases.h"

namespace tessera::conformance {
namespace {

using namespace pointwise_cases;

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

double floor_div_ref(double a, double b) { return std::floor(a / b); }
double trunc_div_ref(double a, double b) { return std::trunc(a / b); }

// PyTorch's floor division of floats (from fmod, so that it agrees with
// remainder), each step rounded to dtype t as its CPU computes them.
double floor_div_float_ref(double a, double b, DType t) {
  auto r = [t](double v) { return round_to_dtype(v, t); };
  if (b == 0) return r(a / b);
  const double mod = r(std::fmod(a, b));
  double div = r(r(a - mod) / b);
  if (mod != 0 && ((b < 0) != (mod < 0))) div = r(div - 1);
  if (div == 0) return std::copysign(0.0, r(a / b));
  double q = std::floor(div);
  if (r(div - q) > 0.5) q = r(q + 1);
  return q;
}

// Floor division with the float formula for floating dtypes.
OpCase floor_division_case(std::function<Tensor(const Tensor&, const Tensor&)> op) {
  OpCase c = binary_case(numeric_dtypes(), std::move(op), floor_div_ref, same, -9.0, 9.0, false,
                         true);
  c.reference = [](const Sample& s) {
    const DType t = s.inputs[0].dtype();
    return std::vector<Expected>{map_reference(s.inputs, t, [t](const std::vector<double>& v) {
      return is_floating(t) ? floor_div_float_ref(v[0], v[1], t) : floor_div_ref(v[0], v[1]);
    })};
  };
  return c;
}
double remainder_ref(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }
double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b); }

// Integer pow as PyTorch: a negative exponent gives 1/a truncated.
double int_pow_ref(double a, double b) {
  if (b < 0) return a == 1 ? 1 : (a == -1 ? (std::fmod(b, 2) != 0 ? -1 : 1) : 0);
  return std::pow(a, b);
}

int bits_of(DType t) { return static_cast<int>(itemsize(t) * 8); }

std::vector<DType> numeric_no_bool() { return numeric_dtypes(); }

OpCase integral_pow_case() {
  return binary_case(integral_dtypes(), [](const Tensor& a, const Tensor& b) { return pow(a, b); },
                     int_pow_ref, same, -3.0, 3.0);
}

}  // namespace

TESSERA_CONFORMANCE_OP("floor_divide") {
  return floor_division_case([](const Tensor& a, const Tensor& b) { return floor_divide(a, b); });
}
TESSERA_CONFORMANCE_OP("div rounding_mode floor") {
  return floor_division_case([](const Tensor& a, const Tensor& b) { return div(a, b, "floor"); });
}
TESSERA_CONFORMANCE_OP("div rounding_mode trunc") {
  OpCase c = binary_case(numeric_no_bool(),
                         [](const Tensor& a, const Tensor& b) { return div(a, b, "trunc"); },
                         trunc_div_ref, same, -9.0, 9.0, false, true);
  // trunc(a / b) with the quotient rounded to the dtype first, as PyTorch
  // computes it: a quotient just below an integer may round up to it.
  c.reference = [](const Sample& s) {
    const DType t = s.inputs[0].dtype();
    return std::vector<Expected>{map_reference(s.inputs, t, [t](const std::vector<double>& v) {
      if (is_floating(t)) return std::trunc(round_to_dtype(v[0] / v[1], t));
      return trunc_div_ref(v[0], v[1]);
    })};
  };
  return c;
}
TESSERA_CONFORMANCE_OP("remainder") {
  return binary_case(numeric_no_bool(), [](const Tensor& a, const Tensor& b) { return remainder(a, b); },
                     remainder_ref, same, -9.0, 9.0, false, true);
}
TESSERA_CONFORMANCE_OP("remainder scalar divisor") {
  // Not uint8: -4 wraps to 252 there, as in PyTorch.
  const std::vector<DType> dtypes = {DType::kI8,  DType::kI16, DType::kI32, DType::kI64,
                                     DType::kF16, DType::kBF16, DType::kF32, DType::kF64};
  return unary_case(dtypes, [](const Tensor& a) { return remainder(a, -4); },
                    [](double a) { return remainder_ref(a, -4); }, same, -9.0, 9.0, false);
}
TESSERA_CONFORMANCE_OP("remainder scalar tensor") {
  // The divisor is the tensor: its zeros become 1 (integer x % 0 raises).
  OpCase c = unary_case(numeric_no_bool(), [](const Tensor& b) { return remainder(7, b); },
                        [](double b) { return remainder_ref(7, b); }, same, -9.0, 9.0, false);
  auto samples = c.samples;
  c.samples = [samples](DType t) {
    std::vector<Sample> s = samples(t);
    for (Sample& x : s) replace_zeros(x.inputs[0], 1);
    return s;
  };
  return c;
}
TESSERA_CONFORMANCE_OP("pow floating") {
  return binary_case(floating_dtypes(), [](const Tensor& a, const Tensor& b) { return pow(a, b); },
                     [](double a, double b) { return std::pow(a, b); }, same, 0.25, 2.5);
}
TESSERA_CONFORMANCE_OP("pow integral") { return integral_pow_case(); }
TESSERA_CONFORMANCE_OP("pow tensor scalar") {
  return unary_case(numeric_no_bool(), [](const Tensor& a) { return pow(a, 3); },
                    [](double a) { return a * a * a; }, same);
}
TESSERA_CONFORMANCE_OP("pow tensor float scalar") {
  return unary_case(all_dtypes(), [](const Tensor& a) { return pow(a, 0.5); },
                    [](double a) { return std::pow(a, 0.5); }, to_float, 0.0, 9.0);
}
TESSERA_CONFORMANCE_OP("pow scalar tensor") {
  return unary_case(numeric_no_bool(), [](const Tensor& e) { return pow(2, e); },
                    [](double e) { return std::pow(2.0, e); }, same, 0.0, 6.0);
}
TESSERA_CONFORMANCE_OP("maximum") {
  return binary_case(all_dtypes(), [](const Tensor& a, const Tensor& b) { return maximum(a, b); },
                     nan_max, same);
}
TESSERA_CONFORMANCE_OP("minimum") {
  return binary_case(all_dtypes(), [](const Tensor& a, const Tensor& b) { return minimum(a, b); },
                     nan_min, same);
}
TESSERA_CONFORMANCE_OP("atan2") {
  return binary_case(all_dtypes(), [](const Tensor& a, const Tensor& b) { return atan2(a, b); },
                     [](double a, double b) { return std::atan2(a, b); }, to_float);
}
TESSERA_CONFORMANCE_OP("bitwise_and") {
  return binary_case(integral_and_bool_dtypes(),
                     [](const Tensor& a, const Tensor& b) { return bitwise_and(a, b); },
                     [](double a, double b) {
                       return static_cast<double>(static_cast<int64_t>(a) & static_cast<int64_t>(b));
                     },
                     same, -100, 100);
}
TESSERA_CONFORMANCE_OP("bitwise_or") {
  return binary_case(integral_and_bool_dtypes(),
                     [](const Tensor& a, const Tensor& b) { return bitwise_or(a, b); },
                     [](double a, double b) {
                       return static_cast<double>(static_cast<int64_t>(a) | static_cast<int64_t>(b));
                     },
                     same, -100, 100);
}
TESSERA_CONFORMANCE_OP("bitwise_xor") {
  return binary_case(integral_and_bool_dtypes(),
                     [](const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); },
                     [](double a, double b) {
                       return static_cast<double>(static_cast<int64_t>(a) ^ static_cast<int64_t>(b));
                     },
                     same, -100, 100);
}
TESSERA_CONFORMANCE_OP("bitwise_left_shift") {
  OpCase c = binary_case(integral_dtypes(),
                         [](const Tensor& a, const Tensor& b) { return bitwise_left_shift(a, b); },
                         nullptr, same, -3, 12);
  c.reference = [](const Sample& s) {
    const int bits = bits_of(s.inputs[0].dtype());
    return std::vector<Expected>{map_reference(s.inputs, s.inputs[0].dtype(), [bits](const std::vector<double>& v) {
      const int64_t a = static_cast<int64_t>(v[0]), b = static_cast<int64_t>(v[1]);
      if (b < 0 || b >= bits) return 0.0;
      // Shift in unsigned 64-bit arithmetic; round_to_dtype wraps to the width.
      return static_cast<double>(static_cast<int64_t>(static_cast<uint64_t>(a) << b));
    })};
  };
  return c;
}
TESSERA_CONFORMANCE_OP("bitwise_right_shift") {
  OpCase c = binary_case(integral_dtypes(),
                         [](const Tensor& a, const Tensor& b) { return bitwise_right_shift(a, b); },
                         nullptr, same, -3, 70);
  c.reference = [](const Sample& s) {
    const int bits = bits_of(s.inputs[0].dtype());
    return std::vector<Expected>{map_reference(s.inputs, s.inputs[0].dtype(), [bits](const std::vector<double>& v) {
      const int64_t a = static_cast<int64_t>(v[0]), b = static_cast<int64_t>(v[1]);
      if (b < 0 || b >= bits) return a < 0 ? -1.0 : 0.0;
      return static_cast<double>(a >> b);
    })};
  };
  return c;
}

TESSERA_CONFORMANCE_OP("shifts scalar tensor") {
  // 5 << b and -64 >> b for shift amounts in range.
  OpCase c = unary_case(integral_dtypes(), [](const Tensor& b) { return bitwise_left_shift(5, b); },
                        nullptr, same, 0, 6, false);
  c.run = [](const std::vector<Tensor>& in, const Sample&) {
    return std::vector<Tensor>{bitwise_left_shift(5, in[0]), bitwise_right_shift(-64, in[0])};
  };
  c.reference = [](const Sample& s) {
    const DType t = s.inputs[0].dtype();
    auto shifted = [&](bool left) {
      return map_reference(s.inputs, t, [left](const std::vector<double>& v) {
        const int64_t b = static_cast<int64_t>(v[0]);
        // -64 wraps in uint8 before the shift, as PyTorch's scalar cast.
        return left ? static_cast<double>(int64_t{5} << b) : static_cast<double>(int64_t{-64} >> b);
      });
    };
    return std::vector<Expected>{shifted(true), shifted(false)};
  };
  c.dtypes = {DType::kI8, DType::kI16, DType::kI32, DType::kI64};
  return c;
}

// -- Activation gradients.
TESSERA_CONFORMANCE_OP("threshold_backward") {
  return binary_case(numeric_no_bool(),
                     [](const Tensor& g, const Tensor& x) { return threshold_backward(g, x, 1); },
                     [](double g, double x) { return x <= 1 ? 0.0 : g; }, same);
}
TESSERA_CONFORMANCE_OP("relu_backward") {
  return binary_case(floating_dtypes(), [](const Tensor& g, const Tensor& y) { return relu_backward(g, y); },
                     [](double g, double y) { return y <= 0 ? 0.0 : g; }, same);
}
TESSERA_CONFORMANCE_OP("gelu_backward") {
  return binary_case(floating_dtypes(), [](const Tensor& g, const Tensor& x) { return gelu_backward(g, x); },
                     [](double g, double x) {
                       double cdf = 0.5 * (1 + std::erf(x * kInvSqrt2));
                       double pdf = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
                       return g * (cdf + x * pdf);
                     },
                     same, -3, 3, false);
}
TESSERA_CONFORMANCE_OP("gelu_backward tanh") {
  return binary_case(floating_dtypes(),
                     [](const Tensor& g, const Tensor& x) { return gelu_backward(g, x, "tanh"); },
                     [](double g, double x) {
                       double t = std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x));
                       double dt = kSqrt2OverPi * (1 + 3 * 0.044715 * x * x);
                       return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * dt);
                     },
                     same, -3, 3, false);
}
TESSERA_CONFORMANCE_OP("silu_backward") {
  return binary_case(floating_dtypes(), [](const Tensor& g, const Tensor& x) { return silu_backward(g, x); },
                     [](double g, double x) {
                       double s = 1 / (1 + std::exp(-x));
                       return g * s * (1 + x * (1 - s));
                     },
                     same, -3, 3, false);
}
TESSERA_CONFORMANCE_OP("sigmoid_backward") {
  return binary_case(floating_dtypes(),
                     [](const Tensor& g, const Tensor& y) { return sigmoid_backward(g, y); },
                     [](double g, double y) { return g * (1 - y) * y; }, same, -1, 1, false);
}
TESSERA_CONFORMANCE_OP("tanh_backward") {
  return binary_case(floating_dtypes(),
                     [](const Tensor& g, const Tensor& y) { return tanh_backward(g, y); },
                     [](double g, double y) { return g * (1 - y * y); }, same, -1, 1, false);
}

// -- In-place and out= forms.
TESSERA_CONFORMANCE_OP("maximum_out") {
  return variant_of(binary_case(all_dtypes(), nullptr, nan_max, same), Variant::kOut,
                    [](Tensor& dst, const std::vector<Tensor>& in) { maximum_out(dst, in[0], in[1]); },
                    same);
}
TESSERA_CONFORMANCE_OP("remainder_ in place") {
  return variant_of(binary_case(numeric_no_bool(), nullptr, remainder_ref, same, -9, 9, false, true),
                    Variant::kInPlace,
                    [](Tensor& dst, const std::vector<Tensor>& in) { remainder_(dst, in[1]); }, same);
}
TESSERA_CONFORMANCE_OP("pow_ in place") {
  return variant_of(binary_case(floating_dtypes(), nullptr,
                                [](double a, double b) { return std::pow(a, b); }, same, 0.25, 2.5),
                    Variant::kInPlace,
                    [](Tensor& dst, const std::vector<Tensor>& in) { pow_(dst, in[1]); }, same);
}
TESSERA_CONFORMANCE_OP("div_out rounding_mode floor") {
  return variant_of(floor_division_case(nullptr),
                    Variant::kOut,
                    [](Tensor& dst, const std::vector<Tensor>& in) { div_out(dst, in[0], in[1], "floor"); },
                    same);
}
TESSERA_CONFORMANCE_OP("bitwise_xor_ in place") {
  return variant_of(binary_case(integral_and_bool_dtypes(), nullptr,
                                [](double a, double b) {
                                  return static_cast<double>(static_cast<int64_t>(a) ^ static_cast<int64_t>(b));
                                },
                                same, -100, 100),
                    Variant::kInPlace,
                    [](Tensor& dst, const std::vector<Tensor>& in) { bitwise_xor_(dst, in[1]); }, same);
}
TESSERA_CONFORMANCE_OP("add_out and mul_out") {
  // Not f16/bf16: the product is rounded before the sum, the reference is not.
  const std::vector<DType> dtypes = {DType::kU8, DType::kI32, DType::kI64, DType::kF32, DType::kF64};
  return variant_of(binary_case(dtypes, nullptr, [](double a, double b) { return a + 2 * b * b; }, same),
                    Variant::kOut,
                    [](Tensor& dst, const std::vector<Tensor>& in) {
                      Tensor sq = mul(in[1], in[1]);
                      mul_out(sq, in[1], in[1]);
                      add_out(dst, in[0], sq, 2);
                    },
                    same);
}

TESSERA_CONFORMANCE_ERRORS("binary ext") {
  auto i64 = [](Device d, std::vector<double> v) {
    Tensor t = empty({static_cast<int64_t>(v.size())}, TensorOptions(DType::kI64, host_device()));
    for (size_t k = 0; k < v.size(); ++k) t.data<int64_t>()[k] = static_cast<int64_t>(v[k]);
    return t.to(d);
  };
  auto b = [](Device d) { return ones({2}, TensorOptions(DType::kBool, d)); };
  return std::vector<ErrorCase>{
      {"integer floor division by zero", [i64](Device d) { floor_divide(i64(d, {5, -5}), i64(d, {1, 0})); },
       ErrorKind::kValue, {"floor_divide", "ZeroDivisionError"}},
      {"integer trunc division by zero", [i64](Device d) { div(i64(d, {5}), i64(d, {0}), "trunc"); },
       ErrorKind::kValue, {"div", "ZeroDivisionError"}},
      {"integer remainder by zero", [i64](Device d) { remainder(i64(d, {5}), 0); },
       ErrorKind::kValue, {"remainder", "ZeroDivisionError"}},
      {"bad rounding_mode", [](Device d) { div(ones({2}, d), ones({2}, d), "round"); },
       ErrorKind::kValue, {"div", "rounding_mode", "round"}},
      {"integer to a negative scalar power", [i64](Device d) { pow(i64(d, {2}), -1); },
       ErrorKind::kValue, {"pow", "negative"}},
      {"pow of bool", [b](Device d) { pow(b(d), b(d)); }, ErrorKind::kType, {"pow", "bool"}},
      {"remainder of bool", [b](Device d) { remainder(b(d), b(d)); }, ErrorKind::kType,
       {"remainder", "bool"}},
      {"bitwise_and of float", [](Device d) { bitwise_and(ones({2}, d), ones({2}, d)); },
       ErrorKind::kType, {"bitwise_and", "float32"}},
      {"shift of bool", [b](Device d) { bitwise_left_shift(b(d), b(d)); }, ErrorKind::kType,
       {"bitwise_left_shift", "bool"}},
      {"incompatible shapes", [](Device d) { maximum(ones({2, 3}, d), ones({4}, d)); },
       ErrorKind::kValue, {"maximum", "[2, 3]", "[4]"}},
      {"in-place float result into int",
       [i64](Device d) { Tensor t = i64(d, {1, 2}); atan2_(t, t); }, ErrorKind::kType,
       {"atan2", "float32", "int64"}},
      {"out of wrong shape",
       [](Device d) { Tensor o = empty({5}, d); minimum_out(o, ones({2}, d), ones({2}, d)); },
       ErrorKind::kValue, {"minimum", "[5]", "[2]"}},
      {"gelu_backward bad approximate",
       [](Device d) { gelu_backward(ones({2}, d), ones({2}, d), "x"); }, ErrorKind::kValue,
       {"gelu_backward", "none or tanh"}},
      {"sigmoid_backward of int", [i64](Device d) { sigmoid_backward(i64(d, {1}), i64(d, {1})); },
       ErrorKind::kType, {"sigmoid_backward", "int64"}},
  };
}

}  // namespace tessera::conformance
