#version 450
// {min, max} of an integer index tensor (any strides) as int64, optionally
// skipping one value (nll_loss's ignore_index). Each work group reduces a
// strided share of the elements: subgroupMin/Max where the device has
// subgroup arithmetic (int64 as two 32-bit steps, the high word first, so
// no 64-bit subgroup types are needed), else a shared-memory tree. With one
// work group it writes out[0] = min, out[1] = max; with G groups it writes
// mins to out[0, G) and maxes to out[G, 2G), and a second launch with kind
// kPartials (numel = G, rank 1, stride 1) reduces those (kernels/
// index_bounds.cc).
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_arithmetic : enable
#include "buffers.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kKind = 0;  // IndexKind in kernels/index_bounds.cc
layout(constant_id = 2) const bool kSubgroups = false;

const uint kU8 = 0, kI8 = 1, kI16 = 2, kI32 = 3, kI64 = 4, kPartials = 5;

const int kMaxRank = 8;  // kIndexBoundsMaxRank in kernels/index_bounds.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;    // int64
  uvec2 index_addr;
  int64_t ignore;
  uint numel;
  uint rank;
  uint has_ignore;
  uint sizes[kMaxRank];
  int strides[kMaxRank];  // in elements
} p;

const int64_t kInt64Max = 0x7fffffffffffffffl;
const int64_t kInt64Min = -kInt64Max - 1l;

int64_t load(int at) {
  switch (kKind) {
    case kU8: return int64_t(uint(Bytes(p.index_addr).v[at]));
    case kI8: return int64_t(int8_t(Bytes(p.index_addr).v[at]));
    case kI16: return int64_t(int16_t(Shorts(p.index_addr).v[at]));
    case kI32: return int64_t(Ints(p.index_addr).v[at]);
    default: return Int64s(p.index_addr).v[at];  // kI64, kPartials
  }
}

// Subgroup min/max of int64 through 32-bit operations: the extreme high
// word, then the extreme low word (unsigned) among the lanes that have it.
int64_t subgroup_min64(int64_t v) {
  const int hi = int(v >> 32);
  const uint lo = uint(v & 0xffffffffl);
  const int mhi = subgroupMin(hi);
  const uint mlo = subgroupMin(hi == mhi ? lo : 0xffffffffu);
  return (int64_t(mhi) << 32) | int64_t(mlo);
}
int64_t subgroup_max64(int64_t v) {
  const int hi = int(v >> 32);
  const uint lo = uint(v & 0xffffffffl);
  const int mhi = subgroupMax(hi);
  const uint mlo = subgroupMax(hi == mhi ? lo : 0u);
  return (int64_t(mhi) << 32) | int64_t(mlo);
}

shared int64_t s_lo[gl_WorkGroupSize.x];
shared int64_t s_hi[gl_WorkGroupSize.x];

void main() {
  const uint lid = gl_LocalInvocationID.x;
  const uint wg = gl_WorkGroupSize.x;
  const uint groups = gl_NumWorkGroups.x;
  int64_t lo = kInt64Max, hi = kInt64Min;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += groups * wg) {
    if (kKind == kPartials) {
      lo = min(lo, load(int(i)));
      hi = max(hi, load(int(i + p.numel)));
      continue;
    }
    uint rem = i;
    int at = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      at += int(rem - q * p.sizes[d]) * p.strides[d];
      rem = q;
    }
    if (p.rank > 0) at += int(rem) * p.strides[0];
    const int64_t v = load(at);
    if (p.has_ignore != 0 && v == p.ignore) continue;
    lo = min(lo, v);
    hi = max(hi, v);
  }

  uint count;  // entries of s_lo / s_hi left to combine
  if (kSubgroups) {
    lo = subgroup_min64(lo);
    hi = subgroup_max64(hi);
    if (subgroupElect()) {
      s_lo[gl_SubgroupID] = lo;
      s_hi[gl_SubgroupID] = hi;
    }
    count = gl_NumSubgroups;
  } else {
    s_lo[lid] = lo;
    s_hi[lid] = hi;
    count = wg;
  }
  barrier();
  // Halve the live entries until one is left (any count, not only powers
  // of two).
  while (count > 1) {
    const uint half_count = (count + 1) / 2;
    if (lid < count - half_count) {
      s_lo[lid] = min(s_lo[lid], s_lo[lid + half_count]);
      s_hi[lid] = max(s_hi[lid], s_hi[lid + half_count]);
    }
    barrier();
    count = half_count;
  }
  if (lid == 0) {
    const uint g = gl_WorkGroupID.x;
    Int64s(p.out_addr).v[g] = s_lo[0];
    Int64s(p.out_addr).v[groups + g] = s_hi[0];  // index 1 with one group
  }
}
