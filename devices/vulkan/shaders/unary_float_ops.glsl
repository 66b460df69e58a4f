// The floating ops of kernels::UnaryOp (all but bitwise_not and the
// predicates) on f32, as the CPU kernel computes them in its compute type;
// shared by unary_f32.comp and unary.comp (f16 computes in f32). p0, p1:
// clamp bounds. Needs float_math.glsl.
#include "gelu_constants.glsl"
#include "pointwise_op_constants.glsl"

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
    case UNARY_OP_NEG: return -x;
    case UNARY_OP_ABS: return abs(x);
    case UNARY_OP_SIGN: return is_positive(x) ? 1.0 : (is_negative(x) ? -1.0 : 0.0);  // NaN -> 0, as the CPU
    case UNARY_OP_EXP: return c_exp(x);
    case UNARY_OP_EXPM1: return c_expm1(x);
    case UNARY_OP_LOG: return c_log(x);
    case UNARY_OP_LOG1P: return c_log1p(x);
    case UNARY_OP_LOG2: return c_log2(x);
    case UNARY_OP_SQRT: return c_sqrt(x);
    case UNARY_OP_RSQRT: return 1.0 / c_sqrt(x);  // inversesqrt has driver-defined precision
    case UNARY_OP_RECIPROCAL: return 1.0 / x;
    case UNARY_OP_SIN: return sin(x);
    case UNARY_OP_COS: return cos(x);
    case UNARY_OP_TAN: return tan(x);
    case UNARY_OP_TANH: return c_tanh(x);
    case UNARY_OP_SIGMOID: return 1.0 / (1.0 + c_exp(-x));
    // NaN and -0.0 pass through, as torch.relu; decided on the bits, since
    // `x < 0 ? 0 : x` may become max(x, 0), which drops NaN.
    case UNARY_OP_RELU: return is_negative(x) ? 0.0 : x;
    case UNARY_OP_GELU: return 0.5 * x * (1.0 + c_erf(x * kInvSqrt2));
    case UNARY_OP_GELU_TANH: return 0.5 * x * (1.0 + c_tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
    case UNARY_OP_SILU: return x / (1.0 + c_exp(-x));
    case UNARY_OP_ERF: return c_erf(x);
    case UNARY_OP_FLOOR: return floor(x);
    case UNARY_OP_CEIL: return ceil(x);
    case UNARY_OP_ROUND: return roundEven(x);  // half to even, as torch.round
    case UNARY_OP_TRUNC: return trunc(x);
    case UNARY_OP_CLAMP: return nan_min(nan_max(x, p0), p1);
    case UNARY_OP_CLAMP_MIN: return nan_max(x, p0);
    case UNARY_OP_CLAMP_MAX: return nan_min(x, p0);  // clamp_max
    case UNARY_OP_LOG10: return c_log10(x);
    case UNARY_OP_SINH: return c_sinh(x);
    case UNARY_OP_COSH: return c_cosh(x);
    case UNARY_OP_ASIN: return c_asin(x);
    case UNARY_OP_ACOS: return c_acos(x);
    case UNARY_OP_ATAN: return c_atan(x);
    case UNARY_OP_ASINH: return c_asinh(x);
    case UNARY_OP_ACOSH: return c_acosh(x);
    case UNARY_OP_ATANH: return c_atanh(x);
    case UNARY_OP_HARDSWISH: return x * nan_min(nan_max(x + 3.0, 0.0), 6.0) / 6.0;  // hardswish
    default: return nan_min(nan_max(x + 3.0, 0.0), 6.0) / 6.0;  // UNARY_OP_HARDSIGMOID
  }
}
