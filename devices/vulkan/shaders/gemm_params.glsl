// The push constants of every GEMM shader: GemmParams in kernels/gemm.cc.
// Strides are in elements; flags: kGemmAccumulate, kGemmRowBias.
#ifndef GEMM_PARAMS_GLSL
#define GEMM_PARAMS_GLSL
layout(push_constant, std430) uniform Params {
  uvec2 a_addr;
  uvec2 b_addr;
  uvec2 c_addr;
  uvec2 bias_addr;  // like C's elements; only read with the row-bias flag
  uint m;
  uint n;
  uint k;
  uint flags;
  int a_batch_stride, a_row_stride, a_col_stride;
  int b_batch_stride, b_row_stride, b_col_stride;
  int c_batch_stride, c_row_stride, c_col_stride;
  int bias_stride;
} p;
#endif
