// The body of the multi-tensor shaders (foreach_unary_f32.comp,
// foreach_binary_f32.comp, foreach_ternary_f32.comp; kernels/foreach.cc):
// one dispatch for a whole list of f32 entries, in the manner of
// multi_tensor_apply. The kernel cuts every entry into chunks of
// p.chunk_elems elements and uploads two tables: the entries (addresses,
// element count, which operands are one broadcast element, scalars) and
// the chunks (entry, first element). Each work group runs one chunk, so
// lists of many small tensors and of a few large ones both spread over
// the device. The including shader defines
//   float foreach_op(float a, float b, float c, float s0, float s1)
// before including this file, and enables GL_EXT_buffer_reference and
// GL_EXT_buffer_reference_uvec2 first.

layout(local_size_x_id = 0) in;

// Matches ForeachEntry in kernels/foreach.cc (48 bytes).
struct Entry {
  uvec2 out_addr;
  uvec2 a_addr;
  uvec2 b_addr;
  uvec2 c_addr;
  uint numel;
  uint broadcast;  // bit 0: a, bit 1: b, bit 2: c is one element for all
  float s0;
  float s1;
};

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Entries {
  Entry e[];
};
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Chunks {
  uvec2 c[];  // (entry, first element)
};
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };

layout(push_constant, std430) uniform Params {
  uvec2 entries;
  uvec2 chunks;
  uint first_chunk;
  uint chunk_elems;
} p;

float operand(uvec2 addr, bool broadcast, uint i) {
  if (addr == uvec2(0)) return 0.0;  // an input the op does not take
  return Floats(addr).v[broadcast ? 0u : i];
}

void main() {
  const uvec2 chunk = Chunks(p.chunks).c[p.first_chunk + gl_WorkGroupID.x];
  const Entry e = Entries(p.entries).e[chunk.x];
  const uint end = min(e.numel, chunk.y + p.chunk_elems);
  for (uint i = chunk.y + gl_LocalInvocationID.x; i < end; i += gl_WorkGroupSize.x) {
    const float a = operand(e.a_addr, (e.broadcast & 1u) != 0u, i);
    const float b = operand(e.b_addr, (e.broadcast & 2u) != 0u, i);
    const float c = operand(e.c_addr, (e.broadcast & 4u) != 0u, i);
    Floats(e.out_addr).v[i] = foreach_op(a, b, c, e.s0, e.s1);
  }
}
