// tanh and sigmoid of float vectors (the LSTM and GRU cells' hot loops)
// and the exact GELU (transformers' feed-forward layers), on the softmax
// kernels' vector exp (normalization_vec.h). glibc's scalar tanhf and erff
// cost about 10 ns an element; these run 8 lanes at a time, tanh and
// sigmoid within a few ulp of the exact value (gelu: see gelu_v). NaN
// passes through, signs of zero are kept.
#pragma once

#include <climits>
#include <cstdint>

#include "devices/cpu/kernels/normalization_vec.h"

namespace tessera::cpu::vec {
inline namespace TESSERA_CPU_VEC_ABI {

inline i32v splat_sign_mask() { return i32v{} + INT32_MIN; }
inline i32v bitsv(f32v v) { return reinterpret_cast<i32v>(v); }
inline f32v floatsv(i32v v) { return reinterpret_cast<f32v>(v); }
inline f32v absv(f32v v) { return floatsv(bitsv(v) & ~splat_sign_mask()); }

// tanh(x) = sign(x) t(|x|): below 0.35 the odd Taylor series to x^13
// (the next term is below 1e-9 of the value), above it (1 - e) / (1 + e)
// with e = exp(-2 |x|) <= 0.5, so the subtraction loses nothing.
inline f32v tanh_v(f32v x) {
  const i32v sign = bitsv(x) & splat_sign_mask();
  const f32v a = absv(x);
  const f32v a2 = a * a;
  f32v poly = splatv(21844.0f / 6081075.0f);
  poly = poly * a2 - 1382.0f / 155925.0f;
  poly = poly * a2 + 62.0f / 2835.0f;
  poly = poly * a2 - 17.0f / 315.0f;
  poly = poly * a2 + 2.0f / 15.0f;
  poly = poly * a2 - 1.0f / 3.0f;
  poly = a + a * a2 * poly;
  const f32v e = exp_nonpositive(a * -2.0f);
  const f32v large = (1.0f - e) / (1.0f + e);
  const f32v t = a < 0.35f ? poly : large;
  const f32v signed_t = floatsv(bitsv(t) | sign);
  return x != x ? x : signed_t;
}

// sigmoid(x) = 1 / (1 + e^-x), as e / (1 + e) with e = e^x for negative x
// (no overflow, no cancellation).
inline f32v sigmoid_v(f32v x) {
  const f32v a = absv(x);
  const f32v e = exp_nonpositive(-a);
  const f32v r = (x < 0.0f ? e : splatv(1.0f)) / (1.0f + e);
  return x != x ? x : r;
}

// erfc(a) for a >= 0 (not NaN), as exp(-a^2) h(t) with t = 1 / (1 + a / 2)
// and h a degree-9 polynomial fitted (least squares, relative) to
// erfc(a) exp(a^2) over a in [0, 9.5]: relative error below 4e-7 up to
// a = 4 (past 4, erfc < 2e-8; past 9.3, exp(-a^2) is 0 in float).
// erfc(a) given e = exp(-a^2) (callers that need that exp anyway pass it).
inline f32v erfc_nonnegative(f32v a, f32v e) {
  const f32v t = 1.0f / (1.0f + 0.5f * a);
  f32v h = splatv(-5.4956062106e-02f);
  h = h * t + 2.6329719559e-01f;
  h = h * t - 4.3984383214e-01f;
  h = h * t + 2.1873907035e-01f;
  h = h * t + 1.9332329598e-02f;
  h = h * t + 1.7993498577e-01f;
  h = h * t + 2.5027859575e-01f;
  h = h * t + 2.8098956112e-01f;
  h = h * t + 2.8223483107e-01f;
  h = h * t - 6.7077788756e-06f;
  // h's constant term is negative: where e underflows to 0 the product
  // would be -0, and gelu(-1e5) would come out +0 instead of -0.
  return absv(e * h);
}

inline f32v erfc_nonnegative(f32v a) { return erfc_nonnegative(a, exp_nonpositive(-(a * a))); }

// e^(a^2) erfc(a) for 0 <= a <= 2, without erfc_nonnegative's division: a
// degree-11 polynomial in a - 1 fitted toward minimax relative error
// (below 1.7e-7 evaluated in float). Times e^(-a^2) it is erfc(a) to a
// few 1e-7 relative, the small values included.
inline f32v erfcx_small(f32v a) {
  const f32v u = a - 1.0f;
  f32v p = splatv(-4.9302336265e-05f);
  p = p * u + 1.8164393259e-04f;
  p = p * u - 3.9444578579e-04f;
  p = p * u + 9.9945662078e-04f;
  p = p * u - 2.7497119736e-03f;
  p = p * u + 6.9935875945e-03f;
  p = p * u - 1.6671275720e-02f;
  p = p * u + 3.7567660213e-02f;
  p = p * u - 7.9225286841e-02f;
  p = p * u + 1.5437187254e-01f;
  p = p * u - 2.7321210504e-01f;
  p = p * u + 4.2758357525e-01f;
  return p;
}

// 2^s for -126 < s < 128: 2^k 2^r with k = round(s) and |r| <= 1/2, 2^r
// a degree-5 polynomial fitted toward minimax relative error (7.5e-8).
// The rounding adds and subtracts 1.5 * 2^23, which leaves k in the low
// bits of the sum: shifted into the exponent field they give 2^k with no
// float-to-int conversion.
inline f32v exp2_normal_range(f32v s) {
  const f32v shifter = splatv(12582912.0f);
  const f32v biased = s + shifter;
  const f32v r = s - (biased - shifter);
  f32v p = splatv(1.3276471959e-03f);
  p = p * r + 9.6755415027e-03f;
  p = p * r + 5.5507132751e-02f;
  p = p * r + 2.4022119721e-01f;
  p = p * r + 6.9314696706e-01f;
  p = p * r + 1.0000000717e+00f;
  const i32v two_to_k = (reinterpret_cast<i32v>(biased) << 23) + (127 << 23);
  return p * reinterpret_cast<f32v>(two_to_k);
}

// Phi(-t) = erfc(t / sqrt 2) / 2, the normal tail, for 0 <= t <= 2 sqrt 2:
// 2^q(t), q a degree-8 polynomial fitted toward minimax absolute error
// (5.4e-8) to log2 Phi(-t). q stays within [-8.7, -1], so the error is
// the rounding of q near its largest magnitude: below 9e-7 relative.
// One polynomial and one exp2 where exp(-t^2 / 2) times e^(a^2) erfc(a)
// took two polynomials, an exp's range reduction and a product.
inline f32v normal_tail_small(f32v t) {
  f32v q = splatv(-2.8806787999e-06f);
  q = q * t + 3.8692231306e-05f;
  q = q * t - 1.7811650215e-04f;
  q = q * t - 1.6597693252e-04f;
  q = q * t + 7.1116884446e-03f;
  q = q * t - 5.2535595845e-02f;
  q = q * t - 4.5919335517e-01f;
  q = q * t - 1.1511072758e+00f;
  q = q * t - 9.9999994597e-01f;
  return exp2_normal_range(q);
}

// gelu(x) = x Phi(x) with the exact (erf) Phi: x (1 - Phi(-|x|)) for
// x >= 0 and x Phi(-|x|) for x < 0, so neither side cancels. Within 4e-7
// of the exact value (relative 5e-7 for x >= 0), 0.42 ns an element on
// one core of this machine at 16 lanes (0.73 at 8), where glibc's scalar
// erff takes 10.
// gelu(inf) = inf, gelu(-inf) = NaN (as 0.5 x (1 + erf(x / sqrt 2))
// computes it), NaN passes through.
// Where every lane has |x| <= 2 sqrt 2 (93% of 16-lane vectors of
// standard normal values), the tail is normal_tail_small: no division,
// no range checks (a NaN lane fails the test), 28% fewer instructions
// than the general path's exp and erfc.
inline f32v gelu_v(f32v x) {
  const f32v t = absv(x);
  if (all_lanes(t <= 2.8284271247461903f)) {
    const f32v tail = normal_tail_small(t);
    return x * (x < 0.0f ? tail : 1.0f - tail);
  }
  const f32v half_erfc = 0.5f * erfc_nonnegative(t * 0.70710678118654752f);
  const f32v r = x * (x < 0.0f ? half_erfc : 1.0f - half_erfc);
  return x != x ? x : r;
}

// The activation gradients autograd runs beside those forwards: g times
// the derivative at x (the forward's input), with the scalar kernels'
// formulas and NaN rules (a NaN x gives NaN; an infinite x gives NaN
// where the formula multiplies it by 0, as PyTorch's kernels do).
//   gelu:      Phi(x) + x phi(x), phi the standard normal density;
//   gelu tanh: (1 + t) / 2 + x (1 - t^2) inner'(x) / 2, t = tanh(inner(x)),
//              inner(x) = sqrt(2 / pi) (x + 0.044715 x^3);
//   silu:      s (1 + x (1 - s)), s = sigmoid(x).
inline f32v gelu_backward_v(f32v g, f32v x) {
  const f32v a = absv(x) * 0.70710678118654752f;
  if (all_lanes(a <= 2.0f)) {  // as gelu_v
    const f32v e = exp_normal_range(-0.5f * x * x);
    const f32v half_erfc = 0.5f * e * erfcx_small(a);
    const f32v cdf = x < 0.0f ? half_erfc : 1.0f - half_erfc;
    return g * (cdf + x * (0.39894228040143267794f * e));
  }
  const f32v e = exp_nonpositive(-0.5f * x * x);  // exp(-a^2), shared by cdf and pdf
  const f32v half_erfc = 0.5f * erfc_nonnegative(a, e);
  const f32v cdf = x < 0.0f ? half_erfc : 1.0f - half_erfc;
  const f32v pdf = 0.39894228040143267794f * e;
  const f32v r = g * (cdf + x * pdf);
  return x != x ? x : r;
}

inline f32v gelu_tanh_backward_v(f32v g, f32v x) {
  const f32v x2 = x * x;
  const f32v t = tanh_v(0.79788456080286535588f * (x + 0.044715f * x2 * x));
  const f32v dinner = 0.79788456080286535588f * (1.0f + 3.0f * 0.044715f * x2);
  return g * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * dinner);
}

inline f32v silu_backward_v(f32v g, f32v x) {
  const f32v s = sigmoid_v(x);
  return g * s * (1.0f + x * (1.0f - s));
}

// y[i] = f(x[i]) over contiguous floats, vector by vector, on the calling
// thread; y may be x.
template <typename F>
void map_row(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kVec <= n; i += kVec) storev(y + i, f(loadv(x + i)));
  if (i < n) {
    float buf[kVec] = {};
    for (int64_t j = i; j < n; ++j) buf[j - i] = x[j];
    const f32v r = f(loadv(buf));
    for (int64_t j = i; j < n; ++j) y[j] = r[j - i];
  }
}

// y[i] = f(a[i], b[i]) over contiguous floats, vector by vector, on the
// calling thread; y may be a or b.
template <typename F>
void map2_row(const float* a, const float* b, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kVec <= n; i += kVec) storev(y + i, f(loadv(a + i), loadv(b + i)));
  if (i < n) {
    float bufa[kVec] = {}, bufb[kVec] = {};
    for (int64_t j = i; j < n; ++j) {
      bufa[j - i] = a[j];
      bufb[j - i] = b[j];
    }
    const f32v r = f(loadv(bufa), loadv(bufb));
    for (int64_t j = i; j < n; ++j) y[j] = r[j - i];
  }
}

}  // namespace TESSERA_CPU_VEC_ABI
}  // namespace tessera::cpu::vec
