// The special functions (runtime/ops/special_ops.h): tessera.special.<name>
// under torch.special's names, and tessera.<name> with Tensor methods (and
// in-place forms) for those PyTorch also has at the top level (erfinv,
// lgamma, hypot, fmax, ...). tessera.special also holds torch.special's
// aliases of ops bound elsewhere (erf, expit, softmax, logsumexp, ...).
#include <array>
#include <string>

#include "bindings/csrc/bindings.h"
#include "bindings/csrc/pointwise_args.h"
#include "bindings/csrc/results.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/pointwise_ops.h"
#include "runtime/ops/reduction_ops.h"
#include "runtime/ops/special_ops.h"

namespace tessera_py {

namespace {

using tessera::Scalar;
using tessera::Shape;
using tessera::SpecialOp;
using tessera::Tensor;

const char* const kToFloat = "Elementwise; integer and bool inputs compute in float32.";

struct UnaryEntry {
  SpecialOp op;
  const char* name;  // tessera.<name> and Tensor.<name>; null: torch.special only
  bool in_place;     // Tensor.<name>_ as well
  std::array<const char*, 2> special_names;  // in tessera.special (null: none)
  const char* doc;
};

const UnaryEntry kUnary[] = {
    {SpecialOp::kErfc, "erfc", true, {"erfc"}, "1 - erf(x). "},
    {SpecialOp::kErfinv, "erfinv", true, {"erfinv"}, "The inverse of erf, on [-1, 1]. "},
    {SpecialOp::kExp2, "exp2", true, {"exp2"}, "2 ** x. "},
    {SpecialOp::kFrac, "frac", true, {}, "x - trunc(x) (sign of x); floating inputs only."},
    {SpecialOp::kSinc, "sinc", true, {"sinc"}, "sin(pi x) / (pi x), 1 at 0. "},
    {SpecialOp::kDigamma, "digamma", true, {"digamma", "psi"}, "d/dx lgamma(x). "},
    {SpecialOp::kLgamma, "lgamma", true, {"gammaln"}, "log |gamma(x)|. "},
    {SpecialOp::kI0, "i0", true, {"i0"}, "Modified Bessel function of the first kind, order 0. "},
    {SpecialOp::kI0e, nullptr, false, {"i0e"}, "exp(-|x|) i0(x). "},
    {SpecialOp::kI1, nullptr, false, {"i1"},
     "Modified Bessel function of the first kind, order 1. "},
    {SpecialOp::kI1e, nullptr, false, {"i1e"}, "exp(-|x|) i1(x). "},
    {SpecialOp::kNdtri, nullptr, false, {"ndtri"}, "The inverse of the standard normal CDF. "},
    {SpecialOp::kLogNdtr, nullptr, false, {"log_ndtr"}, "log of the standard normal CDF. "},
    {SpecialOp::kErfcx, nullptr, false, {"erfcx"}, "exp(x^2) erfc(x). "},
    {SpecialOp::kEntr, nullptr, false, {"entr"}, "-x log(x); 0 at 0, -inf below. "},
    {SpecialOp::kAiryAi, nullptr, false, {"airy_ai"}, "Airy function Ai. "},
    {SpecialOp::kBesselJ0, nullptr, false, {"bessel_j0"}, "Bessel function J0. "},
    {SpecialOp::kBesselJ1, nullptr, false, {"bessel_j1"}, "Bessel function J1. "},
    {SpecialOp::kBesselY0, nullptr, false, {"bessel_y0"}, "Bessel function Y0. "},
    {SpecialOp::kBesselY1, nullptr, false, {"bessel_y1"}, "Bessel function Y1. "},
    {SpecialOp::kModifiedBesselI0, nullptr, false, {"modified_bessel_i0"}, "I0. "},
    {SpecialOp::kModifiedBesselI1, nullptr, false, {"modified_bessel_i1"}, "I1. "},
    {SpecialOp::kModifiedBesselK0, nullptr, false, {"modified_bessel_k0"}, "K0. "},
    {SpecialOp::kModifiedBesselK1, nullptr, false, {"modified_bessel_k1"}, "K1. "},
    {SpecialOp::kScaledModifiedBesselK0, nullptr, false, {"scaled_modified_bessel_k0"},
     "exp(x) K0(x). "},
    {SpecialOp::kScaledModifiedBesselK1, nullptr, false, {"scaled_modified_bessel_k1"},
     "exp(x) K1(x). "},
    {SpecialOp::kSphericalBesselJ0, nullptr, false, {"spherical_bessel_j0"}, "sin(x) / x. "},
    {SpecialOp::kSignbit, "signbit", false, {},
     "Whether the sign bit is set (True for -0.0): bool, any input dtype."},
};

struct BinaryEntry {
  SpecialOp op;
  const char* name;          // tessera.<name> and Tensor.<name>; null: torch.special only
  bool in_place;             // Tensor.<name>_ as well
  const char* special_name;  // in tessera.special (null: none)
  const char* second;        // the second operand's keyword
  bool numbers;              // PyTorch takes a number for either operand
  const char* doc;
};

const BinaryEntry kBinary[] = {
    {SpecialOp::kZeta, nullptr, false, "zeta", "other", true, "Hurwitz zeta(x, q). "},
    {SpecialOp::kIgamma, "igamma", true, "gammainc", "other", false,
     "Regularized lower incomplete gamma P(a, x). "},
    {SpecialOp::kIgammac, "igammac", true, "gammaincc", "other", false,
     "Regularized upper incomplete gamma Q(a, x). "},
    {SpecialOp::kXlog1py, nullptr, false, "xlog1py", "other", true, "x log1p(y), 0 where x is 0. "},
    {SpecialOp::kHypot, "hypot", true, nullptr, "other", false,
     "sqrt(a^2 + b^2); floating inputs only."},
    {SpecialOp::kCopysign, "copysign", true, nullptr, "other", true,
     "|a| with b's sign. Integer and bool inputs compute in float32."},
    {SpecialOp::kNextafter, "nextafter", true, nullptr, "other", false,
     "The next representable value after a towards b; floating inputs only."},
    {SpecialOp::kFmax, "fmax", false, nullptr, "other", false,
     "Elementwise maximum ignoring NaN (NaN only where both are)."},
    {SpecialOp::kFmin, "fmin", false, nullptr, "other", false,
     "Elementwise minimum ignoring NaN (NaN only where both are)."},
    {SpecialOp::kHeaviside, "heaviside", true, nullptr, "values", false,
     "0 where input < 0, values where input == 0, 1 where input > 0."},
    {SpecialOp::kChebyshevT, nullptr, false, "chebyshev_polynomial_t", "n", true, "T_n(x). "},
    {SpecialOp::kChebyshevU, nullptr, false, "chebyshev_polynomial_u", "n", true, "U_n(x). "},
    {SpecialOp::kChebyshevV, nullptr, false, "chebyshev_polynomial_v", "n", true, "V_n(x). "},
    {SpecialOp::kChebyshevW, nullptr, false, "chebyshev_polynomial_w", "n", true, "W_n(x). "},
    {SpecialOp::kShiftedChebyshevT, nullptr, false, "shifted_chebyshev_polynomial_t", "n", true,
     "T*_n(x) = T_n(2x - 1). "},
    {SpecialOp::kShiftedChebyshevU, nullptr, false, "shifted_chebyshev_polynomial_u", "n", true,
     "U*_n(x) = U_n(2x - 1). "},
    {SpecialOp::kShiftedChebyshevV, nullptr, false, "shifted_chebyshev_polynomial_v", "n", true,
     "V*_n(x) = V_n(2x - 1). "},
    {SpecialOp::kShiftedChebyshevW, nullptr, false, "shifted_chebyshev_polynomial_w", "n", true,
     "W*_n(x) = W_n(2x - 1). "},
    {SpecialOp::kHermiteH, nullptr, false, "hermite_polynomial_h", "n", true,
     "Physicists' Hermite H_n(x). "},
    {SpecialOp::kHermiteHe, nullptr, false, "hermite_polynomial_he", "n", true,
     "Probabilists' Hermite He_n(x). "},
    {SpecialOp::kLaguerreL, nullptr, false, "laguerre_polynomial_l", "n", true, "L_n(x). "},
    {SpecialOp::kLegendreP, nullptr, false, "legendre_polynomial_p", "n", true, "P_n(x). "},
};

// Docs ending in a space continue with the float32 rule.
std::string doc_of(const char* doc) {
  std::string d = doc;
  if (!d.empty() && d.back() == ' ') d += kToFloat;
  return d;
}

Tensor& binary_in_place(SpecialOp op, Tensor& self, const Tensor& other) {
  const char* name = tessera::special_name(op);
  const Shape shape = tessera::broadcast_shapes(self.sizes(), other.sizes(), name);
  TESSERA_CHECK(shape == self.sizes(), ValueError, name, "_: output with shape ",
                tessera::shape_to_string(self.sizes()), " doesn't match the broadcast shape ",
                tessera::shape_to_string(shape));
  return tessera::special_function_out(self, op, self, other);
}

void def_unary(py::module_& scope, const char* name, SpecialOp op, const std::string& doc) {
  scope.def(name, [op](const Tensor& x, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::special_function_out(*out, op, x) : tessera::special_function(op, x);
    });
  }, "input"_a, py::kw_only(), "out"_a = py::none(), doc.c_str());
}

