#version 450
// max_pool2d_with_indices (pool_max.glsl) on int32 tensors.
#include "buffers.glsl"
#define INT_REAL_32
#include "real_int.glsl"
#include "pool_max.glsl"
