// The gamma function family: lgamma, digamma, polygamma and the Hurwitz
// zeta function it is built on, plus helpers shared with the incomplete
// gamma functions. Included by special_math.h.
#pragma once

#include <cmath>
#include <cstdint>

#include "devices/common/special_math/internal.h"

namespace tessera::special_math {
namespace detail {

TESSERA_HOST_DEVICE inline double log1pmx(double t) {
  if (std::fabs(t) > 0.5) return std::log1p(t) - t;
  const double u = t / (2 + t);
  const double u2 = u * u;
  // 2 (1/3 + u^2/5 + u^4/7 + ...), |u| <= 1/3: 17 terms reach 1e-18.
  double series = 0;
  for (int k = 17; k >= 0; --k) series = series * u2 + 2.0 / (2 * k + 3);
  return u2 * u * series - u * t;
}

TESSERA_HOST_DEVICE inline double stirling_remainder(double a) {
  // sum_k B_2k / (2k (2k - 1) a^(2k-1)); 9 terms reach 1e-17 at a = 8.
  static constexpr double kCoefficients[] = {
      1.0 / 12,          -1.0 / 360,         1.0 / 1260,        -1.0 / 1680,
      1.0 / 1188,        -691.0 / 360360,    1.0 / 156,         -3617.0 / 122400,
      43867.0 / 244188,
  };
  const double r = 1 / a;
  return r * polynomial(kCoefficients, r * r);
}

// digamma for x > 0: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10,
// then the asymptotic series psi(x) = log x - 1/(2x) - sum B_2k / (2k x^2k).
TESSERA_HOST_DEVICE inline double digamma_positive(double x) {
  double shift = 0;
  while (x < 10) {
    shift -= 1 / x;
    x += 1;
  }
  static constexpr double kCoefficients[] = {
      1.0 / 12,  -1.0 / 120,         1.0 / 252,  -1.0 / 240,
      1.0 / 132, -691.0 / 32760,     1.0 / 12,   -3617.0 / 8160,
  };
  const double r = 1 / (x * x);
  return shift + (std::log(x) - 0.5 / x - r * polynomial(kCoefficients, r));
}

// PyTorch's trigamma, reproduced: the reflection psi'(x) = pi^2 / sin^2(pi x)
// - psi'(1 - x) below 1/2, six steps of psi'(x) = psi'(x + 1) + 1/x^2, then
// the asymptotic series to its x^-7 term. The truncation costs up to ~5e-10
// relative accuracy; keeping it keeps results equal to PyTorch's. At
// negative integers sin(pi x) is not 0 in floating point, so the result is
// large and finite there (also as PyTorch).
TESSERA_HOST_DEVICE inline double trigamma(double x) {
  double sign = 1, result = 0;
  if (x < 0.5) {
    sign = -1;
    const double s = std::sin(kPi * x);
    result -= kPi * kPi / (s * s);
    x = 1 - x;
  }
  for (int i = 0; i < 6; ++i) {
    result += 1 / (x * x);
    x += 1;
  }
  const double r = 1 / (x * x);
  result += (1 + 1 / (2 * x) + r * (1.0 / 6 - r * (1.0 / 30 - r * (1.0 / 42)))) / x;
  return sign * result;
}

// zeta(s, q) for finite s > 1 and finite q > 0 by Euler-Maclaurin summation:
// the terms k < N directly, then the tail sum_{k >= N} (q + k)^-s as
// w^(1-s) / (s-1) + w^-s / 2 + sum_j B_2j / (2j)! (s)_(2j-1) w^(-s-2j+1) with
// w = q + N. N is the least with w >= max(10, s + 10), where the corrections
// shrink fast enough for 13 of them to reach full precision. When s is
// large the direct sum converges first (its terms fall like
// (q / (q + k))^s), so N stays below ~60.
TESSERA_HOST_DEVICE inline double zeta_positive(double s, double q) {
  // B_2j / (2j)! for j = 1..13: the Euler-Maclaurin correction coefficients.
  static constexpr double kBernoulliOverFactorial[] = {
      8.3333333333333333e-02,  -1.3888888888888889e-03, 3.3068783068783069e-05,
      -8.2671957671957672e-07, 2.0876756987868099e-08,  -5.2841901386874932e-10,
      1.3382536530684679e-11,  -3.3896802963225829e-13, 8.5860620562778446e-15,
      -2.1748686985580619e-16, 5.5090028283602295e-18,  -1.3954464685812523e-19,
      3.5347070396294675e-21,
  };
  const double w_min = std::fmax(10.0, s + 10);
  double sum = 0, w = q;
  while (w < w_min) {
    const double term = std::pow(w, -s);
    sum += term;
    w += 1;
    // Stop once the rest, about term * (1 + w / (s - 1)), is negligible.
    if (term * (1 + w / (s - 1)) <= kEps / 2 * sum || std::isinf(sum)) return sum;
  }
  const double term = std::pow(w, -s);
  sum += term * w / (s - 1) + 0.5 * term;
  double factor = s / w;  // (s)_(2j-1) / w^(2j-1)
  for (int j = 1; j <= 13; ++j) {
    const double correction = term * kBernoulliOverFactorial[j - 1] * factor;
    sum += correction;
    if (std::fabs(correction) <= kEps / 4 * std::fabs(sum)) break;
    factor *= (s + 2 * j - 1) * (s + 2 * j) / (w * w);
  }
  return sum;
}

// zeta(s, q) for q < 0 not an integer and s an integer > 1: the K = ceil(-q)
// terms before q + K are (q + k)^-s = (-1)^s (j - f)^-s, f = q + K, j = 1..K,
// which sum to (-1)^s (zeta(s, u) - zeta(s, 1 - q)) with u = 1 - f = -(q +
// K - 1), exact (a multiple of q's ulp below 1); the rest is zeta(s, f), f
// rounded only where it is near 1 and zeta(s, .) changes slowly. PyTorch
// sums the K terms one by one (K steps, with cancellation between the
// terms around each pole that makes its result meaningless for larger s).
TESSERA_HOST_DEVICE inline double zeta_negative_q(double s, double q) {
  if (std::isinf(s)) return kInf;  // the term nearest 0 is +inf
  const double k_minus_1 = std::floor(-q);
  const double u = -(q + k_minus_1);
  const double f = 1 - u;
  const double sign = std::fmod(s, 2.0) == 0 ? 1 : -1;
  // zeta(s, f) and zeta(s, u) first: for f == u == 1/2 they cancel exactly.
  return (zeta_positive(s, f) + sign * zeta_positive(s, u)) - sign * zeta_positive(s, 1 - q);
}

// Whether (s)(s+1)...(s+22) overflows: where every term of the sum
// underflows, PyTorch's Euler-Maclaurin tail multiplies that product by 0
// and returns NaN when it is inf (s above ~2.5e13), 0 otherwise.
TESSERA_HOST_DEVICE inline bool pochhammer_23_overflows(double s) {
  double product = 1;
  for (int k = 0; k <= 22; ++k) product *= s + k;
  return std::isinf(product);
}

}  // namespace detail

TESSERA_HOST_DEVICE inline double lgamma(double x) { return detail::log_abs_gamma(x); }

TESSERA_HOST_DEVICE inline double digamma(double x) {
  if (std::isnan(x)) return x;
  if (x == 0) return std::copysign(detail::kInf, -x);  // -inf at +0, +inf at -0
  if (x < 0) {
    if (x == std::trunc(x)) return detail::kNaN;  // poles, and -inf
    // psi(x) = psi(1 - x) - pi / tan(pi x), with tan taken of the exact
    // fractional part of x (its period is 1).
    const double fraction = x - std::trunc(x);
    return detail::digamma_positive(1 - x) - detail::kPi / std::tan(detail::kPi * fraction);
  }
  return detail::digamma_positive(x);
}

TESSERA_HOST_DEVICE inline double polygamma(int64_t n, double x) {
  if (n < 0) return detail::kNaN;
  if (n == 0) return digamma(x);
  if (n == 1) return detail::trigamma(x);
  // (-1)^(n+1) n! zeta(n + 1, x), n! as exp(lgamma(n + 1)) like PyTorch: it
  // overflows to inf from n = 171 on, and inf * 0 is NaN.
  const double order = static_cast<double>(n);
  const double factorial = std::exp(detail::log_abs_gamma(order + 1));
  return (n % 2 == 1 ? 1.0 : -1.0) * factorial * zeta(order + 1, x);
}

TESSERA_HOST_DEVICE inline double zeta(double s, double q) {
  if (s == 1) return detail::kInf;
  if (s < 1) return detail::kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return detail::kInf;  // a pole (or -inf), even for NaN s
    if (s != std::floor(s)) return detail::kNaN;  // q^-s undefined (also NaN s)
    return detail::zeta_negative_q(s, q);
  }
  if (std::isnan(s) || std::isnan(q)) return detail::kNaN;
  if (std::isinf(q)) return detail::kNaN;  // PyTorch: its tail computes inf * 0
  if (std::isinf(s)) return q < 1 ? detail::kInf : (q == 1 ? 1.0 : detail::kNaN);
  if (q > 1 && std::pow(q, -s) == 0) return detail::pochhammer_23_overflows(s) ? detail::kNaN : 0.0;
  return detail::zeta_positive(s, q);
}

}  // namespace tessera::special_math
