// The body of the multi-tensor pointwise shaders (kernels/foreach.cc): one
// dispatch for a whole list of entries, in the manner of
// multi_tensor_apply. foreach_f32.comp runs f32 lists on any device;
// foreach.comp (FOREACH_TYPED) runs f16 and bf16 lists, computing in
// float and rounding once at the store, on devices with 16-bit storage.
// The kernel cuts every entry into chunks of p.chunk_elems elements and
// uploads two tables: the entries (addresses, element count, which
// operands are one broadcast element, scalars) and the chunks (entry,
// first element). Each work group runs one chunk, so lists of many small
// tensors and of a few large ones both spread over the device.
//
// The op is a kernel family and an op of it (specialization constants),
// computed with the single-tensor shaders' formulas, so an entry gives the
// same bits either way.
#include "float_math.glsl"
#include "binary_float_ops.glsl"
#include "pointwise_float_ops.glsl"
#include "unary_float_ops.glsl"
#include "ternary_float_ops.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kFamily = 0;  // ForeachFamily in kernels/foreach.cc
layout(constant_id = 2) const uint kOp = 0;      // an op of that family

const uint kFamilyBinary = 0, kFamilyPointwiseBinary = 1, kFamilyUnary = 2, kFamilyTernary = 3;

#ifdef FOREACH_TYPED
layout(constant_id = 3) const uint kKind = 1;  // element_kinds.glsl: kF16 or kBF16
float load_value(uvec2 addr, uint i) { return load_float(kKind, addr, int(i)); }
void store_value(uvec2 addr, uint i, float v) { store_float(kKind, addr, int(i), v); }
#else
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Floats { float v[]; };
float load_value(uvec2 addr, uint i) { return Floats(addr).v[i]; }
void store_value(uvec2 addr, uint i, float v) { Floats(addr).v[i] = v; }
#endif

// The family's formula. Binary's s0 is alpha; Unary's s0 and s1 its p0
// and p1 (the clamp bounds); PointwiseBinary's s0 threshold_backward's
// threshold; Ternary's s0 addcmul / addcdiv's value.
float foreach_op(float a, float b, float c, float s0, float s1) {
  switch (kFamily) {
    case kFamilyBinary:
#ifdef FOREACH_TYPED
      // binary.comp's forms for 16-bit dtypes.
      if (kOp == BINARY_OP_ADD) return fma(s0, b, a);
      if (kOp == BINARY_OP_SUB) return fma(-s0, b, a);
#endif
      return binary_float(kOp, a, b, s0);
    case kFamilyPointwiseBinary:
      if (kOp == POINTWISE_BINARY_OP_POW) return c_pow(a, b);
      return pointwise_float(kOp, a, b, s0);
    case kFamilyUnary: return unary_float(kOp, a, s0, s1);
    default: return ternary_float(kOp, a, b, c, s0);
  }
}

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

layout(push_constant, std430) uniform Params {
  uvec2 entries;
  uvec2 chunks;
  uint first_chunk;
  uint chunk_elems;
} p;

float operand(uvec2 addr, bool broadcast, uint i) {
  if (addr == uvec2(0)) return 0.0;  // an input the op does not take
  return load_value(addr, broadcast ? 0u : i);
}

void main() {
  const uvec2 chunk = Chunks(p.chunks).c[p.first_chunk + gl_WorkGroupID.x];
  const Entry e = Entries(p.entries).e[chunk.x];
  const uint end = min(e.numel, chunk.y + p.chunk_elems);
  for (uint i = chunk.y + gl_LocalInvocationID.x; i < end; i += gl_WorkGroupSize.x) {
    const float a = operand(e.a_addr, (e.broadcast & 1u) != 0u, i);
    const float b = operand(e.b_addr, (e.broadcast & 2u) != 0u, i);
    const float c = operand(e.c_addr, (e.broadcast & 4u) != 0u, i);
    store_value(e.out_addr, i, foreach_op(a, b, c, e.s0, e.s1));
  }
}
