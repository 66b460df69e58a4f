#version 450
// unary.comp for f64 (kernels/unary.cc): every floating op, from double
// arithmetic and doubles_math.glsl / doubles_trig.glsl, computed in double
// as the CPU kernel does, with f64 out, and the predicates with bool out.
// Needs shaderFloat64.
#include "buffers.glsl"
#include "doubles.glsl"
#include "doubles_math.glsl"
#include "doubles_trig.glsl"
#include "gelu_constants.glsl"
#include "pointwise_op_constants.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;  // kernels::UnaryOp

const int kMaxRank = 7;  // kUnaryTypedMaxRank in kernels/unary.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 in_addr;
  uvec2 p0;  // clamp bounds, the doubles' bits
  uvec2 p1;
  uint numel;
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int in_strides[kMaxRank];
} p;

const bool kPredicate = kOp == UNARY_OP_LOGICAL_NOT || kOp == UNARY_OP_ISNAN ||
                        kOp == UNARY_OP_ISINF || kOp == UNARY_OP_ISFINITE ||
                        kOp == UNARY_OP_ISNEGINF || kOp == UNARY_OP_ISPOSINF;

double unary_double(double x) {
  const double lo = scalar_double(p.p0), hi = scalar_double(p.p1);
  switch (kOp) {
    case UNARY_OP_NEG: return -x;
    case UNARY_OP_ABS: return double_of_bits(bits_of_double(x) & 0x7fffffffffffffffUL);
    case UNARY_OP_SIGN: return double_is_positive(x) ? 1.0LF : (double_is_negative(x) ? -1.0LF : 0.0LF);
    case UNARY_OP_SQRT: return double_sqrt(x);
    case UNARY_OP_RSQRT: return 1.0LF / double_sqrt(x);
    case UNARY_OP_RECIPROCAL: return 1.0LF / x;
    case UNARY_OP_RELU: return double_is_negative(x) ? 0.0LF : x;  // NaN and -0.0 pass
    case UNARY_OP_FLOOR: return floor(x);
    case UNARY_OP_CEIL: return double_ceil(x);
    case UNARY_OP_ROUND: return double_round_half_even(x);
    case UNARY_OP_TRUNC: return double_trunc(x);
    case UNARY_OP_CLAMP: return double_nan_min(double_nan_max(x, lo), hi);
    case UNARY_OP_CLAMP_MIN: return double_nan_max(x, lo);
    case UNARY_OP_CLAMP_MAX: return double_nan_min(x, lo);
    case UNARY_OP_EXP: return double_exp(x);
    case UNARY_OP_EXPM1: return double_expm1(x);
    case UNARY_OP_LOG: return double_log(x);
    case UNARY_OP_LOG1P: return double_log1p(x);
    case UNARY_OP_LOG2: return double_log2(x);
    case UNARY_OP_LOG10: return double_log10(x);
    case UNARY_OP_SIGMOID: return 1.0LF / (1.0LF + double_exp(-x));
    case UNARY_OP_SILU: return x / (1.0LF + double_exp(-x));
    case UNARY_OP_TANH: return double_tanh(x);
    case UNARY_OP_SINH: return double_sinh(x);
    case UNARY_OP_COSH: return double_cosh(x);
    case UNARY_OP_ASINH: return double_asinh(x);
    case UNARY_OP_ACOSH: return double_acosh(x);
    case UNARY_OP_ATANH: return double_atanh(x);
    case UNARY_OP_ATAN: return double_atan(x);
    case UNARY_OP_SIN: return double_sin(x);
    case UNARY_OP_COS: return double_cos(x);
    case UNARY_OP_TAN: return double_tan(x);
    case UNARY_OP_ERF: return double_erf(x);
    case UNARY_OP_GELU: return 0.5LF * x * (1.0LF + double_erf(x * kInvSqrt2D));
    case UNARY_OP_GELU_TANH:
      return 0.5LF * x * (1.0LF + double_tanh(kSqrt2OverPiD * (x + kGeluCubicD * x * x * x)));
    case UNARY_OP_ASIN: return double_asin(x);
    case UNARY_OP_ACOS: return double_acos(x);
    case UNARY_OP_HARDSWISH: return x * double_nan_min(double_nan_max(x + 3.0LF, 0.0LF), 6.0LF) / 6.0LF;
    default: return double_nan_min(double_nan_max(x + 3.0LF, 0.0LF), 6.0LF) / 6.0LF;  // hardsigmoid
  }
}

bool predicate(double x) {
  switch (kOp) {
    case UNARY_OP_LOGICAL_NOT: return !double_is_nonzero(x);
    case UNARY_OP_ISNAN: return double_is_nan(x);
    case UNARY_OP_ISINF: return double_is_inf(x);
    case UNARY_OP_ISFINITE: return !double_is_nan(x) && !double_is_inf(x);
    case UNARY_OP_ISNEGINF: return double_is_inf(x) && double_is_negative(x);
    default: return double_is_inf(x) && double_is_positive(x);  // isposinf
  }
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    uint rem = i;
    int o = 0, ia = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      const int c = int(rem - q * p.sizes[d]);
      rem = q;
      o += c * p.out_strides[d];
      ia += c * p.in_strides[d];
    }
    if (p.rank > 0) {
      o += int(rem) * p.out_strides[0];
      ia += int(rem) * p.in_strides[0];
    }
    const double x = Doubles(p.in_addr).v[ia];
    if (kPredicate) {
      Bytes(p.out_addr).v[o] = uint8_t(predicate(x) ? 1 : 0);
    } else {
      Doubles(p.out_addr).v[o] = unary_double(x);
    }
  }
}
