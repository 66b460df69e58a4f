#version 450
// nll_loss_backward (nll_loss_backward.glsl) on f64, in double as the CPU
// kernel. Needs shaderFloat64.
#include "buffers.glsl"
#include "index_elements.glsl"
#include "real_f64.glsl"

double load_real(uvec2 addr, int at) { return Doubles(addr).v[at]; }
void store_real(uvec2 addr, int at, double v) { Doubles(addr).v[at] = v; }

#include "nll_loss_backward.glsl"
