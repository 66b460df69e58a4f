#version 450
// Reductions of f64 input accumulated in double (see reduce_common.glsl);
// needs shaderFloat64 (kernels/reduce.cc checks).
#define ACC_T double
#define ACC_DOUBLE
#include "reduce_common.glsl"
