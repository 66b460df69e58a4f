#version 450
// A list of f32 binary entries in one dispatch (foreach_f32.glsl): the ops
// of kernels::BinaryOp (kFamily 0; s0 is alpha) and the f32 ops of
// kernels::PointwiseBinaryOp that pointwise_f32.comp computes, plus pow
// (kFamily 1; s0 is threshold_backward's threshold).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

#include "float_math.glsl"
#include "binary_float_ops.glsl"
#include "pointwise_float_ops.glsl"

layout(constant_id = 1) const uint kFamily = 0;
layout(constant_id = 2) const uint kOp = 0;

float foreach_op(float a, float b, float c, float s0, float s1) {
  if (kFamily == 0) return binary_float(kOp, a, b, s0);
  if (kOp == POINTWISE_BINARY_OP_POW) return c_pow(a, b);
  return pointwise_float(kOp, a, b, s0);
}

#include "foreach_f32.glsl"
