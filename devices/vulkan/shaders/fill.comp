#version 450
// out[...] = a bit pattern of 1, 2, 4 or 8 bytes, over any strides: the
// host converts the value to the tensor's dtype, so one shader fills every
// dtype.
#include "buffers.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kItemsize = 4;  // bytes per element

const int kMaxRank = 8;  // kFillMaxRank in kernels/fill.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 pattern;  // low word first
  uint numel;
  uint rank;
  uint sizes[kMaxRank];
  int strides[kMaxRank];  // in elements
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    // Row-major coordinates from i. Dim 0 needs no division (rem is
    // already below its size), so a coalesced contiguous tensor (rank 1)
    // divides nothing: integer division is slow, above all on CPU drivers.
    uint rem = i;
    int offset = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      offset += int(rem - q * p.sizes[d]) * p.strides[d];
      rem = q;
    }
    if (p.rank > 0) offset += int(rem) * p.strides[0];
    if (kItemsize == 1) {
      Bytes(p.out_addr).v[offset] = uint8_t(p.pattern.x);
    } else if (kItemsize == 2) {
      Shorts(p.out_addr).v[offset] = uint16_t(p.pattern.x);
    } else if (kItemsize == 4) {
      Words(p.out_addr).v[offset] = p.pattern.x;
    } else {
      DoubleWords(p.out_addr).v[offset] = p.pattern;
    }
  }
}
