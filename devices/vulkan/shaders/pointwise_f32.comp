#version 450
// out = a (op) b for f32, broadcast through stride-0 dims: the f32-valued
// ops of kernels::PointwiseBinaryOp that training leans on (value as a
// specialization constant): maximum, minimum (NaN-propagating), fmod,
// logaddexp, logaddexp2, and the activation gradients threshold (relu),
// gelu, gelu tanh, silu, sigmoid, tanh, hardswish, hardsigmoid, where a is
// the incoming gradient and b the forward input (threshold, gelu, silu,
// hardswish, hardsigmoid) or output (sigmoid, tanh). Formulas as the CPU kernel's (pointwise_float_ops.glsl).
// Needs no optional shader features.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

#include "float_math.glsl"
#include "pointwise_op_constants.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = POINTWISE_BINARY_OP_MAXIMUM;  // kernels::PointwiseBinaryOp

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };

const int kMaxRank = 5;  // kCompareMaxRank in kernels/pointwise_binary.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 a_addr;
  uvec2 b_addr;
  uint numel;
  float p0;  // threshold_backward's threshold
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int a_strides[kMaxRank];
  int b_strides[kMaxRank];
} p;

#include "pointwise_float_ops.glsl"

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    // Row-major coordinates from i; dim 0 needs no division (see
    // binary_f32.comp).
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
    Floats(p.out_addr).v[o] = pointwise_float(kOp, Floats(p.a_addr).v[ia], Floats(p.b_addr).v[ib], p.p0);
  }
}
