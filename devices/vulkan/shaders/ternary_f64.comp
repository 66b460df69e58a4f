#version 450
// ternary.comp for f64 (kernels/ternary.cc): where (a is the bool
// condition), lerp, addcmul and addcdiv in double, as the CPU kernel
// computes them, broadcast through stride-0 dims. Needs shaderFloat64.
#include "buffers.glsl"
#include "doubles.glsl"
#include "pointwise_op_constants.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = TERNARY_OP_WHERE;  // kernels::TernaryOp

const int kMaxRank = 4;  // kTernaryMaxRank in kernels/ternary.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 a_addr;
  uvec2 b_addr;
  uvec2 c_addr;
  uvec2 value;  // addcmul / addcdiv's scale, the double's bits
  uint numel;
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int a_strides[kMaxRank];
  int b_strides[kMaxRank];
  int c_strides[kMaxRank];
} p;

double apply(int ia, int ib, int ic) {
  const double b = Doubles(p.b_addr).v[ib];
  const double c = Doubles(p.c_addr).v[ic];
  if (kOp == TERNARY_OP_WHERE) return Bytes(p.a_addr).v[ia] != uint8_t(0) ? b : c;
  const double a = Doubles(p.a_addr).v[ia];
  switch (kOp) {
    // lerp(start a, end b, weight c) in the CPU kernel's two forms, each
    // exact at its end (weight 0 gives start, 1 gives end).
    case TERNARY_OP_LERP: return abs(c) < 0.5LF ? a + c * (b - a) : b - (b - a) * (1.0LF - c);
    case TERNARY_OP_ADDCMUL: return a + scalar_double(p.value) * b * c;
    default: return a + scalar_double(p.value) * b / c;  // TERNARY_OP_ADDCDIV
  }
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    uint rem = i;
    int o = 0, ia = 0, ib = 0, ic = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      const int c = int(rem - q * p.sizes[d]);
      rem = q;
      o += c * p.out_strides[d];
      ia += c * p.a_strides[d];
      ib += c * p.b_strides[d];
      ic += c * p.c_strides[d];
    }
    if (p.rank > 0) {
      o += int(rem) * p.out_strides[0];
      ia += int(rem) * p.a_strides[0];
      ib += int(rem) * p.b_strides[0];
      ic += int(rem) * p.c_strides[0];
    }
    Doubles(p.out_addr).v[o] = apply(ia, ib, ic);
  }
}
