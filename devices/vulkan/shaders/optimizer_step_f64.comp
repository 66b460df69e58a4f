#version 450
// The fused optimizer steps (optimizer_step.glsl) on f64 tensors, in
// double as the CPU kernel computes them. Needs shaderFloat64.
#include "buffers.glsl"
#include "real_f64.glsl"

double load_element(uvec2 addr, int at) { return Doubles(addr).v[at]; }
void store_element(uvec2 addr, int at, double v) { Doubles(addr).v[at] = v; }

#include "optimizer_step.glsl"
