#version 450
// out = op(in) for f32 in and out, any strides on both sides. The op is a
// specialization constant (kernels::UnaryOp's value), so each op compiles
// to its own branch-free pipeline. Needs no optional shader features; the
// bool-valued predicates are in predicate_f32.comp, which needs 8-bit
// storage.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

#include "float_math.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;  // kernels::UnaryOp

layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };

const int kMaxRank = 8;  // kUnaryMaxRank in kernels/unary.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 in_addr;
  uint numel;
  float p0;  // clamp bounds
  float p1;
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int in_strides[kMaxRank];
} p;

#include "unary_float_ops.glsl"

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    // Row-major coordinates from i; dim 0 needs no division (see
    // binary_f32.comp).
    uint rem = i;
    int o = 0, ia = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      const int c = int(rem - q * p.sizes[d]);
      rem = q;
      o += c * p.out_strides[d];
      ia += c * p.in_strides[d];
    }
    if (p.rank > 0) {
      o += int(rem) * p.out_strides[0];
      ia += int(rem) * p.in_strides[0];
    }
    Floats(p.out_addr).v[o] = unary_float(kOp, Floats(p.in_addr).v[ia], p.p0, p.p1);
  }
}
