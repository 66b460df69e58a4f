// Double exp, expm1, log and log1p, and the functions built from them, for
// the *_f64 shaders: GLSL has no double transcendental functions. Each
// reduces its argument exactly (Cody-Waite with fdlibm's split of ln 2,
// or the exponent taken from the bits) and sums a short series in double,
// so results are within a few ulp of C's, with C's special values
// (NaN in, NaN out; overflow to inf; subnormal results rounded once).
// The steps whose rounding errors the algorithms rely on are `precise`:
// without it a driver may fold (1 + x) - 1 into x or reassociate the
// reduction (llvmpipe did both: log1p and exp lost half their digits).
// Include after doubles.glsl.
#ifndef TESSERA_DOUBLES_MATH_GLSL
#define TESSERA_DOUBLES_MATH_GLSL

const double kLn2Hi = 6.93147180369123816490e-01LF;  // 32 bits: k * kLn2Hi is exact for |k| < 2^11
const double kLn2Lo = 1.90821492927058770002e-10LF;
const double kLn2 = 6.93147180559945286227e-01LF;
const double kInvLn2 = 1.44269504088896338700e+00LF;
const double kInvLn10 = 4.34294481903251827651e-01LF;

double double_infinity(bool negative) {
  return double_of_bits(negative ? 0xfff0000000000000UL : 0x7ff0000000000000UL);
}
double double_quiet_nan() { return double_of_bits(0x7ff8000000000000UL); }

// 2^k exactly, for k in [-1074, 1023] (subnormal powers included).
double double_pow2(int k) {
  if (k >= -1022) return double_of_bits(uint64_t(k + 1023) << 52);
  return double_of_bits(1UL << uint(k + 1074));
}

// exp(r) - 1 for |r| <= ln2 / 2, by its Taylor series through r^14 (the
// rest is below 2^-60 of the sum), nested so that no power is formed.
double expm1_reduced(double r) {
  double t = 1.0LF;
  for (int n = 14; n >= 2; --n) t = 1.0LF + r * t / double(n);
  return r * t;
}

double double_exp(double x) {
  if (double_is_nan(x)) return x;
  if (x > 709.782712893384LF) return double_infinity(false);
  if (x < -745.1332191019412LF) return 0.0LF;  // below half the smallest subnormal
  const double k = floor(x * kInvLn2 + 0.5LF);
  precise double high = x - k * kLn2Hi;  // exact
  precise double r = high - k * kLn2Lo;
  const double e = 1.0LF + expm1_reduced(r);
  const int ki = int(k);
  if (ki > 1023) return e * 2.0LF * double_pow2(ki - 1);  // near the top: no overflow on the way
  // Subnormal results: scale into the normal range first, so that the
  // last product rounds once.
  if (ki < -1022) return (e * double_pow2(ki + 54)) * double_pow2(-54);
  return e * double_pow2(ki);
}

double double_expm1(double x) {
  if (double_is_nan(x)) return x;
  if (abs(x) <= 0.34657359027997264LF) return expm1_reduced(x);  // ln2 / 2
  if (x < -40.0LF) return -1.0LF;  // exp(x) below half an ulp of 1
  return double_exp(x) - 1.0LF;    // exp(x) - 1 loses at most a bit here
}

// x = 2^e m with m in [sqrt(1/2), sqrt(2)), and log m = f + corr with f =
// m - 1 (exact) and the small correction corr = -s (f - R), where s = f /
// (2 + f) and R = 2 (s^2/3 + s^4/5 + ...): log m = 2 atanh(s) = 2s + sR,
// and 2s = f - sf. Rounding errors stay in corr, a small fraction of the
// result; for finite x > 0.
void log_parts_split(double x, out double e_out, out double f, out double corr) {
  uint64_t bits = bits_of_double(x);
  int e = int(bits >> 52) - 1023;
  if (e == -1023) {  // subnormal: normalize by 2^54
    bits = bits_of_double(x * double_pow2(54));
    e = int(bits >> 52) - 1023 - 54;
  }
  double m = double_of_bits((bits & 0xfffffffffffffUL) | 0x3ff0000000000000UL);
  if (m > 1.4142135623730951LF) {
    m *= 0.5LF;
    ++e;
  }
  f = m - 1.0LF;  // exact
  const double s = f / (2.0LF + f);
  const double s2 = s * s;  // <= 0.0295: through s2^12 the rest is below 2^-60
  double t = 2.0LF / 25.0LF;
  for (int j = 11; j >= 1; --j) t = 2.0LF / double(2 * j + 1) + s2 * t;
  precise double r = s2 * t;
  precise double f_minus_r = f - r;
  corr = -s * f_minus_r;
  e_out = double(e);
}

