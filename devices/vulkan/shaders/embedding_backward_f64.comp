#version 450
// embedding_dense_backward (embedding_backward.glsl) for f64 gradients,
// summed in double as the CPU kernel. Needs shaderFloat64.
#include "buffers.glsl"
#include "index_elements.glsl"
#include "real_f64.glsl"

double load_grad(uvec2 addr, int at) { return Doubles(addr).v[at]; }
void store_grad_weight(uvec2 addr, int at, double v) { Doubles(addr).v[at] = v; }

#include "embedding_backward.glsl"
