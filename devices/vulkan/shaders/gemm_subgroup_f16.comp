#version 450
// C = A @ B for f16 operands and result, summed in f32, on 8-wide
// subgroups (see gemm_subgroup.glsl). Needs 16-bit storage (kernels/gemm.cc
// checks).
#define ELEM float16_t
#define ELEM_BUFFER Halfs
#include "gemm_subgroup.glsl"
