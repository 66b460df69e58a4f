// self[..., index[..., j, ...], ...] (= or op=) src[..., j, ...] along one
// dim. One invocation per line of index along dim (every coordinate but
// dim's), looping over j in order: two index elements that name one
// destination lie on one line, so the last write in row-major order wins
// and sums run in the CPU's order, deterministically and without atomics.
// Moves are raw kElemSize-byte elements (every dtype); kFold (a
// kernels::ScatterReduce other than kNone) folds by kKind
// (index_elements.glsl, fold_element).
#include "buffers.glsl"
#include "index_elements.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kElemSize = 4;
layout(constant_id = 2) const uint kFold = 0;
layout(constant_id = 3) const uint kKind = 0;
layout(constant_id = 4) const bool kSigned = true;  // how max/min read 8/16-bit integers

const int kMaxRank = 4;  // kScatterMaxRank in kernels/scatter.cc
layout(push_constant, std430) uniform Params {
  uvec2 self_addr;
  uvec2 index_addr;  // int64, read as its low word (wrapped_index)
  uvec2 src_addr;
  uint lines;
  uint rank;
  uint line_length;  // index.size(dim)
  int index_dim_stride;
  int src_dim_stride;
  int dim_size;    // self.size(dim)
  int dim_stride;  // self.stride(dim)
  uint sizes[kMaxRank];  // index's sizes with dim's dropped, coalesced
  int index_strides[kMaxRank];
  int src_strides[kMaxRank];
  int base_strides[kMaxRank];  // self's
} p;

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint line = gl_GlobalInvocationID.x; line < p.lines; line += step) {
    uint rem = line;
    int ix = 0, sx = 0, base = 0;
    for (int d = int(p.rank) - 1; d > 0; --d) {
      const uint q = rem / p.sizes[d];
      const int c = int(rem - q * p.sizes[d]);
      rem = q;
      ix += c * p.index_strides[d];
      sx += c * p.src_strides[d];
      base += c * p.base_strides[d];
    }
    if (p.rank > 0) {
      ix += int(rem) * p.index_strides[0];
      sx += int(rem) * p.src_strides[0];
      base += int(rem) * p.base_strides[0];
    }
    for (uint j = 0; j < p.line_length; ++j) {
      const int k = wrapped_index(p.index_addr, ix, p.dim_size);
      const int at = base + k * p.dim_stride;
      if (kFold != 0) {
        fold_element(kKind, kFold, kSigned, p.self_addr, at, p.src_addr, sx);
      } else {
        move_element(kElemSize, p.self_addr, at, p.src_addr, sx);
      }
      ix += p.index_dim_stride;
      sx += p.src_dim_stride;
    }
  }
}
