// The fused optimizer steps (kernels/optimizer.cc): one parameter updated
// in place, its contiguous tensors walked once. The including shader
// defines the element access for its dtypes before including this file:
//   float load_element(uvec2 addr, int at);
//   float store_element(uvec2 addr, int at, float v);  // v as stored
// The math is in f32 and in the CPU kernel's order (devices/cpu/kernels/
// optimizer.cc); the host turns the hyperparameters into coefficients in
// double, then f32 (a flag becomes a sign, a zero decay, a unit scale), so
// each body is branch-free but for the flags below. Every arithmetic
// result is `precise`: no driver may fuse or re-associate it, so every
// driver rounds the formula as written (the CPU build may contract
// multiply-adds, so the last f32 bit can differ from it).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

#include "float_math.glsl"

layout(local_size_x_id = 0) in;
// Optimizer in kernels/optimizer.cc: 0 Adam (and AdamW), 1 SGD, 2 Adagrad.
layout(constant_id = 1) const uint kOptimizer = 0;
// Adam: amsgrad (state[2] is max_exp_avg_sq); SGD: a momentum buffer
// (state[0]). Adagrad ignores it.
layout(constant_id = 2) const bool kWithState = false;

const uint kAdam = 0, kSgd = 1, kAdagrad = 2;

// Flag bits (kernels/optimizer.cc, StepFlag).
const uint kUnscale = 1u;       // grad /= grad_scale, written back
const uint kLerpFromStart = 2u; // Adam: m + w (g - m), else g - (g - m)(1 - w)
const uint kFirstStep = 4u;     // SGD: the buffer starts as the gradient
const uint kNesterov = 8u;      // SGD

// OptimizerStepParams in kernels/optimizer.cc; each optimizer reads the
// coefficients its update names.
layout(push_constant, std430) uniform Params {
  uvec2 param_addr;
  uvec2 grad_addr;
  // Adam: exp_avg, exp_avg_sq, max_exp_avg_sq; SGD: momentum_buffer;
  // Adagrad: state_sum.
  uvec2 state_addr[3];
  uint numel;
  uint flags;
  float grad_scale;
  float sign;          // -1 with maximize
  float weight_decay;  // added to the gradient (0 for AdamW)
  float lr;            // Adam: lr / (1 - beta1^t); Adagrad: lr / (1 + (t - 1) lr_decay)
  float eps;
  float param_scale;   // AdamW: 1 - lr * weight_decay
  float beta2;
  float m_weight;      // 1 - beta1
  float v_weight;      // 1 - beta2
  float inv_correction2_sqrt;  // 1 / sqrt(1 - beta2^t)
  float momentum;
  float grad_weight;   // 1 - dampening
} p;

// std::max(a, b) of the CPU kernel, NaN tested on the bits (GLSL's max
// leaves NaN undefined): a unless a < b, so a NaN on either side gives a.
float c_max(float a, float b) {
  if (is_nan(a) || is_nan(b)) return a;
  return a < b ? b : a;
}

void adam_update(int at, float grad) {
  const float pi = load_element(p.param_addr, at);
  precise float gi = p.sign * grad + p.weight_decay * pi;
  const float mi0 = load_element(p.state_addr[0], at);
  precise float mi = (p.flags & kLerpFromStart) != 0u
                         ? mi0 + p.m_weight * (gi - mi0)
                         : gi - (gi - mi0) * (1.0 - p.m_weight);
  store_element(p.state_addr[0], at, mi);
  precise float vi = load_element(p.state_addr[1], at) * p.beta2 + p.v_weight * gi * gi;
  store_element(p.state_addr[1], at, vi);
  float second = vi;
  if (kWithState) {
    second = c_max(load_element(p.state_addr[2], at), vi);
    store_element(p.state_addr[2], at, second);
  }
  precise float denom = c_sqrt(second) * p.inv_correction2_sqrt + p.eps;
  precise float updated = pi * p.param_scale - p.lr * mi / denom;
  store_element(p.param_addr, at, updated);
}

void sgd_update(int at, float grad) {
  const float pi = load_element(p.param_addr, at);
  precise float gi = p.sign * grad + pi * p.weight_decay;
  precise float direction = gi;
  if (kWithState) {
    precise float bi = (p.flags & kFirstStep) != 0u
                           ? gi
                           : load_element(p.state_addr[0], at) * p.momentum + p.grad_weight * gi;
    store_element(p.state_addr[0], at, bi);
    direction = (p.flags & kNesterov) != 0u ? gi + p.momentum * bi : bi;
  }
  precise float updated = pi - p.lr * direction;
  store_element(p.param_addr, at, updated);
}

void adagrad_update(int at, float grad) {
  const float pi = load_element(p.param_addr, at);
  precise float gi = p.sign * grad + pi * p.weight_decay;
  precise float si = load_element(p.state_addr[0], at) + gi * gi;
  store_element(p.state_addr[0], at, si);
  precise float updated = pi - p.lr * gi / (c_sqrt(si) + p.eps);
  store_element(p.param_addr, at, updated);
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    const int at = int(i);
    float grad = load_element(p.grad_addr, at);
    // As PyTorch's fused kernels: the unscaled gradient is written back
    // (rounded to the storage type) and the update uses it unrounded.
    if ((p.flags & kUnscale) != 0u) {
      precise float unscaled = grad / p.grad_scale;
      store_element(p.grad_addr, at, unscaled);
      grad = unscaled;
    }
    if (kOptimizer == kAdam) {
      adam_update(at, grad);
    } else if (kOptimizer == kSgd) {
      sgd_update(at, grad);
    } else {
      adagrad_update(at, grad);
    }
  }
}
