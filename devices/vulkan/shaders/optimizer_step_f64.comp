#version 450
// The fused optimizer steps (optimizer_step.glsl) on f64 tensors, in
// double as the CPU kernel computes them. Needs shaderFloat64.
#include "buffers.glsl"
#include "doubles.glsl"

#define REAL double
double load_element(uvec2 addr, int at) { return Doubles(addr).v[at]; }
void store_element(uvec2 addr, int at, double v) { Doubles(addr).v[at] = v; }
bool real_is_nan(double v) { return double_is_nan(v); }
double real_sqrt(double v) { return double_sqrt(v); }

#include "optimizer_step.glsl"
