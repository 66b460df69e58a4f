#version 450
// dst = src for dense, 16-byte aligned buffers of whole 16-byte quads: the
// same-dtype contiguous copy on GPUs (kernels/copy.cc says why it is not
// vkCmdCopyBuffer there).
#include "buffers.glsl"

layout(local_size_x_id = 0) in;
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Quads { uvec4 v[]; };

layout(push_constant, std430) uniform Params {
  uvec2 dst_addr;
  uvec2 src_addr;
  uint count;  // quads
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += step) {
    Quads(p.dst_addr).v[i] = Quads(p.src_addr).v[i];
  }
}
