#include "bridge/csrc/ops/recurrent_gradients.h"

namespace torch_tessera {

SequenceGradients sequence_gradients(const at::Tensor& x, const at::Tensor& h0,
                                     const at::Tensor& out, const at::Tensor& w_ih,
                                     const at::Tensor& grad_input_rows,
                                     const at::Tensor& grad_hidden_rows, bool reverse,
                                     bool has_bias, WantedGradients wanted) {
  const int64_t steps = x.size(0), rows = steps * x.size(1), hidden = h0.size(-1);
  SequenceGradients g;
  if (wanted.x) g.x = at::mm(grad_input_rows, w_ih).view(x.sizes());
  if (wanted.w_ih) g.w_ih = at::mm(grad_input_rows.t(), x.reshape({rows, x.size(2)}));
  if (wanted.w_hh) {
    // Each step's previous h: h0 then the outputs, in the forward's order.
    const at::Tensor h_prev =
        steps == 1 ? h0.unsqueeze(0)
        : reverse  ? at::cat({out.narrow(0, 1, steps - 1), h0.unsqueeze(0)})
                   : at::cat({h0.unsqueeze(0), out.narrow(0, 0, steps - 1)});
    g.w_hh = at::mm(grad_hidden_rows.t(), h_prev.reshape({rows, hidden}));
  }
  if (has_bias) {
    g.b_ih = grad_input_rows.sum(0);
    // Two parameters get two gradient tensors, even from one sum.
    g.b_hh = grad_hidden_rows.is_same(grad_input_rows) ? g.b_ih.clone()
                                                       : grad_hidden_rows.sum(0);
  }
  return g;
}

std::optional<at::Tensor> optional_input(const at::Tensor& t) {
  return t.defined() ? std::optional<at::Tensor>(t) : std::nullopt;
}

}  // namespace torch_tessera
