#version 450
// grad_weight = sum over rows of g * xh and grad_bias = sum over rows of g
// (xh = (x - mean) * rstd, mean 0 for rms) for layer / rms norm's backward,
// x and g viewed as [rows, n] contiguous: column sums, one invocation per
// column, neighbouring invocations reading neighbouring addresses. Long
// columns split into `chunks` chunks of rows_per_chunk rows:
//   kStage 0: invocation (chunk, column) sums its chunk; with one chunk it
//             writes the outputs, else f32 partials [2][chunks][n];
//          1: invocation per column adds the partials in chunk order
//             (deterministic) and writes the outputs.
// kHalf, kStatHalf: the storage kinds (0 f32, 1 f16, 8 bf16) of x, g and the outputs, and of mean / rstd.
// An output address of 0 is not written.
#include "element_kinds.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 2) const uint kHalf = 0;
layout(constant_id = 3) const uint kStatHalf = 0;
layout(constant_id = 4) const uint kRms = 0;
layout(constant_id = 5) const uint kStage = 0;

layout(push_constant, std430) uniform Params {
  uvec2 grad_weight_addr;
  uvec2 grad_bias_addr;
  uvec2 grad_addr;
  uvec2 x_addr;
  uvec2 mean_addr;
  uvec2 rstd_addr;
  uvec2 partial_addr;
  uint rows;
  uint n;
  uint rows_per_chunk;
  uint chunks;
} p;

float load(uvec2 addr, uint i) {
  return load_float(kHalf, addr, int(i));
}

float load_stat(uvec2 addr, uint i) {
  return load_float(kStatHalf, addr, int(i));
}

void store_outputs(uint column, vec2 sums) {
  if (p.grad_weight_addr != uvec2(0)) {
    store_float(kHalf, p.grad_weight_addr, int(column), sums.x);
  }
  if (p.grad_bias_addr != uvec2(0)) {
    store_float(kHalf, p.grad_bias_addr, int(column), sums.y);
  }
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  if (kStage == 0) {
    const uint total = p.chunks * p.n;
    for (uint at = gl_GlobalInvocationID.x; at < total; at += step) {
      const uint chunk = at / p.n;
      const uint column = at - chunk * p.n;
      const uint first = chunk * p.rows_per_chunk;
      const uint last = min(p.rows, first + p.rows_per_chunk);
      vec2 sums = vec2(0.0);  // sum(g * xh), sum(g)
      for (uint row = first; row < last; ++row) {
        const uint i = row * p.n + column;
        const float g = load(p.grad_addr, i);
        const float mean = kRms != 0 ? 0.0 : load_stat(p.mean_addr, row);
        const float xh = (load(p.x_addr, i) - mean) * load_stat(p.rstd_addr, row);
        sums += vec2(g * xh, g);
      }
      if (p.chunks == 1) {
        store_outputs(column, sums);
      } else {
        Floats(p.partial_addr).v[at] = sums.x;
        Floats(p.partial_addr).v[total + at] = sums.y;
      }
    }
  } else {
    const uint total = p.chunks * p.n;
    for (uint column = gl_GlobalInvocationID.x; column < p.n; column += step) {
      vec2 sums = vec2(0.0);
      for (uint at = column; at < total; at += p.n) {
        sums += vec2(Floats(p.partial_addr).v[at], Floats(p.partial_addr).v[total + at]);
      }
      store_outputs(column, sums);
    }
  }
}
