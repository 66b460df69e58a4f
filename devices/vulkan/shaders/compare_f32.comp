#version 450
// out = a (cmp) b: bool out (one byte, 0 or 1) from f32 a and b, which are
// broadcast through stride-0 dims. The comparison (kernels::
// PointwiseBinaryOp's value: eq, ne, lt, le, gt, ge) is a
// specialization constant. NaN compares unequal to everything, as IEEE and
// the CPU kernel; tested through the bits, since drivers may treat the
// unordered comparisons loosely. Writes bytes, so it needs 8-bit storage
// (kernels/pointwise_binary.cc checks).
#include "buffers.glsl"
#include "float_math.glsl"
#include "pointwise_op_constants.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = POINTWISE_BINARY_OP_EQ;  // kernels::PointwiseBinaryOp

const int kMaxRank = 5;  // kCompareMaxRank in kernels/pointwise_binary.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 a_addr;
  uvec2 b_addr;
  uint numel;
  float p0;  // unused: the layout of pointwise_f32.comp's
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int a_strides[kMaxRank];
  int b_strides[kMaxRank];
} p;

bool compare(float a, float b) {
  if (is_nan(a) || is_nan(b)) return kOp == POINTWISE_BINARY_OP_NE;  // only ne holds
  switch (kOp) {
    case POINTWISE_BINARY_OP_EQ: return a == b;
    case POINTWISE_BINARY_OP_NE: return !(a == b);
    case POINTWISE_BINARY_OP_LT: return a < b;
    case POINTWISE_BINARY_OP_LE: return a <= b;
    case POINTWISE_BINARY_OP_GT: return a > b;
    default: return a >= b;  // 23
  }
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    // Row-major coordinates from i; dim 0 needs no division (see
    // binary_f32.comp).
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
    const bool r = compare(Floats(p.a_addr).v[ia], Floats(p.b_addr).v[ib]);
    Bytes(p.out_addr).v[o] = uint8_t(r ? 1 : 0);
  }
}
