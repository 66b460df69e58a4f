// The second pass of index_put: self[offsets[b].x + r] (= or +=)
// values[offsets[b].y + r] for every b, with one invocation per position r
// of self's remaining (not indexed) dims looping over b in order, so with
// duplicate indices the last write wins and sums run in the CPU's order,
// deterministically and without atomics. Moves are raw kElemSize-byte
// elements (every dtype); kAccumulate adds by kAddKind.
#include "buffers.glsl"
#include "index_elements.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kElemSize = 4;
layout(constant_id = 2) const bool kAccumulate = false;
layout(constant_id = 3) const uint kAddKind = 0;

const int kMaxRank = 7;  // kIndexPutMaxRestRank in kernels/index_put.cc
layout(push_constant, std430) uniform Params {
  uvec2 self_addr;
  uvec2 values_addr;
  uvec2 offsets_addr;  // ivec2 [nb] from index_put_offsets.comp
  uint nb;
  uint numel;  // of the remaining dims
  uint rank;
  uint sizes[kMaxRank];
  int self_strides[kMaxRank];
  int value_strides[kMaxRank];
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    uint rem = i;
    int so = 0, vo = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      const int c = int(rem - q * p.sizes[d]);
      rem = q;
      so += c * p.self_strides[d];
      vo += c * p.value_strides[d];
    }
    if (p.rank > 0) {
      so += int(rem) * p.self_strides[0];
      vo += int(rem) * p.value_strides[0];
    }
    for (uint b = 0; b < p.nb; ++b) {
      const ivec2 at = ivec2(DoubleWords(p.offsets_addr).v[b]);
      if (kAccumulate) {
        add_element(kAddKind, p.self_addr, at.x + so, p.values_addr, at.y + vo);
      } else {
        move_element(kElemSize, p.self_addr, at.x + so, p.values_addr, at.y + vo);
      }
    }
  }
}
