#version 450
// arange (kOp 0) of floating dtypes and linspace (kOp 1) of every dtype but
// bool into a 1-D out of kOutDType (DType's value), computed in double as
// the CPU kernels do (start + i * step as one fused multiply-add,
// double_fma, as PyTorch's CPU kernels compute it), with their rounding:
// f64 stored, f32 rounded to nearest (f16 and bf16 through f32, as the
// CPU's casts), integers truncated to int64 and then wrapped. So the
// results are the CPU's bit for bit. Needs shaderFloat64.
#include "buffers.glsl"
#include "doubles.glsl"
#include "doubles_math.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;
layout(constant_id = 2) const uint kOutDType = 8;

layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 start;  // the doubles' bits
  uvec2 step;
  uvec2 end;
  uint numel;
  int stride;   // in elements
  uint half_n;  // linspace: i < half_n counts from start, the rest from end
} p;

void store_value(int o, double v) {
  switch (kOutDType) {
    case kDTypeF64: Doubles(p.out_addr).v[o] = v; break;
    case kDTypeF32: Floats(p.out_addr).v[o] = float_of_double(v); break;
    case kDTypeF16: Shorts(p.out_addr).v[o] = uint16_t(f16_bits_of(float_of_double(v))); break;
    case kDTypeBF16: Shorts(p.out_addr).v[o] = uint16_t(bf16_bits_of(float_of_double(v))); break;
    default: store_integer(kOutDType, p.out_addr, o, int64_t(v)); break;
  }
}

void main() {
  const double start = scalar_double(p.start);
  const double step = scalar_double(p.step);
  const double end = scalar_double(p.end);
  const uint stride_all = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += stride_all) {
    const double v = kOp == 0 || i < p.half_n || p.numel == 1u
                         ? double_fma(double(i), step, start)
                         : double_fma(-step, double(p.numel - 1u - i), end);
    store_value(int(i) * p.stride, v);
  }
}
