// Helpers shared by the special_math_*.cc files: constants, polynomial
// evaluation and a few building blocks (log1pmx, Stirling's correction,
// the scaled K_nu integral) that more than one function family needs.
// Internal to the CPU device's special functions; include special_math.h
// for the public API.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>

namespace tessera::cpu::special_math::detail {

inline constexpr double kPi = 3.141592653589793238462643383279502884;
inline constexpr double kSqrtPi = 1.772453850905516027298167483341145183;
inline constexpr double kSqrt2 = 1.414213562373095048801688724209698079;
inline constexpr double kSqrtHalf = 0.707106781186547524400844362104849039;
inline constexpr double kTwoOverSqrtPi = 1.128379167095512573896158903121545172;
inline constexpr double kOneOverSqrtPi = 0.564189583547756286948079451560772586;
inline constexpr double kLn2 = 0.693147180559945309417232121458176568;
inline constexpr double kEulerGamma = 0.577215664901532860606512090082402431;
inline constexpr double kEps = std::numeric_limits<double>::epsilon();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// c[0] + c[1] x + ... + c[N-1] x^(N-1), by Horner's rule.
template <std::size_t N>
constexpr double polynomial(const double (&c)[N], double x) {
  double r = c[N - 1];
  for (std::size_t i = N - 1; i-- > 0;) r = r * x + c[i];
  return r;
}

// log(1 + t) - t for t > -1, accurate also where the two terms cancel.
// For |t| <= 1/2 it uses u = t / (2 + t): log(1 + t) = 2 atanh(u) and
// t - 2u = u t, so log(1 + t) - t = 2 u^3 (1/3 + u^2/5 + ...) - u t, whose
// terms do not cancel (|u| <= 1/3).
double log1pmx(double t);

// ln Gamma*(a) = ln Gamma(a) - ((a - 1/2) ln a - a + ln sqrt(2 pi)), the
// remainder of Stirling's formula, for a >= 8 (its asymptotic series).
double stirling_remainder(double a);

// e^x K_nu(x) for x > 0 and nu >= 0 by the trapezoidal rule on the integral
// e^x K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt, rewritten with
// s = sqrt(2x) sinh(t / 2) as int_0^inf 2 exp(-s^2) cosh(nu t(s)) /
// sqrt(2x + s^2) ds. The integrand is analytic in |Im s| < sqrt(2x), so the
// rule converges geometrically in the number of nodes; accurate to a few
// ulp for x >= 0.6.
double scaled_bessel_k_integral(double nu, double x);

}  // namespace tessera::cpu::special_math::detail
