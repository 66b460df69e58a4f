// The fused optimizer steps (kernels/optimizer.cc): one parameter updated
// in place, its contiguous tensors walked once. The including shader
// includes real_f32.glsl or real_f64.glsl (REAL, real_is_nan, real_sqrt)
// and defines the element access for its dtypes before including this
// file:
//   REAL load_element(uvec2 addr, int at);
//   void store_element(uvec2 addr, int at, REAL v);
// The math is in REAL and in the CPU kernel's order (devices/cpu/kernels/
// optimizer.cc); the host turns the hyperparameters into coefficients in
// double, then REAL (a flag becomes a sign, a zero decay, a unit scale), so
// each body is branch-free but for the flags below. Every arithmetic
// result is `precise`: no driver may fuse or re-associate it, so every
// driver rounds the formula as written (the CPU build may contract
// multiply-adds, so the last bit can differ from it).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

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

// The coefficient slots (kernels/optimizer.cc, Coefficient). Ten fit a
// double Params in the 128 bytes of push constants every device has, so
// SGD's two coefficients reuse slots that only Adam reads.
const int kGradScale = 0;
const int kSign = 1;               // -1 with maximize
const int kWeightDecay = 2;        // added to the gradient (0 for AdamW)
// Adam: lr / (1 - beta1^t); Adagrad: lr / (1 + (t - 1) lr_decay).
const int kLr = 3;
const int kEps = 4;
const int kParamScale = 5;         // AdamW: 1 - lr * weight_decay
const int kBeta2 = 6;
const int kMWeight = 7;            // 1 - beta1
const int kVWeight = 8;            // 1 - beta2
const int kInvCorrection2Sqrt = 9; // 1 / sqrt(1 - beta2^t)
const int kMomentum = kBeta2;      // SGD
const int kGradWeight = kMWeight;  // SGD: 1 - dampening
const int kCoefficients = 10;

// OptimizerStepParams in kernels/optimizer.cc.
layout(push_constant, std430) uniform Params {
  uvec2 param_addr;
  uvec2 grad_addr;
  // Adam: exp_avg, exp_avg_sq, max_exp_avg_sq; SGD: momentum_buffer;
  // Adagrad: state_sum.
  uvec2 state_addr[3];
  uint numel;
  uint flags;
  REAL c[kCoefficients];
} p;

// std::max(a, b) of the CPU kernel, NaN tested on the bits (GLSL's max
// leaves NaN undefined): a unless a < b, so a NaN on either side gives a.
REAL c_max(REAL a, REAL b) {
  if (real_is_nan(a) || real_is_nan(b)) return a;
  return a < b ? b : a;
}

void adam_update(int at, REAL grad) {
  const REAL pi = load_element(p.param_addr, at);
  precise REAL gi = p.c[kSign] * grad + p.c[kWeightDecay] * pi;
  const REAL mi0 = load_element(p.state_addr[0], at);
  precise REAL mi = (p.flags & kLerpFromStart) != 0u
                        ? mi0 + p.c[kMWeight] * (gi - mi0)
                        : gi - (gi - mi0) * (REAL(1) - p.c[kMWeight]);
  store_element(p.state_addr[0], at, mi);
  precise REAL vi = load_element(p.state_addr[1], at) * p.c[kBeta2] + p.c[kVWeight] * gi * gi;
  store_element(p.state_addr[1], at, vi);
  REAL second = vi;
  if (kWithState) {
    second = c_max(load_element(p.state_addr[2], at), vi);
    store_element(p.state_addr[2], at, second);
  }
  precise REAL denom = real_sqrt(second) * p.c[kInvCorrection2Sqrt] + p.c[kEps];
  precise REAL updated = pi * p.c[kParamScale] - p.c[kLr] * mi / denom;
  store_element(p.param_addr, at, updated);
}

void sgd_update(int at, REAL grad) {
  const REAL pi = load_element(p.param_addr, at);
  precise REAL gi = p.c[kSign] * grad + pi * p.c[kWeightDecay];
  precise REAL direction = gi;
  if (kWithState) {
    precise REAL bi =
        (p.flags & kFirstStep) != 0u
            ? gi
            : load_element(p.state_addr[0], at) * p.c[kMomentum] + p.c[kGradWeight] * gi;
    store_element(p.state_addr[0], at, bi);
    direction = (p.flags & kNesterov) != 0u ? gi + p.c[kMomentum] * bi : bi;
  }
  precise REAL updated = pi - p.c[kLr] * direction;
  store_element(p.param_addr, at, updated);
}

void adagrad_update(int at, REAL grad) {
  const REAL pi = load_element(p.param_addr, at);
  precise REAL gi = p.c[kSign] * grad + pi * p.c[kWeightDecay];
  precise REAL si = load_element(p.state_addr[0], at) + gi * gi;
  store_element(p.state_addr[0], at, si);
  precise REAL updated = pi - p.c[kLr] * gi / (real_sqrt(si) + p.c[kEps]);
  store_element(p.param_addr, at, updated);
}

void main() {
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    const int at = int(i);
    REAL grad = load_element(p.grad_addr, at);
    // As PyTorch's fused kernels: the unscaled gradient is written back
    // (rounded to the storage type) and the update uses it unrounded.
    if ((p.flags & kUnscale) != 0u) {
      precise REAL unscaled = grad / p.c[kGradScale];
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
