#version 450
// max_pool2d_with_indices_backward (pool_max_backward.glsl) in double, as the
// CPU kernel computes f64. Needs shaderFloat64.
#include "buffers.glsl"
#include "real_f64.glsl"
#include "pool_max_backward.glsl"
