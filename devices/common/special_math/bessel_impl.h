// Bessel functions of integer order: I0, I1, K0, K1 (and their scaled
// forms), J0, J1, Y0, Y1, and the spherical j0.
//
// Small arguments use the ascending series. Large ones use integrals that
// the trapezoidal rule evaluates to full precision with a fixed set of
// nodes: for K, e^x K_nu(x) = int exp(-x (cosh t - 1)) cosh(nu t) dt; for J
// and Y, Hankel's integral H_n(x) = sqrt(2 / (pi x)) e^(i chi) I_n(x) with
// I_0 = 2/sqrt(pi) int_0^inf e^(-s^2) (1 + i s^2 / 2x)^(-1/2) ds and
// I_1 = 4/sqrt(pi) int_0^inf s^2 e^(-s^2) (1 + i s^2 / 2x)^(1/2) ds
// (Poisson's form of Hankel's integral, DLMF 10.9, with u = s^2). I and K
// in between use the asymptotic series of e^-x I_n(x), accurate to an ulp
// from x = 20. Included by special_math.h.
#pragma once

#include <cmath>

#include "devices/common/special_math/internal.h"

namespace tessera::special_math {
namespace detail {

TESSERA_HOST_DEVICE inline double scaled_bessel_k_integral(double nu, double x) {
  // exp(-(k/5)^2), k = 0..32: the trapezoidal nodes s = k/5 of the K integral.
  static constexpr double kGaussianFifths[] = {
      1.0000000000000000,      0.96078943915232321,     0.85214378896621134,
      0.69767632607103106,     0.52729242404304856,     0.36787944117144232,
      0.23692775868212176,     0.14085842092104500,     0.077304740443299746,
      0.039163895098987074,    0.018315638888734180,    0.0079070540515934405,
      0.0031511115984444406,   0.0011592291739045912,   0.00039366904065507821,
      0.00012340980408667955,  3.5712849641635217e-5,   9.5401628730792348e-6,
      2.3525752000097729e-6,   5.3553478027931062e-7,   1.1253517471925911e-7,
      2.1829577951254792e-8,   3.9089384342648619e-9,   6.4614317731061090e-10,
      9.8595055759915082e-11,  1.3887943864964021e-11,  1.8058314375132156e-12,
      2.1675688826189619e-13,  2.4017347816209594e-14,  2.4565953687921445e-15,
      2.3195228302435694e-16,  2.0217158486953420e-17,  1.6266646214532443e-18,
  };
  // Step 1/5: the error of the rule is ~exp(-2 pi sqrt(2x) / h + 2x), below
  // an ulp for x >= 0.6; the nodes reach s = 6.4 (exp(-s^2) < 2e-18).
  // 1 / sqrt(2x + s^2) is taken as x^(-1/2) / sqrt(2 + s^2 / x): no overflow.
  constexpr double h = 0.2;
  double sum = 0;
  for (int k = 32; k >= 1; --k) {  // smallest terms first
    const double s = k * h;
    double cosh_nu_t;
    if (nu == 0) {
      cosh_nu_t = 1;
    } else if (nu == 1) {
      cosh_nu_t = 1 + s * s / x;  // cosh t = 1 + 2 sinh^2(t/2)
    } else {
      cosh_nu_t = std::cosh(2 * nu * std::asinh(s / std::sqrt(2 * x)));
    }
    sum += kGaussianFifths[k] * cosh_nu_t / std::sqrt(2 + s * s / x);
  }
  sum += 0.5 / kSqrt2;
  return 2 * h * sum / std::sqrt(x);
}

inline constexpr double kSqrt2OverPi = 0.797884560802865355879892119868763737;
inline constexpr double kThreePiOver4 = 2.356194490192344928846982537459627163;
inline constexpr double kPiOver4 = 0.785398163397448309615660845819875721;

// The modulus-phase factors of Hankel's integral for x >= 5: returns
// p + i q = I_order(x) with J = sqrt(2 / (pi x)) (p cos chi - q sin chi) and
// Y = sqrt(2 / (pi x)) (p sin chi + q cos chi), chi = x - (2 order + 1) pi/4.
struct ModulusPhase {
  double p, q;
};
TESSERA_HOST_DEVICE inline ModulusPhase hankel_factors(int order, double x) {
  // exp(-(k/4)^2), k = 0..26: the trapezoidal nodes s = k/4 of Hankel's
  // integral (enough from x = 5 on: its integrand is analytic in
  // |Im s| < sqrt(x)).
  static constexpr double kGaussianQuarters[] = {
      1.0000000000000000,     0.93941306281347579,    0.77880078307140487,
      0.56978282473092301,    0.36787944117144232,    0.20961138715109782,
      0.10539922456186434,    0.046770622383958984,   0.018315638888734180,
      0.0063297154274857466,  0.0019304541362277092,  0.00051957468215483848,
      0.00012340980408667955, 2.5868100222654121e-5,  4.7851173921290091e-6,
      7.8114894083044908e-7,  1.1253517471925911e-7,  1.4307241918567688e-8,
      1.6052280551856116e-9,  1.5893910094516367e-10, 1.3887943864964021e-11,
      1.0709232382508076e-12, 7.2877240958196924e-14, 4.3766185028708499e-15,
      2.3195228302435694e-16, 1.0848552640429378e-17, 4.4777324417183012e-19,
  };
  constexpr double h = 0.25;
  double p = 0, q = 0;
  for (int k = 26; k >= 0; --k) {
    const double s2 = (k * h) * (k * h);
    const double y = s2 / (2 * x);
    // sqrt(1 + i y) = a + i b with r = |1 + i y|, a = sqrt((r + 1) / 2),
    // b = y / sqrt(2 (r + 1)) (no cancellation in r - 1).
    const double r = std::hypot(1.0, y);
    const double a = std::sqrt((r + 1) / 2);
    const double b = y / std::sqrt(2 * (r + 1));
    double re, im, weight;
    if (order == 0) {  // (1 + i y)^(-1/2) = (a - i b) / r
      re = a / r;
      im = -b / r;
      weight = kGaussianQuarters[k];
    } else {
      re = a;
      im = b;
      weight = 2 * s2 * kGaussianQuarters[k];
    }
    const double w = k == 0 ? weight / 2 : weight;
    p += w * re;
    q += w * im;
  }
  const double scale = 2 * h / kSqrtPi;
  return {p * scale, q * scale};
}

// J0 and Y0 share the phase x - pi/4 and J1, Y1 x - 3 pi/4, rounded to
// double as PyTorch (Cephes) rounds it: for large x that rounding, not the
// factors, decides the result, and doing the same keeps results equal.
TESSERA_HOST_DEVICE inline double bessel_jy_large(int order, bool second_kind, double x) {
  const ModulusPhase f = hankel_factors(order, x);
  const double phase = x - (order == 0 ? kPiOver4 : kThreePiOver4);
  const double c = std::cos(phase), s = std::sin(phase);
  const double v = second_kind ? f.p * s + f.q * c : f.p * c - f.q * s;
  return v * kSqrt2OverPi / std::sqrt(x);
}

// sum_k (-x^2/4)^k / (k! (k + order)!) for |x| <= 5 (terms below 10 in size).
TESSERA_HOST_DEVICE inline double bessel_j_series(int order, double x) {
  const double z = -0.25 * x * x;
  double term = 1, sum = 1;
  for (int k = 1; k < 40; ++k) {
    term *= z / (k * (k + order));
    sum += term;
    if (std::fabs(term) < 1e-17 * std::fabs(sum)) break;
  }
  return sum;
}

// I_order(x) for 0 <= x <= 20 by the ascending series (positive terms).
TESSERA_HOST_DEVICE inline double bessel_i_series(int order, double x) {
  const double z = 0.25 * x * x;
  double term = order == 0 ? 1.0 : 0.5 * x, sum = term;
  for (int k = 1; k < 120; ++k) {
    term *= z / (k * (k + order));
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return sum;
}

// e^-x I_order(x) for x > 20 by its asymptotic series
// (2 pi x)^(-1/2) sum_k t_k, t_k = t_(k-1) ((2k - 1)^2 - 4 order^2) / (8 k x),
// summed while the terms shrink (the smallest is ~e^(-2x)).
TESSERA_HOST_DEVICE inline double bessel_i_scaled_asymptotic(int order, double x) {
  double term = 1, sum = 1;
  for (int k = 1; k < 60; ++k) {
    const double next = term * ((2 * k - 1.0) * (2 * k - 1) - 4.0 * order * order) / (8.0 * k * x);
    if (std::fabs(next) >= std::fabs(term)) break;
    term = next;
    sum += term;
    if (std::fabs(term) < 1e-17 * std::fabs(sum)) break;
  }
  return sum * (kOneOverSqrtPi * kSqrtHalf) / std::sqrt(x);  // no overflow in 2 pi x
}

TESSERA_HOST_DEVICE inline double scaled_i(int order, double ax) {
  if (ax > 20) return bessel_i_scaled_asymptotic(order, ax);
  return bessel_i_series(order, ax) * std::exp(-ax);
}

TESSERA_HOST_DEVICE inline double unscaled_i(int order, double ax) {
  if (ax > 20) return bessel_i_scaled_asymptotic(order, ax) * std::exp(ax);  // inf at inf: NaN
  return bessel_i_series(order, ax);
}

// K0(x) and K1(x) for 0 < x <= 1 by the series of DLMF 10.31.1:
// K0 = -log(x/2) I0 + sum psi(k+1) (x^2/4)^k / k!^2,
// K1 = 1/x + log(x/2) I1 - (x/4) sum (psi(k+1) + psi(k+2)) (x^2/4)^k / (k! (k+1)!).
// log(0.5 * x) as PyTorch: for x = 5e-324 it is log(0), so K0 -> inf and
// K1 -> inf - inf = NaN there, as PyTorch gives.
TESSERA_HOST_DEVICE inline double bessel_k_series(int order, double x) {
  const double z = 0.25 * x * x;
  const double log_half_x = std::log(0.5 * x);
  double psi_k1 = -kEulerGamma;  // psi(k + 1)
  if (order == 0) {
    double term = 1, sum = psi_k1;
    for (int k = 1; k < 30; ++k) {
      term *= z / (k * k);
      psi_k1 += 1.0 / k;
      sum += term * psi_k1;
      if (term < 1e-18) break;
    }
    return sum - log_half_x * bessel_i_series(0, x);
  }
  double term = 1, sum = psi_k1 + (psi_k1 + 1);  // k = 0: psi(1) + psi(2)
  for (int k = 1; k < 30; ++k) {
    term *= z / (k * (k + 1));
    psi_k1 += 1.0 / k;
    sum += term * (2 * psi_k1 + 1.0 / (k + 1));
    if (term < 1e-18) break;
  }
  return 1 / x + log_half_x * bessel_i_series(1, x) - 0.25 * x * sum;
}

TESSERA_HOST_DEVICE inline double bessel_k(int order, double x, bool scaled) {
  if (std::isnan(x)) return x;
  if (x < 0) return kNaN;
  if (x == 0) return kInf;
  if (x <= 1) {
    const double k = bessel_k_series(order, x);
    return scaled ? k * std::exp(x) : k;
  }
  const double k = scaled_bessel_k_integral(order, x);
  return scaled ? k : k * std::exp(-x);
}

}  // namespace detail

TESSERA_HOST_DEVICE inline double i0(double x) {
  if (std::isnan(x)) return x;
  return detail::unscaled_i(0, std::fabs(x));
}

TESSERA_HOST_DEVICE inline double i0e(double x) {
  if (std::isnan(x)) return x;
  return detail::scaled_i(0, std::fabs(x));
}

// I1 is odd; PyTorch computes it on |x| and negates for x < 0, so -0 gives +0.
TESSERA_HOST_DEVICE inline double i1(double x) {
  if (std::isnan(x)) return x;
  const double v = detail::unscaled_i(1, std::fabs(x));
  return x < 0 ? -v : v;
}

TESSERA_HOST_DEVICE inline double i1e(double x) {
  if (std::isnan(x)) return x;
  const double v = detail::scaled_i(1, std::fabs(x));
  return x < 0 ? -v : v;
}

TESSERA_HOST_DEVICE inline double modified_bessel_i0(double x) { return i0(x); }
TESSERA_HOST_DEVICE inline double modified_bessel_i1(double x) { return i1(x); }

TESSERA_HOST_DEVICE inline double modified_bessel_k0(double x) {
  return detail::bessel_k(0, x, false);
}
TESSERA_HOST_DEVICE inline double modified_bessel_k1(double x) {
  return detail::bessel_k(1, x, false);
}
TESSERA_HOST_DEVICE inline double scaled_modified_bessel_k0(double x) {
  return detail::bessel_k(0, x, true);
}
TESSERA_HOST_DEVICE inline double scaled_modified_bessel_k1(double x) {
  return detail::bessel_k(1, x, true);
}

TESSERA_HOST_DEVICE inline double bessel_j0(double x) {
  const double ax = std::fabs(x);  // NaN stays NaN; inf gives cos(inf) = NaN
  if (ax <= 5) return detail::bessel_j_series(0, ax);
  return detail::bessel_jy_large(0, false, ax);
}

// J1 is odd: J1(-0) = -0.
TESSERA_HOST_DEVICE inline double bessel_j1(double x) {
  const double ax = std::fabs(x);
  const double v = ax <= 5 ? 0.5 * ax * detail::bessel_j_series(1, ax)
                           : detail::bessel_jy_large(1, false, ax);
  return std::signbit(x) ? -v : v;
}

// Y0 for x <= 5 by DLMF 10.8.2: (2/pi) (log(x/2) + gamma) J0(x) +
// (2/pi) sum_(k>=1) (-1)^(k+1) H_k (x^2/4)^k / k!^2. log(x) - log 2 rather
// than log(x/2), so that x = 5e-324 still gives a finite value (PyTorch's).
TESSERA_HOST_DEVICE inline double bessel_y0(double x) {
  if (std::isnan(x)) return x;
  if (x < 0) return detail::kNaN;
  if (x == 0) return -detail::kInf;
  if (x > 5) return detail::bessel_jy_large(0, true, x);
  const double z = -0.25 * x * x;
  double term = 1, harmonic = 0, sum = 0;
  for (int k = 1; k < 40; ++k) {
    term *= z / (k * k);
    harmonic += 1.0 / k;
    sum -= term * harmonic;
    if (std::fabs(term) * harmonic < 1e-17 * std::fabs(sum)) break;
  }
  const double log_term =
      (std::log(x) - detail::kLn2 + detail::kEulerGamma) * detail::bessel_j_series(0, x);
  return (2 / detail::kPi) * (log_term + sum);
}

// Y1 for x <= 5 by DLMF 10.8.1: -2/(pi x) + (2/pi) log(x/2) J1(x) -
// (x / 2pi) sum_k (psi(k+1) + psi(k+2)) (-x^2/4)^k / (k! (k+1)!).
TESSERA_HOST_DEVICE inline double bessel_y1(double x) {
  if (std::isnan(x)) return x;
  if (x < 0) return detail::kNaN;
  if (x == 0) return -detail::kInf;
  if (x > 5) return detail::bessel_jy_large(1, true, x);
  const double z = -0.25 * x * x;
  double psi_k1 = -detail::kEulerGamma;
  double term = 1, sum = 2 * psi_k1 + 1;
  for (int k = 1; k < 40; ++k) {
    term *= z / (k * (k + 1));
    psi_k1 += 1.0 / k;
    sum += term * (2 * psi_k1 + 1.0 / (k + 1));
    if (std::fabs(term) < 1e-18) break;
  }
  const double j1 = 0.5 * x * detail::bessel_j_series(1, x);
  return -2 / (detail::kPi * x) + (2 / detail::kPi) * (std::log(x) - detail::kLn2) * j1 -
         x / (2 * detail::kPi) * sum;
}

TESSERA_HOST_DEVICE inline double spherical_bessel_j0(double x) {
  if (std::isinf(x)) return 0.0;
  if (std::fabs(x) < 0.5) {
    // sin(x)/x = sum_k (-x^2)^k / (2k+1)!; 9 terms reach 1e-19 at 0.5.
    const double z = -x * x;
    double term = 1, sum = 1;
    for (int k = 1; k <= 9; ++k) {
      term *= z / ((2 * k) * (2 * k + 1));
      sum += term;
    }
    return sum;
  }
  return std::sin(x) / x;
}

}  // namespace tessera::special_math