void log_parts(double x, out double e_out, out double log_m) {
  double f, corr;
  log_parts_split(x, e_out, f, corr);
  precise double sum = f + corr;
  log_m = sum;
}

// The special values of log, log2 and log10 (C's); false for finite x > 0.
bool log_special(double x, out double r) {
  r = x;
  if (double_is_nan(x)) return true;
  if (!double_is_nonzero(x)) {  // ±0
    r = double_infinity(true);
    return true;
  }
  if (double_is_negative(x)) {
    r = double_quiet_nan();
    return true;
  }
  return double_is_inf(x);
}

double double_log(double x) {
  double r, e, log_m;
  if (log_special(x, r)) return r;
  log_parts(x, e, log_m);
  return e * kLn2Hi + (e * kLn2Lo + log_m);
}

// Exact for powers of 2 (log m is 0 there), as C's.
double double_log2(double x) {
  double r, e, log_m;
  if (log_special(x, r)) return r;
  log_parts(x, e, log_m);
  return e + log_m * kInvLn2;
}

double double_log10(double x) {
  double r, e, log_m;
  if (log_special(x, r)) return r;
  log_parts(x, e, log_m);
  return (e * kLn2Hi + (e * kLn2Lo + log_m)) * kInvLn10;
}

// log(1 + x) through the rounded u = 1 + x, corrected by x / (u - 1)
// (Goldberg): accurate where 1 + x alone would drop x's low bits.
double double_log1p(double x) {
  if (double_is_nan(x)) return x;
  if (x == -1.0LF) return double_infinity(true);
  if (x < -1.0LF) return double_quiet_nan();
  if (double_is_inf(x)) return x;
  precise double u = 1.0LF + x;
  if (u == 1.0LF) return x;  // also keeps -0.0
  precise double u_minus_1 = u - 1.0LF;
  return double_log(u) * (x / u_minus_1);
}

// The binary exponent of finite x > 0 (x in [2^e, 2^(e+1))), subnormals
// included.
int double_exponent(double x) {
  const uint64_t bits = bits_of_double(x);
  const int biased = int(bits >> 52);
  if (biased != 0) return biased - 1023;
  const uint hi = uint(bits >> 32) & 0xfffffu, lo = uint(bits);
  return -1074 + (hi != 0u ? 32 + findMSB(hi) : findMSB(lo));
}

// x * 2^k exactly, for results that are finite and not below x's grid.
double double_scaled(double x, int k) {
  while (k > 1023) {
    x *= double_pow2(1023);
    k -= 1023;
  }
  return x * double_pow2(k);
}

// C's fmod, exact: |a| reduced by |b| 2^k (k falling) until below |b|;
// each subtraction is exact (the subtrahend is within a factor 2 of the
// rest), so the result is the exact remainder with a's sign.
double double_fmod(double a, double b) {
  if (double_is_nan(a) || double_is_nan(b) || double_is_inf(a) || !double_is_nonzero(b)) {
    return double_quiet_nan();
  }
  const double m = abs(b);
  precise double r = abs(a);
  if (double_is_inf(b) || r < m) return a;
  const int em = double_exponent(m);
  while (r >= m) {
    const int er = double_exponent(r);
    double t = double_scaled(m, er - em);
    if (t > r) t = double_scaled(m, er - em - 1);
    r = r - t;
  }
  return double_is_negative(a) || bits_of_double(a) == 0x8000000000000000UL ? -r : r;
}

double with_sign_of(double magnitude, double x) {
  return double_is_negative(x) || bits_of_double(x) == 0x8000000000000000UL ? -magnitude
                                                                              : magnitude;
}

// sinh and cosh as fdlibm forms them: through expm1 below 22, half of exp
// above (in two halves near overflow, where exp(|x|) alone would be inf).
double half_exp_large(double ax) {
  if (ax < 709.0LF) return 0.5LF * double_exp(ax);
  // precise: a driver may re-associate (w / 2) * w into (w * w) / 2, which
  // overflows (NVIDIA's did for the f32 form).
  const double w = double_exp(0.5LF * ax);
  precise double half_w = 0.5LF * w;
  precise double r = half_w * w;
  return r;
}

