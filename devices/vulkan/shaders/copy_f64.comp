#version 450
// copy.comp's conversions to and from f64 (kernels/copy.cc, CopyKind):
// kind 13 (f64) on one side and any converted kind of copy.comp on the
// other, over any strides. As the CPU device's casts: f64 to f16 and bf16
// through float (rounding twice), to integers by truncation (to the narrow
// ones through int, as x86 does it), to bool on the bits (NaN is true);
// integers to f64 rounded to nearest. Needs shaderFloat64.
#include "buffers.glsl"
#include "doubles.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kDstKind = 0;
layout(constant_id = 2) const uint kSrcKind = 0;

const int kMaxRank = 8;  // kCopyMaxRank in kernels/copy.cc
layout(push_constant, std430) uniform Params {
  uvec2 dst_addr;
  uvec2 src_addr;
  uint numel;
  uint rank;
  uint sizes[kMaxRank];
  int dst_strides[kMaxRank];  // in elements
  int src_strides[kMaxRank];
} p;

const uint kF32 = 0, kF16 = 1, kI32 = 2, kI64 = 3, kBool = 4;
const uint kU8 = 9, kI8 = 10, kI16 = 11, kBF16 = 12, kF64 = 13;

double load_double(int at) {
  switch (kSrcKind) {
    case kF64: return Doubles(p.src_addr).v[at];
    case kF32: return double(Floats(p.src_addr).v[at]);
    case kF16: return double(float(Halfs(p.src_addr).v[at]));
    case kBF16: return double(uintBitsToFloat(uint(Shorts(p.src_addr).v[at]) << 16));
    case kI32: return double(Ints(p.src_addr).v[at]);
    case kI64: return double_of_long(Int64s(p.src_addr).v[at]);
    case kI8: return double(int(SignedBytes(p.src_addr).v[at]));
    case kI16: return double(int(Int16s(p.src_addr).v[at]));
    default: return double(uint(Bytes(p.src_addr).v[at]));  // u8, bool
  }
}

void store_double(int at, double v) {
  switch (kDstKind) {
    case kF64: Doubles(p.dst_addr).v[at] = v; break;
    case kF32: Floats(p.dst_addr).v[at] = float_of_double(v); break;
    case kF16: Shorts(p.dst_addr).v[at] = uint16_t(f16_bits_of(float_of_double(v))); break;
    case kBF16: Shorts(p.dst_addr).v[at] = uint16_t(bf16_bits_of(float_of_double(v))); break;
    case kI32: Ints(p.dst_addr).v[at] = int(v); break;
    case kI64: Int64s(p.dst_addr).v[at] = int64_t(v); break;
    case kU8: Bytes(p.dst_addr).v[at] = uint8_t(int(v)); break;
    case kI8: SignedBytes(p.dst_addr).v[at] = int8_t(int(v)); break;
    case kI16: Int16s(p.dst_addr).v[at] = int16_t(int(v)); break;
    default: Bytes(p.dst_addr).v[at] = uint8_t(double_is_nonzero(v) ? 1 : 0); break;  // bool
  }
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    // Row-major coordinates from i; dim 0 needs no division (see fill.comp).
    uint rem = i;
    int d_at = 0;
    int s_at = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      const int c = int(rem - q * p.sizes[d]);
      rem = q;
      d_at += c * p.dst_strides[d];
      s_at += c * p.src_strides[d];
    }
    if (p.rank > 0) {
      d_at += int(rem) * p.dst_strides[0];
      s_at += int(rem) * p.src_strides[0];
    }
    store_double(d_at, load_double(s_at));
  }
}
