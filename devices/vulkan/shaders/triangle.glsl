// tril / triu: out = in, with the elements below (kUpper) or above (not
// kUpper) the diagonal of the last two dims set to zero (all-zero bits,
// +0 for floats as the CPU's convert<T>(0)). Raw kElemSize-byte elements,
// so every dtype; out may be in (each invocation reads then writes its
// own element). The row and column come from the flat row-major index,
// the addresses from the coalesced layout.
#include "buffers.glsl"
#include "index_elements.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kElemSize = 4;
layout(constant_id = 2) const bool kUpper = false;

const int kMaxRank = 6;  // kTriangleMaxRank in kernels/triangle.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 in_addr;
  uint numel;
  uint rank;
  uint rows;
  uint cols;
  int diagonal;  // clamped to [-rows, cols] (same result)
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int in_strides[kMaxRank];
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    uint rem = i;
    int o = 0, s = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      const int c = int(rem - q * p.sizes[d]);
      rem = q;
      o += c * p.out_strides[d];
      s += c * p.in_strides[d];
    }
    if (p.rank > 0) {
      o += int(rem) * p.out_strides[0];
      s += int(rem) * p.in_strides[0];
    }
    const uint row_index = i / p.cols;
    const int col = int(i - row_index * p.cols);
    const int row = int(row_index % p.rows);
    const bool keep = kUpper ? col - row >= p.diagonal : col - row <= p.diagonal;
    if (keep) {
      move_element(kElemSize, p.out_addr, o, p.in_addr, s);
    } else {
      store_bits(kElemSize, p.out_addr, o, uvec2(0));
    }
  }
}
