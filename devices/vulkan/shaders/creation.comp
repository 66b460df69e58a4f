#version 450
// arange (kOp 0) and linspace (kOp 1) into a 1-D out of kOutDType
// (DType's value). Floating values come from double-float arithmetic
// (double_float.glsl) standing in for the CPU kernels' double: the float
// nearest to it is the CPU's result except within about 2^-48 of a
// rounding boundary. Integer arange is exact int64 arithmetic, wrapping
// as the CPU's; integer linspace would truncate the double-float value
// (kernels/creation.cc runs it in creation_f64.comp, or stages it, as
// off-by-one risks). Devices with shaderFloat64 take floating values there
// too.
#include "buffers.glsl"
#include "dtype_access.glsl"
#include "double_float.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;
layout(constant_id = 2) const uint kOutDType = 8;

layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 start_int;  // arange of integers: int64 start and step
  uvec2 step_int;
  uint numel;
  int stride;       // in elements
  uint half_n;      // linspace: i < half_n counts from start, the rest from end
  float start_hi, start_lo;
  float step_hi, step_lo;
  float end_hi, end_lo;
} p;

int64_t to_int64(uvec2 v) { return int64_t((uint64_t(v.y) << 32) | uint64_t(v.x)); }

void store_float(int o, DoubleFloat v) {
  const float f = v.hi + v.lo;
  switch (kOutDType) {
    case kDTypeF16: Shorts(p.out_addr).v[o] = uint16_t(f16_bits_of(f)); break;
    case kDTypeBF16: Shorts(p.out_addr).v[o] = uint16_t(bf16_bits_of(f)); break;
    default: Floats(p.out_addr).v[o] = f; break;  // f32
  }
}

void main() {
  const bool floating = kOutDType == kDTypeF16 || kOutDType == kDTypeBF16 || kOutDType == kDTypeF32;
  const DoubleFloat start = DoubleFloat(p.start_hi, p.start_lo);
  const DoubleFloat step = DoubleFloat(p.step_hi, p.step_lo);
  const DoubleFloat end = DoubleFloat(p.end_hi, p.end_lo);
  const uint stride_all = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += stride_all) {
    const int o = int(i) * p.stride;
    if (kOp == 0 && !floating) {
      // int64 arithmetic, wrapping like the CPU's wrap_add / wrap_mul.
      store_integer(kOutDType, p.out_addr, o, to_int64(p.start_int) + int64_t(i) * to_int64(p.step_int));
      continue;
    }
    DoubleFloat v;
    if (kOp == 0 || i < p.half_n || p.numel == 1u) {
      v = df_add(start, df_mul_uint(step, i));
    } else {
      v = df_add(end, df_neg(df_mul_uint(step, p.numel - 1u - i)));
    }
    if (floating) {
      store_float(o, v);
    } else {
      store_integer(kOutDType, p.out_addr, o, df_trunc(v));
    }
  }
}
