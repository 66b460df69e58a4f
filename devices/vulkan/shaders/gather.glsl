// out[..., i, ...] = self[..., index[..., i, ...], ...] along one dim
// (torch.gather; index_select is a gather of an expanded index), moving raw
// elements of kElemSize bytes, so one pipeline per size serves every
// dtype. As the CPU kernel, self is addressed through a base view with
// stride 0 along dim (coalesced with out and index) plus index * the dim's
// stride, so the shader never needs the dim's coordinate.
#include "buffers.glsl"
#include "index_elements.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kElemSize = 4;

const int kMaxRank = 5;  // kGatherMaxRank in kernels/gather.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 self_addr;
  uvec2 index_addr;  // int64, read as its low word (wrapped_index)
  uint numel;
  uint rank;
  int dim_size;
  int dim_stride;  // self's stride along dim, in elements
  uint sizes[kMaxRank];
  int out_strides[kMaxRank];  // in elements
  int index_strides[kMaxRank];
  int base_strides[kMaxRank];  // self's, 0 along dim
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    uint rem = i;
    int o = 0, ix = 0, base = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      const int c = int(rem - q * p.sizes[d]);
      rem = q;
      o += c * p.out_strides[d];
      ix += c * p.index_strides[d];
      base += c * p.base_strides[d];
    }
    if (p.rank > 0) {
      o += int(rem) * p.out_strides[0];
      ix += int(rem) * p.index_strides[0];
      base += int(rem) * p.base_strides[0];
    }
    const int k = wrapped_index(p.index_addr, ix, p.dim_size);
    move_element(kElemSize, p.out_addr, o, p.self_addr, base + k * p.dim_stride);
  }
}