double double_sinh(double x) {
  if (double_is_nan(x) || !double_is_nonzero(x)) return x;
  const double ax = abs(x);
  if (ax < 22.0LF) {
    const double t = double_expm1(ax);
    return with_sign_of(0.5LF * (t + t / (t + 1.0LF)), x);
  }
  return with_sign_of(half_exp_large(ax), x);
}

double double_cosh(double x) {
  if (double_is_nan(x)) return x;
  const double ax = abs(x);
  if (ax < 22.0LF) {
    const double t = double_exp(ax);
    return 0.5LF * t + 0.5LF / t;
  }
  return half_exp_large(ax);
}

double double_tanh(double x) {
  if (double_is_nan(x) || !double_is_nonzero(x)) return x;
  const double ax = abs(x);
  double t;
  if (ax > 22.0LF) {
    t = 1.0LF;
  } else if (ax >= 1.0LF) {
    t = 1.0LF - 2.0LF / (double_expm1(2.0LF * ax) + 2.0LF);
  } else {
    const double e = double_expm1(-2.0LF * ax);
    t = -e / (e + 2.0LF);
  }
  return with_sign_of(t, x);
}

double double_asinh(double x) {
  if (double_is_nan(x) || double_is_inf(x) || !double_is_nonzero(x)) return x;
  const double ax = abs(x);
  double r;
  if (ax > 268435456.0LF) {  // 2^28: x^2 + 1 is x^2
    r = double_log(ax) + kLn2;
  } else if (ax > 2.0LF) {
    r = double_log(2.0LF * ax + 1.0LF / (sqrt(ax * ax + 1.0LF) + ax));
  } else {
    const double x2 = ax * ax;
    r = double_log1p(ax + x2 / (1.0LF + sqrt(1.0LF + x2)));
  }
  return with_sign_of(r, x);
}

double double_acosh(double x) {
  if (double_is_nan(x)) return x;
  if (x < 1.0LF) return double_quiet_nan();
  if (double_is_inf(x)) return x;
  if (x > 268435456.0LF) return double_log(x) + kLn2;
  if (x > 2.0LF) return double_log(2.0LF * x - 1.0LF / (x + sqrt(x * x - 1.0LF)));
  const double t = x - 1.0LF;
  return double_log1p(t + sqrt(2.0LF * t + t * t));
}

double double_atanh(double x) {
  if (double_is_nan(x) || !double_is_nonzero(x)) return x;
  const double ax = abs(x);
  if (ax > 1.0LF) return double_quiet_nan();
  if (ax == 1.0LF) return double_infinity(double_is_negative(x));
  double r;
  if (ax < 0.5LF) {
    const double t = ax + ax;
    r = 0.5LF * double_log1p(t + t * ax / (1.0LF - ax));
  } else {
    r = 0.5LF * double_log1p((ax + ax) / (1.0LF - ax));
  }
  return with_sign_of(r, x);
}
// atan as fdlibm reduces it: |x| below 7/16 directly, else through
// atan(c) + atan((x - c) / (1 + x c)) for c = 0.5, 1, 1.5 or infinity (each
// atan(c) in two parts), leaving |t| <= 7/16 for the series t - t^3/3 +
// t^5/5 ... (25 terms: the rest is below 2^-60 of it).
double atan_series(double t) {
  const double t2 = t * t;
  double s = 1.0LF / 49.0LF;
  for (int k = 23; k >= 0; --k) s = 1.0LF / double(2 * k + 1) - t2 * s;
  return t * s;
}

double double_atan(double x) {
  if (double_is_nan(x) || !double_is_nonzero(x)) return x;
  const double ax = abs(x);
  double r;
  if (ax > 7.378697629483821e19LF) {  // 2^66: pi/2 to double precision
    r = 1.5707963267948966LF + 6.123233995736766e-17LF;
  } else if (ax < 0.4375LF) {
    r = atan_series(ax);
  } else {
    double hi, lo, t;
    if (ax < 0.6875LF) {
      hi = 0.4636476090008061LF;
      lo = 2.2698777452961687e-17LF;
      t = (2.0LF * ax - 1.0LF) / (2.0LF + ax);
    } else if (ax < 1.1875LF) {
      hi = 0.7853981633974483LF;
      lo = 3.061616997868383e-17LF;
      t = (ax - 1.0LF) / (ax + 1.0LF);
    } else if (ax < 2.4375LF) {
      hi = 0.982793723247329LF;
      lo = 1.3903311031230998e-17LF;
      t = (ax - 1.5LF) / (1.0LF + 1.5LF * ax);
    } else {
      hi = 1.5707963267948966LF;
      lo = 6.123233995736766e-17LF;
      t = -1.0LF / ax;
    }
    precise double tail = lo + atan_series(t);
    r = hi + tail;
  }
  return with_sign_of(r, x);
}

