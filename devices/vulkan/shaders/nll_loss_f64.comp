#version 450
// nll_loss (nll_loss.glsl) on f64, in double as the CPU kernel. Needs
// shaderFloat64.
#include "buffers.glsl"
#include "doubles.glsl"
#include "index_elements.glsl"

#define REAL double
#define Reals Doubles
double load_real(uvec2 addr, int at) { return Doubles(addr).v[at]; }
void store_real(uvec2 addr, int at, double v) { Doubles(addr).v[at] = v; }
double real_nan() { return double_of_bits(0x7ff8000000000000UL); }

#include "nll_loss.glsl"
