#version 450
// The fused optimizer steps (optimizer_step.glsl) on f32 tensors. Needs no
// optional shader features.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };

float load_element(uvec2 addr, int at) { return Floats(addr).v[at]; }

float store_element(uvec2 addr, int at, float v) {
  Floats(addr).v[at] = v;
  return v;
}

#include "optimizer_step.glsl"
