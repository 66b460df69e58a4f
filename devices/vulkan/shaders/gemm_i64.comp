#version 450
// C = A @ B for int64, 64-bit wrapping sums as the CPU device's (see
// gemm_tiled.glsl). Needs shaderInt64 (kernels/gemm.cc checks); its two
// tiles fill 16 KiB of shared memory, as gemm_f64.comp's do.
#include "buffers.glsl"
#define ELEM int64_t
#define ELEM_BUFFER Int64s
#define SUM_T int64_t
#define SUM_VEC4 i64vec4
#include "gemm_tiled.glsl"
