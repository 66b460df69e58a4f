#version 450
// max_pool2d_with_indices (pool_max.glsl) in f32.
#include "buffers.glsl"
#include "real_f32.glsl"
#include "pool_max.glsl"
