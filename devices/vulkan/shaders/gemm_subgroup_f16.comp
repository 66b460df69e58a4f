#version 450
// C = A @ B for f16 operands and result, summed in f32, on 8-wide
// subgroups (see gemm_subgroup.glsl). Needs 16-bit storage (kernels/gemm.cc
// checks).
#define ELEM float16_t
#define ELEM_BUFFER Halfs
// C's elements are stored as bits rounded to nearest even: float16_t(sum)
// rounds as the driver chooses (half_rounding.glsl).
#define STORE_C(index, value) Shorts(p.c_addr).v[index] = uint16_t(f16_bits_of(value))
#include "half_rounding.glsl"
#include "gemm_subgroup.glsl"
