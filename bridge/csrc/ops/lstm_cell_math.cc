#include "bridge/csrc/ops/lstm_cell_math.h"

namespace torch_tessera {

void lstm_cell_forward_into(at::Tensor& gates, const at::Tensor& cx, at::Tensor& cy,
                            at::Tensor& tanh_cy, at::Tensor& hy) {
  // The activations run on whole contiguous blocks (the devices' vector
  // paths): g's tanh first, then the sigmoid over all four gates, then g's
  // quarter put back.
  const int64_t hidden = cx.size(1);
  at::Tensor g = gates.narrow(1, 2 * hidden, hidden);
  const at::Tensor tanh_g = g.tanh();
  gates.sigmoid_();
  g.copy_(tanh_g);
  const auto chunks = gates.chunk(4, 1);
  const at::Tensor &i = chunks[0], &f = chunks[1], &o = chunks[3];
  at::mul_out(cy, f, cx);
  cy.addcmul_(i, tanh_g);
  at::tanh_out(tanh_cy, cy);
  at::mul_out(hy, tanh_cy, o);
}

at::Tensor lstm_cell_backward_into(const at::Tensor& grad_hy, const at::Tensor& grad_cy,
                                   const at::Tensor& cx, const at::Tensor& tanh_cy,
                                   const at::Tensor& activated, at::Tensor& grad_gates) {
  const auto gates = activated.chunk(4, 1);
  const at::Tensor &i = gates[0], &f = gates[1], &g = gates[2], &o = gates[3];
  auto grads = grad_gates.chunk(4, 1);
  at::Tensor &grad_i = grads[0], &grad_f = grads[1], &grad_g = grads[2], &grad_o = grads[3];
  at::Tensor grad_c = grad_cy.defined() ? grad_cy : at::zeros_like(tanh_cy);
  if (grad_hy.defined()) {
    grad_c = grad_c + at::tanh_backward(grad_hy * o, tanh_cy);
    at::sigmoid_backward_out(grad_o, grad_hy * tanh_cy, o);
  } else {
    grad_o.zero_();
  }
  at::sigmoid_backward_out(grad_i, grad_c * g, i);
  at::sigmoid_backward_out(grad_f, grad_c * cx, f);
  at::tanh_backward_out(grad_g, grad_c * i, g);
  return grad_c * f;
}

}  // namespace torch_tessera
