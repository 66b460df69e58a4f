#version 450
// C = A @ B for int8_t on 8-wide subgroups, 32-bit wrapping sums (see
// gemm_subgroup.glsl).
#define ELEM int8_t
#define ELEM_BUFFER SignedBytes
#define ACC int
#define ACC_IS_INT
#define ACC4 ivec4
#include "gemm_subgroup.glsl"
