#version 450
// out = op(a, b, c) for f32 out, broadcast through stride-0 dims; the op is
// a specialization constant (kernels::TernaryOp's value): where (a is the
// bool condition, one byte), lerp, addcmul, addcdiv (a, b, c f32).
// Reads bytes for where, so it needs 8-bit storage (kernels/ternary.cc
// checks).
#include "buffers.glsl"
#include "ternary_float_ops.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = TERNARY_OP_WHERE;  // kernels::TernaryOp

const int kMaxRank = 4;  // kTernaryMaxRank in kernels/ternary.cc (5 arrays fill 128 bytes)
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 a_addr;
  uvec2 b_addr;
  uvec2 c_addr;
  uint numel;
  float value;  // addcmul / addcdiv's scale
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int a_strides[kMaxRank];
  int b_strides[kMaxRank];
  int c_strides[kMaxRank];
} p;

float apply(int ia, int ib, int ic) {
  const float b = Floats(p.b_addr).v[ib];
  const float c = Floats(p.c_addr).v[ic];
  if (kOp == TERNARY_OP_WHERE) return Bytes(p.a_addr).v[ia] != uint8_t(0) ? b : c;
  return ternary_float(kOp, Floats(p.a_addr).v[ia], b, c, p.value);
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    // Row-major coordinates from i; dim 0 needs no division (see
    // binary_f32.comp).
    uint rem = i;
    int o = 0, ia = 0, ib = 0, ic = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      const int k = int(rem - q * p.sizes[d]);
      rem = q;
      o += k * p.out_strides[d];
      ia += k * p.a_strides[d];
      ib += k * p.b_strides[d];
      ic += k * p.c_strides[d];
    }
    if (p.rank > 0) {
      o += int(rem) * p.out_strides[0];
      ia += int(rem) * p.a_strides[0];
      ib += int(rem) * p.b_strides[0];
      ic += int(rem) * p.c_strides[0];
    }
    Floats(p.out_addr).v[o] = apply(ia, ib, ic);
  }
}
