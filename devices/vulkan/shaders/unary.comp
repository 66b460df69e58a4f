#version 450
// out = op(in) for every element kind of element_kinds.glsl, any strides
// (unary_f32.comp is the f32 shader for devices without 8/16/64-bit
// types). Op (kernels::UnaryOp's value) and input kind are specialization
// constants. f16 computes the floating ops in f32 and rounds at the store;
// the predicates (logical_not, isnan, isinf, isfinite, isneginf, isposinf)
// write bool; integers and
// bool get the ops the CPU kernel defines on them (neg and abs wrap, clamp
// is min(max(x, lo), hi), rounding ops are the identity).
#include "element_kinds.glsl"
#include "float_math.glsl"
#include "pointwise_op_constants.glsl"
#include "unary_float_ops.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;  // kernels::UnaryOp
layout(constant_id = 2) const uint kKind = 0;

const int kMaxRank = 7;  // kUnaryTypedMaxRank in kernels/unary.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 in_addr;
  uvec2 p0;  // clamp bounds, encoded for kKind (element_kinds.glsl)
  uvec2 p1;
  uint numel;
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int in_strides[kMaxRank];
} p;

const bool kPredicate = UNARY_OP_IS_PREDICATE(kOp);  // kernels::is_predicate

bool float_predicate(float x) {
  switch (kOp) {
    case UNARY_OP_LOGICAL_NOT: return is_zero(x);  // logical_not (NaN is true, so not-NaN is false)
    case UNARY_OP_ISNAN: return is_nan(x);
    case UNARY_OP_ISINF: return is_inf(x);
    case UNARY_OP_ISFINITE: return !is_nan(x) && !is_inf(x);  // isfinite
    case UNARY_OP_ISNEGINF: return floatBitsToUint(x) == 0xff800000u;  // isneginf (bits, see is_inf)
    default: return floatBitsToUint(x) == 0x7f800000u;  // UNARY_OP_ISPOSINF
  }
}

int int_unary(int x) {
  switch (kOp) {
    case UNARY_OP_NEG: return -x;
    case UNARY_OP_ABS: return x < 0 ? -x : x;
    case UNARY_OP_SIGN: return int(0 < x) - int(x < 0);
    case UNARY_OP_RELU: return x < 0 ? 0 : x;
    case UNARY_OP_CLAMP: return min(max(x, scalar_int(p.p0)), scalar_int(p.p1));
    case UNARY_OP_CLAMP_MIN: return max(x, scalar_int(p.p0));
    case UNARY_OP_CLAMP_MAX: return min(x, scalar_int(p.p0));
    case UNARY_OP_BITWISE_NOT: return kKind == kBool ? x ^ 1 : ~x;
    default: return x;  // floor, ceil, round, trunc
  }
}

int64_t long_unary(int64_t x) {
  switch (kOp) {
    case UNARY_OP_NEG: return -x;
    case UNARY_OP_ABS: return x < 0 ? -x : x;
    case UNARY_OP_SIGN: return int64_t(0 < x) - int64_t(x < 0);
    case UNARY_OP_RELU: return x < 0 ? 0 : x;
    case UNARY_OP_CLAMP: return min(max(x, scalar_long(p.p0)), scalar_long(p.p1));
    case UNARY_OP_CLAMP_MIN: return max(x, scalar_long(p.p0));
    case UNARY_OP_CLAMP_MAX: return min(x, scalar_long(p.p0));
    case UNARY_OP_BITWISE_NOT: return ~x;
    default: return x;
  }
}

void apply(int o, int ia) {
  switch (domain_of(kKind)) {
    case kFloatDomain: {
      const float x = load_float(kKind, p.in_addr, ia);
      if (kPredicate) store_bool(p.out_addr, o, float_predicate(x));
      else store_float(kKind, p.out_addr, o,
                       unary_float(kOp, x, scalar_float(p.p0), scalar_float(p.p1)));
      break;
    }
    case kIntDomain: {
      const int x = load_int(kKind, p.in_addr, ia);
      // Integers are never NaN or infinite.
      if (kPredicate) store_bool(p.out_addr, o, kOp == UNARY_OP_LOGICAL_NOT ? x == 0 : kOp == UNARY_OP_ISFINITE);
      else store_int(kKind, p.out_addr, o, int_unary(x));
      break;
    }
    default: {
      const int64_t x = load_long(p.in_addr, ia);
      if (kPredicate) store_bool(p.out_addr, o, kOp == UNARY_OP_LOGICAL_NOT ? x == 0 : kOp == UNARY_OP_ISFINITE);
      else store_long(p.out_addr, o, long_unary(x));
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
    apply(o, ia);
  }
}
