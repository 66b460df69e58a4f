#version 450
// embedding_dense_backward (embedding_backward.glsl) for f64 gradients,
// summed in double as the CPU kernel. Needs shaderFloat64.
#include "buffers.glsl"
#include "doubles.glsl"
#include "index_elements.glsl"

#define REAL double
#define Reals Doubles
double load_grad(uvec2 addr, int at) { return Doubles(addr).v[at]; }
void store_grad_weight(uvec2 addr, int at, double v) { Doubles(addr).v[at] = v; }

#include "embedding_backward.glsl"
