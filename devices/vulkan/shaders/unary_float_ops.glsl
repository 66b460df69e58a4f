// The floating ops of kernels::UnaryOp (values 0 neg .. 27 clamp_max and
// 33 log10 .. 43 hardsigmoid) on f32, as the CPU kernel computes them in its compute type; shared by
// unary_f32.comp and unary.comp (f16 computes in f32). p0, p1: clamp bounds.
// Needs float_math.glsl.

// GELU constants as in the CPU kernel: 1/sqrt(2), sqrt(2/pi), and the
// cubic coefficient of the tanh approximation.
const float kInvSqrt2 = 0.70710678118654752440;
const float kSqrt2OverPi = 0.79788456080286535588;
const float kGeluCubic = 0.044715;

// Clamp with NaN in either operand propagating, as the CPU kernel's
// nan_max / nan_min (GLSL's max and min leave NaN undefined). NaN is
// tested first, on the bits, so the comparison never sees it.
float nan_max(float x, float lo) {
  if (is_nan(x)) return x;
  if (is_nan(lo)) return lo;
  return x < lo ? lo : x;
}
float nan_min(float x, float hi) {
  if (is_nan(x)) return x;
  if (is_nan(hi)) return hi;
  return x > hi ? hi : x;
}

float unary_float(uint op, float x, float p0, float p1) {
  switch (op) {
    case 0: return -x;
    case 1: return abs(x);
    case 2: return is_positive(x) ? 1.0 : (is_negative(x) ? -1.0 : 0.0);  // NaN -> 0, as the CPU
    case 3: return c_exp(x);
    case 4: return c_expm1(x);
    case 5: return c_log(x);
    case 6: return c_log1p(x);
    case 7: return c_log2(x);
    case 8: return c_sqrt(x);
    case 9: return 1.0 / c_sqrt(x);  // inversesqrt has driver-defined precision
    case 10: return 1.0 / x;
    case 11: return sin(x);
    case 12: return cos(x);
    case 13: return tan(x);
    case 14: return c_tanh(x);
    case 15: return 1.0 / (1.0 + c_exp(-x));
    // NaN and -0.0 pass through, as torch.relu; decided on the bits, since
    // `x < 0 ? 0 : x` may become max(x, 0), which drops NaN.
    case 16: return is_negative(x) ? 0.0 : x;
    case 17: return 0.5 * x * (1.0 + c_erf(x * kInvSqrt2));
    case 18: return 0.5 * x * (1.0 + c_tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
    case 19: return x / (1.0 + c_exp(-x));
    case 20: return c_erf(x);
    case 21: return floor(x);
    case 22: return ceil(x);
    case 23: return roundEven(x);  // half to even, as torch.round
    case 24: return trunc(x);
    case 25: return nan_min(nan_max(x, p0), p1);
    case 26: return nan_max(x, p0);
    case 27: return nan_min(x, p0);  // clamp_max
    case 33: return c_log10(x);
    case 34: return c_sinh(x);
    case 35: return c_cosh(x);
    case 36: return c_asin(x);
    case 37: return c_acos(x);
    case 38: return c_atan(x);
    case 39: return c_asinh(x);
    case 40: return c_acosh(x);
    case 41: return c_atanh(x);
    case 42: return x * nan_min(nan_max(x + 3.0, 0.0), 6.0) / 6.0;  // hardswish
    default: return nan_min(nan_max(x + 3.0, 0.0), 6.0) / 6.0;      // 43, hardsigmoid
  }
}
