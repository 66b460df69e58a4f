// The f32-valued ops of kernels::PointwiseBinaryOp that pointwise_f32.comp
// handles, as the CPU kernel computes them in its compute type: maximum,
// minimum (NaN-propagating), fmod, logaddexp, logaddexp2, and the
// activation gradients threshold (relu; p0 the threshold), gelu, gelu
// tanh, silu, sigmoid, tanh, hardswish, hardsigmoid, where g is the
// incoming gradient and x the forward input (threshold, gelu, silu,
// hardswish, hardsigmoid) or output (sigmoid, tanh); the binary ops take
// (g, x) as (a, b). Shared with pointwise.comp (f16 computes in f32).
// Needs float_math.glsl.
#include "gelu_constants.glsl"
#include "pointwise_op_constants.glsl"

// log(e^a + e^b) = max + log1p(e^-|a - b|), as the CPU kernel; equal
// infinities return themselves (their difference is NaN). NaN returns
// first, so GLSL's max never sees it.
float logaddexp(float a, float b) {
  if (is_nan(a) || is_nan(b)) return kNaN;
  if (is_inf(a) && a == b) return a;
  return max(a, b) + c_log1p(c_exp(-abs(a - b)));
}

// log2(2^a + 2^b), likewise (2^-d as e^(-d ln 2)).
float logaddexp2(float a, float b) {
  if (is_nan(a) || is_nan(b)) return kNaN;
  if (is_inf(a) && a == b) return a;
  return max(a, b) + c_log1p(c_exp(-abs(a - b) * 0.69314718055994530942)) * 1.44269504088896340736;
}

float pointwise_float(uint op, float g, float x, float p0) {
  switch (op) {
    case POINTWISE_BINARY_OP_MAXIMUM:  // GLSL's max leaves NaN undefined: NaN first, on the bits
      if (is_nan(g)) return g;
      if (is_nan(x)) return x;
      return g < x ? x : g;
    case POINTWISE_BINARY_OP_MINIMUM:
      if (is_nan(g)) return g;
      if (is_nan(x)) return x;
      return x < g ? x : g;
    // threshold (relu): NaN self or threshold passes the gradient, as the
    // CPU's `x <= p0` is false for it; tested first so that no rewriting of
    // the comparison can turn it true.
    case POINTWISE_BINARY_OP_THRESHOLD_BACKWARD:
      if (is_nan(x) || is_nan(p0)) return g;
      return x <= p0 ? 0.0 : g;
    case POINTWISE_BINARY_OP_GELU_BACKWARD: {
      const float cdf = 0.5 * (1.0 + c_erf(x * kInvSqrt2));
      const float pdf = kInvSqrt2Pi * c_exp(-0.5 * x * x);
      return g * (cdf + x * pdf);
    }
    case POINTWISE_BINARY_OP_GELU_TANH_BACKWARD: {
      const float x2 = x * x;
      const float t = c_tanh(kSqrt2OverPi * (x + kGeluCubic * x2 * x));
      const float dinner = kSqrt2OverPi * (1.0 + 3.0 * kGeluCubic * x2);
      return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dinner);
    }
    case POINTWISE_BINARY_OP_SILU_BACKWARD: {
      const float s = 1.0 / (1.0 + c_exp(-x));
      return g * s * (1.0 + x * (1.0 - s));
    }
    case POINTWISE_BINARY_OP_SIGMOID_BACKWARD: return g * (1.0 - x) * x;
    case POINTWISE_BINARY_OP_TANH_BACKWARD: return g * (1.0 - x * x);  // tanh
    case POINTWISE_BINARY_OP_FMOD: return c_fmod(g, x);
    case POINTWISE_BINARY_OP_LOGADDEXP: return logaddexp(g, x);
    case POINTWISE_BINARY_OP_LOGADDEXP2: return logaddexp2(g, x);
    case POINTWISE_BINARY_OP_HARDSWISH_BACKWARD:  // NaN self passes the gradient, as the CPU's comparisons
      if (is_nan(x) || x >= 3.0) return g;
      return x <= -3.0 ? 0.0 : g * (x / 3.0 + 0.5);
    default:  // POINTWISE_BINARY_OP_HARDSIGMOID_BACKWARD; NaN self gives 0
      return !is_nan(x) && x > -3.0 && x < 3.0 ? g * (1.0 / 6.0) : 0.0;
  }
}
