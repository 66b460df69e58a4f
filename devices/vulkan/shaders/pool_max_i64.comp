#version 450
// max_pool2d_with_indices (pool_max.glsl) on int64 tensors. Needs 64-bit
// shader types.
#include "buffers.glsl"
#include "real_int.glsl"
#include "pool_max.glsl"
