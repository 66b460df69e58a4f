#version 450
// pointwise.comp for f64 (kernels/pointwise_binary.cc): the ops built from
// double arithmetic and doubles_math.glsl's exp and log, computed in double
// as the CPU kernel does: comparisons and logical ops (into bool),
// NaN-propagating maximum and minimum, logaddexp(2), pow, atan2, C's fmod (exact),
// Python's remainder and floor division and truncated division, and the
// threshold, sigmoid, tanh, silu, gelu, hardswish and hardsigmoid gradients. a and b
// broadcast through stride-0 dims. Needs shaderFloat64.
#include "buffers.glsl"
#include "doubles.glsl"
#include "doubles_math.glsl"
#include "gelu_constants.glsl"
#include "pointwise_op_constants.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;  // kernels::PointwiseBinaryOp

const int kMaxRank = 5;  // kPointwiseMaxRank in kernels/pointwise_binary.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 a_addr;
  uvec2 b_addr;
  uvec2 unused;  // pointwise.comp's zero-divisor flag
  uvec2 p0;      // threshold_backward's threshold, the double's bits
  uint numel;
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int a_strides[kMaxRank];
  int b_strides[kMaxRank];
} p;

const bool kToBool = POINTWISE_BINARY_OP_IS_BOOL_VALUED(kOp);  // kernels::is_bool_valued

// log(e^a + e^b) (base 2 for logaddexp2) as the CPU kernel forms it:
// equal infinities give themselves, NaN propagates through the max.
double logaddexp_double(double a, double b, bool base2) {
  if (double_is_inf(a) && a == b) return a;
  if (double_is_nan(a)) return a;
  if (double_is_nan(b)) return b;
  const double m = a < b ? b : a;
  const double d = -abs(a - b);
  if (!base2) return m + double_log1p(double_exp(d));
  return m + double_log1p(double_exp(d * kLn2)) * kInvLn2;
}

// Python's floor division from fmod, so that it agrees with remainder
// (a == q * b + r), as the CPU kernel forms it.
double floor_divide_double(double a, double b) {
  if (!double_is_nonzero(b)) return a / b;
  const double mod = double_fmod(a, b);
  if (double_is_nan(mod)) return mod;  // NaN or infinite a, NaN b
  precise double div = (a - mod) / b;
  if (double_is_nonzero(mod) && (double_is_negative(b) != double_is_negative(mod))) div = div - 1.0LF;
  if (!double_is_nonzero(div)) {  // a zero with the quotient's sign
    const uint64_t sign = (bits_of_double(a) ^ bits_of_double(b)) & 0x8000000000000000UL;
    return double_of_bits(sign);
  }
  precise double q = floor(div);
  precise double rest = div - q;
  if (rest > 0.5LF) q = q + 1.0LF;  // (a - mod) / b may land just below an integer
  return q;
}

double remainder_double(double a, double b) {
  precise double m = double_fmod(a, b);
  if (double_is_nonzero(m) && (double_is_negative(b) != double_is_negative(m))) m = m + b;
  return m;
}

