#version 450
// embedding: out[r, j] = weight[indices[r], j] over out's n x D elements,
// moving raw kElemSize-byte elements (every dtype). indices is 1-D (int32
// or int64, any stride) and was range-checked on the device first
// (kernels/embedding.cc).
#include "buffers.glsl"
#include "index_elements.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kElemSize = 4;
layout(constant_id = 2) const bool kIndex64 = true;

layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 weight_addr;
  uvec2 indices_addr;
  uint numel;
  uint cols;  // D
  int out_strides[2];  // in elements
  int weight_strides[2];
  int index_stride;
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    const uint r = i / p.cols;
    const int j = int(i - r * p.cols);
    const int at = int(r) * p.index_stride;
    // int64 indices as their low word: the range check passed.
    const int k = kIndex64 ? int(DoubleWords(p.indices_addr).v[at].x) : Ints(p.indices_addr).v[at];
    move_element(kElemSize, p.out_addr, int(r) * p.out_strides[0] + j * p.out_strides[1],
                 p.weight_addr, k * p.weight_strides[0] + j * p.weight_strides[1]);
  }
}
