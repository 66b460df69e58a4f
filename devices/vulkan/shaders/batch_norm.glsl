// Batch norm's per-channel statistics (included by batch_norm.comp and
// batch_norm_subgroup.comp, which set ROWS_SUBGROUP): x viewed as [batch,
// channels, spatial] contiguous, one row team per channel (rows.glsl: a
// work group, or a subgroup for small channels) reducing over its batch *
// spatial elements, looping over channels beyond the dispatch. Every per-channel vector is f32; an
// address of 0 is an absent tensor. Each mode ends with lane 0 writing the
// channel's coefficients for batch_norm_apply.comp (4 floats per channel):
//   kMode 0 training forward: mean, var = mean((x - mean)^2) (two passes);
//           save_mean, save_invstd = 1 / sqrt(var + eps); running stats
//           (when present) move by momentum, the variance unbiased;
//           coef = (scale, shift) with out = x * scale + shift.
//         1 eval forward: mean / var from the running stats; coef as 0.
//         2 training backward (mean, invstd from save_mean / save_invstd)
//         3 eval backward (from the running stats and eps): with xh =
//           (x - mean) * invstd, grad_weight = sum(g * xh), grad_bias =
//           sum(g); coef = (weight * invstd, sum(g) / count, mean,
//           invstd * sum(g * xh) / count) for training, (weight * invstd)
//           for eval.
// kHalf: the storage kind (0 f32, 1 f16, 8 bf16) of x and grad.
#include "element_kinds.glsl"
#include "rows.glsl"

layout(constant_id = 2) const uint kHalf = 0;
layout(constant_id = 3) const uint kMode = 0;

layout(push_constant, std430) uniform Params {
  uvec2 x_addr;
  uvec2 grad_addr;
  uvec2 weight_addr;
  uvec2 bias_addr;
  uvec2 running_mean_addr;
  uvec2 running_var_addr;
  uvec2 save_mean_addr;
  uvec2 save_invstd_addr;
  uvec2 grad_weight_addr;
  uvec2 grad_bias_addr;
  uvec2 coef_addr;
  uint batch;
  uint channels;
  uint spatial;
  float eps;
  float momentum;
} p;

float load(uvec2 addr, uint i) {
  return load_float(kHalf, addr, int(i));
}

float param_or(uvec2 addr, uint c, float fallback) {
  return addr != uvec2(0) ? Floats(addr).v[c] : fallback;
}

// Walks the channel's elements, this lane's share: element k of the
// channel (k = n * spatial + j) lives at (n * channels + c) * spatial + j.
// (n, j) advance by the team size without a division per element.
struct Walk {
  uint n;
  uint j;
  uint step_n;
  uint step_j;
};

Walk walk_start(uint lane, uint step) {
  Walk w;
  w.n = lane / p.spatial;
  w.j = lane - w.n * p.spatial;
  w.step_n = step / p.spatial;
  w.step_j = step - w.step_n * p.spatial;
  return w;
}

uint walk_at(Walk w, uint c) { return (w.n * p.channels + c) * p.spatial + w.j; }

void walk_next(inout Walk w) {
  w.j += w.step_j;
  w.n += w.step_n;
  if (w.j >= p.spatial) {
    w.j -= p.spatial;
    ++w.n;
  }
}

void store_coef(uint c, vec4 coef) {
  for (uint k = 0; k < 4; ++k) Floats(p.coef_addr).v[c * 4 + k] = coef[k];
}

void forward_training(uint c, uint lane, uint step, float count) {
  const uint total = p.batch * p.spatial;
  float s = 0.0;
  Walk w = walk_start(lane, step);
  for (uint k = lane; k < total; k += step) {
    s += load(p.x_addr, walk_at(w, c));
    walk_next(w);
  }
  const float mean = team_sum(vec2(s, 0.0)).x / count;
  float q = 0.0;
  w = walk_start(lane, step);
  for (uint k = lane; k < total; k += step) {
    const float d = load(p.x_addr, walk_at(w, c)) - mean;
    q += d * d;
    walk_next(w);
  }
  const float var = team_sum(vec2(q, 0.0)).x / count;
  if (lane != 0) return;
  const float invstd = 1.0 / sqrt(var + p.eps);
  Floats(p.save_mean_addr).v[c] = mean;
  Floats(p.save_invstd_addr).v[c] = invstd;
  if (p.running_mean_addr != uvec2(0)) {
    const float unbiased = var * count / (count - 1.0);
    Floats(p.running_mean_addr).v[c] =
        (1.0 - p.momentum) * Floats(p.running_mean_addr).v[c] + p.momentum * mean;
    Floats(p.running_var_addr).v[c] =
        (1.0 - p.momentum) * Floats(p.running_var_addr).v[c] + p.momentum * unbiased;
  }
  const float scale = invstd * param_or(p.weight_addr, c, 1.0);
  store_coef(c, vec4(scale, param_or(p.bias_addr, c, 0.0) - mean * scale, 0.0, 0.0));
}

void forward_eval(uint c, uint lane) {
  if (lane != 0) return;
  const float mean = Floats(p.running_mean_addr).v[c];
  const float invstd = 1.0 / sqrt(Floats(p.running_var_addr).v[c] + p.eps);
  const float scale = invstd * param_or(p.weight_addr, c, 1.0);
  store_coef(c, vec4(scale, param_or(p.bias_addr, c, 0.0) - mean * scale, 0.0, 0.0));
}

void backward(uint c, uint lane, uint step, float count) {
  const bool training = kMode == 2;
  const float mean = training ? Floats(p.save_mean_addr).v[c] : Floats(p.running_mean_addr).v[c];
  const float invstd = training ? Floats(p.save_invstd_addr).v[c]
                                : 1.0 / sqrt(Floats(p.running_var_addr).v[c] + p.eps);
  const uint total = p.batch * p.spatial;
  vec2 sums = vec2(0.0);  // sum(g), sum(g * xh)
  Walk w = walk_start(lane, step);
  for (uint k = lane; k < total; k += step) {
    const uint at = walk_at(w, c);
    const float g = load(p.grad_addr, at);
    sums += vec2(g, g * ((load(p.x_addr, at) - mean) * invstd));
    walk_next(w);
  }
  sums = team_sum(sums);
  if (lane != 0) return;
  if (p.grad_weight_addr != uvec2(0)) Floats(p.grad_weight_addr).v[c] = sums.y;
  if (p.grad_bias_addr != uvec2(0)) Floats(p.grad_bias_addr).v[c] = sums.x;
  if (p.coef_addr == uvec2(0)) return;
  const float k = param_or(p.weight_addr, c, 1.0) * invstd;
  store_coef(c, training ? vec4(k, sums.x / count, mean, invstd * sums.y / count)
                         : vec4(k, 0.0, 0.0, 0.0));
}

void main() {
  const uint lane = team_lane();
  const uint step = team_size();
  const float count = float(p.batch * p.spatial);
  for (uint c = team_index(); c < p.channels; c += team_count()) {
    switch (kMode) {
      case 0: forward_training(c, lane, step, count); break;
      case 1: forward_eval(c, lane); break;
      default: backward(c, lane, step, count); break;
    }
  }
}
