// Legendre and Laguerre polynomials of large degree, where PyTorch runs its
// recurrence for n steps and we do not: expansions whose error falls with n
// and that are accurate to a few ulp at the degrees they are used for.
//
// Legendre, x = cos(theta), n > 2^16:
//   n sin(theta) >= 40: Stieltjes' series (Szego 8.21.11),
//     P_n = C_n sum_m h_m cos(alpha_m) / (2 sin theta)^(m + 1/2),
//     alpha_m = (n + m + 1/2) theta - (m + 1/2) pi/2,
//     h_m = h_(m-1) (m - 1/2)^2 / (m (n + m + 1/2)), C_n = (2/sqrt(pi))
//     Gamma(n + 1) / Gamma(n + 3/2), whose terms fall like (m/(2n sin theta))^m;
//   closer to +-1: the Bessel-type expansion P_n = sqrt(theta / sin theta)
//     (J0(nu theta) + (theta cot theta - 1) / (8 nu theta) J1(nu theta)),
//     nu = n + 1/2, whose next terms are O(theta^2 / nu^2) relative;
//   x = cosh(xi) > 1: the same with J -> I (P_n grows like e^(nu xi)).
// Laguerre, n > 2^16: Tricomi's convergent expansion (DLMF 13.11.4 with
//   a = -n, b = 1): L_n(x) = e^(x/2) sum_s A_s (x / 4 kappa)^(s/2)
//   J_s(2 sqrt(kappa x)), kappa = n + 1/2, A_0 = 1, A_1 = 0, A_2 = 1/2,
//   (s + 1) A_(s+1) = s A_(s-1) - 2 kappa A_(s-2); for x < 0 (-1)^s I_s
//   replaces J_s. Its terms grow like e^E before they fall, E = (0.44
//   sqrt(x) kappa^(-1/6))^3, and cancel: used where E <= 6 (x below ~17
//   kappa^(1/3), every x short of PyTorch's overflow once n > 2^20). Where
//   PyTorch's recurrence would overflow on the way these return NaN as it
//   does (it overflows in k P_(k-1) or the fma's result (k + 1) P_(k+1)
//   first, i.e. once n |P_n| or n |L_n| passes the largest double).
//
// Included by special_math.h.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>

#include "devices/common/special_math/internal.h"

