// Comparisons (eq ne lt le gt ge) and logical and/or/xor: bool results from
// any dtypes, with Scalar operands, mixed dtypes, out= and in-place forms.
#include <cmath>

#include "tests/conformance/conformance.h"
#include "tests/conformance/pointwise_cases.h"

namespace tessera::conformance {
namespace {

using namespace pointwise_cases;

// Comparison samples: the elementwise classes on a small integer range (so
// that equal values are common), plus operands that are equal copies.
OpCase compare_case(std::function<Tensor(const Tensor&, const Tensor&)> op,
                    std::function<bool(double, double)> ref) {
  OpCase c = binary_case(all_dtypes(), std::move(op),
                         [ref](double a, double b) { return ref(a, b) ? 1.0 : 0.0; }, to_bool, -2, 2);
  auto base = c.samples;
  c.samples = [base](DType t) {
    std::vector<Sample> s = base(t);
    Sample eq;
    eq.description = "equal operands";
    Tensor x = make_input({6, 5}, t, 77);
    eq.inputs = {x, x.clone()};
    s.push_back(std::move(eq));
    return s;
  };
  return c;
}

}  // namespace

TESSERA_CONFORMANCE_OP("eq") {
  return compare_case([](const Tensor& a, const Tensor& b) { return eq(a, b); },
                      [](double a, double b) { return a == b; });
}
TESSERA_CONFORMANCE_OP("ne") {
  return compare_case([](const Tensor& a, const Tensor& b) { return ne(a, b); },
                      [](double a, double b) { return a != b; });
}
TESSERA_CONFORMANCE_OP("lt") {
  return compare_case([](const Tensor& a, const Tensor& b) { return lt(a, b); },
                      [](double a, double b) { return a < b; });
}
TESSERA_CONFORMANCE_OP("le") {
  return compare_case([](const Tensor& a, const Tensor& b) { return le(a, b); },
                      [](double a, double b) { return a <= b; });
}
TESSERA_CONFORMANCE_OP("gt") {
  return compare_case([](const Tensor& a, const Tensor& b) { return gt(a, b); },
                      [](double a, double b) { return a > b; });
}
TESSERA_CONFORMANCE_OP("ge") {
  return compare_case([](const Tensor& a, const Tensor& b) { return ge(a, b); },
                      [](double a, double b) { return a >= b; });
}
TESSERA_CONFORMANCE_OP("logical_and") {
  return compare_case([](const Tensor& a, const Tensor& b) { return logical_and(a, b); },
                      [](double a, double b) { return a != 0 && b != 0; });
}
TESSERA_CONFORMANCE_OP("logical_or") {
  return compare_case([](const Tensor& a, const Tensor& b) { return logical_or(a, b); },
                      [](double a, double b) { return a != 0 || b != 0; });
}
TESSERA_CONFORMANCE_OP("logical_xor") {
  return compare_case([](const Tensor& a, const Tensor& b) { return logical_xor(a, b); },
                      [](double a, double b) { return (a != 0) != (b != 0); });
}
TESSERA_CONFORMANCE_OP("lt scalar") {
  // An int tensor against a float Scalar compares in float (1 < 1.5).
  return unary_case(all_dtypes(), [](const Tensor& a) { return lt(a, 1.5); },
                    [](double a) { return a < 1.5 ? 1.0 : 0.0; }, to_bool, -3, 3);
}
TESSERA_CONFORMANCE_OP("eq mixed dtypes") {
  // int32 against float64: promoted to float64 before comparing.
  OpCase c = compare_case([](const Tensor& a, const Tensor& b) { return eq(a, b.to(DType::kF64)); },
                          [](double a, double b) { return a == b; });
  c.dtypes = {DType::kI32, DType::kU8, DType::kF16};
  return c;
}
TESSERA_CONFORMANCE_OP("ge_out") {
  return variant_of(compare_case(nullptr, [](double a, double b) { return a >= b; }), Variant::kOut,
                    [](Tensor& dst, const std::vector<Tensor>& in) { ge_out(dst, in[0], in[1]); },
                    to_bool);
}
TESSERA_CONFORMANCE_OP("eq_ in place") {
  // The bool result written into self's dtype (1 or 0).
  OpCase c = variant_of(compare_case(nullptr, [](double a, double b) { return a == b; }),
                        Variant::kInPlace,
                        [](Tensor& dst, const std::vector<Tensor>& in) { eq_(dst, in[1]); }, same);
  auto ref = c.reference;
  c.reference = [ref](const Sample& s) {
    std::vector<Expected> e = ref(s);
    e[0].dtype = s.inputs[0].dtype();
    return e;
  };
  return c;
}

TESSERA_CONFORMANCE_ERRORS("comparison") {
  return std::vector<ErrorCase>{
      {"incompatible shapes", [](Device d) { eq(ones({2, 3}, d), ones({2}, d)); }, ErrorKind::kValue,
       {"eq", "[2, 3]", "[2]"}},
      {"out= with incompatible inputs", [](Device d) {
         Tensor o = empty({2}, TensorOptions(DType::kBool, d));
         lt_out(o, ones({2}, d), ones({3}, d));
       },
       ErrorKind::kValue, {"lt", "[2]", "[3]"}},
      {"in-place broadcast changes the shape",
       [](Device d) { Tensor t = ones({1, 3}, d); logical_and_(t, ones({2, 3}, d)); },
       ErrorKind::kValue, {"logical_and", "[1, 3]", "[2, 3]"}},
  };
}

}  // namespace tessera::conformance
