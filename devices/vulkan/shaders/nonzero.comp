#version 450
// nonzero in three launches (kPass, specialization constant 1), self of
// kDType (DType's value; -0.0 is zero, NaN is not), in blocks of
// gl_WorkGroupSize.x * kRun elements of the row-major order, one work
// group per block, each invocation a run of kRun consecutive elements:
//   0: counts[block] = nonzeros in the block (shared-memory sum of runs);
//   1: one work group turns counts into exclusive prefix sums;
//   2: each block rescans its runs' counts to find each run's first output
//      row and writes the coordinates of its nonzeros there,
// so rows come out in row-major order, each written once. Loops stay far
// below llvmpipe's 65535-iteration cap per loop (numel < 2^31 bounds the
// blocks).
#include "buffers.glsl"
#include "dtype_access.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kPass = 0;
layout(constant_id = 2) const uint kDType = 0;

const uint kRun = 16;    // kNonzeroRun in kernels/nonzero.cc
const int kMaxRank = 8;  // kNonzeroMaxRank in kernels/nonzero.cc
layout(push_constant, std430) uniform Params {
  uvec2 out_addr;     // int64 [n, ndim]
  uvec2 self_addr;
  uvec2 counts_addr;  // uint per block
  uint numel;
  uint n;             // rows of out (the front end's count)
  uint ndim;
  int out_stride0;    // in elements
  int out_stride1;
  uint blocks;
  uint sizes[kMaxRank];
  int strides[kMaxRank];
} p;

shared uint sh_count[gl_WorkGroupSize.x];

// Inclusive scan of sh_count across the group (Hillis-Steele).
void scan_shared(uint t) {
  for (uint d = 1u; d < gl_WorkGroupSize.x; d <<= 1) {
    const uint other = t >= d ? sh_count[t - d] : 0u;
    barrier();
    sh_count[t] += other;
    barrier();
  }
}

// Walks flat indices [begin, end) of self in row-major order, keeping the
// coordinates and element offset as an odometer; counts the nonzeros, and
// when `write`, stores their coordinates from output row `row` on.
uint walk(uint begin, uint end, bool write, uint row) {
  if (begin >= end) return 0u;
  uint coord[kMaxRank];
  int offset = 0;
  uint rem = begin;
  for (int d = int(p.ndim) - 1; d >= 0; --d) {
    const uint q = rem / p.sizes[d];
    coord[d] = rem - q * p.sizes[d];
    rem = q;
    offset += int(coord[d]) * p.strides[d];
  }
  uint count = 0u;
  for (uint i = begin; i < end; ++i) {
    if (is_nonzero(kDType, p.self_addr, offset)) {
      if (write && row + count < p.n) {
        const int o = int(row + count) * p.out_stride0;
        for (uint d = 0u; d < p.ndim; ++d) {
          Int64s(p.out_addr).v[o + int(d) * p.out_stride1] = int64_t(coord[d]);
        }
      }
      ++count;
    }
    for (int d = int(p.ndim) - 1; d >= 0; --d) {  // next row-major position
      offset += p.strides[d];
      if (++coord[d] < p.sizes[d]) break;
      offset -= int(coord[d]) * p.strides[d];
      coord[d] = 0u;
    }
  }
  return count;
}

void count_or_write_blocks() {
  const uint t = gl_LocalInvocationID.x;
  const uint block_size = gl_WorkGroupSize.x * kRun;
  for (uint block = gl_WorkGroupID.x; block < p.blocks; block += gl_NumWorkGroups.x) {
    const uint begin = min(p.numel, block * block_size + t * kRun);
    const uint end = min(p.numel, begin + kRun);
    const uint mine = walk(begin, end, false, 0u);
    sh_count[t] = mine;
    barrier();
    scan_shared(t);
    if (kPass == 0) {
      if (t == gl_WorkGroupSize.x - 1u) Words(p.counts_addr).v[block] = sh_count[t];
    } else if (mine != 0u) {
      walk(begin, end, true, Words(p.counts_addr).v[block] + sh_count[t] - mine);
    }
    barrier();  // shared memory is reused by the next block
  }
}

void scan_counts() {
  const uint t = gl_LocalInvocationID.x;
  const uint run = (p.blocks + gl_WorkGroupSize.x - 1u) / gl_WorkGroupSize.x;
  const uint begin = min(p.blocks, t * run), end = min(p.blocks, begin + run);
  uint total = 0u;
  for (uint b = begin; b < end; ++b) total += Words(p.counts_addr).v[b];
  sh_count[t] = total;
  barrier();
  scan_shared(t);
  uint acc = sh_count[t] - total;  // exclusive prefix of this run
  for (uint b = begin; b < end; ++b) {
    const uint c = Words(p.counts_addr).v[b];
    Words(p.counts_addr).v[b] = acc;
    acc += c;
  }
}

void main() {
  if (kPass == 1) {
    scan_counts();
  } else {
    count_or_write_blocks();
  }
}
