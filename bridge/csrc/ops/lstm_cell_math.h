// The LSTM cell's arithmetic on the summed gate pre-activations, shared by
// the cell op (rnn_cells.cc) and the whole-sequence layer
// (lstm_direction.cc). Gates are [B, 4H] in PyTorch's order i, f, g, o:
//   c' = f * c + i * g, h' = o * tanh(c'),
// with i, f, o sigmoids and g a tanh of their pre-activations.
#pragma once

#include <ATen/ATen.h>

namespace torch_tessera {

// Activates gates [B, 4H] (contiguous) in place, then writes c' into cy,
// tanh(c') into tanh_cy and h' into hy ([B, H], views allowed). gates then
// hold the activated i, f, g, o: what the backward reads with tanh(c').
void lstm_cell_forward_into(at::Tensor& gates, const at::Tensor& cx, at::Tensor& cy,
                            at::Tensor& tanh_cy, at::Tensor& hy);

// Writes the gradient of the gate pre-activations into grad_gates [B, 4H]
// (a view allowed) from the activated gates, cx, tanh(cy) and the
// gradients of hy and cy (either may be undefined: zero); returns the
// gradient of cx.
at::Tensor lstm_cell_backward_into(const at::Tensor& grad_hy, const at::Tensor& grad_cy,
                                   const at::Tensor& cx, const at::Tensor& tanh_cy,
                                   const at::Tensor& activated, at::Tensor& grad_gates);

}  // namespace torch_tessera
