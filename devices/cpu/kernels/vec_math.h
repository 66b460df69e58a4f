// exp, expm1, log, log1p, erf, sin and cos of float vectors over their whole range, for the unary
// kernels: glibc's scalar expf/logf/erff take 1-5 ns an element, a vector
// lane a fraction of that. Each is within 2 ulp of the exact value on
// normal results (checked against the double-precision functions in
// tests/ops/vec_math_test.cc), with IEEE special values: NaN passes
// through, exp(-inf) = 0, exp(inf) = inf, log(0) = -inf, log(x < 0) = NaN,
// erf(+-inf) = +-1, and the sign of zero kept where the function keeps it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "devices/cpu/kernels/normalization_vec.h"
#include "devices/cpu/kernels/vec_activation.h"

namespace tessera::cpu::vec {
inline namespace TESSERA_CPU_VEC_ABI {

// e^x = 2^k e^r (exp_reduced), 2^k applied in two halves so that results
// down to the smallest denormal and up to FLT_MAX come out of one rounding.
inline f32v exp_v(f32v x) {
  const f32v hi = splatv(88.72283935546875f);  // e^hi rounds to FLT_MAX
  const f32v lo = splatv(-103.97208404541016f);  // e^lo is below half the least denormal
  f32v xc = x > hi ? hi : x;
  xc = xc < lo ? lo : xc;
  i32v k;
  const f32v p = exp_reduced(xc, k);
  const i32v k1 = k >> 1;
  const f32v s1 = floatsv((k1 + 127) << 23);
  const f32v s2 = floatsv((k - k1 + 127) << 23);
  f32v y = p * s1 * s2;
  y = x > hi ? splatv(std::numeric_limits<float>::infinity()) : y;
  y = x < lo ? splatv(0.0f) : y;
  return x != x ? x : y;
}

// 2 atanh(s) = log((1 + s) / (1 - s)) for |s| <= 0.172, from the odd
// series of atanh to s^9 (the next term is below 1e-9 of the result).
inline f32v two_atanh_small(f32v s) {
  const f32v z = s * s;
  f32v q = splatv(2.0f / 9.0f);
  q = q * z + 2.0f / 7.0f;
  q = q * z + 2.0f / 5.0f;
  q = q * z + 2.0f / 3.0f;
  return 2.0f * s + s * z * q;
}

// log(x) = e ln2 + log(m), m in [sqrt(1/2), sqrt(2)), log(m) = 2 atanh(s)
// with s = (m - 1) / (m + 1), |s| <= 0.172.
inline f32v log_v(f32v x) {
  const f32v min_normal = splatv(std::numeric_limits<float>::min());
  const i32v denormal = x < min_normal;  // scaled by 2^23 first
  const f32v xs = denormal ? x * 8388608.0f : x;
  const i32v bits = bitsv(xs);
  i32v e = ((bits >> 23) & 0xff) - 127 - (denormal & 23);
  f32v m = floatsv((bits & 0x007fffff) | 0x3f800000);  // [1, 2)
  const i32v upper = m > 1.41421356237f;
  m = upper ? m * 0.5f : m;
  e = e - upper;  // upper is -1 where true
  const f32v f = m - 1.0f;
  const f32v log_m = two_atanh_small(f / (2.0f + f));
  const f32v ef = __builtin_convertvector(e, f32v);
  f32v y = ef * 0.693359375f + (log_m + ef * -2.12194440e-4f);
  const float inf = std::numeric_limits<float>::infinity();
  y = x == inf ? splatv(inf) : y;
  y = x == 0.0f ? splatv(-inf) : y;
  y = x < 0.0f ? splatv(std::numeric_limits<float>::quiet_NaN()) : y;
  return x != x ? x : y;
}

// e^x - 1: below |x| = 0.5 its Maclaurin series to x^11 (the next term is
// below 1e-10 of the value), so small arguments keep their precision;
// beyond, exp_v(x) - 1, where the result is at least 0.39 in magnitude
// and the subtraction costs at most a bit.
inline f32v expm1_v(f32v x) {
  f32v p = splatv(1.0f / 39916800.0f);
  p = p * x + 1.0f / 3628800.0f;
  p = p * x + 1.0f / 362880.0f;
  p = p * x + 1.0f / 40320.0f;
  p = p * x + 1.0f / 5040.0f;
  p = p * x + 1.0f / 720.0f;
  p = p * x + 1.0f / 120.0f;
  p = p * x + 1.0f / 24.0f;
  p = p * x + 1.0f / 6.0f;
  p = p * x + 0.5f;
  const f32v series = x + x * x * p;
  const f32v a = absv(x);
  const f32v r = a < 0.5f ? series : exp_v(x) - 1.0f;
  return x != x || x == 0.0f ? x : r;  // NaN and both zeros as they are
}

// log(1 + x): 2 atanh(s) with s = x / (2 + x) where |s| <= 0.172 (x in
// [-0.29, 0.41]); elsewhere log_v(u), u = 1 + x rounded, plus
// (x - (u - 1)) / u, the first-order term of what rounding u lost.
inline f32v log1p_v(f32v x) {
  const f32v series = two_atanh_small(x / (2.0f + x));
  const f32v u = 1.0f + x;
  const f32v lost = (x - (u - 1.0f)) / u;
  const float inf = std::numeric_limits<float>::infinity();
  const f32v far = log_v(u) + (u == 0.0f || u == inf ? splatv(0.0f) : lost);
  const f32v r = x > -0.29f && x < 0.41f ? series : far;
  return x != x ? x : r;
}

// erf(x) = sign(x) (1 - erfc(|x|)) from |x| = 0.5 on, where erf >= 0.52
// and the subtraction loses nothing; below, the Maclaurin series to x^15
// (the next term is below 1e-10 of the value).
inline f32v erf_v(f32v x) {
  const i32v sign = bitsv(x) & splat_sign_mask();
  const f32v a = absv(x);
  const f32v a2 = a * a;
  f32v p = splatv(-1.0f / 75600.0f);
  p = p * a2 + 1.0f / 9360.0f;
  p = p * a2 - 1.0f / 1320.0f;
  p = p * a2 + 1.0f / 216.0f;
  p = p * a2 - 1.0f / 42.0f;
  p = p * a2 + 1.0f / 10.0f;
  p = p * a2 - 1.0f / 3.0f;
  const f32v series = 1.1283791670955126f * (a + a * a2 * p);  // 2 / sqrt(pi)
  const f32v tail = 1.0f - erfc_nonnegative(a);
  const f32v r = a < 0.5f ? series : tail;
  return x != x ? x : floatsv(bitsv(r) | sign);
}

// sin(x) or cos(x) (kCos): x = k pi/2 + r with |r| <= pi/4, pi/2 in three
// parts whose products with k are exact up to |k| = 2^13 (so |x| <= 8192
// keeps r exact to a few ulp of r), then sin or cos of r by their odd and
// even minimax polynomials on [-pi/4, pi/4], picked and signed by k mod 4.
// Lanes with |x| > 8192 (and infinities) take the scalar functions.
template <bool kCos>
inline f32v sin_cos_v(f32v x) {
  const f32v shifter = splatv(12582912.0f);
  const f32v kf = (x * 0.63661977236758134f + shifter) - shifter;  // round(x 2/pi)
  const f32v r = ((x - kf * 1.5703125f) - kf * 4.837512969970703125e-4f) -
                 kf * 7.54978995489188216e-8f;
  const f32v z = r * r;
  f32v ps = splatv(-1.9515295891e-4f);
  ps = ps * z + 8.3321608736e-3f;
  ps = ps * z - 1.6666654611e-1f;
  const f32v sin_r = r + r * z * ps;
  f32v pc = splatv(2.443315711809948e-5f);
  pc = pc * z - 1.388731625493765e-3f;
  pc = pc * z + 4.166664568298827e-2f;
  const f32v cos_r = (1.0f - 0.5f * z) + z * z * pc;
  const i32v q = __builtin_convertvector(kf, i32v) + (kCos ? 1 : 0);
  const f32v v = (q & 1) != 0 ? cos_r : sin_r;
  f32v y = floatsv(bitsv(v) ^ ((q & 2) << 30));  // negate in quadrants 2 and 3
  const i32v big = absv(x) > 8192.0f;
  if (__builtin_expect(any_lane(big), 0)) {
    for (int j = 0; j < kVec; ++j) {
      if (big[j] != 0) y[j] = kCos ? std::cos(x[j]) : std::sin(x[j]);
    }
  }
  if constexpr (!kCos) y = x == 0.0f ? x : y;  // sin(-0) = -0
  return x != x ? x : y;
}

// silu(x) = x sigmoid(x).
inline f32v silu_v(f32v x) { return x * sigmoid_v(x); }

// gelu with the tanh approximation: x (1 + tanh(u)) / 2 = x sigmoid(2u),
// u = sqrt(2 / pi) (x + 0.044715 x^3); the sigmoid form does not cancel
// where tanh(u) nears -1.
inline f32v gelu_tanh_v(f32v x) {
  const f32v u = 0.79788456080286535588f * (x + 0.044715f * x * x * x);
  return x * sigmoid_v(2.0f * u);
}

}  // namespace TESSERA_CPU_VEC_ABI
}  // namespace tessera::cpu::vec
