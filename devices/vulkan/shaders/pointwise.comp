#version 450
// out = a (op) b for every element kind of element_kinds.glsl and every
// op of kernels::PointwiseBinaryOp (pointwise_f32.comp and compare_f32.comp
// are the f32 shaders of the ops they cover); a and b broadcast through
// stride-0 dims. Op and input kind are specialization constants; the
// comparisons and logical ops write bool, the others the input kind. Semantics are the CPU kernel's:
// - floats: rounding divisions from C's fmod with each step rounded to the
//   storage precision (f16) and each quotient rounded correctly (c_div: a
//   driver's a / b may be 2.5 ulp off, which moves floor and trunc across
//   an integer), remainder with the divisor's sign, C's fmod, pow and
//   atan2, NaN-propagating maximum/minimum, logaddexp; computed in f32.
// - integers: C division and remainder with Python's sign rules (min / -1
//   wraps), fmod with C's (the dividend's sign), pow by squaring (1/a truncated for a negative exponent), shifts
//   of at least the width (or negative) give 0, or the sign for >>. A zero
//   divisor writes 1 to the flag word the kernel checks afterwards.
#include "element_kinds.glsl"
#include "float_math.glsl"
#include "double_float.glsl"
#include "division.glsl"
#include "pointwise_op_constants.glsl"
#include "pointwise_float_ops.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;  // kernels::PointwiseBinaryOp
layout(constant_id = 2) const uint kKind = 0;

const int kMaxRank = 5;  // kPointwiseMaxRank in kernels/pointwise_binary.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 a_addr;
  uvec2 b_addr;
  uvec2 zero_divisor_flag;  // an int, set to 1 on integer division by zero
  uvec2 p0;                 // threshold_backward's threshold, encoded for kKind
  uint numel;
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int a_strides[kMaxRank];
  int b_strides[kMaxRank];
} p;

const bool kToBool = POINTWISE_BINARY_OP_IS_BOOL_VALUED(kOp);  // kernels::is_bool_valued

// --- float domain

float r16(float v) { return in_storage_precision(kKind, v); }

// The sign of a / b: exact whatever the driver's division.
float signed_zero_of_quotient(float a, float b) {
  return uintBitsToFloat((floatBitsToUint(a) ^ floatBitsToUint(b)) & 0x80000000u);
}

float floor_div_float(float a, float b) {
  if (b == 0.0) return r16(a / b);
  const float mod = r16(c_fmod(a, b));
  if (is_nan(mod)) return mod;  // NaN or infinite a, NaN b: NaN, as the CPU's steps give
  float div = r16(c_div(r16(a - mod), b));
  if (mod != 0.0 && ((b < 0.0) != (mod < 0.0))) div = r16(div - 1.0);
  if (div == 0.0) return signed_zero_of_quotient(a, b);
  float q = floor(div);
  if (r16(div - q) > 0.5) q = r16(q + 1.0);  // (a - mod) / b may land just below an integer
  return q;
}

float remainder_float(float a, float b) {
  float m = c_fmod(a, b);
  if (m != 0.0 && ((b < 0.0) != (m < 0.0))) m += b;
  return m;
}

float float_op(float a, float b) {
  switch (kOp) {
    case POINTWISE_BINARY_OP_DIV_TRUNC: return trunc(r16(c_div(a, b)));
    case POINTWISE_BINARY_OP_DIV_FLOOR: return floor_div_float(a, b);
    case POINTWISE_BINARY_OP_REMAINDER: return remainder_float(a, b);
    case POINTWISE_BINARY_OP_POW: return c_pow(a, b);
    case POINTWISE_BINARY_OP_ATAN2: return c_atan2(a, b);
    default: return pointwise_float(kOp, a, b, scalar_float(p.p0));
  }
}

// NaN compares unequal to everything (tested through the bits, see
// compare_f32.comp).
bool float_compare(float a, float b) {
  if (kOp == POINTWISE_BINARY_OP_LOGICAL_AND || kOp == POINTWISE_BINARY_OP_LOGICAL_OR ||
      kOp == POINTWISE_BINARY_OP_LOGICAL_XOR) {  // logical: NaN is nonzero, hence true
    const bool x = a != 0.0 || is_nan(a), y = b != 0.0 || is_nan(b);
    return kOp == POINTWISE_BINARY_OP_LOGICAL_AND ? x && y
         : kOp == POINTWISE_BINARY_OP_LOGICAL_OR ? x || y : x != y;
  }
  if (is_nan(a) || is_nan(b)) return kOp == POINTWISE_BINARY_OP_NE;  // only ne holds
  switch (kOp) {
    case POINTWISE_BINARY_OP_EQ: return a == b;
    case POINTWISE_BINARY_OP_NE: return !(a == b);
    case POINTWISE_BINARY_OP_LT: return a < b;
    case POINTWISE_BINARY_OP_LE: return a <= b;
    case POINTWISE_BINARY_OP_GT: return a > b;
    default: return a >= b;  // ge
  }
}

// --- integer domains (int for 8..32-bit kinds and bool, long for i64);
// the same code for both through a macro, since GLSL has no templates.

