// where, lerp, addcmul, addcdiv: three broadcast operands, Scalar forms,
// in-place and out= forms, and error cases.
#include <cmath>

#include "tests/conformance/conformance.h"
#include "tests/conformance/pointwise_cases.h"

namespace tessera::conformance {
namespace {

using namespace pointwise_cases;

OpCase ternary_case(std::vector<DType> dtypes,
                    std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)> op,
                    std::function<double(double, double, double)> ref, double lo = -3.0,
                    double hi = 3.0, bool bool_condition = false) {
  OpCase c;
  c.dtypes = std::move(dtypes);
  c.samples = [lo, hi, bool_condition](DType t) {
    std::vector<Sample> s = elementwise_samples(t, 3, lo, hi);
    if (bool_condition) {
      // where's condition: a bool tensor of operand 0's sizes.
      uint64_t seed = 1000;
      for (Sample& x : s) x.inputs[0] = make_input(x.inputs[0].sizes(), DType::kBool, seed++);
    }
    return s;
  };
  c.run = [op](const std::vector<Tensor>& in, const Sample&) {
    return std::vector<Tensor>{op(in[0], in[1], in[2])};
  };
  c.reference = [ref](const Sample& s) {
    return std::vector<Expected>{map_reference(s.inputs, s.inputs[1].dtype(),
                                               [&](const std::vector<double>& v) { return ref(v[0], v[1], v[2]); })};
  };
  return c;
}

double lerp_ref(double s, double e, double w) { return s + w * (e - s); }

}  // namespace

TESSERA_CONFORMANCE_OP("where") {
  return ternary_case(all_dtypes(),
                      [](const Tensor& c, const Tensor& a, const Tensor& b) { return where(c, a, b); },
                      [](double c, double a, double b) { return c != 0 ? a : b; }, -3, 3, true);
}
TESSERA_CONFORMANCE_OP("where scalar other") {
  OpCase c = ternary_case(numeric_dtypes(),
                          [](const Tensor& c, const Tensor& a, const Tensor&) { return where(c, a, 2); },
                          [](double c, double a, double) { return c != 0 ? a : 2; }, -3, 3, true);
  return c;
}
TESSERA_CONFORMANCE_OP("lerp tensor weight") {
  return ternary_case(floating_dtypes(),
                      [](const Tensor& s, const Tensor& e, const Tensor& w) { return lerp(s, e, w); },
                      lerp_ref, -1, 2);
}
TESSERA_CONFORMANCE_OP("lerp scalar weight") {
  return ternary_case(floating_dtypes(),
                      [](const Tensor& s, const Tensor& e, const Tensor&) { return lerp(s, e, 0.75); },
                      [](double s, double e, double) { return lerp_ref(s, e, 0.75); });
}
TESSERA_CONFORMANCE_OP("addcmul") {
  OpCase c = ternary_case(numeric_dtypes(),
                          [](const Tensor& s, const Tensor& a, const Tensor& b) { return addcmul(s, a, b, 2); },
                          [](double s, double a, double b) { return s + 2 * a * b; });
  // f16/bf16 round the product in float, the reference in double: a few ulps.
  c.tolerance = [](DType t, const Sample&) {
    Tolerance tol = default_tolerance(t);
    if (t == DType::kF16 || t == DType::kBF16) tol.atol = 2e-2;
    return tol;
  };
  return c;
}
TESSERA_CONFORMANCE_OP("addcdiv") {
  return ternary_case(floating_dtypes(),
                      [](const Tensor& s, const Tensor& a, const Tensor& b) { return addcdiv(s, a, b, 0.5); },
                      [](double s, double a, double b) { return s + 0.5 * a / b; }, 0.5, 3);
}
TESSERA_CONFORMANCE_OP("addcmul_ in place") {
  OpCase c = variant_of(ternary_case(numeric_dtypes(), nullptr,
                                     [](double s, double a, double b) { return s + a * b; }),
                        Variant::kInPlace,
                        [](Tensor& dst, const std::vector<Tensor>& in) { addcmul_(dst, in[1], in[2]); },
                        same);
  c.tolerance = [](DType t, const Sample&) {
    Tolerance tol = default_tolerance(t);
    if (t == DType::kF16 || t == DType::kBF16) tol.atol = 2e-2;
    return tol;
  };
  return c;
}
TESSERA_CONFORMANCE_OP("lerp_out") {
  return variant_of(ternary_case(floating_dtypes(), nullptr, lerp_ref, -1, 2), Variant::kOut,
                    [](Tensor& dst, const std::vector<Tensor>& in) { lerp_out(dst, in[0], in[1], in[2]); },
                    same);
}
TESSERA_CONFORMANCE_OP("where_out") {
  OpCase c = variant_of(ternary_case(numeric_dtypes(), nullptr,
                                     [](double c, double a, double b) { return c != 0 ? a : b; }, -3, 3, true),
                        Variant::kOut,
                        [](Tensor& dst, const std::vector<Tensor>& in) { where_out(dst, in[0], in[1], in[2]); },
                        same);
  // out's dtype is the values' dtype, not the condition's.
  c.run = [](const std::vector<Tensor>& in, const Sample&) {
    Shape shape;
    for (const Tensor& t : in) shape = broadcast_shapes(shape, t.sizes(), "sample");
    Tensor dst = empty(shape, TensorOptions(in[1].dtype(), in[1].device()));
    where_out(dst, in[0], in[1], in[2]);
    return std::vector<Tensor>{dst};
  };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("ternary") {
  return std::vector<ErrorCase>{
      {"where condition not bool",
       [](Device d) { where(ones({2}, d), ones({2}, d), ones({2}, d)); }, ErrorKind::kType,
       {"where", "boolean", "float32"}},
      {"where incompatible shapes",
       [](Device d) { where(ones({2}, TensorOptions(DType::kBool, d)), ones({3}, d), ones({2}, d)); },
       ErrorKind::kValue, {"where", "[2]", "[3]"}},
      {"lerp of integers",
       [](Device d) {
         Tensor t = ones({2}, TensorOptions(DType::kI64, d));
         lerp(t, t, 0.5);
       },
       ErrorKind::kType, {"lerp", "int64"}},
      {"lerp mixed dtypes",
       [](Device d) { lerp(ones({2}, d), ones({2}, TensorOptions(DType::kF64, d)), 0.5); },
       ErrorKind::kType, {"lerp", "float32", "float64"}},
      {"addcdiv of integers",
       [](Device d) {
         Tensor t = ones({2}, TensorOptions(DType::kI32, d));
         addcdiv(t, t, t);
       },
       ErrorKind::kType, {"addcdiv", "int32"}},
      {"addcmul float value with integers",
       [](Device d) {
         Tensor t = ones({2}, TensorOptions(DType::kI32, d));
         addcmul(t, t, t, 0.5);
       },
       ErrorKind::kType, {"addcmul", "0.5"}},
      {"addcmul_ broadcast changes self's shape",
       [](Device d) {
         Tensor t = ones({1, 2}, d);
         addcmul_(t, ones({3, 2}, d), ones({2}, d));
       },
       ErrorKind::kValue, {"addcmul", "[1, 2]", "[3, 2]"}},
  };
}

}  // namespace tessera::conformance
