// Softmax rows (included by softmax.comp and softmax_subgroup.comp, which
// set ROWS_SUBGROUP): rows of n contiguous elements, one row team (a work
// group, or a subgroup for short rows; rows.glsl) per row, looping over
// rows beyond the dispatch. The team's invocations stride across the row;
// f16 tensors load and store as f16 with f32 math, as the CPU kernel.
//   kMode 0 softmax:      y = exp(x - max) / sum(exp(x - max))
//         1 log_softmax:  y = x - (max + log(sum(exp(x - max))))
//         2 softmax backward:      grad_in = y * (g - sum(g * y))
//         3 log_softmax backward:  grad_in = g - exp(y) * sum(g)
// A NaN in a row makes the row NaN (the max is NaN), as on the CPU.
// The forward of a row of at most kCachedValues values per invocation reads
// it once (forward_cached).
#extension GL_EXT_control_flow_attributes : require
#include "element_kinds.glsl"
#include "float_math.glsl"
#include "rows.glsl"

layout(constant_id = 2) const uint kHalf = 0;  // storage: 0 f32, 1 f16, 8 bf16
layout(constant_id = 3) const uint kMode = 0;

layout(push_constant, std430) uniform Params {
  uvec2 out_addr;
  uvec2 a_addr;  // x (forward) or grad_out (backward)
  uvec2 b_addr;  // the forward's output (backward only)
  uint rows;
  uint n;
} p;

float load(uvec2 addr, uint i) {
  return load_float(kHalf, addr, int(i));
}

void store(uint i, float v) {
  store_float(kHalf, p.out_addr, int(i), v);
}

void forward(uint base, uint lane, uint step) {
  // Max over the non-NaN values, and whether there was a NaN.
  vec2 max_nan = vec2(-kInf, 0.0);
  for (uint i = lane; i < p.n; i += step) {
    const float v = load(p.a_addr, base + i);
    if (is_nan(v)) {
      max_nan.y = 1.0;
    } else {
      max_nan.x = max(max_nan.x, v);
    }
  }
  max_nan = team_max(max_nan);
  const float m = max_nan.y != 0.0 ? kNaN : max_nan.x;
  float s = 0.0;
  for (uint i = lane; i < p.n; i += step) s += c_exp(load(p.a_addr, base + i) - m);
  s = team_sum(vec2(s, 0.0)).x;
  if (kMode == 1) {
    const float lse = m + c_log(s);
    for (uint i = lane; i < p.n; i += step) store(base + i, load(p.a_addr, base + i) - lse);
  } else {
    const float inv = 1.0 / s;
    for (uint i = lane; i < p.n; i += step) store(base + i, c_exp(load(p.a_addr, base + i) - m) * inv);
  }
}

// kRowCachedValues in kernels/rows_common.h.
const uint kCachedValues = 32;

// forward() for rows of at most step * kCachedValues: each invocation keeps
// its share of the row in registers (the loops unroll), so the row is read
// once instead of three times; sums and maxima run in forward()'s order, so
// the results are the same bits.
void forward_cached(uint base, uint lane, uint step) {
  float x[kCachedValues];
  vec2 max_nan = vec2(-kInf, 0.0);
  [[unroll]] for (uint c = 0; c < kCachedValues; ++c) {
    const uint i = lane + c * step;
    x[c] = i < p.n ? load(p.a_addr, base + i) : -kInf;
    if (is_nan(x[c])) {
      max_nan.y = 1.0;
    } else {
      max_nan.x = max(max_nan.x, x[c]);
    }
  }
  max_nan = team_max(max_nan);
  const float m = max_nan.y != 0.0 ? kNaN : max_nan.x;
  float s = 0.0;
  [[unroll]] for (uint c = 0; c < kCachedValues; ++c) {
    if (lane + c * step < p.n) s += c_exp(x[c] - m);
  }
  s = team_sum(vec2(s, 0.0)).x;
  if (kMode == 1) {
    const float lse = m + c_log(s);
    [[unroll]] for (uint c = 0; c < kCachedValues; ++c) {
      const uint i = lane + c * step;
      if (i < p.n) store(base + i, x[c] - lse);
    }
  } else {
    const float inv = 1.0 / s;
    [[unroll]] for (uint c = 0; c < kCachedValues; ++c) {
      const uint i = lane + c * step;
      if (i < p.n) store(base + i, c_exp(x[c] - m) * inv);
    }
  }
}

void backward(uint base, uint lane, uint step) {
  float s = 0.0;
  for (uint i = lane; i < p.n; i += step) {
    const float g = load(p.a_addr, base + i);
    s += kMode == 3 ? g : g * load(p.b_addr, base + i);
  }
  s = team_sum(vec2(s, 0.0)).x;
  for (uint i = lane; i < p.n; i += step) {
    const float g = load(p.a_addr, base + i);
    const float y = load(p.b_addr, base + i);
    store(base + i, kMode == 3 ? g - c_exp(y) * s : y * (g - s));
  }
}

void main() {
  const uint lane = team_lane();
  const uint step = team_size();
  for (uint row = team_index(); row < p.rows; row += team_count()) {
    if (kMode <= 1) {
      if (p.n <= step * kCachedValues) {
        forward_cached(row * p.n, lane, step);
      } else {
        forward(row * p.n, lane, step);
      }
    } else {
      backward(row * p.n, lane, step);
    }
  }
}
