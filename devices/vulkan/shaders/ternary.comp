#version 450
// out = op(a, b, c) for every element kind of element_kinds.glsl
// (ternary_f32.comp is the f32 shader), broadcast through stride-0 dims;
// op (kernels::TernaryOp's value) and out's kind are specialization
// constants: where (a is the bool condition), lerp and addcdiv
// (floating), addcmul (integers wrap). f16 computes in f32 and rounds
// once at the store, as the CPU kernel.
#include "element_kinds.glsl"
#include "pointwise_op_constants.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = TERNARY_OP_WHERE;  // kernels::TernaryOp
layout(constant_id = 2) const uint kKind = 0;

const int kMaxRank = 4;  // kTernaryMaxRank in kernels/ternary.cc (5 arrays fill 128 bytes)
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 a_addr;
  uvec2 b_addr;
  uvec2 c_addr;
  uvec2 value;  // addcmul / addcdiv's scale, encoded for kKind
  uint numel;
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int a_strides[kMaxRank];
  int b_strides[kMaxRank];
  int c_strides[kMaxRank];
} p;

float float_op(int ia, int ib, int ic) {
  const float b = load_float(kKind, p.b_addr, ib);
  const float c = load_float(kKind, p.c_addr, ic);
  const float a = load_float(kKind, p.a_addr, ia);
  switch (kOp) {
    // lerp(start a, end b, weight c) in the CPU kernel's two forms, each
    // exact at its end (weight 0 gives start, 1 gives end).
    case TERNARY_OP_LERP: return abs(c) < 0.5 ? a + c * (b - a) : b - (b - a) * (1.0 - c);
    case TERNARY_OP_ADDCMUL: return a + scalar_float(p.value) * b * c;
    default: return a + scalar_float(p.value) * b / c;  // TERNARY_OP_ADDCDIV
  }
}

void apply(int o, int ia, int ib, int ic) {
  // where: the condition picks which operand is read at all.
  const bool pick_b = kOp == TERNARY_OP_WHERE && load_bool(p.a_addr, ia);
  const int i_where = pick_b ? ib : ic;
  const uvec2 addr_where = pick_b ? p.b_addr : p.c_addr;
  switch (domain_of(kKind)) {
    case kFloatDomain:
      if (kOp == TERNARY_OP_WHERE) store_float(kKind, p.out_addr, o, load_float(kKind, addr_where, i_where));
      else store_float(kKind, p.out_addr, o, float_op(ia, ib, ic));
      break;
    case kIntDomain:
      if (kOp == TERNARY_OP_WHERE) {
        store_int(kKind, p.out_addr, o, load_int(kKind, addr_where, i_where));
      } else {  // 2, addcmul
        const int a = load_int(kKind, p.a_addr, ia);
        const int b = load_int(kKind, p.b_addr, ib);
        const int c = load_int(kKind, p.c_addr, ic);
        store_int(kKind, p.out_addr, o, a + scalar_int(p.value) * (b * c));
      }
      break;
    default:
      if (kOp == TERNARY_OP_WHERE) {
        store_long(p.out_addr, o, load_long(addr_where, i_where));
      } else {
        const int64_t a = load_long(p.a_addr, ia);
        const int64_t b = load_long(p.b_addr, ib);
        const int64_t c = load_long(p.c_addr, ic);
        store_long(p.out_addr, o, a + scalar_long(p.value) * (b * c));
      }
      break;
  }
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
    apply(o, ia, ib, ic);
  }
}