void def_binary(py::module_& scope, const char* name, const BinaryEntry& e,
                const std::string& doc) {
  const SpecialOp op = e.op;
  scope.def(name, [op](const Tensor& a, const Tensor& b, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::special_function_out(*out, op, a, b)
                 : tessera::special_function(op, a, b);
    });
  }, "input"_a, py::arg(e.second), py::kw_only(), "out"_a = py::none(), doc.c_str());
  if (!e.numbers) return;
  scope.def(name, [op](const Tensor& a, Scalar b, Tensor* out) {
    return tensor_or_out(out, [&] {
      const Tensor wrapped = scalar_operand(b, a);
      return out ? tessera::special_function_out(*out, op, a, wrapped)
                 : tessera::special_function(op, a, wrapped);
    });
  }, "input"_a, py::arg(e.second), py::kw_only(), "out"_a = py::none());
  scope.def(name, [op](Scalar a, const Tensor& b, Tensor* out) {
    return tensor_or_out(out, [&] {
      const Tensor wrapped = scalar_operand(a, b);
      return out ? tessera::special_function_out(*out, op, wrapped, b)
                 : tessera::special_function(op, wrapped, b);
    });
  }, "input"_a, py::arg(e.second), py::kw_only(), "out"_a = py::none());
}

void def_method_unary(TensorClass& cls, const UnaryEntry& e, const std::string& doc) {
  const SpecialOp op = e.op;
  cls.def(e.name, [op](const Tensor& x) { return tessera::special_function(op, x); },
          ReleaseGil(), doc.c_str());
  if (!e.in_place) return;
  cls.def((std::string(e.name) + "_").c_str(), [op](Tensor& self) -> Tensor& {
    return tessera::special_function_out(self, op, self);
  }, ReleaseGil(), "In place; returns self.");
}

