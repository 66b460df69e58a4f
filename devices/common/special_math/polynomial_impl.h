// Orthogonal polynomials: Chebyshev T, U, V, W (also shifted to [0, 1]),
// Hermite H and He, Laguerre L and Legendre P.
//
// Each reproduces PyTorch's evaluation step by step, so that results are
// equal to the last bit: the special values at x = +-1 (0 and 1 for the
// shifted ones), the trigonometric closed forms PyTorch uses for |x| < 1
// above a small degree, and otherwise the three-term recurrence, with the
// fused multiply-adds PyTorch's build contracts it to (std::fma below).
//
// PyTorch runs the recurrence for n steps whatever n is. Here it runs for at
// most kMaxRecurrenceSteps (2^20, ~5 ms, PyTorch's own time for such n);
// beyond, and for Legendre and Laguerre already above kLargeDegree (2^16):
//   Chebyshev, |x| > 1: cosh / sinh closed forms (the recurrence only grows);
//   Hermite: NaN (the recurrence overflows, then gives NaN, by n ~ 400);
//   Legendre: asymptotic expansions (polynomial_asymptotic_impl.h);
//   Laguerre: a convergent Bessel expansion where it is accurate (all x for
//   n > 2^20, x below ~17 n^(1/3) above 2^16), else the recurrence;
// or NaN where PyTorch's recurrence overflows on the way. Above 2^16 the
// results are the accurate values, which PyTorch's recurrence drifts from
// (by up to 1e-9 for Legendre near +-1, 1e-6 for Laguerre near 0 at 2^20).
//
// Included by special_math.h.
#pragma once

#include <cmath>
#include <cstdint>

#include "devices/common/special_math/internal.h"