namespace tessera::special_math::detail {

inline constexpr int kMaxBesselOrder = 160;

// log(Gamma(n + 1) / Gamma(n + 3/2)) for n >= 1, without the cancellation
// of two lgamma values: with z = n + 1 and u = 1 / (2z) it is
// -log(z) / 2 - log1pmx(u) / (2u) + S(z) - S(z + 1/2), S Stirling's remainder.
TESSERA_HOST_DEVICE inline double log_gamma_ratio(double n) {
  const double z = n + 1;
  const double u = 0.5 / z;
  return -0.5 * std::log(z) - log1pmx(u) / (2 * u) + stirling_remainder(z) -
         stirling_remainder(z + 0.5);
}

// Double-double numbers (value hi + lo, |lo| <= ulp(hi) / 2) for the phase
// of Stieltjes' series: (n + 1/2) theta for n up to 2^63 needs theta to
// ~2^-110 to keep the phase right to an ulp, more than acos(x) gives.
struct DoubleDouble {
  double hi, lo;
};

TESSERA_HOST_DEVICE inline DoubleDouble dd_sum(double a, double b) {
  const double s = a + b;
  const double v = s - a;
  return {s, (a - (s - v)) + (b - v)};
}

TESSERA_HOST_DEVICE inline DoubleDouble dd_add(DoubleDouble a, DoubleDouble b) {
  const DoubleDouble s = dd_sum(a.hi, b.hi);
  return dd_sum(s.hi, s.lo + a.lo + b.lo);
}

TESSERA_HOST_DEVICE inline DoubleDouble dd_mul(DoubleDouble a, DoubleDouble b) {
  const double p = a.hi * b.hi;
  const double e = std::fma(a.hi, b.hi, -p) + (a.hi * b.lo + a.lo * b.hi);
  return dd_sum(p, e);
}

TESSERA_HOST_DEVICE inline DoubleDouble dd_neg(DoubleDouble a) { return {-a.hi, -a.lo}; }

TESSERA_HOST_DEVICE inline DoubleDouble dd_sqrt(DoubleDouble a) {  // one Newton step from sqrt(hi)
  const double r = std::sqrt(a.hi);
  const DoubleDouble square = dd_mul({r, 0}, {r, 0});
  const DoubleDouble residual = dd_add(a, dd_neg(square));
  return dd_sum(r, (residual.hi + residual.lo) / (2 * r));
}

struct ComplexDD {
  DoubleDouble re, im;
};

TESSERA_HOST_DEVICE inline ComplexDD cdd_mul(const ComplexDD& a, const ComplexDD& b) {
  return {dd_add(dd_mul(a.re, b.re), dd_neg(dd_mul(a.im, b.im))),
          dd_add(dd_mul(a.re, b.im), dd_mul(a.im, b.re))};
}

// exp(i ((n + 1/2) theta - pi/4)) for x = cos(theta) in [0, 1): powers of
// z = x + i sqrt(1 - x^2) in double-double, times z^(1/2) = cos(theta/2) +
// i sin(theta/2) and exp(-i pi/4). The result is right to a few ulp.
TESSERA_HOST_DEVICE inline void stieltjes_phase(double x, uint64_t n, double& c, double& s) {
  const DoubleDouble one_minus = dd_sum(1.0, -x), one_plus = dd_sum(1.0, x);
  const ComplexDD z = {{x, 0}, dd_sqrt(dd_mul(one_minus, one_plus))};
  ComplexDD power = {{1, 0}, {0, 0}}, base = z;
  for (uint64_t e = n; e != 0; e >>= 1) {
    if (e & 1) power = cdd_mul(power, base);
    if (e > 1) base = cdd_mul(base, base);
  }
  const DoubleDouble half = {0.5, 0};
  const ComplexDD root = {dd_sqrt(dd_mul(one_plus, half)), dd_sqrt(dd_mul(one_minus, half))};
  power = cdd_mul(power, root);
  // times (1 - i) / sqrt(2); sqrt(1/2) = 0.70710678118654757 - 4.8336466567264567e-17.
  const DoubleDouble r = {0.70710678118654757, -4.8336466567264567e-17};
  power = cdd_mul(power, {r, dd_neg(r)});
  c = power.re.hi + power.re.lo;
  s = power.im.hi + power.im.lo;
}

// Stieltjes' series for x = cos(theta) in [0, 1), n sin(theta) >= 40. The
// phases alpha_m = alpha_0 + m (theta - pi/2) come from alpha_0's by
// rotations by e^(i(theta - pi/2)) = sin(theta) - i x.
TESSERA_HOST_DEVICE inline double legendre_stieltjes(double x, double theta, uint64_t degree) {
  const double n = static_cast<double>(degree);
  const double sin_theta = std::sin(theta);
  const double two_sin = 2 * sin_theta;
  const double c_n = 2 / kSqrtPi * std::exp(log_gamma_ratio(n));
  double c, s;
  stieltjes_phase(x, degree, c, s);
  double h = 1, scale = 1 / std::sqrt(two_sin), sum = 0;
  for (int m = 0; m < 60; ++m) {
    sum += h * c * scale;
    h *= (m + 0.5) * (m + 0.5) / ((m + 1) * (n + m + 1.5));
    scale /= two_sin;
    if (h * scale < 1e-17 * std::fabs(sum) || h * scale < 1e-300) break;
    const double rotated_c = c * sin_theta + s * x;  // (c + i s)(sin - i x)
    s = s * sin_theta - c * x;
    c = rotated_c;
  }
  return c_n * sum;
}

// theta cot theta - 1 and xi coth xi - 1 for |t| <= 0.01 (series in t^2).
// sign -1: cot, +1: coth.
TESSERA_HOST_DEVICE inline double t_cot_t_minus_1(double t2, double sign) {
  return sign * t2 / 3 * (1 + sign * t2 / 15 * (1 + sign * 2 * t2 / 21));
}

TESSERA_HOST_DEVICE inline double legendre_large_degree(double x, int64_t degree) {
  const double n = static_cast<double>(degree);
  const double nu = n + 0.5;
  const double sign = x < 0 && degree % 2 == 1 ? -1.0 : 1.0;
  const double ax = std::fabs(x);
  if (ax > 1) {
    const double xi = std::acosh(ax);
    const double z = nu * xi;
    if (z > 745) return kNaN;  // PyTorch's recurrence has overflowed
    const double correction = t_cot_t_minus_1(xi * xi, 1.0) / (8 * nu * xi);
    const double ratio = xi == 0 ? 1.0 : std::sqrt(xi / std::sinh(xi));
    const double v = ratio * std::exp(z) * (i0e(z) + correction * i1e(z));
    if (!(n * v <= DBL_MAX)) return kNaN;  // as for Laguerre below
    return sign * v;
  }
  if (ax == 0 && degree % 2 == 1) return 0.0;  // as PyTorch's recurrence: exactly 0
  const double theta = std::acos(ax);  // in [0, pi/2]
  if (n * std::sin(theta) >= 40) {
    return sign * legendre_stieltjes(ax, theta, static_cast<uint64_t>(degree));
  }
  const double z = nu * theta;
  const double ratio = theta == 0 ? 1.0 : std::sqrt(theta / std::sin(theta));
  const double correction = theta == 0 ? 0.0 : t_cot_t_minus_1(theta * theta, -1.0) / (8 * nu * theta);
  return sign * ratio * (bessel_j0(z) + correction * bessel_j1(z));
}

// J_s(z) for s = 0..count-1 into out: forward recurrence from J0, J1 where
// z > count (stable there), else Miller's backward recurrence normalized by
// J0 + 2 (J2 + J4 + ...) = 1.
TESSERA_HOST_DEVICE inline void bessel_j_sequence(double z, int count, double* out) {
  if (z <= 2) {  // the power series, without cancellation this close to 0
    double lead = 1;  // (z/2)^s / s!
    for (int s = 0; s < count; ++s) {
      if (s > 0) lead *= 0.5 * z / s;
      double term = 1, sum = 1;
      for (int k = 1; k < 30 && std::fabs(term) > 1e-18 * std::fabs(sum); ++k) {
        term *= -0.25 * z * z / (k * (s + k));
        sum += term;
      }
      out[s] = lead * sum;
    }
    return;
  }
  if (z > count + 10) {
    out[0] = bessel_j0(z);
    if (count > 1) out[1] = bessel_j1(z);
    for (int s = 1; s + 1 < count; ++s) out[s + 1] = 2 * s / z * out[s] - out[s - 1];
    return;
  }
  const int start = 2 * ((count + static_cast<int>(z) + 40) / 2);
  double next = 0, current = 1e-280, norm = 0;
  for (int s = start; s > 0; --s) {
    const double previous = 2 * s / z * current - next;  // J_(s-1)
    next = current;
    current = previous;
    if (s - 1 < count) out[s - 1] = current;
    if ((s - 1) % 2 == 0 && s - 1 > 0) norm += 2 * current;
    if (std::fabs(current) > 1e250) {  // rescale everything computed so far
      next *= 1e-250;
      current *= 1e-250;
      norm *= 1e-250;
      for (int i = s - 1; i < count; ++i) out[i] *= 1e-250;
    }
  }
  norm += current;  // + J0
  for (int i = 0; i < count; ++i) out[i] /= norm;
}

// e^-y I_s(y) for s = 0..count-1 by Miller's backward recurrence normalized
// by I0 + 2 (I1 + I2 + ...) = e^y.
TESSERA_HOST_DEVICE inline void scaled_bessel_i_sequence(double y, int count, double* out) {
  if (y <= 2) {  // the power series (positive terms), times e^-y
    double lead = std::exp(-y);  // e^-y (y/2)^s / s!
    for (int s = 0; s < count; ++s) {
      if (s > 0) lead *= 0.5 * y / s;
      double term = 1, sum = 1;
      for (int k = 1; k < 30 && term > 1e-18 * sum; ++k) {
        term *= 0.25 * y * y / (k * (s + k));
        sum += term;
      }
      out[s] = lead * sum;
    }
    return;
  }
  const int start = count + static_cast<int>(y + 10 * std::sqrt(y + 1)) + 40;
  double next = 0, current = 1e-280, norm = 0;
  for (int s = start; s > 0; --s) {
    const double previous = 2 * s / y * current + next;  // I_(s-1)
    next = current;
    current = previous;
    if (s - 1 < count) out[s - 1] = current;
    if (s - 1 > 0) norm += 2 * current;
    if (current > 1e250) {
      next *= 1e-250;
      current *= 1e-250;
      norm *= 1e-250;
      for (int i = s - 1; i < count; ++i) out[i] *= 1e-250;
    }
  }
  norm += current;
  for (int i = 0; i < count; ++i) out[i] /= norm;
}

TESSERA_HOST_DEVICE inline bool laguerre_expansion_applies(double x, int64_t degree) {
  if (degree > (int64_t{1} << 20)) return true;
  return x <= 17 * std::cbrt(static_cast<double>(degree) + 0.5);
}

TESSERA_HOST_DEVICE inline double laguerre_large_degree(double x, int64_t degree) {
  const double n = static_cast<double>(degree);
  const double kappa = n + 0.5;
  const double u = std::fabs(x);
  const double r = std::sqrt(u / (4 * kappa));  // (|x| / 4 kappa)^(1/2)
  const double z = 2 * std::sqrt(kappa * u);
  // Beyond these PyTorch's recurrence has overflowed (see the file comment).
  if (x < 0 && z > 1500) return kNaN;
  if (x > 1500) return kNaN;
  // B_s = A_s r^s: (s + 1) B_(s+1) = s r^2 B_(s-1) - 2 kappa r^3 B_(s-2).
  double b[kMaxBesselOrder + 1];
  b[0] = 1;
  b[1] = 0;
  b[2] = 0.5 * r * r;
  const double r2 = r * r, r3 = 2 * kappa * r2 * r;
  int count = 3;
  double largest = 1;
  for (int s = 2; s < kMaxBesselOrder; ++s) {
    b[s + 1] = (s * r2 * b[s - 1] - r3 * b[s - 2]) / (s + 1);
    count = s + 2;
    largest = std::fmax(largest, std::fabs(b[s + 1]));
    // |J_s| <= 1 and e^-y I_s <= 1: stop once three B_s in a row are negligible.
    if (s > 8 && std::fabs(b[s + 1]) + std::fabs(b[s]) + std::fabs(b[s - 1]) < 1e-18 * largest) break;
  }
  double bessel[kMaxBesselOrder + 1];
  double sum = 0;
  if (x > 0) {
    bessel_j_sequence(z, count, bessel);
    for (int s = count - 1; s >= 0; --s) sum += b[s] * bessel[s];
    // e^(x/2) in two halves: it may overflow where the product does not.
    const double half = std::exp(x / 4);
    const double v = half * sum * half;
    // PyTorch's recurrence overflows once k |L_k| passes the largest double
    // (in k L_(k-1), or in its fma's result (k + 1) L_(k+1)); k |L_k| grows
    // with k, like k times the envelope e^(x/2) (pi^2 kappa x)^(-1/4).
    const double envelope = half * half * std::pow(kPi * kPi * kappa * x, -0.25);
    if (!(n * envelope <= DBL_MAX)) return kNaN;
    return v;
  }
  scaled_bessel_i_sequence(z, count, bessel);
  for (int s = count - 1; s >= 0; --s) sum += (s % 2 == 0 ? b[s] : -b[s]) * bessel[s];
  const double v = std::exp(z - u / 2) * sum;  // positive and growing with n
  if (!(n * v <= DBL_MAX)) return kNaN;
  return v;
}

}  // namespace tessera::special_math::detail