// C's atan2(y, x): signed zeros pick the half plane (atan2(±0, -0) =
// ±pi), infinities give the multiples of pi/4, and otherwise the angle of
// |y / x| moved into x's half plane.
double double_atan2(double y, double x) {
  const double kPiHi = 3.141592653589793LF, kPiLo = 1.2246467991473532e-16LF;
  if (double_is_nan(x) || double_is_nan(y)) return double_quiet_nan();
  const bool x_neg = (bits_of_double(x) >> 63) != 0UL;
  double r;
  if (!double_is_nonzero(y)) {
    r = x_neg ? kPiHi : 0.0LF;
  } else if (double_is_inf(x)) {
    r = double_is_inf(y) ? (x_neg ? 0.75LF * kPiHi : 0.25LF * kPiHi) : (x_neg ? kPiHi : 0.0LF);
  } else if (double_is_inf(y) || !double_is_nonzero(x)) {
    r = 0.5LF * kPiHi;
  } else {
    // |y / x| may overflow to inf (atan gives pi/2) or underflow to 0,
    // both what the angle rounds to.
    const double z = double_atan(abs(y / x));
    if (!x_neg) {
      r = z;
    } else {
      precise double z_minus_lo = z - kPiLo;
      r = kPiHi - z_minus_lo;
    }
  }
  return (bits_of_double(y) >> 63) != 0UL ? -r : r;
}

// asin and acos through atan2, from sqrt((1 - x)(1 + x)) (exact 1 - x near
// 1, where 1 - x^2 would cancel).
double double_asin(double x) {
  if (double_is_nan(x) || !double_is_nonzero(x)) return x;
  if (abs(x) > 1.0LF) return double_quiet_nan();
  return double_atan2(x, sqrt((1.0LF - x) * (1.0LF + x)));
}

double double_acos(double x) {
  if (double_is_nan(x)) return x;
  if (abs(x) > 1.0LF) return double_quiet_nan();
  return double_atan2(sqrt((1.0LF - x) * (1.0LF + x)), x);
}

// a + b - s exactly for s = a + b rounded (Knuth's two-sum: no condition
// on the operands' magnitudes).
double double_sum_error(double a, double b, double s) {
  precise double b_part = s - a;
  precise double err = (a - (s - b_part)) + (b - b_part);
  return err;
}

// a * b - p exactly for p = a * b rounded (Dekker's product through
// Veltkamp's 26-bit split: fma() is not fused on every driver, llvmpipe's
// double one was not); 0 where a split would overflow (|a| or |b| beyond
// 2^996, where a finite product's error is below the smallest double).
double double_product_error(double a, double b, double p) {
  if (abs(a) > 1e290LF || abs(b) > 1e290LF) return 0.0LF;
  precise double ca = 134217729.0LF * a;
  precise double a_hi = ca - (ca - a);
  precise double a_lo = a - a_hi;
  precise double cb = 134217729.0LF * b;
  precise double b_hi = cb - (cb - b);
  precise double b_lo = b - b_hi;
  precise double err = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo;
  return err;
}

// a * b + c rounded once, as C's fma and the CPU kernels' fused multiply-
// adds (fma() is not fused on every driver: llvmpipe's double one was
// not). Boldo and Melquiond's emulation: the product exactly as p + e, the
// sum c + p exactly as s + t (double_sum_error), then s + (t + e) with the
// inner sum rounded to odd (to the neighbour with an odd last bit when
// inexact), which makes the outer rounding the correct one. Operands or a
// product that are not finite take the plain a * b + c, which has C's
// special values.
double double_fma(double a, double b, double c) {
  precise double p = a * b;
  if (double_is_nan(p) || double_is_inf(p) || double_is_nan(c) || double_is_inf(c)) {
    precise double plain = p + c;
    return plain;
  }
  const double e = double_product_error(a, b, p);
  precise double s = c + p;
  const double t = double_sum_error(c, p, s);
  precise double v = t + e;
  const double v_err = double_sum_error(t, e, v);
  const uint64_t v_bits = bits_of_double(v);
  if (double_is_nonzero(v_err) && (v_bits & 1UL) == 0UL) {
    // One ulp toward the exact t + e: away from zero where v_err has v's sign.
    const bool away = double_is_negative(v_err) == double_is_negative(v);
    v = double_of_bits(away ? v_bits + 1UL : v_bits - 1UL);
  }
  precise double r = s + v;
  return r;
}

