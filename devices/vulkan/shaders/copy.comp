#version 450
// dst = src converted to dst's dtype, over any strides on both sides. Kinds
// (specialization constants; kernels/copy.cc, CopyKind): 0 f32, 1 f16, 2 i32, 3 i64, 4 bool,
// 9 u8, 10 i8, 11 i16, 12 bf16; 5..8 copy 1, 2, 4 or 8 raw bytes per element (same
// dtype on both sides, any dtype). Floats convert to integers by
// truncation, as C++ casts do (to the narrow integers through int, as x86
// does it); integers to narrower ones wrap.
#include "buffers.glsl"
#include "half_rounding.glsl"

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
const uint kRaw1 = 5, kRaw2 = 6, kRaw4 = 7, kRaw8 = 8;
const uint kU8 = 9, kI8 = 10, kI16 = 11, kBF16 = 12;

// bf16 is the top half of an f32; rounding to it is to nearest even, NaN
// kept quiet (BFloat16::from_float).
uint16_t float_to_bf16(float v) {
  const uint x = floatBitsToUint(v);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

void store_float(int at, float v) {
  switch (kDstKind) {
    case kF32: Floats(p.dst_addr).v[at] = v; break;
    case kF16: Shorts(p.dst_addr).v[at] = uint16_t(f16_bits_of(v)); break;
    case kI32: Ints(p.dst_addr).v[at] = int(v); break;
    case kI64: Int64s(p.dst_addr).v[at] = int64_t(v); break;
    case kU8: Bytes(p.dst_addr).v[at] = uint8_t(int(v)); break;
    case kBF16: Shorts(p.dst_addr).v[at] = float_to_bf16(v); break;
    case kI8: SignedBytes(p.dst_addr).v[at] = int8_t(int(v)); break;
    case kI16: Int16s(p.dst_addr).v[at] = int16_t(int(v)); break;
    // bool: non-zero, NaN included, on the bits (a driver may evaluate
    // v != 0 as if v could not be NaN).
    default: Bytes(p.dst_addr).v[at] = uint8_t((floatBitsToUint(v) & 0x7fffffffu) != 0u ? 1 : 0); break;
  }
}

void store_int(int at, int64_t v) {
  switch (kDstKind) {
    case kF32: Floats(p.dst_addr).v[at] = float(v); break;
    case kF16: Shorts(p.dst_addr).v[at] = uint16_t(f16_bits_of(float(v))); break;
    case kI32: Ints(p.dst_addr).v[at] = int(v); break;
    case kI64: Int64s(p.dst_addr).v[at] = v; break;
    case kU8: Bytes(p.dst_addr).v[at] = uint8_t(v); break;
    case kBF16: Shorts(p.dst_addr).v[at] = float_to_bf16(float(v)); break;
    case kI8: SignedBytes(p.dst_addr).v[at] = int8_t(v); break;
    case kI16: Int16s(p.dst_addr).v[at] = int16_t(v); break;
    default: Bytes(p.dst_addr).v[at] = uint8_t(v != 0 ? 1 : 0); break;
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
    switch (kSrcKind) {
      case kF32: store_float(d_at, Floats(p.src_addr).v[s_at]); break;
      case kF16: store_float(d_at, float(Halfs(p.src_addr).v[s_at])); break;
      case kBF16: store_float(d_at, uintBitsToFloat(uint(Shorts(p.src_addr).v[s_at]) << 16)); break;
      case kI32: store_int(d_at, int64_t(Ints(p.src_addr).v[s_at])); break;
      case kI64: store_int(d_at, Int64s(p.src_addr).v[s_at]); break;
      case kBool:
      case kU8: store_int(d_at, int64_t(Bytes(p.src_addr).v[s_at])); break;
      case kI8: store_int(d_at, int64_t(SignedBytes(p.src_addr).v[s_at])); break;
      case kI16: store_int(d_at, int64_t(Int16s(p.src_addr).v[s_at])); break;
      case kRaw1: Bytes(p.dst_addr).v[d_at] = Bytes(p.src_addr).v[s_at]; break;
      case kRaw2: Shorts(p.dst_addr).v[d_at] = Shorts(p.src_addr).v[s_at]; break;
      case kRaw4: Words(p.dst_addr).v[d_at] = Words(p.src_addr).v[s_at]; break;
      default: DoubleWords(p.dst_addr).v[d_at] = DoubleWords(p.src_addr).v[s_at]; break;
    }
  }
}
