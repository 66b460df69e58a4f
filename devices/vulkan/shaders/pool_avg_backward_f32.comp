#version 450
// avg_pool2d_backward (pool_avg_backward.glsl) in f32.
#include "buffers.glsl"
#include "real_f32.glsl"
#include "pool_avg_backward.glsl"
