#version 450
// C = A @ B for f16 operands and result, summed in f32 (see
// gemm_tiled.glsl). Needs 16-bit storage (kernels/bmm.cc checks).
#define ELEM float16_t
#define ELEM_BUFFER Halfs
#include "gemm_tiled.glsl"
