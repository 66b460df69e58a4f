// f32 math that GLSL leaves undefined or lacks, written out so results
// match the CPU kernels (C's <cmath>) to f32 tolerance on every driver:
// GLSL's log/sqrt are undefined for negative inputs, tanh may overflow to
// NaN through exp, and there is no erf, expm1 or log1p. NaN and infinity
// are tested through the bits, since drivers may fold x != x away.

#ifndef TESSERA_FLOAT_MATH_GLSL
#define TESSERA_FLOAT_MATH_GLSL

// Macros, not constants: GLSL does not fold uintBitsToFloat in a
// global const initializer.
#define kNaN uintBitsToFloat(0x7fc00000u)
#define kInf uintBitsToFloat(0x7f800000u)

bool is_nan(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }
bool is_inf(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0x7f800000u; }

// x < 0 and x > 0 on the bits: NaN and both zeros are neither. A select
// such as `x < 0 ? 0 : x` may legally become max(x, 0), which drops NaN
// (NVIDIA's driver does so) and the sign of -0; these keep C's answer.
bool is_negative(float x) {
  const uint u = floatBitsToUint(x);
  return u > 0x80000000u && u <= 0xff800000u;
}
bool is_positive(float x) {
  const uint u = floatBitsToUint(x);
  return u != 0u && u <= 0x7f800000u;
}
// x == 0 (either zero) on the bits: NaN is not zero even where a driver
// evaluates == as if no operand could be NaN.
bool is_zero(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0u; }

// log with C's special values: NaN below 0, -inf at 0, inf at inf.
float c_log(float x) {
  if (is_nan(x) || x < 0.0) return kNaN;
  if (x == 0.0) return -kInf;
  if (is_inf(x)) return kInf;
  return log(x);
}

float c_log2(float x) {
  if (is_nan(x) || x < 0.0) return kNaN;
  if (x == 0.0) return -kInf;
  if (is_inf(x)) return kInf;
  return log2(x);
}

float c_sqrt(float x) {
  if (is_nan(x) || x < 0.0) return kNaN;
  return sqrt(x);
}

// exp with f32 accuracy over its whole range: drivers compute exp(x) as
// exp2(x * log2(e)), whose rounded product costs up to 6e-6 relative error
// near x = 88. So exp(x) = 2^k exp(r), r = x - k ln2 (Cody-Waite: ln2 split
// in a 16-bit head, exact times k, and a tail), |r| <= ln2/2; exp_reduced
// returns exp(r) and k. `precise` keeps drivers from re-associating the
// reduction, which would undo it.
float exp_reduced(float x, out int k) {
  const float n = roundEven(x * 1.44269504);
  precise const float r = (x - n * 0.693145751953125) - n * 1.428606765330187e-6;
  k = int(n);
  return exp(r);
}

// m 2^k in two ldexp steps, so that neither leaves the f32 exponent range
// where the result is a normal float (GLSL leaves an overflowing ldexp
// undefined).
float scale_by_pow2(float m, int k) { return ldexp(ldexp(m, k / 2), k - k / 2); }

float c_exp(float x) {
  if (is_nan(x)) return x;
  if (x >= 88.72284) return kInf;  // e^x rounds to inf from this f32 on
  if (x < -103.97208) return 0.0;
  int k;
  const float e = exp_reduced(x, k);
  return scale_by_pow2(e, k);
}

// e^x / 2 for x >= 0, finite up to x = 89.415985 although e^x overflows
// from 88.72284: the halving goes into the power of two, so no
// intermediate overflows (sinh and cosh of large arguments).
float c_half_exp(float x) {
  if (is_nan(x)) return x;
  if (x > 89.415985) return kInf;
  int k;
  const float e = exp_reduced(x, k);
  return scale_by_pow2(e, k - 1);
}

