// The per-call coefficients of the fused optimizer steps, computed once in
// double from the hyperparameters and narrowed to a device's compute type
// C (float, or double for float64 parameters). The flags become
// coefficients (a sign, a zero weight decay, a unit parameter scale, a
// divisor of 1 without a grad_scale), so each device's element loop is one
// branch-free body. The update each kernel runs with them is written out
// in runtime/ops/optimizer_fused.cc.
#pragma once

#include <cmath>

#include "runtime/ops/optimizer_ops.h"

namespace tessera {

template <typename C>
struct AdamCoefficients {
  C sign;                  // -1 with maximize
  C coupled_wd;            // Adam's L2 decay added to the gradient (0 for AdamW)
  C param_scale;           // AdamW's 1 - lr * weight_decay (1 for Adam)
  C beta2, eps;
  C m_weight, v_weight;    // 1 - beta1, 1 - beta2
  C step_size;             // lr / (1 - beta1^step)
  C inv_correction2_sqrt;  // 1 / sqrt(1 - beta2^step)
  C grad_div;              // the grad_scale, or 1
  bool lerp_from_start;    // which of PyTorch's two lerp forms (weight < 0.5)
};

template <typename C>
struct SgdCoefficients {
  C sign, lr, weight_decay, momentum;
  C grad_weight;  // 1 - dampening
  C grad_div;     // the grad_scale, or 1
  bool first_step, nesterov;
};

template <typename C>
struct AdagradCoefficients {
  C sign, weight_decay, eps;
  C clr;       // lr / (1 + (step - 1) * lr_decay)
  C grad_div;  // the grad_scale, or 1
};

// grad_scale 0 means none.
template <typename C>
C grad_divisor(double grad_scale) {
  return grad_scale != 0.0 ? static_cast<C>(grad_scale) : C(1);
}

template <typename C>
AdamCoefficients<C> adam_coefficients(const AdamHyper& h, double step, double grad_scale) {
  AdamCoefficients<C> c;
  c.sign = h.maximize ? C(-1) : C(1);
  c.coupled_wd = h.decoupled_weight_decay ? C(0) : static_cast<C>(h.weight_decay);
  c.param_scale = static_cast<C>(h.decoupled_weight_decay ? 1.0 - h.lr * h.weight_decay : 1.0);
  c.beta2 = static_cast<C>(h.beta2);
  c.eps = static_cast<C>(h.eps);
  c.m_weight = static_cast<C>(1.0 - h.beta1);
  c.v_weight = static_cast<C>(1.0 - h.beta2);
  c.step_size = static_cast<C>(h.lr / (1.0 - std::pow(h.beta1, step)));
  c.inv_correction2_sqrt = static_cast<C>(1.0 / std::sqrt(1.0 - std::pow(h.beta2, step)));
  c.grad_div = grad_divisor<C>(grad_scale);
  c.lerp_from_start = c.m_weight < C(0.5);
  return c;
}

template <typename C>
SgdCoefficients<C> sgd_coefficients(const SgdHyper& h, double grad_scale) {
  return {h.maximize ? C(-1) : C(1),
          static_cast<C>(h.lr),
          static_cast<C>(h.weight_decay),
          static_cast<C>(h.momentum),
          static_cast<C>(1.0 - h.dampening),
          grad_divisor<C>(grad_scale),
          h.is_first_step,
          h.nesterov};
}

template <typename C>
AdagradCoefficients<C> adagrad_coefficients(const AdagradHyper& h, double step,
                                            double grad_scale) {
  return {h.maximize ? C(-1) : C(1), static_cast<C>(h.weight_decay), static_cast<C>(h.eps),
          static_cast<C>(h.lr / (1.0 + (step - 1.0) * h.lr_decay)), grad_divisor<C>(grad_scale)};
}

}  // namespace tessera