// erf from its everywhere-positive series, erf(x) = 2/sqrt(pi) e^(-x^2)
// sum_n (2x^2)^n x / (1 3 5 ... (2n + 1)): no cancellation at any x, about
// 2x^2 + 40 terms; e^(-x^2) takes x^2's rounding error back (Dekker's
// product), which matters where erf is near 1. From |x| = 6 on erf is 1
// to double precision, as C's.
double double_erf(double x) {
  if (double_is_nan(x) || !double_is_nonzero(x)) return x;
  const double ax = abs(x);
  if (ax >= 6.0LF) return with_sign_of(1.0LF, x);
  const double x2 = ax * ax;
  const double x2_err = double_product_error(ax, ax, x2);
  const double two_x2 = 2.0LF * x2;
  double term = ax, sum = ax;
  for (int n = 1; n < 200; ++n) {
    term *= two_x2 / double(2 * n + 1);
    sum += term;
    if (term < sum * 1e-17LF) break;
  }
  const double e = double_exp(-x2) * (1.0LF - x2_err);
  return with_sign_of(1.1283791670955126LF * e * sum, x);
}

bool double_is_odd_integer(double y) {
  return abs(y) < 9007199254740992.0LF && floor(y) == y && double_fmod(y, 2.0LF) != 0.0LF;
}

// C's pow with its special values (pow(x, 0) = pow(1, y) = 1 even for NaN,
// signed zeros and infinities for zero and infinite x, NaN for negative x
// and a non-integer y). Integer exponents up to 64 multiply out by
// squaring; others go through exp(y log|x|) with log|x| and the product
// carried in two parts.
double double_pow(double x, double y) {
  if (!double_is_nonzero(y) || x == 1.0LF) return 1.0LF;
  if (double_is_nan(x) || double_is_nan(y)) return double_quiet_nan();
  const bool odd = double_is_odd_integer(y);
  const bool x_neg = (bits_of_double(x) >> 63) != 0UL;
  if (!double_is_nonzero(x)) {
    const double r = y < 0.0LF ? double_infinity(false) : 0.0LF;
    return odd && x_neg ? -r : r;
  }
  const double ax = abs(x);
  if (double_is_inf(y)) {
    if (ax == 1.0LF) return 1.0LF;
    return (ax > 1.0LF) == (y > 0.0LF) ? double_infinity(false) : 0.0LF;
  }
  if (double_is_inf(x)) {
    const double r = y < 0.0LF ? 0.0LF : double_infinity(false);
    return x_neg && odd ? -r : r;
  }
  if (x_neg && floor(y) != y) return double_quiet_nan();
  double r;
  if (floor(y) == y && abs(y) <= 64.0LF) {
    uint n = uint(abs(y));
    double base = ax;
    r = 1.0LF;
    while (n != 0u) {
      if ((n & 1u) != 0u) r *= base;
      base *= base;
      n >>= 1;
    }
    if (y < 0.0LF) r = 1.0LF / r;
  } else if (y == 0.5LF) {
    r = sqrt(ax);
  } else {
    double e, f, corr;
    log_parts_split(ax, e, f, corr);
    // log|x| = hi + lo: e ln2_hi (exact) + f (exact) + the small terms,
    // summed with their rounding errors kept in lo; then y log|x| = z +
    // z_err.
    precise double t1 = e * kLn2Hi;
    precise double small = e * kLn2Lo + corr;
    precise double s1 = t1 + f;
    precise double hi = s1 + small;
    precise double lo = double_sum_error(t1, f, s1) + double_sum_error(s1, small, hi);
    precise double z = y * hi;
    precise double z_err = double_product_error(y, hi, z) + y * lo;
    r = double_exp(z);
    if (!double_is_inf(r) && double_is_nonzero(r)) r = r + r * z_err;
  }
  return x_neg && odd ? -r : r;
}
#endif  // TESSERA_DOUBLES_MATH_GLSL
