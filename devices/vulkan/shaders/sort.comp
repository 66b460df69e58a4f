#version 450
// sort / topk along one dim as a merge sort of each line (the other dims'
// positions, coalesced) in a scratch buffer, in launches over all lines at
// once (kPass, specialization constant 3):
//   0: each invocation computes the keys of a run of kRun elements of a
//      line and sorts the run's indices by counting ranks (order A);
//   1: each invocation writes kRun outputs of the merge of two sorted runs
//      of `width` (from A to B or B to A, from_b), finding its start on the
//      merge path by binary search (no barriers, no shared memory: fast on
//      CPU drivers and fine on GPUs);
//   2: each invocation writes one of the first k values and indices.
// Keys are the elements' bits mapped to unsigned integers in value order
// (kDType is DType's value): NaN largest, -0 equal to +0, descending
// inverts them; equal keys order by index, so the order is the stable one
// in both directions. Values are copied bit for bit from the input. Only
// pass 0 depends on the dtype, pass 2 on its size, so the kernel
// specializes pass 1 once and pass 2 per size (fewer pipelines to JIT).
// Scratch (64-bit words): keys [lines * len] u64, then orders A and B
// [lines * len] u32 each.
#include "buffers.glsl"
#include "dtype_access.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kDType = 8;
layout(constant_id = 2) const uint kPass = 0;

const uint kRun = 16;    // kSortRun in kernels/sort.cc
const int kMaxRank = 3;  // kSortMaxRank in kernels/sort.cc
layout(push_constant, std430) uniform Params {
  uvec2 in_addr;
  uvec2 values_addr;
  uvec2 indices_addr;
  uvec2 scratch_addr;
  uint len;
  uint k;
  uint lines;
  uint width;   // pass 1: the length of the sorted runs being merged
  int in_step;  // element strides along the sorted dim
  int values_step;
  int indices_step;
  uint rank;    // of the outer (line) layout
  uint descending;
  uint from_b;  // passes 1 and 2: the sorted order is in B (else A)
  uint sizes[kMaxRank];
  int in_strides[kMaxRank];
  int values_strides[kMaxRank];
  int indices_strides[kMaxRank];
} p;

// Order-preserving unsigned key of a float's sign-magnitude bits (width
// bits wide), with -0 as +0 and every NaN the largest key.
uint64_t float_key(uint64_t bits, uint width) {
  const uint64_t sign = 1ul << (width - 1u);
  const uint64_t magnitude = bits & (sign - 1ul);
  const uint64_t inf = width == 16u ? (kDType == kDTypeF16 ? 0x7C00ul : 0x7F80ul)
                     : width == 32u ? 0x7F800000ul : 0x7FF0000000000000ul;
  if (magnitude > inf) return 0xFFFFFFFFFFFFFFFFul;
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
  return p.descending != 0u ? ~key : key;
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

uint total() { return p.lines * p.len; }

uint64_t key_at(uint line_base, uint index) { return Int64s(p.scratch_addr).v[line_base + index]; }

// Word index of position i of order A (or B) in the scratch buffer.
int order_slot(bool b, uint i) { return int((b ? 3u : 2u) * total() + i); }

// Element a before element b of one line: by key, then by index.
bool before(uint line_base, uint a, uint b) {
  const uint64_t ka = key_at(line_base, a), kb = key_at(line_base, b);
  return ka < kb || (ka == kb && a < b);
}

void sort_runs(uint line, uint run) {
  const uint line_base = line * p.len;
  const uint begin = run * kRun, end = min(p.len, begin + kRun);
  const int in_base = line_start(line).x;
  // Each element's rank in its run by counting (constant trip counts, so
  // the arrays stay in registers: dynamically indexed private arrays are
  // slow on llvmpipe). Missing elements of a short last run are the
  // largest, after every real one.
  uint64_t keys[kRun];
  for (uint a = 0u; a < kRun; ++a) {
    const uint j = begin + a;
    keys[a] = 0xFFFFFFFFFFFFFFFFul;
    if (j < end) {
      keys[a] = key_of(in_base + int(j) * p.in_step);
      Int64s(p.scratch_addr).v[line_base + j] = int64_t(keys[a]);
    }
  }
  for (uint a = 0u; a < kRun; ++a) {
    uint rank = 0u;
    for (uint b = 0u; b < kRun; ++b) {
      rank += keys[b] < keys[a] || (keys[b] == keys[a] && b < a) ? 1u : 0u;
    }
    if (begin + a < end) {
      Words(p.scratch_addr).v[order_slot(false, line_base + begin + rank)] = begin + a;
    }
  }
}

void merge_runs(uint line, uint chunk) {
  const uint line_base = line * p.len;
  const uint out_begin = chunk * kRun;
  const uint pair_base = out_begin - out_begin % (2u * p.width);
  const uint n1 = min(p.width, p.len - pair_base);
  const uint n2 = min(p.width, p.len - pair_base - n1);
  const uint pos = out_begin - pair_base;
  const uint count = min(kRun, p.len - out_begin);
  const int first = order_slot(p.from_b != 0u, line_base + pair_base);  // run 1, then run 2
  const int second = first + int(n1);
  // How many of the pos smallest come from run 1 (the merge path).
  uint lo = pos > n2 ? pos - n2 : 0u, hi = min(pos, n1);
  while (lo < hi) {
    const uint mid = (lo + hi) / 2u;
    const uint a = Words(p.scratch_addr).v[first + int(mid)];
    const uint b = Words(p.scratch_addr).v[second + int(pos - mid - 1u)];
    if (before(line_base, a, b)) {
      lo = mid + 1u;
    } else {
      hi = mid;
    }
  }
  uint i = lo, j = pos - lo;
  const int dest = order_slot(p.from_b == 0u, line_base + out_begin);
  // The heads of both runs with their keys, reloaded only when consumed.
  uint head1 = i < n1 ? Words(p.scratch_addr).v[first + int(i)] : 0u;
  uint head2 = j < n2 ? Words(p.scratch_addr).v[second + int(j)] : 0u;
  uint64_t key1 = i < n1 ? key_at(line_base, head1) : 0ul;
  uint64_t key2 = j < n2 ? key_at(line_base, head2) : 0ul;
  for (uint o = 0u; o < count; ++o) {
    const bool take1 = j >= n2 || (i < n1 && (key1 < key2 || (key1 == key2 && head1 < head2)));
    Words(p.scratch_addr).v[dest + int(o)] = take1 ? head1 : head2;
    if (take1) {
      if (++i < n1) {
        head1 = Words(p.scratch_addr).v[first + int(i)];
        key1 = key_at(line_base, head1);
      }
    } else if (++j < n2) {
      head2 = Words(p.scratch_addr).v[second + int(j)];
      key2 = key_at(line_base, head2);
    }
  }
}

void write_output(uint line, uint j) {
  const ivec3 base = line_start(line);
  const uint index = Words(p.scratch_addr).v[order_slot(p.from_b != 0u, line * p.len + j)];
  copy_element(base.y + int(j) * p.values_step, base.x + int(index) * p.in_step);
  Int64s(p.indices_addr).v[base.z + int(j) * p.indices_step] = int64_t(index);
}

void main() {
  const uint per_line = kPass == 2 ? p.k : (p.len + kRun - 1u) / kRun;
  const uint work = p.lines * per_line;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint w = gl_GlobalInvocationID.x; w < work; w += step) {
    const uint line = w / per_line, item = w - line * per_line;
    if (kPass == 0) {
      sort_runs(line, item);
    } else if (kPass == 1) {
      merge_runs(line, item);
    } else {
      write_output(line, item);
    }
  }
}
