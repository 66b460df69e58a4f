#version 450
// C = A @ B for bf16 operands and result, summed in f32 (see
// gemm_tiled.glsl). bf16 is read as the top half of an f32 and C rounded to
// nearest even as the CPU device rounds (dtype_access.glsl). Needs 16-bit
// storage (kernels/gemm.cc checks).
#include "buffers.glsl"
#include "dtype_access.glsl"
#define ELEM uint16_t
#define ELEM_BUFFER Shorts
#define LOAD_F(addr, index) uintBitsToFloat(uint(Shorts(addr).v[index]) << 16)
#define STORE_C(index, value) Shorts(p.c_addr).v[index] = uint16_t(bf16_bits_of(value))
#include "gemm_tiled.glsl"
