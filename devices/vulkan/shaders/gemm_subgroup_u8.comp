#version 450
// C = A @ B for uint8_t on 8-wide subgroups, 32-bit wrapping sums (see
// gemm_subgroup.glsl).
#define ELEM uint8_t
#define ELEM_BUFFER Bytes
#define ACC int
#define ACC_IS_INT
#define ACC4 ivec4
#include "gemm_subgroup.glsl"
