#version 450
// Reductions of integer and bool input accumulated in int64, wrapping (see
// reduce_common.glsl); needs shaderInt64 (kernels/reduce.cc checks).
#define ACC_T int64_t
#define ACC_INT
#include "reduce_common.glsl"
