#version 450
// binary.comp for f64 (kernels/binary.cc): out = a (op) b in double, add
// and sub as fma(±alpha, b, a) as the CPU kernel computes them; a and b
// broadcast through stride-0 dims. Needs shaderFloat64.
#include "buffers.glsl"
#include "doubles.glsl"
#include "pointwise_op_constants.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = BINARY_OP_ADD;  // kernels::BinaryOp

const int kMaxRank = 5;  // kBinaryMaxRank in kernels/binary.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 a_addr;
  uvec2 b_addr;
  uvec2 alpha;  // the double's bits
  uint numel;
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int a_strides[kMaxRank];
  int b_strides[kMaxRank];
} p;

void main() {
  const double alpha = scalar_double(p.alpha);
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    uint rem = i;
    int o = 0, ia = 0, ib = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      const int c = int(rem - q * p.sizes[d]);
      rem = q;
      o += c * p.out_strides[d];
      ia += c * p.a_strides[d];
      ib += c * p.b_strides[d];
    }
    if (p.rank > 0) {
      o += int(rem) * p.out_strides[0];
      ia += int(rem) * p.a_strides[0];
      ib += int(rem) * p.b_strides[0];
    }
    const double a = Doubles(p.a_addr).v[ia];
    const double b = Doubles(p.b_addr).v[ib];
    double r;
    switch (kOp) {
      case BINARY_OP_ADD: r = fma(alpha, b, a); break;
      case BINARY_OP_SUB: r = fma(-alpha, b, a); break;
      case BINARY_OP_MUL: r = a * b; break;
      default: r = a / b; break;
    }
    Doubles(p.out_addr).v[o] = r;
  }
}
