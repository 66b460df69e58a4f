#version 450
// avg_pool2d (pool_avg_forward.glsl) in double, as the CPU kernel computes
// f64. Needs shaderFloat64.
#include "buffers.glsl"
#include "real_f64.glsl"
#include "pool_avg_forward.glsl"
