// The regularized incomplete gamma functions P(a, x) (igamma) and
// Q(a, x) = 1 - P (igammac). Included by special_math.h.
//
// Each is computed directly where it is the smaller of the two (or both
// are large), so no digits cancel in 1 - P:
//   x <= 1.5, a < max(x, 1): Q by the series of DLMF 8.7.3 rearranged for
//                     small a (1 - x^a / Gamma(1+a) taken with expm1), P from
//                     it where P >= 1/2;
//   a >= 20, |x/a - 1| <= 0.3: Temme's uniform asymptotic expansion
//                     (DLMF 8.12.3-8.12.4) with 10 terms;
//   x < a + 1:        P by its power series (DLMF 8.7.1 / 8.11.4 form);
//   otherwise:        Q by Legendre's continued fraction (DLMF 8.9.2).
// The factor x^a e^-x / Gamma(a) is taken as exp(-a phi(x/a)) sqrt(a / 2pi)
// / Gamma*(a), phi(l) = l - 1 - log l, for a >= 8: that keeps its error at
// a few ulp where exp(a log x - x - lgamma(a)) would lose log2(a log x) bits.
#pragma once

#include <cmath>

#include "devices/common/special_math/internal.h"

namespace tessera::special_math {
namespace detail {

// Never reached: the regions bound the iteration counts.
inline constexpr int kIncompleteGammaMaxIterations = 2000;

// log Gamma(1 + a) for 0 <= a < 1, also where 1 + a rounds to 1.
TESSERA_HOST_DEVICE inline double log_gamma_1p(double a) {
  // (-1)^k zeta(k) / k, k = 2..26: log Gamma(1 + a) = -gamma a + sum of these
  // times a^k.
  static constexpr double kLogGamma1pCoefficients[] = {
      0.8224670334241132,    -0.40068563438653143,  0.27058080842778454,
      -0.20738555102867398,  0.16955717699740819,   -0.14404989676884611,
      0.12550966952474304,   -0.11133426586956469,  0.10009945751278181,
      -0.090954017145829041, 0.083353840546109004,  -0.076932516411352195,
      0.07143294629536133,   -0.066668705882420465, 0.062500955141213038,
      -0.058823978658684585, 0.055555767627403614,  -0.052631679379616658,
      0.050000047698101693,  -0.047619070330142226, 0.045454556293204669,
      -0.043478266053040261, 0.041666669150341208,  -0.040000001192140137,
      0.038461539034675182,
  };
  if (a >= 0.2) return log_abs_gamma(1 + a);
  return a * (-kEulerGamma + a * polynomial(kLogGamma1pCoefficients, a));
}

// phi(x / a) = x/a - 1 - log(x/a) >= 0: by log1pmx near x = a, directly
// away from it (where (x - a) / a would lose x/a's low digits to rounding).
TESSERA_HOST_DEVICE inline double phi_of_ratio(double a, double x) {
  const double ratio = x / a;
  if (std::fabs(ratio - 1) > 0.5) return (ratio - 1) - std::log(ratio);
  return -log1pmx((x - a) / a);
}

// x^a e^-x / Gamma(a).
TESSERA_HOST_DEVICE inline double power_exp_over_gamma(double a, double x) {
  if (a < 8) return std::exp(a * std::log(x) - x - log_abs_gamma(a));
  const double phi = phi_of_ratio(a, x);
  return std::sqrt(a / (2 * kPi)) * std::exp(-a * phi - stirling_remainder(a));
}

// x^a e^-x / Gamma(a + 1); for a < 1 through log Gamma(1 + a), accurate
// however small a is (lgamma(a) ~ -log a would cost its own ~700 ulp).
TESSERA_HOST_DEVICE inline double power_exp_over_gamma_1p(double a, double x) {
  if (a < 1) return std::exp(a * std::log(x) - x - log_gamma_1p(a));
  return power_exp_over_gamma(a, x) / a;
}

// P(a, x) = x^a e^-x / Gamma(a + 1) sum_k x^k / ((a+1)...(a+k)) for x < a + 1.
TESSERA_HOST_DEVICE inline double lower_series(double a, double x) {
  double term = 1, sum = 1;
  for (int k = 1; k < kIncompleteGammaMaxIterations; ++k) {
    term *= x / (a + k);
    sum += term;
    if (term <= kEps / 2 * sum) break;
  }
  return power_exp_over_gamma_1p(a, x) * sum;
}

// Q(a, x) = x^a e^-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)),
// evaluated forwards by the modified Lentz method, for x >= a + 1.
TESSERA_HOST_DEVICE inline double upper_continued_fraction(double a, double x) {
  constexpr double tiny = 1e-300;
  double b = x + 1 - a;
  double c = 1 / tiny, d = 1 / b, f = d;
  for (int i = 1; i < kIncompleteGammaMaxIterations; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < tiny) d = tiny;
    c = b + an / c;
    if (std::fabs(c) < tiny) c = tiny;
    d = 1 / d;
    const double delta = c * d;
    f *= delta;
    if (std::fabs(delta - 1) <= kEps) break;
  }
  return power_exp_over_gamma(a, x) * f;
}

// Q(a, x) for x <= 1.5 and a < max(x, 1): Q = (1 - x^a / Gamma(1 + a)) -
// x^a / Gamma(1 + a) a sum_(k>=1) (-x)^k / (k! (a + k)), DLMF 8.7.3 with the
// k = 0 term split off; the first part is -expm1(a log x - log Gamma(1+a)),
// exact in relative terms however small a is.
TESSERA_HOST_DEVICE inline double upper_small_a(double a, double x) {
  double term = 1, sum = 0;
  for (int k = 1; k < 60; ++k) {
    term *= -x / k;
    const double contribution = term / (a + k);
    sum += contribution;
    if (std::fabs(contribution) <= kEps / 4 * std::fabs(sum)) break;
  }
  const double log_power_over_gamma = a * std::log(x) - log_gamma_1p(a);
  return -std::expm1(log_power_over_gamma) - std::exp(log_power_over_gamma) * a * sum;
}

// Temme's expansion; returns Q (upper) or P.
TESSERA_HOST_DEVICE inline double temme(double a, double x, bool upper) {
  // Taylor coefficients of Temme's C_k(eta), k = 0..9, in eta^0..eta^17: with
  // Q(a, x) = erfc(eta sqrt(a/2)) / 2 + exp(-a eta^2/2) / sqrt(2 pi a)
  // sum_k C_k(eta) a^-k, eta^2 / 2 = phi(x/a), sign(eta) = sign(x - a).
  // Derived here from C_0 = 1/(lambda - 1) - 1/eta and C_k = C_(k-1)'(eta) /
  // eta + (-1)^k g_k / (lambda - 1) (g_k: Stirling's Gamma* coefficients) in
  // exact rational arithmetic; for |eta| <= 0.34 and a >= 20 the truncation
  // is below 1e-16 relative.
  static constexpr double kTemme[10][18] = {
      {-0.33333333333333331, 0.083333333333333329, -0.014814814814814815, 0.0011574074074074073, 0.00035273368606701942, -0.0001787551440329218,
       3.9192631785224377e-05, -2.185448510679992e-06, -1.85406221071516e-06, 8.2967113409530865e-07, -1.7665952736826078e-07, 6.7078535434014984e-09,
       1.0261809784240309e-08, -4.3820360184533529e-09, 9.1476995822367902e-10, -2.5514193994946248e-11, -5.8307721325504256e-11, 2.4361948020667415e-11},
      {-0.0018518518518518519, -0.003472222222222222, 0.0026455026455026454, -0.00099022633744855963, 0.00020576131687242798, -4.018775720164609e-07,
       -1.8098550334489977e-05, 7.6491609160811098e-06, -1.6120900894563446e-06, 4.647127802807434e-09, 1.3786334469157209e-07, -5.7525456035177047e-08,
       1.1951628599778148e-08, -1.7543241719747647e-11, -1.0091543710600413e-09, 4.1627929918425828e-10, -8.5639070264929801e-11, 6.0672151016047582e-14},
      {0.0041335978835978834, -0.0026813271604938273, 0.0007716049382716049, 2.0093878600823047e-06, -0.0001073665322636516, 5.2923448829120125e-05,
       -1.2760635188618728e-05, 3.4235787340961378e-08, 1.3721957309062934e-06, -6.2989921383800548e-07, 1.4280614206064242e-07, -2.0477098421990866e-10,
       -1.409252991086752e-08, 6.2289740849220218e-09, -1.3670488396617114e-09, 9.428356159014678e-13, 1.2872252400089318e-10, -5.5645956134363323e-11},
      {0.00064943415637860077, 0.00022947209362139917, -0.0004691894943952557, 0.00026772063206283885, -7.5618016718839766e-05, -2.3965051138672968e-07,
       1.1082654115347302e-05, -5.6749528269915965e-06, 1.4230900732435883e-06, -2.7861080291528143e-11, -1.6958404091930278e-07, 8.0994649053880827e-08,
       -1.9111168485973655e-08, 2.3928620439808118e-12, 2.0620131815488797e-09, -9.460496661855133e-10, 2.1541049775774907e-10, -1.388823336813903e-14},
      {-0.00086188829091671173, 0.00078403922172006662, -0.00029907248030319018, -1.4638452578843418e-06, 6.6414982154651219e-05, -3.9683650471794347e-05,
       1.1375726970678419e-05, 2.5074972262375329e-10, -1.6954149536558305e-06, 8.9075075322053094e-07, -2.2929348340008049e-07, 2.9567941375440492e-11,
       2.8865829742708783e-08, -1.4189739437803219e-08, 3.4463580499464896e-09, -2.3024517174528067e-13, -3.9409233028046403e-10, 1.8602338968504501e-10},
      {-0.00033679855336635813, -6.9728137583658571e-05, 0.00027727532449593918, -0.00019932570516188847, 6.797780477937208e-05, 1.4190629206439671e-07,
       -1.3594048189768693e-05, 8.018470256334202e-06, -2.2914811765080952e-06, -3.2524735512984538e-10, 3.4652846491085265e-07, -1.8447187191171344e-07,
       4.8240967037894184e-08, -1.7989466721743514e-14, -6.3061945000135231e-09, 3.1624176287745678e-09, -7.8409242536974288e-10, 5.1926791652540408e-15},
      {0.00053130793646399225, -0.00059216643735369393, 0.0002708782096718045, 7.9023532326603281e-07, -8.1539693675619691e-05, 5.6116827531062497e-05,
       -1.8329116582843375e-05, -3.0796134506033047e-09, 3.4651553688036091e-06, -2.0291327396058603e-06, 5.7887928631490039e-07, 2.3386306738266568e-13,
       -8.828600746330484e-08, 4.7435958880408125e-08, -1.2545415020710383e-08, 8.6496488580102926e-14, 1.6846058979264062e-09, -8.5754928235775943e-10},
      {0.00034436760689237765, 5.1717909082605919e-05, -0.00033493161081142234, 0.00028126951547632369, -0.00010976582244684731, -1.2741009095484485e-07,
       2.7744451511563645e-05, -1.8263488805711332e-05, 5.7876949497350525e-06, 4.9387589339362701e-10, -1.0595367014026043e-06, 6.1667143761104078e-07,
       -1.7562973359060463e-07, -1.2974473287015439e-12, 2.6954236062889659e-08, -1.4578352908731272e-08, 3.887645959386175e-09, -3.8810022510194121e-17},
      {-0.00065262391859530937, 0.00083949872067208726, -0.00043829709854172099, -6.9690914584205523e-07, 0.00016644846642067547, -0.00012783517679769218,
       4.6299532636913042e-05, 4.557909867922708e-09, -1.0595271125805195e-05, 6.7833429048651668e-06, -2.1075476666258803e-06, -1.7213731432817144e-11,
       3.7735877416110978e-07, -2.1867506700122867e-07, 6.2202288040189267e-08, 6.5977038267330002e-16, -9.5903864974256859e-09, 5.2132144922808074e-09},
      {-0.00059676129019274626, -7.2048954160200109e-05, 0.0006782308837667328, -0.0006401475260262758, 0.00027750107634328704, 1.8197008380465151e-07,
       -8.4795071170685031e-05, 6.1051920825015314e-05, -2.1073920183404862e-05, -8.8585890141255993e-10, 4.5284535953805374e-06, -2.8427815022504407e-06,
       8.7082341778646408e-07, 3.6886101871706966e-12, -1.5344695190702061e-07, 8.8624667787906948e-08, -2.5184812301826817e-08, -1.0225912098215092e-14}
  };
  const double t = (x - a) / a;
  const double phi = -log1pmx(t);  // eta^2 / 2
  const double eta = std::copysign(std::sqrt(2 * phi), t);
  double series = 0, a_power = 1;
  for (int k = 0; k < 10; ++k) {
    series += polynomial(kTemme[k], eta) * a_power;
    a_power /= a;
  }
  const double remainder = std::exp(-a * phi) / std::sqrt(2 * kPi * a) * series;
  const double z = eta * std::sqrt(a / 2);
  return upper ? 0.5 * std::erfc(z) + remainder : 0.5 * std::erfc(-z) - remainder;
}

// P (upper = false) or Q (upper = true) after PyTorch's edge cases.
TESSERA_HOST_DEVICE inline double incomplete_gamma(double a, double x, bool upper) {
  if (x < 0 || a < 0) return kNaN;
  if (a == 0) {
    if (x > 0) return upper ? 0.0 : 1.0;
    return kNaN;
  }
  if (x == 0) return upper ? 1.0 : 0.0;
  if (std::isinf(a)) {
    if (std::isinf(x)) return kNaN;
    return upper ? 1.0 : 0.0;  // also for NaN x, as PyTorch
  }
  if (std::isinf(x)) return upper ? 0.0 : 1.0;  // also for NaN a
  if (std::isnan(a) || std::isnan(x)) return kNaN;

  if (x <= 1.5 && (a < x || a < 1)) {
    // Q by the small-a series (P -> 1 as a -> 0, so 1 - P would cancel);
    // P from it where P >= 1/2, else by its own series.
    const double q = upper_small_a(a, x);
    if (upper) return q;
    return q <= 0.5 ? 1 - q : lower_series(a, x);
  }
  if (a >= 20 && std::fabs(x - a) <= 0.3 * a) return temme(a, x, upper);
  if (x < a + 1) {
    const double p = lower_series(a, x);
    return upper ? 1 - p : p;
  }
  const double q = upper_continued_fraction(a, x);
  return upper ? q : 1 - q;
}

}  // namespace detail

TESSERA_HOST_DEVICE inline double igamma(double a, double x) {
  return detail::incomplete_gamma(a, x, false);
}
TESSERA_HOST_DEVICE inline double igammac(double a, double x) {
  return detail::incomplete_gamma(a, x, true);
}

}  // namespace tessera::special_math
