#version 450
// out = a (op) b for every element kind of element_kinds.glsl (binary_f32.comp
// is the f32 shader for devices without 8/16/64-bit types), b scaled by
// alpha for add and sub; a and b broadcast through stride-0 dims. Op and
// kind are specialization constants. Floats: add/sub as fma(±alpha, b, a),
// as the CPU kernel (alpha 1 gives the plain sum); integers wrap; bool add
// is a || (alpha && b) and mul a && b (0/1 arithmetic, stored as != 0).
#include "element_kinds.glsl"
#include "pointwise_op_constants.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = BINARY_OP_ADD;  // kernels::BinaryOp
layout(constant_id = 2) const uint kKind = 0;

const int kMaxRank = 5;  // kBinaryMaxRank in kernels/binary.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 a_addr;
  uvec2 b_addr;
  uvec2 alpha;  // encoded for kKind (element_kinds.glsl)
  uint numel;
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int a_strides[kMaxRank];
  int b_strides[kMaxRank];
} p;

void apply(int o, int ia, int ib) {
  switch (domain_of(kKind)) {
    case kFloatDomain: {
      const float a = load_float(kKind, p.a_addr, ia);
      const float b = load_float(kKind, p.b_addr, ib);
      const float alpha = scalar_float(p.alpha);
      float r;
      switch (kOp) {
        case BINARY_OP_ADD: r = fma(alpha, b, a); break;
        case BINARY_OP_SUB: r = fma(-alpha, b, a); break;
        case BINARY_OP_MUL: r = a * b; break;
        default: r = a / b; break;
      }
      store_float(kKind, p.out_addr, o, r);
      break;
    }
    case kIntDomain: {
      const int a = load_int(kKind, p.a_addr, ia);
      const int b = load_int(kKind, p.b_addr, ib);
      const int alpha = scalar_int(p.alpha);
      int r;
      switch (kOp) {
        case BINARY_OP_ADD: r = a + alpha * b; break;
        case BINARY_OP_SUB: r = a - alpha * b; break;
        default: r = a * b; break;  // mul; integer div is not a Binary op
      }
      store_int(kKind, p.out_addr, o, r);
      break;
    }
    default: {
      const int64_t a = load_long(p.a_addr, ia);
      const int64_t b = load_long(p.b_addr, ib);
      const int64_t alpha = scalar_long(p.alpha);
      int64_t r;
      switch (kOp) {
        case BINARY_OP_ADD: r = a + alpha * b; break;
        case BINARY_OP_SUB: r = a - alpha * b; break;
        default: r = a * b; break;
      }
      store_long(p.out_addr, o, r);
      break;
    }
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
    apply(o, ia, ib);
  }
}
