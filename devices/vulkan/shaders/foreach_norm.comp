#version 450
// The norms of a list of f32, f16 and bf16 tensors in two dispatches
// (kernels/foreach_norm.cc), in the manner of multi_tensor_apply. The
// kernel cuts every entry into chunks of p.chunk_elems elements and
// uploads a table of entries (addresses, element count, dtype, first
// chunk, chunk count) and a table of chunks (entry, first element).
//   pass 0: one work group per chunk folds the chunk into one float,
//           partials[chunk];
//   pass 1: one work group per entry folds its chunks' partials and
//           stores the norm (the square root for order 2) in the entry's
//           dtype.
// Accumulates in float, as the single-tensor reduction does.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require

#include "buffers.glsl"
#include "float_math.glsl"
#include "dtype_access.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOrder = 0;  // NormOrder in kernels/foreach_norm.cc
layout(constant_id = 2) const uint kPass = 0;

const uint kAbsSum = 0, kSquareSum = 1, kAbsMax = 2;

// Matches NormEntry in kernels/foreach_norm.cc (32 bytes).
struct Entry {
  uvec2 in_addr;
  uvec2 out_addr;
  uint numel;
  uint dtype;  // runtime DType: kDTypeF16, kDTypeBF16 or kDTypeF32
  uint first_chunk;
  uint chunks;
};

layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Entries {
  Entry e[];
};
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Chunks {
  uvec2 c[];  // (entry, first element)
};

layout(push_constant, std430) uniform Params {
  uvec2 entries;
  uvec2 chunks;
  uvec2 partials;     // one float per chunk
  uint first_group;   // the chunk (pass 0) or entry (pass 1) of work group 0
  uint chunk_elems;
} p;

float load_element(const Entry e, uint i) {
  if (e.dtype == kDTypeF16) return f16_bits_to_float(uint(Shorts(e.in_addr).v[i]));
  if (e.dtype == kDTypeBF16) return uintBitsToFloat(uint(Shorts(e.in_addr).v[i]) << 16);
  return Floats(e.in_addr).v[i];
}

// What an element adds to the accumulator.
float contribution(float x) { return kOrder == kSquareSum ? x * x : abs(x); }

// NaN propagates through the max, tested before the comparison (GLSL's
// max leaves NaN undefined).
float combine(float a, float b) {
  if (kOrder != kAbsMax) return a + b;
  if (is_nan(a)) return a;
  if (is_nan(b)) return b;
  return b > a ? b : a;
}

shared float s_acc[gl_WorkGroupSize.x];

// The work group's accumulators folded by a tree in a fixed order; the
// result is in s_acc[0] for every invocation after the call.
void fold_group(float acc) {
  const uint tid = gl_LocalInvocationID.x;
  s_acc[tid] = acc;
  barrier();
  uint width = gl_WorkGroupSize.x;
  while (width > 1) {
    const uint half_width = (width + 1) / 2;
    if (tid < width - half_width) s_acc[tid] = combine(s_acc[tid], s_acc[tid + half_width]);
    barrier();
    width = half_width;
  }
}

void store_norm(const Entry e, float v) {
  if (e.dtype == kDTypeF16) Shorts(e.out_addr).v[0] = uint16_t(f16_bits_of(v));
  else if (e.dtype == kDTypeBF16) Shorts(e.out_addr).v[0] = uint16_t(bf16_bits_of(v));
  else Floats(e.out_addr).v[0] = v;
}

void main() {
  const uint group = p.first_group + gl_WorkGroupID.x;
  float acc = 0.0;  // the identity of each order (|x| >= 0 for the max)
  if (kPass == 0) {
    const uvec2 chunk = Chunks(p.chunks).c[group];
    const Entry e = Entries(p.entries).e[chunk.x];
    const uint end = min(e.numel, chunk.y + p.chunk_elems);
    for (uint i = chunk.y + gl_LocalInvocationID.x; i < end; i += gl_WorkGroupSize.x) {
      acc = combine(acc, contribution(load_element(e, i)));
    }
    fold_group(acc);
    if (gl_LocalInvocationID.x == 0) Floats(p.partials).v[group] = s_acc[0];
  } else {
    const Entry e = Entries(p.entries).e[group];
    for (uint k = gl_LocalInvocationID.x; k < e.chunks; k += gl_WorkGroupSize.x) {
      acc = combine(acc, Floats(p.partials).v[e.first_chunk + k]);
    }
    fold_group(acc);
    if (gl_LocalInvocationID.x == 0) {
      store_norm(e, kOrder == kSquareSum ? c_sqrt(s_acc[0]) : s_acc[0]);
    }
  }
}
