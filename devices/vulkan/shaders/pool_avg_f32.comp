#version 450
// avg_pool2d (pool_avg_forward.glsl) in f32.
#include "buffers.glsl"
#include "real_f32.glsl"
#include "pool_avg_forward.glsl"
