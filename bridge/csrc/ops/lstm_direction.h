// One direction of one LSTM layer over a whole sequence, as one autograd
// node (lstm_direction.cc).
#pragma once

#include <ATen/ATen.h>

#include <tuple>

namespace torch_tessera {

// x [T, B, in] (T >= 1) from the state h0, c0 [B, H] with weights w_ih
// [4H, in], w_hh [4H, H] and biases b_ih, b_hh [4H] (both undefined when
// the layer has none), read from the last step back when reverse: the
// outputs [T, B, H] in time order, the final h and the final c.
std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_direction(
    const at::Tensor& x, const at::Tensor& h0, const at::Tensor& c0, const at::Tensor& w_ih,
    const at::Tensor& w_hh, const at::Tensor& b_ih, const at::Tensor& b_hh, bool reverse);

}  // namespace torch_tessera
