// Special functions (special_function): each op against a reference built
// another way than the kernels build it (the C++17 special math functions,
// closed forms, defining series, or inverses found by bisection), over a
// range where the function is well conditioned; NaN, inf and +-0 through
// the special-values sample. Then the dtype rules and errors.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tests/conformance/conformance.h"
#include "tests/conformance/pointwise_cases.h"

namespace tessera::conformance {
namespace {

using namespace pointwise_cases;
using kernels::SpecialOp;

constexpr double kPi = 3.14159265358979323846;

// x with f(x) = y for an increasing f, by bisection on [lo, hi].
template <typename F>
double invert(F f, double y, double lo, double hi) {
  if (std::isnan(y)) return NAN;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) < y ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Hurwitz zeta by its defining sum, the tail by Euler-Maclaurin's first
// terms (s > 1, q > 0).
double hurwitz(double s, double q) {
  constexpr int kTerms = 2000;
  double sum = 0;
  for (int k = 0; k < kTerms; ++k) sum += std::pow(k + q, -s);
  const double a = kTerms + q;
  return sum + std::pow(a, 1 - s) / (s - 1) + 0.5 * std::pow(a, -s) + s / 12 * std::pow(a, -s - 1);
}

// The regularized lower incomplete gamma by its power series (x moderate).
double lower_gamma(double a, double x) {
  if (x == 0) return 0;
  double term = 1 / a, sum = term;
  for (int k = 1; k < 500; ++k) {
    term *= x / (a + k);
    sum += term;
  }
  return std::exp(a * std::log(x) - x - std::lgamma(a)) * sum;
}

// Ai(x) from its Maclaurin series (|x| <= 3).
double airy_series(double x) {
  constexpr double kAi0 = 0.355028053887817239, kDAi0 = 0.258819403792806798;
  double f = 0, g = 0, tf = 1, tg = x;
  for (int k = 0; k < 60; ++k) {
    f += tf;
    g += tg;
    tf *= x * x * x / ((3.0 * k + 2) * (3.0 * k + 3));
    tg *= x * x * x / ((3.0 * k + 3) * (3.0 * k + 4));
  }
  return kAi0 * f - kDAi0 * g;
}

// The shape classes but the one larger than L2: the references here
// (series, bisection) cost thousands of operations an element, and the
// kernel's loops are the pointwise ones the other cases cover at size.
OpCase without_large_samples(OpCase c) {
  c.samples = [samples = std::move(c.samples)](DType t) {
    std::vector<Sample> kept;
    for (Sample& s : samples(t)) {
      bool small = true;
      for (const Tensor& input : s.inputs) small = small && input.numel() <= 65536;
      if (small) kept.push_back(std::move(s));
    }
    return kept;
  };
  return c;
}

OpCase special_unary(SpecialOp op, double (*ref)(double), double lo, double hi,
                     bool specials = false) {
  return without_large_samples(unary_case(
      floating_dtypes(), [op](const Tensor& x) { return special_function(op, x); }, ref, same,
      lo, hi, specials));
}

OpCase special_binary(SpecialOp op, double (*ref)(double, double), double lo, double hi) {
  return without_large_samples(binary_case(
      floating_dtypes(),
      [op](const Tensor& a, const Tensor& b) { return special_function(op, a, b); }, ref, same, lo,
      hi, /*specials=*/false));
}

// Polynomials of degree n in [0, 6] (n as the second operand), x in
// [lo, 1] (the shifted Chebyshev polynomials live on [0, 1]).
OpCase polynomial(SpecialOp op, double (*ref)(double, int), double lo = -1.0) {
  OpCase c = binary_case({DType::kF32, DType::kF64},
                         [op](const Tensor& x, const Tensor& n) {
                           return special_function(op, x, n);
                         },
                         [ref](double x, double n) { return ref(x, static_cast<int>(n)); }, same,
                         lo, 1.0, false);
  c.samples = [lo](DType t) {
    std::vector<Sample> s = elementwise_samples(t, 2, lo, 1.0);
    for (Sample& x : s) x.inputs[1] = floor(mul(abs(x.inputs[1]), Scalar(6.9)));
    return s;
  };
  return without_large_samples(std::move(c));
}

double angle_of(double x) { return std::acos(std::clamp(x, -1.0, 1.0)); }

}  // namespace

#define SPECIAL_UNARY(label, op, expr, lo, hi)                                          \
  TESSERA_CONFORMANCE_OP(label) {                                                       \
    return special_unary(SpecialOp::op, [](double x) -> double { return expr; }, lo, hi); \
  }

SPECIAL_UNARY("special erfc", kErfc, std::erfc(x), -3.0, 3.0)
SPECIAL_UNARY("special erfinv", kErfinv, invert([](double v) { return std::erf(v); }, x, -7, 7),
              -0.95, 0.95)
SPECIAL_UNARY("special exp2", kExp2, std::exp2(x), -5.0, 5.0)
SPECIAL_UNARY("special frac", kFrac, x - std::trunc(x), -5.0, 5.0)
SPECIAL_UNARY("special sinc", kSinc, x == 0 ? 1.0 : std::sin(kPi * x) / (kPi * x), -3.0, 3.0)
SPECIAL_UNARY("special digamma", kDigamma,
              (std::lgamma(x + 1e-5) - std::lgamma(x - 1e-5)) / 2e-5, 0.5, 6.0)
SPECIAL_UNARY("special lgamma", kLgamma, std::lgamma(x), 0.25, 8.0)
SPECIAL_UNARY("special i0", kI0, std::cyl_bessel_i(0.0, std::fabs(x)), -4.0, 4.0)
SPECIAL_UNARY("special i0e", kI0e, std::exp(-std::fabs(x)) * std::cyl_bessel_i(0.0, std::fabs(x)),
              -4.0, 4.0)
SPECIAL_UNARY("special i1", kI1, std::copysign(std::cyl_bessel_i(1.0, std::fabs(x)), x), -4.0, 4.0)
SPECIAL_UNARY("special i1e", kI1e,
              std::copysign(std::exp(-std::fabs(x)) * std::cyl_bessel_i(1.0, std::fabs(x)), x),
              -4.0, 4.0)
SPECIAL_UNARY("special ndtri", kNdtri, invert(normal_cdf, x, -40, 40), 0.02, 0.98)
SPECIAL_UNARY("special log_ndtr", kLogNdtr, std::log(normal_cdf(x)), -5.0, 5.0)
SPECIAL_UNARY("special erfcx", kErfcx, std::exp(x * x) * std::erfc(x), -2.0, 3.0)
SPECIAL_UNARY("special entr", kEntr, x > 0 ? -x * std::log(x) : (x == 0 ? 0.0 : -INFINITY), -1.0,
              3.0)
SPECIAL_UNARY("special airy_ai", kAiryAi, airy_series(x), -3.0, 3.0)
SPECIAL_UNARY("special bessel_j0", kBesselJ0, std::cyl_bessel_j(0.0, std::fabs(x)), -8.0, 8.0)
SPECIAL_UNARY("special bessel_j1", kBesselJ1,
              (x < 0 ? -1.0 : 1.0) * std::cyl_bessel_j(1.0, std::fabs(x)), -8.0, 8.0)
SPECIAL_UNARY("special bessel_y0", kBesselY0, std::cyl_neumann(0.0, x), 0.5, 8.0)
SPECIAL_UNARY("special bessel_y1", kBesselY1, std::cyl_neumann(1.0, x), 0.5, 8.0)
SPECIAL_UNARY("special modified_bessel_k0", kModifiedBesselK0, std::cyl_bessel_k(0.0, x), 0.25,
              6.0)
SPECIAL_UNARY("special modified_bessel_k1", kModifiedBesselK1, std::cyl_bessel_k(1.0, x), 0.25,
              6.0)
SPECIAL_UNARY("special scaled_modified_bessel_k0", kScaledModifiedBesselK0,
              std::exp(x) * std::cyl_bessel_k(0.0, x), 0.25, 6.0)
SPECIAL_UNARY("special scaled_modified_bessel_k1", kScaledModifiedBesselK1,
              std::exp(x) * std::cyl_bessel_k(1.0, x), 0.25, 6.0)
SPECIAL_UNARY("special spherical_bessel_j0", kSphericalBesselJ0,
              x == 0 ? 1.0 : std::sin(x) / x, -8.0, 8.0)

#undef SPECIAL_UNARY

TESSERA_CONFORMANCE_OP("special polygamma") {
  return without_large_samples(unary_case(floating_dtypes(),
                                          [](const Tensor& x) { return polygamma(1, x); },
                                          [](double x) { return hurwitz(2, x); }, same, 0.5, 5.0,
                                          false));
}

TESSERA_CONFORMANCE_OP("special signbit") {
  return without_large_samples(unary_case(
      all_dtypes(), [](const Tensor& x) { return special_function(SpecialOp::kSignbit, x); },
      [](double x) { return std::signbit(x) ? 1.0 : 0.0; }, to_bool));
}

#define SPECIAL_BINARY(label, op, expr, lo, hi)                                            \
  TESSERA_CONFORMANCE_OP(label) {                                                          \
    return special_binary(SpecialOp::op, [](double a, double b) -> double { return expr; }, \
                          lo, hi);                                                         \
  }

SPECIAL_BINARY("special zeta", kZeta, hurwitz(a, b), 1.5, 4.0)
SPECIAL_BINARY("special igamma", kIgamma, lower_gamma(a, b), 0.5, 4.0)
SPECIAL_BINARY("special igammac", kIgammac, 1 - lower_gamma(a, b), 0.5, 4.0)
SPECIAL_BINARY("special xlog1py", kXlog1py, a == 0 ? 0.0 : a * std::log1p(b), -0.9, 3.0)
SPECIAL_BINARY("special hypot", kHypot, std::sqrt(a * a + b * b), -3.0, 3.0)
SPECIAL_BINARY("special copysign", kCopysign, std::signbit(b) ? -std::fabs(a) : std::fabs(a), -3.0,
               3.0)
SPECIAL_BINARY("special fmax", kFmax, a > b ? a : b, -3.0, 3.0)
SPECIAL_BINARY("special fmin", kFmin, a < b ? a : b, -3.0, 3.0)

#undef SPECIAL_BINARY

TESSERA_CONFORMANCE_OP("special heaviside") {
  OpCase c = binary_case(numeric_dtypes(),
                         [](const Tensor& x, const Tensor& v) {
                           return special_function(SpecialOp::kHeaviside, x, v);
                         },
                         [](double x, double v) { return x == 0 ? v : (x > 0 ? 1.0 : 0.0); },
                         same);
  c.samples = [](DType t) {
    std::vector<Sample> s = elementwise_samples(t, 2, -2.0, 2.0);
    // Floating inputs rounded down so that zeros (where values count) occur.
    if (is_floating(t)) {
      for (Sample& x : s) x.inputs[0] = floor(mul(x.inputs[0], Scalar(0.75)));
    }
    return s;
  };
  return without_large_samples(std::move(c));
}

TESSERA_CONFORMANCE_OP("special chebyshev_t") {
  return polynomial(SpecialOp::kChebyshevT,
                    [](double x, int n) { return std::cos(n * angle_of(x)); });
}
TESSERA_CONFORMANCE_OP("special chebyshev_u") {
  return polynomial(SpecialOp::kChebyshevU, [](double x, int n) {
    const double t = angle_of(x);
    return std::fabs(std::sin(t)) < 1e-12 ? (x > 0 ? n + 1.0 : ((n % 2) ? -1.0 : 1.0) * (n + 1))
                                          : std::sin((n + 1) * t) / std::sin(t);
  });
}
TESSERA_CONFORMANCE_OP("special shifted_chebyshev_t") {
  return polynomial(SpecialOp::kShiftedChebyshevT,
                    [](double x, int n) { return std::cos(n * angle_of(2 * x - 1)); }, 0.0);
}
TESSERA_CONFORMANCE_OP("special hermite_h") {
  return polynomial(SpecialOp::kHermiteH,
                    [](double x, int n) { return std::hermite(static_cast<unsigned>(n), x); });
}
TESSERA_CONFORMANCE_OP("special hermite_he") {
  return polynomial(SpecialOp::kHermiteHe, [](double x, int n) {
    return std::pow(2.0, -n / 2.0) * std::hermite(static_cast<unsigned>(n), x / std::sqrt(2.0));
  });
}
// L_n(x) = sum_k C(n, k) (-x)^k / k! (std::laguerre refuses x < 0).
TESSERA_CONFORMANCE_OP("special laguerre_l") {
  return polynomial(SpecialOp::kLaguerreL, [](double x, int n) {
    double sum = 0, binomial = 1, power = 1, factorial = 1;
    for (int k = 0; k <= n; ++k) {
      sum += binomial * power / factorial;
      binomial = binomial * (n - k) / (k + 1);
      power *= -x;
      factorial *= k + 1;
    }
    return sum;
  });
}
TESSERA_CONFORMANCE_OP("special legendre_p") {
  return polynomial(SpecialOp::kLegendreP,
                    [](double x, int n) { return std::legendre(static_cast<unsigned>(n), x); });
}

TESSERA_CONFORMANCE_ERRORS("special functions") {
  auto f32 = [](Device d) { return ones({3}, TensorOptions(DType::kF32, d)); };
  return std::vector<ErrorCase>{
      {"frac of an integer tensor",
       [](Device d) { special_function(SpecialOp::kFrac, ones({3}, TensorOptions(DType::kI64, d))); },
       ErrorKind::kType, {"frac", "floating", "int64"}},
      {"nextafter of integer tensors",
       [](Device d) {
         const Tensor a = ones({3}, TensorOptions(DType::kI32, d));
         special_function(SpecialOp::kNextafter, a, a);
       },
       ErrorKind::kType, {"nextafter", "floating", "int32"}},
      {"polygamma of a negative order", [f32](Device d) { polygamma(-1, f32(d)); },
       ErrorKind::kValue, {"polygamma", "n must be >= 0", "-1"}},
      {"a unary op given two operands",
       [f32](Device d) { special_function(SpecialOp::kErfc, f32(d), f32(d)); },
       ErrorKind::kValue, {"erfc", "takes one operand"}},
      {"shapes that do not broadcast",
       [](Device d) {
         special_function(SpecialOp::kHypot, ones({3}, TensorOptions(DType::kF32, d)),
                          ones({4}, TensorOptions(DType::kF32, d)));
       },
       ErrorKind::kValue, {"hypot", "[3]", "[4]"}},
  };
}

}  // namespace tessera::conformance