// NaN tests come first, on the bits, so that no rewriting of a comparison
// can change what NaN gives (see pointwise_float_ops.glsl).
double double_op(double g, double x) {
  switch (kOp) {
    case POINTWISE_BINARY_OP_MAXIMUM:
      if (double_is_nan(g)) return g;
      if (double_is_nan(x)) return x;
      return g < x ? x : g;
    case POINTWISE_BINARY_OP_MINIMUM:
      if (double_is_nan(g)) return g;
      if (double_is_nan(x)) return x;
      return x < g ? x : g;
    case POINTWISE_BINARY_OP_THRESHOLD_BACKWARD: {
      const double threshold = scalar_double(p.p0);
      if (double_is_nan(x) || double_is_nan(threshold)) return g;
      return x <= threshold ? 0.0LF : g;
    }
    case POINTWISE_BINARY_OP_FMOD: return double_fmod(g, x);
    case POINTWISE_BINARY_OP_POW: return double_pow(g, x);
    case POINTWISE_BINARY_OP_ATAN2: return double_atan2(g, x);
    case POINTWISE_BINARY_OP_REMAINDER: return remainder_double(g, x);
    case POINTWISE_BINARY_OP_DIV_FLOOR: return floor_divide_double(g, x);
    case POINTWISE_BINARY_OP_DIV_TRUNC: return double_trunc(g / x);
    case POINTWISE_BINARY_OP_LOGADDEXP: return logaddexp_double(g, x, false);
    case POINTWISE_BINARY_OP_LOGADDEXP2: return logaddexp_double(g, x, true);
    case POINTWISE_BINARY_OP_GELU_BACKWARD: {
      const double cdf = 0.5LF * (1.0LF + double_erf(x * kInvSqrt2D));
      const double pdf = kInvSqrt2PiD * double_exp(-0.5LF * x * x);
      return g * (cdf + x * pdf);
    }
    case POINTWISE_BINARY_OP_GELU_TANH_BACKWARD: {
      const double x2 = x * x;
      const double t = double_tanh(kSqrt2OverPiD * (x + kGeluCubicD * x2 * x));
      const double dinner = kSqrt2OverPiD * (1.0LF + 3.0LF * kGeluCubicD * x2);
      return g * (0.5LF * (1.0LF + t) + 0.5LF * x * (1.0LF - t * t) * dinner);
    }
    case POINTWISE_BINARY_OP_SILU_BACKWARD: {
      const double s = 1.0LF / (1.0LF + double_exp(-x));
      return g * s * (1.0LF + x * (1.0LF - s));
    }
    case POINTWISE_BINARY_OP_SIGMOID_BACKWARD: return g * (1.0LF - x) * x;
    case POINTWISE_BINARY_OP_TANH_BACKWARD: return g * (1.0LF - x * x);
    case POINTWISE_BINARY_OP_HARDSWISH_BACKWARD:
      if (double_is_nan(x) || x >= 3.0LF) return g;
      return x <= -3.0LF ? 0.0LF : g * (x / 3.0LF + 0.5LF);
    default:  // POINTWISE_BINARY_OP_HARDSIGMOID_BACKWARD; NaN self gives 0
      return !double_is_nan(x) && x > -3.0LF && x < 3.0LF ? g * (1.0LF / 6.0LF) : 0.0LF;
  }
}

bool double_compare(double a, double b) {
  if (kOp == POINTWISE_BINARY_OP_LOGICAL_AND || kOp == POINTWISE_BINARY_OP_LOGICAL_OR ||
      kOp == POINTWISE_BINARY_OP_LOGICAL_XOR) {  // NaN is nonzero, hence true
    const bool x = double_is_nonzero(a), y = double_is_nonzero(b);
    return kOp == POINTWISE_BINARY_OP_LOGICAL_AND ? x && y
         : kOp == POINTWISE_BINARY_OP_LOGICAL_OR ? x || y : x != y;
  }
  if (double_is_nan(a) || double_is_nan(b)) return kOp == POINTWISE_BINARY_OP_NE;  // only ne holds
  switch (kOp) {
    case POINTWISE_BINARY_OP_EQ: return a == b;
    case POINTWISE_BINARY_OP_NE: return !(a == b);
    case POINTWISE_BINARY_OP_LT: return a < b;
    case POINTWISE_BINARY_OP_LE: return a <= b;
    case POINTWISE_BINARY_OP_GT: return a > b;
    default: return a >= b;  // ge
  }
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    uint rem = i;
    int o = 0, ia = 0, ib = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      const int c = int(rem - q * p.sizes[d]);
      rem = q;
      o += c * p.out_strides[d];
      ia += c * p.a_strides[d];
      ib += c * p.b_strides[d];
    }
    if (p.rank > 0) {
      o += int(rem) * p.out_strides[0];
      ia += int(rem) * p.a_strides[0];
      ib += int(rem) * p.b_strides[0];
    }
    const double a = Doubles(p.a_addr).v[ia];
    const double b = Doubles(p.b_addr).v[ib];
    if (kToBool) {
      Bytes(p.out_addr).v[o] = uint8_t(double_compare(a, b) ? 1 : 0);
    } else {
      Doubles(p.out_addr).v[o] = double_op(a, b);
    }
  }
}
