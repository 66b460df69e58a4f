#version 450
// avg_pool2d (pool_avg_forward.glsl) on int64 tensors: int64 sums divided
// with truncation, as the CPU kernel. Needs 64-bit shader types.
#include "buffers.glsl"
#include "real_int.glsl"
#include "pool_avg_forward.glsl"
