// The fused optimizer steps (runtime/ops/optimizer_ops.h) with the names,
// argument names and keyword-only hyperparameters of PyTorch's fused
// kernels (torch._fused_adam_ and friends, what torch.optim calls with
// fused=True). Each updates its lists in place and returns None:
//   self                the parameters (floating);
//   grads, exp_avgs ... one tensor per parameter, of its dtype, device and
//                       shape; grads are divided by grad_scale (when given)
//                       and written back unscaled;
//   state_steps         each parameter's step count after this step (PyTorch
//                       increments it before the call): numbers or
//                       one-element tensors;
//   lr                  a number or a one-element tensor;
//   grad_scale          optional one-element tensor dividing every gradient;
//   found_inf           optional one-element tensor: 1 skips the whole step.
#include <optional>
#include <vector>

#include "bindings/csrc/fused_optimizer.h"
#include "bindings/csrc/tensor_list_arg.h"
#include "runtime/ops/ops.h"

namespace tessera_py {

namespace {

using tessera::Tensor;
using TensorList = TensorListArg;
using OptionalTensor = std::optional<Tensor>;

Tensor or_undefined(const OptionalTensor& t) { return t.value_or(Tensor()); }

}  // namespace

void register_fused_optimizer_ops(py::module_& m) {
  for (const bool decoupled : {false, true}) {
    m.def(decoupled ? "_fused_adamw_" : "_fused_adam_",
          [decoupled](const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                      const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs,
                      const std::vector<double>& state_steps, double lr, double beta1,
                      double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                      const OptionalTensor& grad_scale, const OptionalTensor& found_inf) {
      tessera::AdamHyper hyper{lr, beta1, beta2, weight_decay, eps};
      hyper.amsgrad = amsgrad;
      hyper.maximize = maximize;
      hyper.decoupled_weight_decay = decoupled;
      tessera::fused_adam_(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                           hyper, or_undefined(grad_scale), or_undefined(found_inf));
    }, "self"_a, "grads"_a, "exp_avgs"_a, "exp_avg_sqs"_a, "max_exp_avg_sqs"_a, "state_steps"_a,
       py::kw_only(), "lr"_a, "beta1"_a, "beta2"_a, "weight_decay"_a, "eps"_a, "amsgrad"_a,
       "maximize"_a, "grad_scale"_a = py::none(), "found_inf"_a = py::none(), ReleaseGil(),
       decoupled
           ? "One AdamW step: p *= 1 - lr * weight_decay; m = lerp(m, g, 1 - beta1); "
             "v = beta2 * v + (1 - beta2) * g^2 (v_max = max(v_max, v) with amsgrad, which then "
             "replaces v below); p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + "
             "eps), with g the gradient (negated with maximize) and t the step. "
             "max_exp_avg_sqs may be empty without amsgrad."
           : "One Adam step: g += weight_decay * p; m = lerp(m, g, 1 - beta1); "
             "v = beta2 * v + (1 - beta2) * g^2 (v_max = max(v_max, v) with amsgrad, which then "
             "replaces v below); p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + "
             "eps), with g the gradient (negated with maximize) and t the step. "
             "max_exp_avg_sqs may be empty without amsgrad.");
  }

  m.def("_fused_sgd_", [](const TensorList& params, const TensorList& grads,
                          const TensorList& momentum_buffer_list, double weight_decay,
                          double momentum, double lr, double dampening, bool nesterov,
                          bool maximize, bool is_first_step, const OptionalTensor& grad_scale,
                          const OptionalTensor& found_inf) {
    tessera::SgdHyper hyper{lr, weight_decay, momentum, dampening};
    hyper.nesterov = nesterov;
    hyper.maximize = maximize;
    hyper.is_first_step = is_first_step;
    tessera::fused_sgd_(params, grads, momentum_buffer_list, hyper, or_undefined(grad_scale),
                        or_undefined(found_inf));
  }, "self"_a, "grads"_a, "momentum_buffer_list"_a, py::kw_only(), "weight_decay"_a,
     "momentum"_a, "lr"_a, "dampening"_a, "nesterov"_a, "maximize"_a, "is_first_step"_a,
     "grad_scale"_a = py::none(), "found_inf"_a = py::none(), ReleaseGil(),
     "One SGD step: g += weight_decay * p; with momentum, buf = g on the first step, else "
     "momentum * buf + (1 - dampening) * g, and g = g + momentum * buf (nesterov) or buf; "
     "p -= lr * g, with g the gradient (negated with maximize). momentum_buffer_list may be "
     "empty when momentum is 0.");

  m.def("_fused_adagrad_", [](const TensorList& params, const TensorList& grads,
                              const TensorList& state_sums, const std::vector<double>& state_steps,
                              double lr, double lr_decay, double weight_decay, double eps,
                              bool maximize, const OptionalTensor& grad_scale,
                              const OptionalTensor& found_inf) {
    tessera::AdagradHyper hyper{lr, lr_decay, weight_decay, eps};
    hyper.maximize = maximize;
    tessera::fused_adagrad_(params, grads, state_sums, state_steps, hyper,
                            or_undefined(grad_scale), or_undefined(found_inf));
  }, "self"_a, "grads"_a, "state_sums"_a, "state_steps"_a, py::kw_only(), "lr"_a, "lr_decay"_a,
     "weight_decay"_a, "eps"_a, "maximize"_a, "grad_scale"_a = py::none(),
     "found_inf"_a = py::none(), ReleaseGil(),
     "One Adagrad step: g += weight_decay * p; sum += g^2; p -= lr / (1 + (t - 1) * lr_decay) * "
     "g / (sqrt(sum) + eps), with g the gradient (negated with maximize) and t the step.");
}

}  // namespace tessera_py