// exp(x) - 1: near 0 the subtraction would cancel every digit, so a Taylor
// series (terms to x^11/11!, below f32 precision for |x| < 0.5).
float c_expm1(float x) {
  if (abs(x) < 0.5) {
    float r = 1.0 / 39916800.0;  // 1/11!
    r = r * x + 1.0 / 3628800.0;
    r = r * x + 1.0 / 362880.0;
    r = r * x + 1.0 / 40320.0;
    r = r * x + 1.0 / 5040.0;
    r = r * x + 1.0 / 720.0;
    r = r * x + 1.0 / 120.0;
    r = r * x + 1.0 / 24.0;
    r = r * x + 1.0 / 6.0;
    r = r * x + 0.5;
    r = r * x + 1.0;
    return r * x;
  }
  if (is_nan(x)) return x;
  return c_exp(x) - 1.0;
}

// log(1 + x): near 0 through log1p(x) = 2 atanh(s), s = x / (2 + x), whose
// odd series converges fast for |s| <= 1/3 (|x| < 0.5).
float c_log1p(float x) {
  if (abs(x) < 0.5) {
    const float s = x / (2.0 + x);
    const float s2 = s * s;
    float r = 1.0 / 17.0;
    r = r * s2 + 1.0 / 15.0;
    r = r * s2 + 1.0 / 13.0;
    r = r * s2 + 1.0 / 11.0;
    r = r * s2 + 1.0 / 9.0;
    r = r * s2 + 1.0 / 7.0;
    r = r * s2 + 1.0 / 5.0;
    r = r * s2 + 1.0 / 3.0;
    r = r * s2 + 1.0;
    return 2.0 * s * r;
  }
  if (x == -1.0) return -kInf;
  return c_log(1.0 + x);
}

// tanh without exp overflow: through expm1 near 0 (keeps small results
// relative-accurate), 1 - 2 / (e^2|x| + 1) elsewhere, exactly 1 from 9 on
// (tanh(9) rounds to 1 in f32).
float c_tanh(float x) {
  if (is_nan(x)) return x;
  const float a = abs(x);
  float t;
  if (a < 0.5) {
    const float e = c_expm1(2.0 * a);
    t = e / (e + 2.0);
  } else if (a >= 9.0) {
    t = 1.0;
  } else {
    t = 1.0 - 2.0 / (c_exp(2.0 * a) + 1.0);
  }
  return x < 0.0 ? -t : t;
}

// erf to about 5e-7 relative error: for |x| <= 2 its Maclaurin series
// 2/sqrt(pi) sum (-1)^n x^(2n+1) / (n! (2n+1)) to n = 21 (the last term is
// below 1e-8 at x = 2); beyond, 1 - erfc(x) with erfc from its continued
// fraction exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))
// (40 levels, evaluated from the bottom); from 4 on erf is 1 in f32.
const float kErfSeries[22] = float[22](
    1.128379167e+00, -3.761263890e-01, 1.128379167e-01, -2.686617065e-02, 5.223977625e-03,
    -8.548327023e-04, 1.205533298e-04, -1.492565036e-05, 1.646211437e-06, -1.636584469e-07,
    1.480719282e-08, -1.229055530e-09, 9.422759065e-11, -6.711366855e-12, 4.463224263e-13,
    -2.783516207e-14, 1.634261410e-15, -9.063970843e-17, 4.763348041e-18, -2.378459885e-19,
    1.131218726e-20, -5.136209055e-22);

float c_erf(float x) {
  if (is_nan(x)) return x;
  const float a = abs(x);
  if (a <= 2.0) {
    const float z = x * x;
    float r = kErfSeries[21];
    for (int n = 20; n >= 0; --n) r = r * z + kErfSeries[n];
    return x * r;
  }
  float e = 1.0;
  if (a < 4.0) {
    float f = a;
    for (int k = 40; k >= 1; --k) f = a + (0.5 * float(k)) / f;
    e = 1.0 - c_exp(-a * a) * 0.5641895835 / f;  // 0.564... = 1/sqrt(pi)
  }
  return x < 0.0 ? -e : e;
}

// C's fmod, exact as C's is: |a| reduced by b's largest power-of-two
// multiple not above it, step by step; each subtraction is exact (the two
// are within a factor 2, Sterbenz) and at least halves the rest, so it
// takes at most the exponent difference (< 280) steps. Result has a's sign.
float c_fmod(float a, float b) {
  if (is_nan(a) || is_nan(b) || is_inf(a) || b == 0.0) return kNaN;
  const float m = abs(b);
  float r = abs(a);
  if (is_inf(b) || r < m) return a;
  int em, er;
  frexp(m, em);
  while (r >= m) {
    frexp(r, er);
    float t = ldexp(m, er - em);  // within a factor 2 of r
    if (t > r) t = ldexp(m, er - em - 1);
    r -= t;
  }
  return a < 0.0 ? -r : r;
}

