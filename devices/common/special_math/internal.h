// Helpers shared by the *_impl.h files: constants, polynomial evaluation,
// the one function whose host and device versions differ (log |Gamma|), and
// the building blocks more than one family needs (log1pmx, Stirling's
// correction, the scaled K_nu integral, the large-degree polynomials).
// Internal to special_math: the *_impl.h files that special_math.h
// includes after its declarations include this; other code includes
// special_math.h.
//
// Constant tables live inside the functions that read them (static
// constexpr): a namespace-scope array would be host memory that device
// code cannot read, while a function's static is a __device__ variable in
// device code (CUDA gives HD functions' statics an implicit __device__).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "devices/common/special_math/host_device.h"

namespace tessera::special_math::detail {

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
TESSERA_HOST_DEVICE constexpr double polynomial(const double (&c)[N], double x) {
  double r = c[N - 1];
  for (std::size_t i = N - 1; i-- > 0;) r = r * x + c[i];
  return r;
}

// log |Gamma(x)|: the C library's lgamma_r on the host (std::lgamma writes
// the global signgam, so it is not thread-safe), CUDA's lgamma on the device
// (no such global there; a few ulp off, more near the zeros of lgamma
// between -11 and -2). The device returns C's +inf at the poles and at -inf
// itself: libdevice documents -inf for lgamma(-inf).
TESSERA_HOST_DEVICE inline double log_abs_gamma(double x) {
#if defined(__CUDA_ARCH__)
  if (std::isinf(x) || (x <= 0 && x == std::trunc(x))) return kInf;
  return ::lgamma(x);
#else
  int sign;
  return ::lgamma_r(x, &sign);
#endif
}

// log(1 + t) - t for t > -1, accurate also where the two terms cancel.
// For |t| <= 1/2 it uses u = t / (2 + t): log(1 + t) = 2 atanh(u) and
// t - 2u = u t, so log(1 + t) - t = 2 u^3 (1/3 + u^2/5 + ...) - u t, whose
// terms do not cancel (|u| <= 1/3).
TESSERA_HOST_DEVICE inline double log1pmx(double t);

// ln Gamma*(a) = ln Gamma(a) - ((a - 1/2) ln a - a + ln sqrt(2 pi)), the
// remainder of Stirling's formula, for a >= 8 (its asymptotic series).
TESSERA_HOST_DEVICE inline double stirling_remainder(double a);

// e^x K_nu(x) for x > 0 and nu >= 0 by the trapezoidal rule on the integral
// e^x K_nu(x) = int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt, rewritten with
// s = sqrt(2x) sinh(t / 2) as int_0^inf 2 exp(-s^2) cosh(nu t(s)) /
// sqrt(2x + s^2) ds. The integrand is analytic in |Im s| < sqrt(2x), so the
// rule converges geometrically in the number of nodes; accurate to a few
// ulp for x >= 0.6.
TESSERA_HOST_DEVICE inline double scaled_bessel_k_integral(double nu, double x);

// Large-degree Laguerre and Legendre polynomials
// (polynomial_asymptotic_impl.h), used where PyTorch's recurrence would run
// for more steps than we allow. Degrees above kLargeDegree use
// legendre_large_degree instead of the recurrence, and
// laguerre_large_degree where laguerre_expansion_applies.
inline constexpr int64_t kLargeDegree = int64_t{1} << 16;
// Whether laguerre_large_degree is accurate for this x, n > kLargeDegree:
// always for n > 2^20, else for x below ~17 (n + 1/2)^(1/3).
TESSERA_HOST_DEVICE inline bool laguerre_expansion_applies(double x, int64_t n);
// L_n(x) for n > kLargeDegree and x != 0.
TESSERA_HOST_DEVICE inline double laguerre_large_degree(double x, int64_t n);
// P_n(x) for n > kLargeDegree and |x| != 1.
TESSERA_HOST_DEVICE inline double legendre_large_degree(double x, int64_t n);

}  // namespace tessera::special_math::detail
