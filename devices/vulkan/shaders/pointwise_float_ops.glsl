// The f32-valued ops of kernels::PointwiseBinaryOp that pointwise_f32.comp
// handles, as the CPU kernel computes them in its compute type: 4 maximum,
// 5 minimum (NaN-propagating), and the activation gradients 12 threshold
// (relu; p0 the threshold), 13 gelu, 14 gelu tanh, 15 silu, 16 sigmoid,
// 17 tanh, where g is the incoming gradient and x the forward input
// (threshold, gelu, silu) or output (sigmoid, tanh). Shared with
// pointwise.comp (f16 computes in f32). Needs float_math.glsl.

const float kInvSqrt2 = 0.70710678118654752440;
const float kInvSqrt2Pi = 0.39894228040143267794;
const float kSqrt2OverPi = 0.79788456080286535588;
const float kGeluCubic = 0.044715;

float pointwise_float(uint op, float g, float x, float p0) {
  switch (op) {
    case 4:  // GLSL's max leaves NaN undefined
      if (is_nan(g)) return g;
      if (is_nan(x)) return x;
      return g < x ? x : g;
    case 5:
      if (is_nan(g)) return g;
      if (is_nan(x)) return x;
      return x < g ? x : g;
    case 12: return x <= p0 ? 0.0 : g;
    case 13: {
      const float cdf = 0.5 * (1.0 + c_erf(x * kInvSqrt2));
      const float pdf = kInvSqrt2Pi * c_exp(-0.5 * x * x);
      return g * (cdf + x * pdf);
    }
    case 14: {
      const float x2 = x * x;
      const float t = c_tanh(kSqrt2OverPi * (x + kGeluCubic * x2 * x));
      const float dinner = kSqrt2OverPi * (1.0 + 3.0 * kGeluCubic * x2);
      return g * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * dinner);
    }
    case 15: {
      const float s = 1.0 / (1.0 + c_exp(-x));
      return g * s * (1.0 + x * (1.0 - s));
    }
    case 16: return g * (1.0 - x) * x;
    default: return g * (1.0 - x * x);  // 17, tanh
  }
}
