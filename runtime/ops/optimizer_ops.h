// Op front ends: the fused optimizer steps (PyTorch's _fused_adam_,
// _fused_adamw_, _fused_sgd_ and _fused_adagrad_), each one call over
// lists of parameters and their state, updated in place.
//
// A device that registers the step kernels (kernels::AdamStep, SgdStep,
// AdagradStep) runs each tensor in one pass over memory; any other device,
// or a non-contiguous tensor, runs the same arithmetic as pointwise ops.
// grad_scale (when defined) divides every gradient, which is written back
// unscaled, as PyTorch's kernels do; found_inf (when defined and 1) skips
// the step entirely.
#pragma once

#include <vector>

#include "runtime/core/tensor.h"

namespace tessera {

struct AdamHyper {
  double lr, beta1, beta2, weight_decay, eps;
  bool amsgrad = false;
  bool maximize = false;
  bool decoupled_weight_decay = false;  // AdamW
};

struct SgdHyper {
  double lr, weight_decay, momentum, dampening;
  bool nesterov = false;
  bool maximize = false;
  bool is_first_step = false;  // the momentum buffer starts as the gradient
};

struct AdagradHyper {
  double lr, lr_decay, weight_decay, eps;
  bool maximize = false;
};

// max_exp_avg_sqs may be empty unless amsgrad; steps hold each parameter's
// step count, already incremented for this step (the caller reads them:
// PyTorch keeps them as tensors that may live on the host).
void fused_adam_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                 const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& steps,
                 const AdamHyper& hyper, const Tensor& grad_scale = {},
                 const Tensor& found_inf = {});
// momentum_buffers may be empty when momentum is 0.
void fused_sgd_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& momentum_buffers, const SgdHyper& hyper,
                const Tensor& grad_scale = {}, const Tensor& found_inf = {});
void fused_adagrad_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                    const std::vector<Tensor>& state_sums, const std::vector<double>& steps,
                    const AdagradHyper& hyper, const Tensor& grad_scale = {},
                    const Tensor& found_inf = {});

}  // namespace tessera