namespace tessera::special_math {
namespace detail {

// Recurrence steps run before switching to closed forms or expansions:
// 2^20 steps take ~5 ms, PyTorch's own cost for such n.
inline constexpr int64_t kMaxRecurrenceSteps = int64_t{1} << 20;

// PyTorch's degree: static_cast<int64_t>(n), which truncates towards zero
// and on x86-64 gives INT64_MIN for NaN and values out of range.
TESSERA_HOST_DEVICE inline int64_t degree_of(double n) {
  if (!(n > -9223372036854775808.0 && n < 9223372036854775808.0)) return INT64_MIN;
  return static_cast<int64_t>(n);
}

TESSERA_HOST_DEVICE inline double parity_sign(int64_t n) { return n % 2 == 0 ? 1.0 : -1.0; }

// Runs r = fma(c, q, -p) from (p, q) = (P_0, P_1) to P_n for n >= 2 (the
// Chebyshev recurrences, c = 2y). Stops at NaN: after an overflow the
// recurrence turns NaN within two steps and stays NaN.
TESSERA_HOST_DEVICE inline double chebyshev_recurrence(double c, double p, double q, int64_t n) {
  for (int64_t k = 2; k <= n; ++k) {
    const double r = std::fma(c, q, -p);
    p = q;
    q = r;
    if (std::isnan(r)) break;
  }
  return q;
}

// Closed forms for |y| > 1, where the recurrence grows like e^(n acosh|y|):
// used above kMaxRecurrenceSteps. kind is 'T', 'U', 'V' or 'W'.
TESSERA_HOST_DEVICE inline double chebyshev_outside_value(char kind, double y, int64_t n) {
  const double theta = std::acosh(std::fabs(y));
  const double m = static_cast<double>(n);
  char effective = kind;
  double sign = 1;
  if (y < 0) {  // T, U: parity; V(-y) = (-1)^n W(y) and vice versa
    sign = parity_sign(n);
    if (kind == 'V') effective = 'W';
    if (kind == 'W') effective = 'V';
  }
  switch (effective) {
    case 'T': return sign * std::cosh(m * theta);
    case 'U': return sign * std::sinh((m + 1) * theta) / std::sinh(theta);
    case 'V': return sign * std::cosh((m + 0.5) * theta) / std::cosh(theta / 2);
    default: return sign * std::sinh((m + 0.5) * theta) / std::sinh(theta / 2);
  }
}

// PyTorch's recurrence gives +-inf when it overflows at one of its last two
// steps and NaN (inf - inf) when earlier.
TESSERA_HOST_DEVICE inline double chebyshev_outside(char kind, double y, int64_t n) {
  const double v = chebyshev_outside_value(kind, y, n);
  if (std::isfinite(v)) return v;
  return std::isfinite(chebyshev_outside_value(kind, y, n - 2)) ? v : kNaN;
}

// T, U, V, W of y for degree n >= 2 when the trigonometric forms do not
// apply: the recurrence (its coefficient c = 2y and start q = P_1 as PyTorch
// rounds them), or the closed form above kMaxRecurrenceSteps.
TESSERA_HOST_DEVICE inline double chebyshev_general(char kind, double y, double c, double first,
                                                     int64_t n) {
  if (std::isnan(y)) return kNaN;
  if (n > kMaxRecurrenceSteps && std::fabs(y) > 1) return chebyshev_outside(kind, y, n);
  return chebyshev_recurrence(c, 1.0, first, n);
}

// T_n(y) for n > 6 and |y| < 1: cos(n acos y).
TESSERA_HOST_DEVICE inline double chebyshev_t_trig(double y, int64_t n) {
  return std::cos(static_cast<double>(n) * std::acos(y));
}

// U_n(y) = sin((n+1) t) / sin t, t = acos y; where sin t is 0 the limit.
TESSERA_HOST_DEVICE inline double chebyshev_u_trig(double y, int64_t n) {
  const double t = std::acos(y);
  const double m = static_cast<double>(n + 1);
  if (std::sin(t) != 0) return std::sin(m * t) / std::sin(t);
  return m * std::cos(m * t) / y;
}

// V_n(y) = cos((n + 1/2) t) / cos(t / 2), t = acos y.
TESSERA_HOST_DEVICE inline double chebyshev_v_trig(double y, int64_t n) {
  const double t = std::acos(y);
  if (std::sin(t / 2) != 1) return std::cos((static_cast<double>(n) + 0.5) * t) / std::cos(t / 2);
  return parity_sign(n) * static_cast<double>(n + n + 1);
}

// W_n(y) = sin((n + 1/2) t) / sin(t / 2), t = acos y.
TESSERA_HOST_DEVICE inline double chebyshev_w_trig(double y, int64_t n) {
  const double t = std::acos(y);
  if (std::cos(t / 2) != 1) return std::sin((static_cast<double>(n) + 0.5) * t) / std::sin(t / 2);
  return y > 0 ? static_cast<double>(n + n + 1) : parity_sign(n);
}

// Above these degrees PyTorch uses the trigonometric forms for |y| < 1.
inline constexpr int64_t kTrigDegreeT = 6;
inline constexpr int64_t kTrigDegreeUVW = 8;
inline constexpr int64_t kTrigDegreeShifted = 6;
inline constexpr int64_t kTrigDegreeShiftedW = 4;  // (sic: PyTorch's shifted W switches earlier)

}  // namespace detail

TESSERA_HOST_DEVICE inline double chebyshev_polynomial_t(double x, double n_in) {
  const int64_t n = detail::degree_of(n_in);
  if (n < 0) return 0.0;
  if (std::fabs(x) == 1) return (x > 0 || n % 2 == 0) ? 1.0 : -1.0;
  if (n > detail::kTrigDegreeT && std::fabs(x) < 1) return detail::chebyshev_t_trig(x, n);
  if (n == 0) return 1.0;
  if (n == 1) return x;
  return detail::chebyshev_general('T', x, x + x, x, n);
}

TESSERA_HOST_DEVICE inline double chebyshev_polynomial_u(double x, double n_in) {
  const int64_t n = detail::degree_of(n_in);
  if (n < 0) return 0.0;
  if (std::fabs(x) == 1) {
    const double m = static_cast<double>(n + 1);
    return (x > 0 || n % 2 == 0) ? m : -m;
  }
  if (n > detail::kTrigDegreeUVW && std::fabs(x) < 1) return detail::chebyshev_u_trig(x, n);
  if (n == 0) return 1.0;
  if (n == 1) return x + x;
  return detail::chebyshev_general('U', x, x + x, x + x, n);
}

TESSERA_HOST_DEVICE inline double chebyshev_polynomial_v(double x, double n_in) {
  const int64_t n = detail::degree_of(n_in);
  if (n < 0) return 0.0;
  if (std::fabs(x) == 1) {
    if (x > 0) return 1.0;
    return detail::parity_sign(n) * static_cast<double>(n + n + 1);
  }
  if (n > detail::kTrigDegreeUVW && std::fabs(x) < 1) return detail::chebyshev_v_trig(x, n);
  if (n == 0) return 1.0;
  if (n == 1) return x + x - 1;
  return detail::chebyshev_general('V', x, x + x, x + x - 1, n);
}

TESSERA_HOST_DEVICE inline double chebyshev_polynomial_w(double x, double n_in) {
  const int64_t n = detail::degree_of(n_in);
  if (n < 0) return 0.0;
  if (std::fabs(x) == 1) {
    if (x > 0) return static_cast<double>(n + n + 1);
    return detail::parity_sign(n);
  }
  if (n > detail::kTrigDegreeUVW && std::fabs(x) < 1) return detail::chebyshev_w_trig(x, n);
  if (n == 0) return 1.0;
  if (n == 1) return x + x + 1;
  return detail::chebyshev_general('W', x, x + x, x + x + 1, n);
}

// The shifted polynomials evaluate those above at y = x + x - 1, with the
// special values at x = 1 (y = 1) and x = 0 (y = -1).
TESSERA_HOST_DEVICE inline double shifted_chebyshev_polynomial_t(double x, double n_in) {
  const int64_t n = detail::degree_of(n_in);
  if (n < 0) return 0.0;
  if (x == 1) return 1.0;
  if (x == 0) return detail::parity_sign(n);
  const double y = x + x - 1;
  if (n > detail::kTrigDegreeShifted && std::fabs(y) < 1) return detail::chebyshev_t_trig(y, n);
  if (n == 0) return 1.0;
  if (n == 1) return y;
  return detail::chebyshev_general('T', y, y + y, y, n);
}

TESSERA_HOST_DEVICE inline double shifted_chebyshev_polynomial_u(double x, double n_in) {
  const int64_t n = detail::degree_of(n_in);
  if (n < 0) return 0.0;
  const double m = static_cast<double>(n + 1);
  if (x == 1) return m;
  if (x == 0) return detail::parity_sign(n) * m;
  const double y = x + x - 1;
  if (n > detail::kTrigDegreeShifted && std::fabs(y) < 1) return detail::chebyshev_u_trig(y, n);
  if (n == 0) return 1.0;
  if (n == 1) return y + y;
  return detail::chebyshev_general('U', y, y + y, y + y, n);
}

TESSERA_HOST_DEVICE inline double shifted_chebyshev_polynomial_v(double x, double n_in) {
  const int64_t n = detail::degree_of(n_in);
  if (n < 0) return 0.0;
  if (x == 1) return 1.0;
  if (x == 0) return detail::parity_sign(n) * static_cast<double>(n + n + 1);
  const double y = x + x - 1;
  if (n > detail::kTrigDegreeShifted && std::fabs(y) < 1) return detail::chebyshev_v_trig(y, n);
  if (n == 0) return 1.0;
  if (n == 1) return y + y - 1;
  return detail::chebyshev_general('V', y, y + y, y + y - 1, n);
}

TESSERA_HOST_DEVICE inline double shifted_chebyshev_polynomial_w(double x, double n_in) {
  const int64_t n = detail::degree_of(n_in);
  if (n < 0) return 0.0;
  if (x == 1) return static_cast<double>(n + n + 1);
  if (x == 0) return detail::parity_sign(n);
  const double y = x + x - 1;
  if (n > detail::kTrigDegreeShiftedW && std::fabs(y) < 1) return detail::chebyshev_w_trig(y, n);
  if (n == 0) return 1.0;
  if (n == 1) return y + y + 1;
  return detail::chebyshev_general('W', y, y + y, y + y + 1, n);
}

namespace detail {

// H_(k+1) = 2x H_k - 2k H_(k-1) (c = 2, H_1 = 2x) and He_(k+1) = x He_k -
// k He_(k-1) (c = 1, He_1 = x). Both overflow and then turn NaN within
// ~400 steps for every x, so the loop ends early and large n give NaN.
TESSERA_HOST_DEVICE inline double hermite(double x, int64_t n, bool physicists) {
  if (n < 0) return 0.0;
  if (n == 0) return 1.0;
  if (std::isnan(x)) return kNaN;
  const double c = physicists ? x + x : x;
  if (n == 1) return c;
  if (n > kMaxRecurrenceSteps) return kNaN;
  double p = 1, q = c;
  for (int64_t k = 1; k < n; ++k) {
    const double kk = static_cast<double>(k);
    const double r = std::fma(c, q, -(physicists ? kk + kk : kk) * p);
    p = q;
    q = r;
    if (std::isnan(r)) break;
  }
  return q;
}

}  // namespace detail

TESSERA_HOST_DEVICE inline double hermite_polynomial_h(double x, double n) {
  return detail::hermite(x, detail::degree_of(n), true);
}
TESSERA_HOST_DEVICE inline double hermite_polynomial_he(double x, double n) {
  return detail::hermite(x, detail::degree_of(n), false);
}

TESSERA_HOST_DEVICE inline double laguerre_polynomial_l(double x, double n_in) {
  const int64_t n = detail::degree_of(n_in);
  if (n < 0) return 0.0;
  if (x == 0) return 1.0;
  if (n == 0) return 1.0;
  if (std::isnan(x)) return detail::kNaN;
  if (n == 1) return 1 - x;
  if (n > detail::kLargeDegree && detail::laguerre_expansion_applies(x, n)) {
    return detail::laguerre_large_degree(x, n);
  }
  // L_(k+1) = ((2k + 1 - x) L_k - k L_(k-1)) / (k + 1), 2k + 1 - x rounded
  // as (k + k) + (1 - x) like PyTorch.
  double p = 1, q = 1 - x;
  for (int64_t k = 1; k < n; ++k) {
    const double kk = static_cast<double>(k);
    const double r = std::fma((kk + kk) + (1 - x), q, -kk * p) / (kk + 1);
    p = q;
    q = r;
    if (std::isnan(r)) break;
  }
  return q;
}

TESSERA_HOST_DEVICE inline double legendre_polynomial_p(double x, double n_in) {
  const int64_t n = detail::degree_of(n_in);
  if (n < 0) return 0.0;
  if (std::fabs(x) == 1) return (x > 0 || n % 2 == 0) ? 1.0 : -1.0;
  if (n == 0) return 1.0;
  if (std::isnan(x)) return detail::kNaN;
  if (n == 1) return x;
  if (n > detail::kLargeDegree) return detail::legendre_large_degree(x, n);
  // P_(k+1) = ((2k + 1) x P_k - k P_(k-1)) / (k + 1).
  double p = 1, q = x;
  for (int64_t k = 1; k < n; ++k) {
    const double kk = static_cast<double>(k);
    const double r = std::fma((kk + kk + 1) * x, q, -kk * p) / (kk + 1);
    p = q;
    q = r;
    if (std::isnan(r)) break;
  }
  return q;
}

}  // namespace tessera::special_math
