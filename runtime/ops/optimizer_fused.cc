// The fused optimizer steps (optimizer_ops.h): validation of the lists,
// then per parameter the device's step kernel, or the same arithmetic as
// pointwise ops where the device has none or a tensor is not contiguous.
//
// The arithmetic is PyTorch's fused CPU kernels':
//   Adam:    g = grad / scale, negated if maximize, + wd * p (AdamW instead
//            scales p by 1 - lr * wd); m = lerp(m, g, 1 - b1);
//            v = b2 v + (1 - b2) g^2; vmax = max(vmax, v) with amsgrad;
//            p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
//   SGD:     g as above (+ wd * p); buf = g on the first step, else
//            momentum buf + (1 - dampening) g; g = g + momentum buf
//            (nesterov) or buf; p -= lr g
//   Adagrad: g as above; sum += g^2; p -= lr / (1 + (t - 1) lr_decay) *
//            g / (sqrt(sum) + eps)
#include <cmath>
#include <initializer_list>
#include <string>

#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

struct NamedList {
  const char* name;
  const std::vector<Tensor>* tensors;
};

// Every list as long as params; each entry defined, on its parameter's
// device, of its dtype and sizes; parameters floating.
void check_lists(const char* op, const std::vector<Tensor>& params,
                 std::initializer_list<NamedList> lists) {
  for (const NamedList& list : lists) {
    TESSERA_CHECK(list.tensors->size() == params.size(), ValueError, op, ": expected ",
                  params.size(), " ", list.name, " (one per parameter), got ",
                  list.tensors->size());
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    TESSERA_CHECK(p.defined(), ValueError, op, ": parameter ", i, " is undefined");
    TESSERA_CHECK(is_floating(p.dtype()), TypeError, op,
                  ": expected floating parameters, got parameter ", i, " ", describe(p));
    for (const NamedList& list : lists) {
      const Tensor& t = (*list.tensors)[i];
      TESSERA_CHECK(t.defined() && t.device() == p.device() && t.dtype() == p.dtype() &&
                        t.sizes() == p.sizes(),
                    ValueError, op, ": ", list.name, " ", i, " (",
                    t.defined() ? describe(t) : std::string("undefined"),
                    ") must match its parameter ", describe(p));
    }
  }
}

double one_value(const char* op, const char* what, const Tensor& t) {
  TESSERA_CHECK(t.numel() == 1, ValueError, op, ": expected a one-element ", what, ", got ",
                describe(t));
  return t.item().to<double>();
}

void check_steps(const char* op, const std::vector<Tensor>& params,
                 const std::vector<double>& steps) {
  TESSERA_CHECK(steps.size() == params.size(), ValueError, op, ": expected ", params.size(),
                " state_steps (one per parameter), got ", steps.size());
}

// found_inf == 1 skips the step (PyTorch's GradScaler found an inf or NaN).
bool skipped(const char* op, const Tensor& found_inf) {
  return found_inf.defined() && one_value(op, "found_inf", found_inf) == 1.0;
}

double scale_of(const char* op, const Tensor& grad_scale) {
  return grad_scale.defined() ? one_value(op, "grad_scale", grad_scale) : 0.0;
}

bool all_contiguous(std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    if (t->defined() && !t->is_contiguous()) return false;
  }
  return true;
}

// The gradient the update uses: unscaled (and written back so), negated
// for maximize, with L2 weight decay added when `coupled_decay`.
Tensor effective_grad(Tensor& grad, const Tensor& param, double scale, bool maximize,
                      double coupled_decay) {
  if (scale != 0.0) grad.copy_(div(grad, Scalar(scale)));
  Tensor g = maximize ? neg(grad) : grad;
  if (coupled_decay != 0.0) g = add(g, param, Scalar(coupled_decay));
  return g;
}

void adam_composite(Tensor& p, Tensor& grad, Tensor& m, Tensor& v, Tensor& vmax,
                    const AdamHyper& h, double step, double scale) {
  const bool decoupled = h.decoupled_weight_decay;
  const Tensor g = effective_grad(grad, p, scale, h.maximize, decoupled ? 0.0 : h.weight_decay);
  if (decoupled && h.weight_decay != 0.0) mul_(p, Scalar(1.0 - h.lr * h.weight_decay));
  lerp_(m, g, Scalar(1.0 - h.beta1));
  mul_(v, Scalar(h.beta2));
  addcmul_(v, g, g, Scalar(1.0 - h.beta2));
  Tensor second = v;
  if (h.amsgrad) {
    // std::max(vmax, v), as the step kernels: a NaN v leaves vmax.
    vmax.copy_(where(lt(vmax, v), v, vmax));
    second = vmax;
  }
  const double step_size = h.lr / (1.0 - std::pow(h.beta1, step));
  const double correction2_sqrt = std::sqrt(1.0 - std::pow(h.beta2, step));
  const Tensor denom = add(div(sqrt(second), Scalar(correction2_sqrt)), Scalar(h.eps));
  addcdiv_(p, m, denom, Scalar(-step_size));
}

