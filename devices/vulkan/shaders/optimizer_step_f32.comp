#version 450
// The fused optimizer steps (optimizer_step.glsl) on f32 tensors. Needs no
// optional shader features.
#include "buffers.glsl"
#include "real_f32.glsl"

float load_element(uvec2 addr, int at) { return Floats(addr).v[at]; }
void store_element(uvec2 addr, int at, float v) { Floats(addr).v[at] = v; }

#include "optimizer_step.glsl"
