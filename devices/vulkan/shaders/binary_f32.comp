#version 450
// out = a (op) b for f32, b scaled by alpha for add and sub; a and b are
// broadcast through stride-0 dims. Needs no optional shader features (no
// 8/16/64-bit types), so it runs on every device the backend accepts.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#include "binary_float_ops.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = BINARY_OP_ADD;  // kernels::BinaryOp

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Float4s { vec4 v[]; };

const int kMaxRank = 5;  // kBinaryMaxRank in kernels/binary.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 a_addr;
  uvec2 b_addr;
  uint numel;
  float alpha;
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int a_strides[kMaxRank];
  int b_strides[kMaxRank];
} p;

// Dense operands (rank 1 with unit strides after coalescing, 16-byte
// aligned, whole vec4s): one 16-byte load per operand and a 16-byte store,
// a quarter of the loop's iterations and no index arithmetic.
bool dense_vec4() {
  return p.rank == 1 && p.out_strides[0] == 1 && p.a_strides[0] == 1 && p.b_strides[0] == 1 &&
         p.numel % 4u == 0u && p.out_addr.x % 16u == 0u && p.a_addr.x % 16u == 0u &&
         p.b_addr.x % 16u == 0u;
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (dense_vec4()) {
    for (uint q = gl_GlobalInvocationID.x; q < p.numel / 4u; q += step) {
      const vec4 a = Float4s(p.a_addr).v[q];
      const vec4 b = Float4s(p.b_addr).v[q];
      vec4 r;
      for (int j = 0; j < 4; ++j) r[j] = binary_float(kOp, a[j], b[j], p.alpha);
      Float4s(p.out_addr).v[q] = r;
    }
    return;
  }
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    // Row-major coordinates from i. Dim 0 needs no division (rem is
    // already below its size), so contiguous operands (rank 1 once
    // coalesced) divide nothing: integer division is slow, above all on
    // CPU drivers such as lavapipe.
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
    const float a = Floats(p.a_addr).v[ia];
    const float b = Floats(p.b_addr).v[ib];
    Floats(p.out_addr).v[o] = binary_float(kOp, a, b, p.alpha);
  }
}
