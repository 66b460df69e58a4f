#version 450
// out = pred(in): bool out (one byte, 0 or 1) from f32 in, any strides;
// the predicates of kernels::UnaryOp (logical_not, isnan, isinf,
// isfinite, isneginf, isposinf) as a specialization constant. Writes bytes, so it needs 8-bit
// storage (kernels/unary.cc checks).
#include "buffers.glsl"
#include "float_math.glsl"
#include "pointwise_op_constants.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = UNARY_OP_LOGICAL_NOT;  // kernels::UnaryOp

const int kMaxRank = 8;  // kUnaryMaxRank in kernels/unary.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 in_addr;
  uint numel;
  float p0;  // unused: the layout of unary_f32.comp's
  float p1;
  uint rank;
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int in_strides[kMaxRank];
} p;

bool apply(float x) {
  switch (kOp) {
    case UNARY_OP_LOGICAL_NOT: return is_zero(x);  // logical_not (NaN is true, so not-NaN is false)
    case UNARY_OP_ISNAN: return is_nan(x);
    case UNARY_OP_ISINF: return is_inf(x);
    case UNARY_OP_ISFINITE: return !is_nan(x) && !is_inf(x);  // isfinite
    case UNARY_OP_ISNEGINF: return floatBitsToUint(x) == 0xff800000u;  // isneginf (bits, see is_inf)
    default: return floatBitsToUint(x) == 0x7f800000u;  // UNARY_OP_ISPOSINF
  }
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
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
    Bytes(p.out_addr).v[o] = uint8_t(apply(Floats(p.in_addr).v[ia]) ? 1 : 0);
  }
}