bool is_odd_integer(float y) { return abs(y) < 16777216.0 && trunc(y) == y && mod(y, 2.0) == 1.0; }

// C's pow with its special values (pow(x, 0) = pow(1, y) = 1 even for NaN,
// signed zeros and infinities for zero and infinite x, NaN for negative x
// and a non-integer y). Small integer exponents multiply out by squaring
// (exact where the result is, a few roundings otherwise); other exponents
// go through exp2(y log2|x|).
float c_pow(float x, float y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (is_nan(x) || is_nan(y)) return kNaN;
  const bool odd = is_odd_integer(y);
  if (x == 0.0) {
    const float r = y < 0.0 ? kInf : 0.0;
    return odd ? (floatBitsToUint(x) >> 31 != 0u ? -r : r) : r;
  }
  const float ax = abs(x);
  if (is_inf(y)) {
    if (ax == 1.0) return 1.0;
    return (ax > 1.0) == (y > 0.0) ? kInf : 0.0;
  }
  if (is_inf(x)) {
    const float r = y < 0.0 ? 0.0 : kInf;
    return x < 0.0 && odd ? -r : r;
  }
  if (x < 0.0 && trunc(y) != y) return kNaN;
  float r;
  if (trunc(y) == y && abs(y) <= 64.0) {
    uint n = uint(abs(y));
    float base = ax;
    r = 1.0;
    while (n != 0u) {
      if ((n & 1u) != 0u) r *= base;
      base *= base;
      n >>= 1;
    }
    if (y < 0.0) r = 1.0 / r;
  } else if (y == 0.5) {
    r = sqrt(ax);
  } else {
    r = exp2(y * log2(ax));
  }
  return x < 0.0 && odd ? -r : r;
}

// C's atan2(y, x) with its special values: signed zeros pick the half
// plane (atan2(±0, -0) = ±pi), infinities give the multiples of pi/4.
float c_atan2(float y, float x) {
  const float kPi = 3.14159265358979323846;
  if (is_nan(x) || is_nan(y)) return kNaN;
  const bool y_neg = floatBitsToUint(y) >> 31 != 0u;
  const bool x_neg = floatBitsToUint(x) >> 31 != 0u;
  float r;
  if (y == 0.0) {
    r = x_neg ? kPi : 0.0;
  } else if (is_inf(x)) {
    r = is_inf(y) ? (x_neg ? 0.75 * kPi : 0.25 * kPi) : (x_neg ? kPi : 0.0);
  } else if (is_inf(y) || x == 0.0) {
    r = 0.5 * kPi;
  } else {
    r = atan(abs(y), x);  // both finite and nonzero: defined
  }
  return y_neg ? -r : r;
}

// log10 through log2 (one more rounding than C's log10, inside f32
// tolerance); C's special values come from c_log2.
float c_log10(float x) { return c_log2(x) * 0.30102999566398119521; }

// sinh and cosh without the cancellation of (e^x - e^-x) / 2 near 0 and
// without overflowing e^x where the result is still finite (sinh(89) is
// 2.2e38 < FLT_MAX although e^89 is not): below 0.5 sinh comes from expm1
// (sinh a = (e + e / (e + 1)) / 2, e = expm1(a)); from 16 on e^-a is below
// f32 precision and the result is e^a / 2, scaled in the exponent
// (c_half_exp). No product of two large factors remains: a driver may
// re-associate (e^(a/2) / 2) * e^(a/2) into (e^(a/2) * e^(a/2)) / 2, which
// overflows (NVIDIA's did).
float c_sinh(float x) {
  if (is_nan(x)) return x;
  const float a = abs(x);
  float r;
  if (a < 0.5) {
    const float e = c_expm1(a);
    r = 0.5 * (e + e / (e + 1.0));
  } else if (a < 16.0) {
    const float e = c_exp(a);
    r = 0.5 * (e - 1.0 / e);
  } else {
    r = c_half_exp(a);
  }
  return x < 0.0 ? -r : r;
}

