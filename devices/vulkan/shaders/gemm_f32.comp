#version 450
// C = A @ B for f32 (see gemm_tiled.glsl).
#define ELEM float
#define ELEM_BUFFER Floats
#include "gemm_tiled.glsl"
