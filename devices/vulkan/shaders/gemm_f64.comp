#version 450
// C = A @ B for f64, summed in double (see gemm_tiled.glsl). Needs
// shaderFloat64 (kernels/gemm.cc checks).
#include "buffers.glsl"
#include "doubles.glsl"
#define ELEM double
#define ELEM_BUFFER Doubles
#define SUM_T double
#define SUM_VEC4 dvec4
#include "gemm_tiled.glsl"
