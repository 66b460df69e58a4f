#version 450
// self[i] = value where mask[i] (bool, broadcast through stride-0 dims),
// any strides. value arrives as the raw bits of self's dtype, so one
// pipeline per element size (kElemSize bytes) serves every dtype.
#include "buffers.glsl"
#include "index_elements.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kElemSize = 4;

const int kMaxRank = 8;  // kMaskedFillMaxRank in kernels/masked_fill.cc
layout(push_constant, std430) uniform Params {
  uvec2 self_addr;
  uvec2 mask_addr;
  uvec2 value;  // raw bits, low word first
  uint numel;
  uint rank;
  uint sizes[kMaxRank];
  int self_strides[kMaxRank];  // in elements
  int mask_strides[kMaxRank];
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    uint rem = i;
    int so = 0, mo = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      const int c = int(rem - q * p.sizes[d]);
      rem = q;
      so += c * p.self_strides[d];
      mo += c * p.mask_strides[d];
    }
    if (p.rank > 0) {
      so += int(rem) * p.self_strides[0];
      mo += int(rem) * p.mask_strides[0];
    }
    if (Bytes(p.mask_addr).v[mo] != uint8_t(0)) store_bits(kElemSize, p.self_addr, so, p.value);
  }
}
