// What the backward of a recurrent layer's direction computes the same
// way whatever its cell (lstm_direction.cc, gru_direction.cc): from the
// gate gradients of every step, the input's and the weights' gradients,
// one GEMM each over all T * B rows.
#pragma once

#include <ATen/ATen.h>

#include <optional>

namespace torch_tessera {

struct SequenceGradients {
  at::Tensor x, w_ih, w_hh, b_ih, b_hh;
};

// Which of the input, w_ih and w_hh want a gradient.
struct WantedGradients {
  bool x, w_ih, w_hh;
};

// x [T, B, in], h0 [B, H] and out [T, B, H] of the forward (read from the
// last step back when reverse); grad_input_rows and grad_hidden_rows are
// the gradients of the input and hidden projections, [T * B, G] (one
// tensor for both when the cell takes their sum). Bias gradients only
// with has_bias.
SequenceGradients sequence_gradients(const at::Tensor& x, const at::Tensor& h0,
                                     const at::Tensor& out, const at::Tensor& w_ih,
                                     const at::Tensor& grad_input_rows,
                                     const at::Tensor& grad_hidden_rows, bool reverse,
                                     bool has_bias, WantedGradients wanted);

// A bias as an input of a custom autograd node: absent rather than an
// undefined tensor, which the node refuses.
std::optional<at::Tensor> optional_input(const at::Tensor& t);

}  // namespace torch_tessera
