#version 450
// C = A @ B for int on 8-wide subgroups, 32-bit wrapping sums (see
// gemm_subgroup.glsl).
#define ELEM int
#define ELEM_BUFFER Ints
#define ACC int
#define ACC_IS_INT
#define ACC4 ivec4
#include "gemm_subgroup.glsl"
