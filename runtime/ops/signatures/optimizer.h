// Kernel signatures: one parameter's fused optimizer step, in place (the
// front ends are in optimizer_ops.h). See kernel_signatures.h for the
// conventions; here every tensor is contiguous and of one floating dtype
// (the math runs in float for 16-bit floats), step is the step count for
// this update, and grad_scale is 0 when there is none (then grad is only
// read; otherwise it is written back divided by grad_scale).
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/ops/kernel_context.h"
#include "runtime/ops/optimizer_ops.h"

namespace tessera::kernels {

// max_exp_avg_sq is undefined unless hyper.amsgrad.
struct AdamStep {
  static constexpr const char* name = "adam_step";
  static constexpr bool optional = true;  // composite in the front end
  using Fn = void (*)(const KernelContext&, Tensor& param, Tensor& grad, Tensor& exp_avg,
                      Tensor& exp_avg_sq, Tensor& max_exp_avg_sq, const AdamHyper& hyper,
                      double step, double grad_scale);
};

// momentum_buffer is undefined when hyper.momentum is 0.
struct SgdStep {
  static constexpr const char* name = "sgd_step";
  static constexpr bool optional = true;  // composite in the front end
  using Fn = void (*)(const KernelContext&, Tensor& param, Tensor& grad, Tensor& momentum_buffer,
                      const SgdHyper& hyper, double grad_scale);
};

struct AdagradStep {
  static constexpr const char* name = "adagrad_step";
  static constexpr bool optional = true;  // composite in the front end
  using Fn = void (*)(const KernelContext&, Tensor& param, Tensor& grad, Tensor& state_sum,
                      const AdagradHyper& hyper, double step, double grad_scale);
};

}  // namespace tessera::kernels
