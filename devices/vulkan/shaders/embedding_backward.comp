#version 450
// embedding_dense_backward: acc[idx[i], j] += grad[i, j] for every index i
// (except padding_idx), acc an f32 [V, D] that starts at zero.
//
// Work groups tile (column blocks of one work group's width) x (blocks of
// destination rows); each invocation owns one column of one row block and
// walks every index in order, adding the ones that land in its block. So
// each acc element has exactly one writer and sums in index order, as the
// CPU kernel: deterministic without atomics. Parallelizing over columns
// alone would leave small D with a handful of invocations; the row blocks
// add parallelism at the cost of each block scanning all indices, which a
// work group stages through shared memory a chunk at a time (one global
// read per index per work group).
//
// kPass 1 converts acc to grad_weight's dtype (f16, bf16) instead, one
// invocation per element.
#include "buffers.glsl"
#include "index_elements.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool kIndex64 = true;
layout(constant_id = 2) const uint kGradKind = 0;  // kFloatF32, kFloatF16 or kFloatBF16
layout(constant_id = 3) const uint kPass = 0;      // 0 accumulate, 1 convert

layout(push_constant, std430) uniform Params {
  uvec2 acc_addr;  // f32 [V, D], contiguous
  uvec2 grad_addr;
  uvec2 indices_addr;
  uvec2 grad_weight_addr;  // kPass 1's output
  uint n;     // indices (rows of grad); kPass 1: V * D
  uint cols;  // D
  uint rows;  // V
  uint rows_per_block;
  int padding_idx;  // -1: none
  int index_stride;
  int grad_strides[2];  // in elements
  int grad_weight_strides[2];
} p;

shared int s_index[gl_WorkGroupSize.x];

int load_index(uint i) {
  const int at = int(i) * p.index_stride;
  return kIndex64 ? int(DoubleWords(p.indices_addr).v[at].x) : Ints(p.indices_addr).v[at];
}

void accumulate() {
  const uint wg = gl_WorkGroupSize.x;
  const uint lid = gl_LocalInvocationID.x;
  const uint j = gl_WorkGroupID.x * wg + lid;
  const int first_row = int(gl_WorkGroupID.y * p.rows_per_block);
  const int end_row = int(min(gl_WorkGroupID.y * p.rows_per_block + p.rows_per_block, p.rows));
  for (uint chunk = 0; chunk < p.n; chunk += wg) {  // uniform: barriers are safe
    s_index[lid] = chunk + lid < p.n ? load_index(chunk + lid) : -1;
    barrier();
    const uint count = min(wg, p.n - chunk);
    if (j < p.cols) {
      for (uint u = 0; u < count; ++u) {
        const int k = s_index[u];
        if (k < first_row || k >= end_row || k == p.padding_idx) continue;
        const int i = int(chunk + u);
        const float g = load_float(kGradKind, p.grad_addr,
                                   i * p.grad_strides[0] + int(j) * p.grad_strides[1]);
        const int at = k * int(p.cols) + int(j);
        Floats(p.acc_addr).v[at] = Floats(p.acc_addr).v[at] + g;
      }
    }
    barrier();
  }
}

void convert() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += step) {
    const uint r = i / p.cols;
    const int j = int(i - r * p.cols);
    store_float(kGradKind, p.grad_weight_addr,
                int(r) * p.grad_weight_strides[0] + j * p.grad_weight_strides[1],
                Floats(p.acc_addr).v[i]);
  }
}

void main() {
  if (kPass == 0) {
    accumulate();
  } else {
    convert();
  }
}