void sgd_composite(Tensor& p, Tensor& grad, Tensor& buf, const SgdHyper& h, double scale) {
  Tensor g = effective_grad(grad, p, scale, h.maximize, h.weight_decay);
  if (h.momentum != 0.0) {
    if (h.is_first_step) {
      buf.copy_(g);
    } else {
      mul_(buf, Scalar(h.momentum));
      buf.add_(g, Scalar(1.0 - h.dampening));
    }
    g = h.nesterov ? add(g, buf, Scalar(h.momentum)) : buf;
  }
  p.add_(g, Scalar(-h.lr));
}

void adagrad_composite(Tensor& p, Tensor& grad, Tensor& sum, const AdagradHyper& h, double step,
                       double scale) {
  const Tensor g = effective_grad(grad, p, scale, h.maximize, h.weight_decay);
  addcmul_(sum, g, g, Scalar(1.0));
  const double clr = h.lr / (1.0 + (step - 1.0) * h.lr_decay);
  addcdiv_(p, g, add(sqrt(sum), Scalar(h.eps)), Scalar(-clr));
}

}  // namespace

void fused_adam_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                 const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& steps,
                 const AdamHyper& hyper, const Tensor& grad_scale, const Tensor& found_inf) {
  const char* op = hyper.decoupled_weight_decay ? "_fused_adamw_" : "_fused_adam_";
  check_lists(op, params, {{"grads", &grads}, {"exp_avgs", &exp_avgs},
                           {"exp_avg_sqs", &exp_avg_sqs}});
  if (hyper.amsgrad) check_lists(op, params, {{"max_exp_avg_sqs", &max_exp_avg_sqs}});
  check_steps(op, params, steps);
  if (skipped(op, found_inf)) return;
  const double scale = scale_of(op, grad_scale);
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i], g = grads[i], m = exp_avgs[i], v = exp_avg_sqs[i];
    Tensor vmax = hyper.amsgrad ? max_exp_avg_sqs[i] : Tensor();
    const double step = steps[i];
    if (p.numel() == 0) continue;
    if (all_contiguous({&p, &g, &m, &v, &vmax}) &&
        try_call_kernel<kernels::AdamStep>(p.device(), p, g, m, v, vmax, hyper, step, scale)) {
      continue;
    }
    adam_composite(p, g, m, v, vmax, hyper, step, scale);
  }
}

void fused_sgd_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& momentum_buffers, const SgdHyper& hyper,
                const Tensor& grad_scale, const Tensor& found_inf) {
  const char* op = "_fused_sgd_";
  check_lists(op, params, {{"grads", &grads}});
  if (hyper.momentum != 0.0) check_lists(op, params, {{"momentum_buffer_list", &momentum_buffers}});
  if (skipped(op, found_inf)) return;
  const double scale = scale_of(op, grad_scale);
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i], g = grads[i];
    Tensor buf = hyper.momentum != 0.0 ? momentum_buffers[i] : Tensor();
    if (p.numel() == 0) continue;
    if (all_contiguous({&p, &g, &buf}) &&
        try_call_kernel<kernels::SgdStep>(p.device(), p, g, buf, hyper, scale)) {
      continue;
    }
    sgd_composite(p, g, buf, hyper, scale);
  }
}

void fused_adagrad_(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                    const std::vector<Tensor>& state_sums, const std::vector<double>& steps,
                    const AdagradHyper& hyper, const Tensor& grad_scale,
                    const Tensor& found_inf) {
  const char* op = "_fused_adagrad_";
  check_lists(op, params, {{"grads", &grads}, {"state_sums", &state_sums}});
  check_steps(op, params, steps);
  if (skipped(op, found_inf)) return;
  const double scale = scale_of(op, grad_scale);
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor p = params[i], g = grads[i], sum = state_sums[i];
    const double step = steps[i];
    if (p.numel() == 0) continue;
    if (all_contiguous({&p, &g, &sum}) &&
        try_call_kernel<kernels::AdagradStep>(p.device(), p, g, sum, hyper, step, scale)) {
      continue;
    }
    adagrad_composite(p, g, sum, hyper, step, scale);
  }
}

}  // namespace tessera
