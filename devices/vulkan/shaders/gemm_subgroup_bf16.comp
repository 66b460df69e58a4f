#version 450
// C = A @ B for bf16 operands and result, summed in f32, on 8-wide
// subgroups (see gemm_subgroup.glsl; loads and rounding as gemm_bf16.comp).
// Needs 16-bit storage (kernels/gemm.cc checks).
#include "buffers.glsl"
#include "dtype_access.glsl"
#define ELEM uint16_t
#define ELEM_BUFFER Shorts
#define LOAD_F(addr, index) uintBitsToFloat(uint(Shorts(addr).v[index]) << 16)
#define STORE_C(index, value) Shorts(p.c_addr).v[index] = uint16_t(bf16_bits_of(value))
#include "gemm_subgroup.glsl"
