#version 450
// The first pass of index_put (kernels/index_put.cc): for each position b
// of the broadcast index shape B, the element offset in self of
// self[indices[0][b], ..., indices[k-1][b]] (negative indices wrapped) and
// the offset of values[b, 0...], as an ivec2 in offsets[b]. The second
// pass (index_put.comp) then reads one pair per b instead of k indices and
// B's coordinates.
#include "buffers.glsl"
#include "index_elements.glsl"

layout(local_size_x_id = 0) in;

const int kMaxIndexed = 6;  // kIndexPutMaxIndexed in kernels/index_put.cc
const int kMaxRank = 6;     // kIndexPutMaxBatchRank in kernels/index_put.cc
layout(push_constant, std430) uniform Params {
  uvec2 offsets_addr;  // ivec2 [nb]
  uvec2 indices_addr;  // int64 [k, nb], contiguous
  uint nb;
  uint k;
  uint rank;  // of B, coalesced with values' strides over it
  int self_sizes[kMaxIndexed];
  int self_strides[kMaxIndexed];
  uint sizes[kMaxRank];
  int value_strides[kMaxRank];
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint b = gl_GlobalInvocationID.x; b < p.nb; b += step) {
    int self_at = 0;
    for (uint d = 0; d < p.k; ++d) {
      self_at += wrapped_index(p.indices_addr, int(d * p.nb + b), p.self_sizes[d]) *
                 p.self_strides[d];
    }
    uint rem = b;
    int value_at = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      value_at += int(rem - q * p.sizes[d]) * p.value_strides[d];
      rem = q;
    }
    if (p.rank > 0) value_at += int(rem) * p.value_strides[0];
    DoubleWords(p.offsets_addr).v[b] = uvec2(uint(self_at), uint(value_at));
  }
}
