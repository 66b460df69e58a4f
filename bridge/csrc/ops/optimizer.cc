// torch.optim's fused steps on tessera: _fused_adam_, _fused_adamw_,
// _fused_sgd_ and _fused_adagrad_ (float and tensor learning rates) over
// the runtime's fused optimizer ops (runtime/ops/optimizer_ops.h), so
// `torch.optim.AdamW(params, fused=True)` runs one pass over each
// parameter's memory instead of the CPU fallback's host round trip.
//
// The step counts (and a tensor lr) are read on the host, as PyTorch's own
// CPU kernels read them: they may live on the CPU or on the device.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <optional>
#include <vector>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

// The step counts on the host, in one transfer (fused optimizers keep them
// on the parameters' device).
std::vector<double> step_values(at::TensorList steps) {
  if (steps.empty()) return {};
  const at::Tensor host = at::stack(steps).reshape({-1}).to(at::kCPU, at::kDouble);
  const double* v = host.data_ptr<double>();
  return std::vector<double>(v, v + host.numel());
}

tessera::Tensor optional_runtime(const std::optional<at::Tensor>& t, const char* op) {
  return t.has_value() && t->defined() ? to_runtime(*t, op) : tessera::Tensor();
}

template <bool kDecoupled>
void fused_adam(at::TensorList self, at::TensorList grads, at::TensorList exp_avgs,
                at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                at::TensorList state_steps, double lr, double beta1, double beta2,
                double weight_decay, double eps, bool amsgrad, bool maximize,
                const std::optional<at::Tensor>& grad_scale,
                const std::optional<at::Tensor>& found_inf) {
  constexpr const char* op = kDecoupled ? "_fused_adamw_" : "_fused_adam_";
  OpScope scope(self);
  const std::vector<double> steps = step_values(state_steps);
  call_runtime([&] {
    tessera::AdamHyper hyper{lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, kDecoupled};
    tessera::fused_adam_(to_runtime(self, op), to_runtime(grads, op), to_runtime(exp_avgs, op),
                         to_runtime(exp_avg_sqs, op),
                         amsgrad ? to_runtime(max_exp_avg_sqs, op) : std::vector<tessera::Tensor>{},
                         steps, hyper, optional_runtime(grad_scale, op),
                         optional_runtime(found_inf, op));
  });
}

template <bool kDecoupled>
void fused_adam_tensor_lr(at::TensorList self, at::TensorList grads, at::TensorList exp_avgs,
                          at::TensorList exp_avg_sqs, at::TensorList max_exp_avg_sqs,
                          at::TensorList state_steps, const at::Tensor& lr, double beta1,
                          double beta2, double weight_decay, double eps, bool amsgrad,
                          bool maximize, const std::optional<at::Tensor>& grad_scale,
                          const std::optional<at::Tensor>& found_inf) {
  fused_adam<kDecoupled>(self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                         lr.item<double>(), beta1, beta2, weight_decay, eps, amsgrad, maximize,
                         grad_scale, found_inf);
}

void fused_sgd(at::TensorList self, at::TensorList grads, at::TensorList momentum_buffer_list,
               double weight_decay, double momentum, double lr, double dampening, bool nesterov,
               bool maximize, bool is_first_step, const std::optional<at::Tensor>& grad_scale,
               const std::optional<at::Tensor>& found_inf) {
  constexpr const char* op = "_fused_sgd_";
  OpScope scope(self);
  call_runtime([&] {
    tessera::SgdHyper hyper{lr, weight_decay, momentum, dampening, nesterov, maximize,
                            is_first_step};
    tessera::fused_sgd_(to_runtime(self, op), to_runtime(grads, op),
                        momentum != 0.0 ? to_runtime(momentum_buffer_list, op)
                                        : std::vector<tessera::Tensor>{},
                        hyper, optional_runtime(grad_scale, op), optional_runtime(found_inf, op));
  });
}

void fused_sgd_tensor_lr(at::TensorList self, at::TensorList grads,
                         at::TensorList momentum_buffer_list, double weight_decay,
                         double momentum, const at::Tensor& lr, double dampening, bool nesterov,
                         bool maximize, bool is_first_step,
                         const std::optional<at::Tensor>& grad_scale,
                         const std::optional<at::Tensor>& found_inf) {
  fused_sgd(self, grads, momentum_buffer_list, weight_decay, momentum, lr.item<double>(),
            dampening, nesterov, maximize, is_first_step, grad_scale, found_inf);
}

void fused_adagrad(at::TensorList self, at::TensorList grads, at::TensorList state_sums,
                   at::TensorList state_steps, double lr, double lr_decay, double weight_decay,
                   double eps, bool maximize, const std::optional<at::Tensor>& grad_scale,
                   const std::optional<at::Tensor>& found_inf) {
  constexpr const char* op = "_fused_adagrad_";
  OpScope scope(self);
  const std::vector<double> steps = step_values(state_steps);
  call_runtime([&] {
    tessera::AdagradHyper hyper{lr, lr_decay, weight_decay, eps, maximize};
    tessera::fused_adagrad_(to_runtime(self, op), to_runtime(grads, op),
                            to_runtime(state_sums, op), steps, hyper,
                            optional_runtime(grad_scale, op), optional_runtime(found_inf, op));
  });
}

void fused_adagrad_tensor_lr(at::TensorList self, at::TensorList grads,
                             at::TensorList state_sums, at::TensorList state_steps,
                             const at::Tensor& lr, double lr_decay, double weight_decay,
                             double eps, bool maximize,
                             const std::optional<at::Tensor>& grad_scale,
                             const std::optional<at::Tensor>& found_inf) {
  fused_adagrad(self, grads, state_sums, state_steps, lr.item<double>(), lr_decay, weight_decay,
                eps, maximize, grad_scale, found_inf);
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("_fused_adam_", TORCH_FN(fused_adam<false>));
  m.impl("_fused_adam_.tensor_lr", TORCH_FN(fused_adam_tensor_lr<false>));
  m.impl("_fused_adamw_", TORCH_FN(fused_adam<true>));
  m.impl("_fused_adamw_.tensor_lr", TORCH_FN(fused_adam_tensor_lr<true>));
  m.impl("_fused_sgd_", TORCH_FN(fused_sgd));
  m.impl("_fused_sgd_.tensor_lr", TORCH_FN(fused_sgd_tensor_lr));
  m.impl("_fused_adagrad_", TORCH_FN(fused_adagrad));
  m.impl("_fused_adagrad_.tensor_lr", TORCH_FN(fused_adagrad_tensor_lr));
}

}  // namespace
}  // namespace torch_tessera
