#version 450
// sort / topk along one dim: one work group per line (the other dims'
// positions, coalesced), a bitonic sort in shared memory of (key, index)
// pairs padded to a power of two (padded <= kMaxLine) with sentinels that
// sort after everything. Keys are the elements' bits mapped to unsigned
// integers in value order (kDType is DType's value): NaN is the largest
// value, -0 equals +0, descending inverts the keys; equal keys order by
// index, so the result is the stable order in both directions. The first
// k pairs give the indices, and the values are copied from the input at
// those indices (bit for bit).
#include "buffers.glsl"
#include "dtype_access.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kDType = 8;
layout(constant_id = 2) const bool kDescending = false;

const uint kMaxLine = 2048;  // kSortMaxLine in kernels/sort.cc (24 KiB of pairs)
const int kMaxRank = 4;      // kSortMaxRank in kernels/sort.cc
layout(push_constant, std430) uniform Params {
  uvec2 in_addr;
  uvec2 values_addr;
  uvec2 indices_addr;
  uint len;
  uint k;
  uint padded;  // len rounded up to a power of two
  uint lines;
  int in_step;  // element strides along the sorted dim
  int values_step;
  int indices_step;
  uint rank;    // of the outer (line) layout
  uint sizes[kMaxRank];
  int in_strides[kMaxRank];
  int values_strides[kMaxRank];
  int indices_strides[kMaxRank];
} p;

shared uint64_t sh_key[kMaxLine];
shared uint sh_index[kMaxLine];

const uint64_t kMaxKey = 0xFFFFFFFFFFFFFFFFul;
const uint kSentinelIndex = 0xFFFFFFFFu;

// Order-preserving unsigned key of a float's sign-magnitude bits (width
// bits wide), with -0 as +0 and every NaN the largest key.
uint64_t float_key(uint64_t bits, uint width) {
  const uint64_t sign = 1ul << (width - 1u);
  const uint64_t magnitude = bits & (sign - 1ul);
  const uint64_t inf = width == 16u ? (kDType == kDTypeF16 ? 0x7C00ul : 0x7F80ul)
                     : width == 32u ? 0x7F800000ul : 0x7FF0000000000000ul;
  if (magnitude > inf) return kMaxKey;
  if (magnitude == 0ul) return sign;
  return (bits & sign) != 0ul ? sign - magnitude : sign + magnitude;
}

uint64_t key_of(int o) {
  const uint64_t bits = load_bits(kDType, p.in_addr, o);
  uint64_t key;
  switch (kDType) {
    case kDTypeI8: key = bits ^ 0x80ul; break;
    case kDTypeI16: key = bits ^ 0x8000ul; break;
    case kDTypeI32: key = bits ^ 0x80000000ul; break;
    case kDTypeI64: key = bits ^ 0x8000000000000000ul; break;
    case kDTypeF16:
    case kDTypeBF16: key = float_key(bits, 16u); break;
    case kDTypeF32: key = float_key(bits, 32u); break;
    case kDTypeF64: key = float_key(bits, 64u); break;
    default: key = bits; break;  // bool, u8
  }
  return kDescending ? ~key : key;
}

void copy_element(int to, int from) {
  switch (kDType) {
    case kDTypeBool:
    case kDTypeU8:
    case kDTypeI8: Bytes(p.values_addr).v[to] = Bytes(p.in_addr).v[from]; break;
    case kDTypeI16:
    case kDTypeF16:
    case kDTypeBF16: Shorts(p.values_addr).v[to] = Shorts(p.in_addr).v[from]; break;
    case kDTypeI32:
    case kDTypeF32: Words(p.values_addr).v[to] = Words(p.in_addr).v[from]; break;
    default: Int64s(p.values_addr).v[to] = Int64s(p.in_addr).v[from]; break;
  }
}

// Start offsets of line `line` in in, values and indices.
ivec3 line_start(uint line) {
  uint rem = line;
  ivec3 o = ivec3(0);
  for (int d = int(p.rank) - 1; d > 0; --d) {
    const uint q = rem / p.sizes[d];
    const int c = int(rem - q * p.sizes[d]);
    rem = q;
    o += c * ivec3(p.in_strides[d], p.values_strides[d], p.indices_strides[d]);
  }
  if (p.rank > 0) o += int(rem) * ivec3(p.in_strides[0], p.values_strides[0], p.indices_strides[0]);
  return o;
}

bool before(uint a, uint b) {
  return sh_key[a] < sh_key[b] || (sh_key[a] == sh_key[b] && sh_index[a] < sh_index[b]);
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint size = gl_WorkGroupSize.x;
  for (uint line = gl_WorkGroupID.x; line < p.lines; line += gl_NumWorkGroups.x) {
    const ivec3 base = line_start(line);
    for (uint j = t; j < p.padded; j += size) {
      const bool real = j < p.len;
      sh_key[j] = real ? key_of(base.x + int(j) * p.in_step) : kMaxKey;
      sh_index[j] = real ? j : kSentinelIndex;
    }
    barrier();
    for (uint span = 2u; span <= p.padded; span <<= 1) {
      for (uint half_span = span >> 1; half_span > 0u; half_span >>= 1) {
        for (uint i = t; i < p.padded; i += size) {
          const uint partner = i ^ half_span;
          if (partner <= i) continue;
          const bool up = (i & span) == 0u;
          if (up ? before(partner, i) : before(i, partner)) {
            const uint64_t key = sh_key[i];
            const uint index = sh_index[i];
            sh_key[i] = sh_key[partner];
            sh_index[i] = sh_index[partner];
            sh_key[partner] = key;
            sh_index[partner] = index;
          }
        }
        barrier();
      }
    }
    for (uint j = t; j < p.k; j += size) {
      const uint index = sh_index[j];
      copy_element(base.y + int(j) * p.values_step, base.x + int(index) * p.in_step);
      Int64s(p.indices_addr).v[base.z + int(j) * p.indices_step] = int64_t(index);
    }
    barrier();  // shared memory is reused by the next line
  }
}
