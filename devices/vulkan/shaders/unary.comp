#version 450
// out = op(in) for every element kind of element_kinds.glsl, any strides
// (unary_f32.comp is the f32 shader for devices without 8/16/64-bit
// types). Op (kernels::UnaryOp's value) and input kind are specialization
// constants. f16 computes the floating ops in f32 and rounds at the store;
// the predicates (29 logical_not .. 32 isfinite, 44 isneginf, 45 isposinf)
// write bool; integers and
// bool get the ops the CPU kernel defines on them (neg and abs wrap, clamp
// is min(max(x, lo), hi), rounding ops are the identity).
#include "element_kinds.glsl"
#include "float_math.glsl"
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

// kernels::is_predicate: 29 logical_not .. 32 isfinite, 44 isneginf, 45 isposinf.
const bool kPredicate = (kOp >= 29 && kOp <= 32) || kOp >= 44;

bool float_predicate(float x) {
  switch (kOp) {
    case 29: return is_zero(x);  // logical_not (NaN is true, so not-NaN is false)
    case 30: return is_nan(x);
    case 31: return is_inf(x);
    case 32: return !is_nan(x) && !is_inf(x);  // isfinite
    case 44: return floatBitsToUint(x) == 0xff800000u;  // isneginf (bits, see is_inf)
    default: return floatBitsToUint(x) == 0x7f800000u;  // 45, isposinf
  }
}

int int_unary(int x) {
  switch (kOp) {
    case 0: return -x;
    case 1: return x < 0 ? -x : x;
    case 2: return int(0 < x) - int(x < 0);
    case 16: return x < 0 ? 0 : x;
    case 25: return min(max(x, scalar_int(p.p0)), scalar_int(p.p1));
    case 26: return max(x, scalar_int(p.p0));
    case 27: return min(x, scalar_int(p.p0));
    case 28: return kKind == kBool ? x ^ 1 : ~x;
    default: return x;  // 21 floor, 22 ceil, 23 round, 24 trunc
  }
}

int64_t long_unary(int64_t x) {
  switch (kOp) {
    case 0: return -x;
    case 1: return x < 0 ? -x : x;
    case 2: return int64_t(0 < x) - int64_t(x < 0);
    case 16: return x < 0 ? 0 : x;
    case 25: return min(max(x, scalar_long(p.p0)), scalar_long(p.p1));
    case 26: return max(x, scalar_long(p.p0));
    case 27: return min(x, scalar_long(p.p0));
    case 28: return ~x;
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
      if (kPredicate) store_bool(p.out_addr, o, kOp == 29 ? x == 0 : kOp == 32);
      else store_int(kKind, p.out_addr, o, int_unary(x));
      break;
    }
    default: {
      const int64_t x = load_long(p.in_addr, ia);
      if (kPredicate) store_bool(p.out_addr, o, kOp == 29 ? x == 0 : kOp == 32);
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
