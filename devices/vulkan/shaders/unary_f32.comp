#version 450
// out = op(in) for f32 in and out, any strides on both sides. The op is a
// specialization constant (kernels::UnaryOp's value), so each op compiles
// to its own branch-free pipeline. Needs no optional shader features; the
// bool-valued predicates are in predicate_f32.comp, which needs 8-bit
// storage.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

#include "float_math.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;  // kernels::UnaryOp

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };

const int kMaxRank = 8;  // kUnaryMaxRank in kernels/unary.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 in_addr;
  uint numel;
  float p0;  // clamp bounds
  float p1;
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int in_strides[kMaxRank];
} p;

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

float apply(float x) {
  switch (kOp) {
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
    case 25: return nan_min(nan_max(x, p.p0), p.p1);
    case 26: return nan_max(x, p.p0);
    default: return nan_min(x, p.p0);  // 27, clamp_max
  }
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    // Row-major coordinates from i; dim 0 needs no division (see
    // binary_f32.comp).
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
    Floats(p.out_addr).v[o] = apply(Floats(p.in_addr).v[ia]);
  }
}