void def_method_binary(TensorClass& cls, const BinaryEntry& e, const std::string& doc) {
  const SpecialOp op = e.op;
  cls.def(e.name, [op](const Tensor& a, const Tensor& b) {
    return tessera::special_function(op, a, b);
  }, py::arg(e.second), ReleaseGil(), doc.c_str());
  if (e.numbers) {
    cls.def(e.name, [op](const Tensor& a, Scalar b) {
      return tessera::special_function(op, a, scalar_operand(b, a));
    }, py::arg(e.second), ReleaseGil());
  }
  if (!e.in_place) return;
  const std::string in_place = std::string(e.name) + "_";
  cls.def(in_place.c_str(), [op](Tensor& self, const Tensor& other) -> Tensor& {
    return binary_in_place(op, self, other);
  }, py::arg(e.second), ReleaseGil(), "In place; returns self.");
  if (e.numbers) {
    cls.def(in_place.c_str(), [op](Tensor& self, Scalar other) -> Tensor& {
      return binary_in_place(op, self, scalar_operand(other, self));
    }, py::arg(e.second), ReleaseGil());
  }
}

void register_polygamma(py::module_& m, py::module_& special, TensorClass& cls) {
  const char* doc = "The n-th derivative of digamma (n >= 0). Integer and bool inputs compute "
                    "in float32.";
  for (py::module_* scope : {&m, &special}) {
    scope->def("polygamma", [](int64_t n, const Tensor& x, Tensor* out) {
      return tensor_or_out(out, [&] {
        return out ? tessera::polygamma_out(*out, n, x) : tessera::polygamma(n, x);
      });
    }, "n"_a, "input"_a, py::kw_only(), "out"_a = py::none(), doc);
  }
  cls.def("polygamma", [](const Tensor& x, int64_t n) { return tessera::polygamma(n, x); }, "n"_a,
          ReleaseGil(), doc);
  cls.def("polygamma_", [](Tensor& self, int64_t n) -> Tensor& {
    return tessera::polygamma_out(self, n, self);
  }, "n"_a, ReleaseGil(), "In place; returns self.");
}

