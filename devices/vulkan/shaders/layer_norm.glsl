// Layer norm and rms norm rows (included by layer_norm.comp and
// layer_norm_subgroup.comp, which set ROWS_SUBGROUP): x viewed as [rows, n]
// contiguous, one row team per row (rows.glsl), f32 math.
//   kMode 0 forward: mean = sum(x) / n (0 for rms); var = sum((x - mean)^2)
//           / n (two passes, as the CPU); rstd = 1 / sqrt(var + eps);
//           y = (x - mean) * rstd * weight + bias; the row's mean / rstd
//           are stored by lane 0.
//         1 backward, grad_input only (grad_weight / grad_bias:
//           layer_norm_columns.comp): with xh = (x - mean) * rstd and
//           gw = g * weight, grad_in = rstd * (gw - sum(gw) / n - xh *
//           sum(gw * xh) / n) (no sum(gw) / n term for rms).
// kHalf: the storage kind (0 f32, 1 f16, 8 bf16) of x, y, grad and weight / bias; kStatHalf: mean
// and rstd (f16 or bf16 for layer_norm of those; rms_norm keeps f32 statistics).
// The forward of a row of at most kCachedValues values per invocation reads
// x once (forward_cached).
#extension GL_EXT_control_flow_attributes : require
#include "element_kinds.glsl"
#include "rows.glsl"

layout(constant_id = 2) const uint kHalf = 0;
layout(constant_id = 3) const uint kStatHalf = 0;
layout(constant_id = 4) const uint kRms = 0;
layout(constant_id = 5) const uint kMode = 0;

layout(push_constant, std430) uniform Params {
  uvec2 out_addr;     // y (forward) or grad_input (backward)
  uvec2 x_addr;
  uvec2 grad_addr;    // grad_out (backward)
  uvec2 weight_addr;  // 0: no weight
  uvec2 bias_addr;    // 0: no bias (forward, layer norm)
  uvec2 mean_addr;    // written by the forward, read by the backward; unused for rms
  uvec2 rstd_addr;
  uint rows;
  uint n;
  float eps;
} p;

float load(uvec2 addr, uint i) {
  return load_float(kHalf, addr, int(i));
}

void store_out(uint i, float v) {
  store_float(kHalf, p.out_addr, int(i), v);
}

float load_stat(uvec2 addr, uint i) {
  return load_float(kStatHalf, addr, int(i));
}

void store_stat(uvec2 addr, uint i, float v) {
  store_float(kStatHalf, addr, int(i), v);
}

// rstd from this invocation's share q of the row's squared deviations
// (summed over the team, which all calls); lane 0 stores the statistics.
float row_rstd(uint row, uint lane, float mean, float q) {
  const float var = team_sum(vec2(q, 0.0)).x / float(p.n);
  const float rstd = 1.0 / sqrt(var + p.eps);
  if (lane == 0) {
    if (kRms == 0) store_stat(p.mean_addr, row, mean);
    store_stat(p.rstd_addr, row, rstd);
  }
  return rstd;
}

// y[i] of the row at base, from its x value.
void store_normalized(uint base, uint i, float x, float mean, float rstd) {
  float y = (x - mean) * rstd;
  if (p.weight_addr != uvec2(0)) y *= load(p.weight_addr, i);
  if (kRms == 0 && p.bias_addr != uvec2(0)) y += load(p.bias_addr, i);
  store_out(base + i, y);
}

void forward(uint row, uint lane, uint step) {
  const uint base = row * p.n;
  const float n = float(p.n);
  float mean = 0.0;
  if (kRms == 0) {
    float s = 0.0;
    for (uint i = lane; i < p.n; i += step) s += load(p.x_addr, base + i);
    mean = team_sum(vec2(s, 0.0)).x / n;
  }
  float q = 0.0;
  for (uint i = lane; i < p.n; i += step) {
    const float d = load(p.x_addr, base + i) - mean;
    q += d * d;
  }
  const float rstd = row_rstd(row, lane, mean, q);
  for (uint i = lane; i < p.n; i += step) {
    store_normalized(base, i, load(p.x_addr, base + i), mean, rstd);
  }
}

// kRowCachedValues in kernels/rows_common.h.
const uint kCachedValues = 32;

// forward() for rows of at most step * kCachedValues: each invocation keeps
// its share of x in registers (the loops unroll), so x is read once instead
// of three times; the sums run in forward()'s order (the same bits).
void forward_cached(uint row, uint lane, uint step) {
  const uint base = row * p.n;
  const float n = float(p.n);
  float x[kCachedValues];
  [[unroll]] for (uint c = 0; c < kCachedValues; ++c) {
    const uint i = lane + c * step;
    x[c] = i < p.n ? load(p.x_addr, base + i) : 0.0;
  }
  float mean = 0.0;
  if (kRms == 0) {
    float s = 0.0;
    [[unroll]] for (uint c = 0; c < kCachedValues; ++c) {
      if (lane + c * step < p.n) s += x[c];
    }
    mean = team_sum(vec2(s, 0.0)).x / n;
  }
  float q = 0.0;
  [[unroll]] for (uint c = 0; c < kCachedValues; ++c) {
    if (lane + c * step < p.n) {
      const float d = x[c] - mean;
      q += d * d;
    }
  }
  const float rstd = row_rstd(row, lane, mean, q);
  [[unroll]] for (uint c = 0; c < kCachedValues; ++c) {
    const uint i = lane + c * step;
    if (i < p.n) store_normalized(base, i, x[c], mean, rstd);
  }
}

void backward(uint row, uint lane, uint step) {
  const uint base = row * p.n;
  const float mean = kRms != 0 ? 0.0 : load_stat(p.mean_addr, row);
  const float rstd = load_stat(p.rstd_addr, row);
  const bool has_weight = p.weight_addr != uvec2(0);
  vec2 sums = vec2(0.0);  // sum(gw), sum(gw * xh)
  for (uint i = lane; i < p.n; i += step) {
    float gw = load(p.grad_addr, base + i);
    if (has_weight) gw *= load(p.weight_addr, i);
    const float xh = (load(p.x_addr, base + i) - mean) * rstd;
    sums += vec2(gw, gw * xh);
  }
  sums = team_sum(sums) / float(p.n);
  const float a = kRms != 0 ? 0.0 : sums.x;
  for (uint i = lane; i < p.n; i += step) {
    float gw = load(p.grad_addr, base + i);
    if (has_weight) gw *= load(p.weight_addr, i);
    const float xh = (load(p.x_addr, base + i) - mean) * rstd;
    store_out(base + i, rstd * (gw - a - xh * sums.y));
  }
}

void main() {
  const uint lane = team_lane();
  const uint step = team_size();
  for (uint row = team_index(); row < p.rows; row += team_count()) {
    if (kMode == 0) {
      if (p.n <= step * kCachedValues) {
        forward_cached(row, lane, step);
      } else {
        forward(row, lane, step);
      }
    } else {
      backward(row, lane, step);
    }
  }
}