float c_cosh(float x) {
  if (is_nan(x)) return x;
  const float a = abs(x);
  if (a < 16.0) {
    const float e = c_exp(a);
    return 0.5 * (e + 1.0 / e);
  }
  return c_half_exp(a);
}

// atan to about 1 ulp on every driver (drivers' atan may be a short
// polynomial): |x| > 1 through pi/2 - atan(1/|x|); above tan(pi/8) through
// pi/4 + atan((a - 1) / (a + 1)); then |t| <= 0.4142 and the odd Taylor
// series to t^23 is below f32 precision (t^2 <= 0.1716).
float c_atan(float x) {
  const float kPiOver2 = 1.57079632679489661923;
  const float kPiOver4 = 0.78539816339744830962;
  if (is_nan(x)) return x;
  float a = abs(x);
  const bool inverted = a > 1.0;
  if (inverted) a = 1.0 / a;  // atan(inf) = pi/2 - atan(0)
  float base = 0.0;
  if (a > 0.41421356237309504880) {
    a = (a - 1.0) / (a + 1.0);
    base = kPiOver4;
  }
  const float t2 = a * a;
  float s = 1.0 / 23.0;
  for (int k = 21; k >= 1; k -= 2) s = s * -t2 + 1.0 / float(k);
  float r = base + a * s;
  if (inverted) r = kPiOver2 - r;
  return x < 0.0 ? -r : r;
}

// asin and acos through c_atan, with (1 - x)(1 + x) for 1 - x^2 so that
// nothing cancels near +-1; NaN outside [-1, 1], as C.
float c_asin(float x) {
  if (is_nan(x) || abs(x) > 1.0) return kNaN;
  if (abs(x) == 1.0) return x * 1.57079632679489661923;
  precise const float one_minus_x2 = (1.0 - x) * (1.0 + x);  // not 1 - x * x
  return c_atan(x / sqrt(one_minus_x2));
}

float c_acos(float x) {
  if (is_nan(x) || abs(x) > 1.0) return kNaN;
  if (x == -1.0) return 3.14159265358979323846;
  return 2.0 * c_atan(sqrt((1.0 - x) / (1.0 + x)));
}

// asinh(a) = log(a + sqrt(a^2 + 1)), odd: near 0 as log1p(a + a^2 / (1 +
// sqrt(1 + a^2))) (keeps small results relative-accurate), for huge a as
// log(a) + ln 2 (a^2 would overflow).
float c_asinh(float x) {
  if (is_nan(x) || is_inf(x)) return x;
  const float a = abs(x);
  float r;
  if (a > 1.0e9) {
    r = c_log(a) + 0.69314718055994530942;
  } else if (a < 0.5) {
    r = c_log1p(a + a * a / (1.0 + sqrt(1.0 + a * a)));
  } else {
    r = c_log(a + sqrt(a * a + 1.0));
  }
  return x < 0.0 ? -r : r;
}

// acosh(x) = log(x + sqrt(x^2 - 1)) for x >= 1 (NaN below): near 1 as
// log1p(d + sqrt(d (x + 1))), d = x - 1 exact; for huge x log(x) + ln 2.
float c_acosh(float x) {
  if (is_nan(x) || x < 1.0) return kNaN;
  if (is_inf(x)) return x;
  if (x > 1.0e9) return c_log(x) + 0.69314718055994530942;
  const float d = x - 1.0;
  precise const float x2_minus_1 = d * (x + 1.0);  // not x * x - 1
  if (x < 2.0) return c_log1p(d + sqrt(x2_minus_1));
  return c_log(x + sqrt(x * x - 1.0));
}

// atanh(x) = log1p(2x / (1 - x)) / 2, odd; +-inf at +-1, NaN beyond.
float c_atanh(float x) {
  if (is_nan(x)) return x;
  const float a = abs(x);
  if (a > 1.0) return kNaN;
  const float r = a == 1.0 ? kInf : 0.5 * c_log1p(2.0 * a / (1.0 - a));
  return x < 0.0 ? -r : r;
}
#endif  // TESSERA_FLOAT_MATH_GLSL
