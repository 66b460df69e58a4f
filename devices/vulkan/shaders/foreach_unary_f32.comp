#version 450
// A list of f32 unary entries (kernels::UnaryOp's floating ops, p0 and p1
// the clamp bounds) in one dispatch; see foreach_f32.glsl.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

#include "float_math.glsl"
#include "unary_float_ops.glsl"

layout(constant_id = 1) const uint kOp = UNARY_OP_NEG;  // kernels::UnaryOp

float foreach_op(float a, float b, float c, float s0, float s1) {
  return unary_float(kOp, a, s0, s1);
}

#include "foreach_f32.glsl"
