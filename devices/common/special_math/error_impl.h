// The error function family: erfcx, erfinv, ndtri, log_ndtr. Included by
// special_math.h.
#pragma once

#include <cmath>

#include "devices/common/special_math/internal.h"

namespace tessera::special_math {
namespace detail {

// erfcx for x >= 12 by its asymptotic series
// erfcx(x) = 1 / (x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k, whose terms
// shrink until k ~ x^2; 14 terms reach 1e-18 at x = 12.
TESSERA_HOST_DEVICE inline double erfcx_asymptotic(double x) {
  const double r = 0.5 / (x * x);  // 0 once x*x overflows: the sum is 1
  double term = 1, sum = 1;
  for (int k = 1; k <= 14; ++k) {
    term *= -(2 * k - 1) * r;
    sum += term;
  }
  return kOneOverSqrtPi / x * sum;
}

// exp(x^2) with x^2 split exactly into hi + lo, so that exp does not
// amplify the rounding of x^2 (worth ~700 ulp near the overflow).
TESSERA_HOST_DEVICE inline double exp_of_square(double x) {
  const double hi = x * x;
  const double lo = std::fma(x, x, -hi);
  return std::exp(hi) * (1 + lo);
}

// Solves erfc(x) = q for q in (0, 0.5] (x >= 0.47), subnormal q included.
// Newton's method on g(x) = log erfc(x) - log q, with log erfc(x) =
// log erfcx(x) - x^2 (no underflow) and g'(x) = -2 / (sqrt(pi) erfcx(x)).
// The start is the rational approximation of Abramowitz & Stegun 26.2.23
// (error < 4.5e-4), from which Newton converges in 3-4 steps.
TESSERA_HOST_DEVICE inline double erfc_inverse(double q) {
  const double log_q = std::log(q);
  const double t = std::sqrt(-2 * (log_q - kLn2));  // A&S for p = q / 2
  const double normal_quantile =
      t - (2.515517 + t * (0.802853 + t * 0.010328)) /
              (1 + t * (1.432788 + t * (0.189269 + t * 0.001308)));
  double x = normal_quantile * kSqrtHalf;
  for (int i = 0; i < 8; ++i) {
    const double e = erfcx(x);
    const double hi = x * x;
    const double lo = std::fma(x, x, -hi);
    // log erfc(x) - log q, the large terms combined first (hi ~ -log_q).
    const double g = std::log(e) - ((hi + log_q) + lo);
    const double dx = g * (0.5 * kSqrtPi) * e;  // -g / g'
    x += dx;
    if (std::fabs(dx) <= 1e-15 * x) break;
  }
  return x;
}

// erfinv(a) for 0 < a <= 0.5: Halley's method on erf(x) = a from the first
// terms of erfinv's Maclaurin series (error < 3e-5 at a = 0.5; two cubic
// steps then reach full precision).
TESSERA_HOST_DEVICE inline double erfinv_central(double a) {
  const double z = 0.5 * kSqrtPi * a;
  if (a < 1e-9) return z;  // the z^3 term is below half an ulp
  const double z2 = z * z;
  double x = z * (1 + z2 * (1.0 / 3 + z2 * (7.0 / 30 + z2 * (127.0 / 630 + z2 * (4369.0 / 22680)))));
  for (int i = 0; i < 2; ++i) {
    const double u = (std::erf(x) - a) / (kTwoOverSqrtPi * std::exp(-x * x));
    x -= u / (1 + x * u);
  }
  return x;
}

}  // namespace detail

TESSERA_HOST_DEVICE inline double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x >= 12) return detail::erfcx_asymptotic(x);
  if (x < -26.7) return detail::kInf;  // 2 exp(x^2) overflows
  return detail::exp_of_square(x) * std::erfc(x);
}

TESSERA_HOST_DEVICE inline double erfinv(double x) {
  const double a = std::fabs(x);
  if (!(a <= 1)) return detail::kNaN;  // NaN or |x| > 1
  if (a == 1) return std::copysign(detail::kInf, x);
  if (a == 0) return x;
  // Above 0.5 solve erfc(y) = 1 - |x| (exact by Sterbenz): near 1, erf(y) - x
  // would lose all the digits that 1 - |x| keeps.
  const double y = a <= 0.5 ? detail::erfinv_central(a) : detail::erfc_inverse(1 - a);
  return std::copysign(y, x);
}

TESSERA_HOST_DEVICE inline double ndtri(double p) {
  if (!(p >= 0 && p <= 1)) return detail::kNaN;
  if (p == 0) return -detail::kInf;
  if (p == 1) return detail::kInf;
  // ndtri(p) = -sqrt(2) erfcinv(2p) = sqrt(2) erfinv(2p - 1); the tails use
  // erfc_inverse on 2p or 2(1 - p), both exact, the middle erfinv on the
  // exact 2p - 1.
  if (p < 0.25) return -detail::kSqrt2 * detail::erfc_inverse(2 * p);
  if (p > 0.75) return detail::kSqrt2 * detail::erfc_inverse(2 * (1 - p));
  const double y = 2 * p - 1;
  return y == 0 ? 0.0 : detail::kSqrt2 * std::copysign(detail::erfinv_central(std::fabs(y)), y);
}

TESSERA_HOST_DEVICE inline double log_ndtr(double x) {
  const double t = x * detail::kSqrtHalf;
  // Below -1 the CDF is erfc(-t) / 2 = erfcx(-t) exp(-t^2) / 2: take the log
  // of each factor, so that it holds down to x ~ -1e154 (then -inf).
  if (x < -1) return std::log(erfcx(-t) / 2) - t * t;
  return std::log1p(-std::erfc(t) / 2);
}

}  // namespace tessera::special_math