void flag_zero_divisor() { Ints(p.zero_divisor_flag).v[0] = 1; }

#define DEFINE_INTEGER_OPS(T, NAME, SCALAR)                                             \
  T NAME##_pow(T base, T e) {                                                           \
    if (e < T(0)) return base == T(1) ? T(1) : (base == T(-1) ? ((e & T(1)) != T(0) ? T(-1) : T(1)) : T(0)); \
    T result = T(1);                                                                    \
    while (e != T(0)) {                                                                 \
      if ((e & T(1)) != T(0)) result *= base;                                           \
      base *= base;                                                                     \
      e >>= T(1);                                                                       \
    }                                                                                   \
    return result;                                                                      \
  }                                                                                     \
  T NAME##_op(T a, T b) {                                                               \
    const T bits = T(bits_of(kKind));                                                   \
    switch (kOp) {                                                                      \
      case POINTWISE_BINARY_OP_DIV_TRUNC:                                               \
      case POINTWISE_BINARY_OP_DIV_FLOOR:                                               \
      case POINTWISE_BINARY_OP_REMAINDER:                                               \
      case POINTWISE_BINARY_OP_FMOD: {                                                  \
        if (b == T(0)) {                                                                \
          flag_zero_divisor();                                                          \
          return T(0);                                                                  \
        }                                                                               \
        if (b == T(-1)) return kOp == POINTWISE_BINARY_OP_REMAINDER || kOp == POINTWISE_BINARY_OP_FMOD ? T(0) : -a; /* min / -1 overflows */ \
        const T q = a / b;                                                              \
        const T r = a - q * b;                                                          \
        if (kOp == POINTWISE_BINARY_OP_FMOD) return r; /* fmod: C's %, the dividend's sign */ \
        const bool signs_differ = r != T(0) && ((r < T(0)) != (b < T(0)));              \
        if (kOp == POINTWISE_BINARY_OP_DIV_TRUNC) return q;                             \
        if (kOp == POINTWISE_BINARY_OP_DIV_FLOOR) return signs_differ ? q - T(1) : q;   \
        return signs_differ ? r + b : r;                                                \
      }                                                                                 \
      case POINTWISE_BINARY_OP_POW: return NAME##_pow(a, b);                            \
      case POINTWISE_BINARY_OP_MAXIMUM: return a < b ? b : a;                           \
      case POINTWISE_BINARY_OP_MINIMUM: return b < a ? b : a;                           \
      case POINTWISE_BINARY_OP_BITWISE_AND: return a & b;                               \
      case POINTWISE_BINARY_OP_BITWISE_OR: return a | b;                                \
      case POINTWISE_BINARY_OP_BITWISE_XOR: return a ^ b;                               \
      case POINTWISE_BINARY_OP_SHIFT_LEFT: return b < T(0) || b >= bits ? T(0) : a << b; \
      case POINTWISE_BINARY_OP_SHIFT_RIGHT: return b < T(0) || b >= bits ? (a < T(0) ? T(-1) : T(0)) : a >> b; \
      default: return b <= SCALAR(p.p0) ? T(0) : a; /* threshold_backward */            \
    }                                                                                   \
  }                                                                                     \
  bool NAME##_compare(T a, T b) {                                                       \
    switch (kOp) {                                                                      \
      case POINTWISE_BINARY_OP_EQ: return a == b;                                       \
      case POINTWISE_BINARY_OP_NE: return a != b;                                       \
      case POINTWISE_BINARY_OP_LT: return a < b;                                        \
      case POINTWISE_BINARY_OP_LE: return a <= b;                                       \
      case POINTWISE_BINARY_OP_GT: return a > b;                                        \
      case POINTWISE_BINARY_OP_GE: return a >= b;                                       \
      case POINTWISE_BINARY_OP_LOGICAL_AND: return a != T(0) && b != T(0);              \
      case POINTWISE_BINARY_OP_LOGICAL_OR: return a != T(0) || b != T(0);               \
      default: return (a != T(0)) != (b != T(0));                                       \
    }                                                                                   \
  }

DEFINE_INTEGER_OPS(int, int, scalar_int)
DEFINE_INTEGER_OPS(int64_t, long, scalar_long)

void apply(int o, int ia, int ib) {
  switch (domain_of(kKind)) {
    case kFloatDomain: {
      const float a = load_float(kKind, p.a_addr, ia);
      const float b = load_float(kKind, p.b_addr, ib);
      if (kToBool) store_bool(p.out_addr, o, float_compare(a, b));
      else store_float(kKind, p.out_addr, o, float_op(a, b));
      break;
    }
    case kIntDomain: {
      const int a = load_int(kKind, p.a_addr, ia);
      const int b = load_int(kKind, p.b_addr, ib);
      if (kToBool) store_bool(p.out_addr, o, int_compare(a, b));
      else store_int(kKind, p.out_addr, o, int_op(a, b));
      break;
    }
    default: {
      const int64_t a = load_long(p.a_addr, ia);
      const int64_t b = load_long(p.b_addr, ib);
      if (kToBool) store_bool(p.out_addr, o, long_compare(a, b));
      else store_long(p.out_addr, o, long_op(a, b));
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
