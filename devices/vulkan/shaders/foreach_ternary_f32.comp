#version 450
// A list of f32 lerp, addcmul or addcdiv entries (kernels::TernaryOp; s0
// is addcmul / addcdiv's value) in one dispatch; see foreach_f32.glsl.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

#include "ternary_float_ops.glsl"

layout(constant_id = 1) const uint kOp = TERNARY_OP_LERP;  // kernels::TernaryOp

float foreach_op(float a, float b, float c, float s0, float s1) {
  return ternary_float(kOp, a, b, c, s0);
}

#include "foreach_f32.glsl"
