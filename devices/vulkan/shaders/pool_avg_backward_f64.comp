#version 450
// avg_pool2d_backward (pool_avg_backward.glsl) in double, as the CPU kernel
// computes f64. Needs shaderFloat64.
#include "buffers.glsl"
#include "real_f64.glsl"
#include "pool_avg_backward.glsl"
