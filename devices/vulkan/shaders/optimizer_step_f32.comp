#version 450
// The fused optimizer steps (optimizer_step.glsl) on f32 tensors. Needs no
// optional shader features.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

#include "float_math.glsl"

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };

#define REAL float
float load_element(uvec2 addr, int at) { return Floats(addr).v[at]; }
void store_element(uvec2 addr, int at, float v) { Floats(addr).v[at] = v; }
bool real_is_nan(float v) { return is_nan(v); }
float real_sqrt(float v) { return c_sqrt(v); }

#include "optimizer_step.glsl"
