// The Airy function Ai(x).
//   x > 1:        Ai(x) = sqrt(x/3) / pi * K_(1/3)(zeta), zeta = (2/3) x^(3/2),
//                 with e^zeta K_(1/3)(zeta) from the trapezoidal integral;
//   -2 <= x <= 1: the Maclaurin series (terms stay below ~7 in size);
//   -10 <= x < -2: Taylor steps of the Airy equation y'' = x y from x = 0
//                 (no growing solution on that side, so errors stay small);
//   x < -10:      the asymptotic expansion in 1/zeta, its phase computed
//                 as PyTorch (Cephes) computes it, since for large |x| the
//                 rounding of the phase decides the value.
// Included by special_math.h.
#pragma once

#include <cmath>

#include "devices/common/special_math/internal.h"

namespace tessera::special_math {
namespace detail {

inline constexpr double kAi0 = 0.355028053887817239260063186004183177;  // Ai(0)
inline constexpr double kMinusAiPrime0 = 0.258819403792806798405183560189203963;  // -Ai'(0)
// PyTorch returns 0 above this (Ai there is below ~5e-308).
inline constexpr double kAiryUnderflow = 103.892;

// Ai(x) by the Maclaurin series Ai(0) f(x) + Ai'(0) g(x),
// f = sum 3^k (1/3)_k x^3k / (3k)!, g = sum 3^k (2/3)_k x^(3k+1) / (3k+1)!.
TESSERA_HOST_DEVICE inline double airy_maclaurin(double x) {
  const double x3 = x * x * x;
  double f = 1, g = x, f_term = 1, g_term = x;
  for (int k = 1; k < 40; ++k) {
    f_term *= x3 / ((3 * k - 1) * (3 * k));
    g_term *= x3 / ((3 * k) * (3 * k + 1));
    f += f_term;
    g += g_term;
    if (std::fabs(f_term) + std::fabs(g_term) < 1e-18 * (std::fabs(f) + std::fabs(g))) break;
  }
  return kAi0 * f - kMinusAiPrime0 * g;
}

// Ai(x) for -10 <= x < -2: Taylor steps of at most 1 from x = 0 along
// y'' = t y. Around t0 the coefficients a_m of y(t0 + h) = sum a_m h^m are
// a_0 = y, a_1 = y', a_2 = t0 y / 2 and m (m - 1) a_m = t0 a_(m-2) + a_(m-3);
// 45 of them are ample for |h| <= 1, |t0| <= 10.
TESSERA_HOST_DEVICE inline double airy_by_taylor_steps(double x) {
  const int steps = static_cast<int>(std::ceil(-x));
  const double h = x / steps;
  double y = kAi0, dy = -kMinusAiPrime0, t0 = 0;
  for (int step = 0; step < steps; ++step) {
    double a_m3 = y, a_m2 = dy, a_m1 = t0 * y / 2;  // a_(m-3), a_(m-2), a_(m-1)
    double value = y + h * (dy + h * a_m1);
    double derivative = dy + 2 * h * a_m1;
    double h_power = h * h;  // h^(m-1)
    for (int m = 3; m < 45; ++m) {
      const double a_m = (t0 * a_m2 + a_m3) / (m * (m - 1.0));
      derivative += m * a_m * h_power;
      h_power *= h;
      value += a_m * h_power;
      a_m3 = a_m2;
      a_m2 = a_m1;
      a_m1 = a_m;
    }
    y = value;
    dy = derivative;
    t0 = (step + 1) * h;
  }
  return y;
}

// Ai(x) for x < -10: x^(-1/4) / sqrt(pi) (sin(theta) U - cos(theta) V) with
// theta = zeta + pi/4, U = sum (-1)^k u_2k / zeta^2k, V = sum (-1)^k
// u_(2k+1) / zeta^(2k+1), u_m = (2m+1)(2m+3)...(6m-1) / (216^m m!)
// (DLMF 9.7.9). The terms fall to ~e^(-2 zeta) (below 1e-18 at x = -10).
TESSERA_HOST_DEVICE inline double airy_negative_asymptotic(double x) {
  const double t = std::sqrt(-x);
  const double zeta = -2.0 * x * t / 3.0;  // overflows to inf (then NaN) as PyTorch's
  const double theta = zeta + 0.25 * kPi;
  const double inverse_zeta = 1 / zeta;
  double u = 1, power = 1, even = 1, odd = 0, previous = kInf;
  for (int m = 1; m < 80; ++m) {
    u *= (6.0 * m - 5) * (6.0 * m - 3) * (6.0 * m - 1) / (216.0 * m * (2.0 * m - 1));
    power *= inverse_zeta;
    const double term = u * power;
    if (!(term < previous) || term < 1e-18) break;  // smallest term reached
    previous = term;
    if (m % 2 == 1) {
      odd += ((m - 1) / 2 % 2 == 0 ? term : -term);
    } else {
      even += (m / 2 % 2 == 0 ? term : -term);
    }
  }
  const double amplitude = 1 / (kSqrtPi * std::sqrt(t));
  return amplitude * (std::sin(theta) * even - std::cos(theta) * odd);
}

}  // namespace detail

TESSERA_HOST_DEVICE inline double airy_ai(double x) {
  if (std::isnan(x) || std::isinf(x)) return detail::kNaN;
  if (x > detail::kAiryUnderflow) return 0.0;
  if (x > 1) {
    const double zeta = 2.0 / 3.0 * x * std::sqrt(x);
    return std::sqrt(x / 3) / detail::kPi * std::exp(-zeta) *
           detail::scaled_bessel_k_integral(1.0 / 3.0, zeta);
  }
  if (x >= -2) return detail::airy_maclaurin(x);
  if (x >= -10) return detail::airy_by_taylor_steps(x);
  return detail::airy_negative_asymptotic(x);
}

}  // namespace tessera::special_math