// torch.special's names for ops that live elsewhere in the runtime.
void register_special_aliases(py::module_& special) {
  using Unary = Tensor (*)(const Tensor&);
  using UnaryOut = Tensor& (*)(Tensor&, const Tensor&);
  struct Alias {
    const char* name;
    Unary op;
    UnaryOut op_out;
  };
  const Alias aliases[] = {
      {"erf", &tessera::erf, &tessera::erf_out},
      {"expit", &tessera::sigmoid, &tessera::sigmoid_out},
      {"expm1", &tessera::expm1, &tessera::expm1_out},
      {"log1p", &tessera::log1p, &tessera::log1p_out},
      {"round", &tessera::round, &tessera::round_out},
  };
  for (const Alias& a : aliases) {
    special.def(a.name, [op = a.op, op_out = a.op_out](const Tensor& x, Tensor* out) {
      return tensor_or_out(out, [&] { return out ? op_out(*out, x) : op(x); });
    }, "input"_a, py::kw_only(), "out"_a = py::none());
  }
  special.def("softmax", &tessera::softmax, "input"_a, "dim"_a, py::kw_only(),
              "dtype"_a = py::none(), ReleaseGil());
  special.def("log_softmax", &tessera::log_softmax, "input"_a, "dim"_a, py::kw_only(),
              "dtype"_a = py::none(), ReleaseGil());
  special.def("logsumexp", [](const Tensor& t, const Shape& dim, bool keepdim, Tensor* out) {
    return tensor_or_out(out, [&] {
      return out ? tessera::logsumexp_out(*out, t, dim, keepdim)
                 : tessera::logsumexp(t, dim, keepdim);
    });
  }, "input"_a, "dim"_a, "keepdim"_a = false, py::kw_only(), "out"_a = py::none());
}

}  // namespace

void register_special_ops(py::module_& m) {
  py::module_ special = m.def_submodule(
      "special", "Special functions under torch.special's names (Bessel functions, gamma "
                 "functions, orthogonal polynomials, ...).");
  TensorClass cls = tensor_class(m);
  for (const UnaryEntry& e : kUnary) {
    const std::string doc = doc_of(e.doc);
    for (const char* special_name : e.special_names) {
      if (special_name != nullptr) def_unary(special, special_name, e.op, doc);
    }
    if (e.name == nullptr) continue;
    def_unary(m, e.name, e.op, doc);
    def_method_unary(cls, e, doc);
  }
  for (const BinaryEntry& e : kBinary) {
    const std::string doc = doc_of(e.doc);
    if (e.special_name != nullptr) def_binary(special, e.special_name, e, doc);
    if (e.name == nullptr) continue;
    def_binary(m, e.name, e, doc);
    def_method_binary(cls, e, doc);
  }
  register_polygamma(m, special, cls);
  register_special_aliases(special);
}

}  // namespace tessera_py
