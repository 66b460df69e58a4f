// The floating ops of kernels::UnaryOp (value 0 neg .. 27 clamp_max) on
// f32, as the CPU kernel computes them in its compute type; shared by
// unary_f32.comp and unary.comp (f16 computes in f32). p0, p1: clamp bounds.
// Needs float_math.glsl.

// GELU constants as in the CPU kernel: 1/sqrt(2), sqrt(2/pi), and the
// cubic coefficient of the tanh approximation.
const float kInvSqrt2 = 0.70710678118654752440;
const float kSqrt2OverPi = 0.79788456080286535588;
const float kGeluCubic = 0.044715;

// Clamp with NaN in either operand propagating, as the CPU kernel's
// nan_max / nan_min (GLSL's max and min leave NaN undefined).
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
    case 2: return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : 0.0);  // NaN -> 0, as the CPU
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
    case 16: return x < 0.0 ? 0.0 : x;  // NaN and -0.0 pass through, as torch.relu
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
    default: return nan_min(x, p0);  // 27, clamp_max
  }
}
