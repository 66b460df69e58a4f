#version 450
// C = A @ B for f32 on 8-wide subgroups (see gemm_subgroup.glsl).
#define ELEM float
#define ELEM_BUFFER Floats
#include "gemm_subgroup.glsl"
