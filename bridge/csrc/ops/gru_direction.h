// One direction of one GRU layer over a whole sequence, as one autograd
// node (gru_direction.cc).
#pragma once

#include <ATen/ATen.h>

#include <tuple>

namespace torch_tessera {

// x [T, B, in] (T >= 1) from the state h0 [B, H] with weights w_ih
// [3H, in], w_hh [3H, H] and biases b_ih, b_hh [3H] (both undefined when
// the layer has none), read from the last step back when reverse: the
// outputs [T, B, H] in time order and the final h.
std::tuple<at::Tensor, at::Tensor> gru_direction(const at::Tensor& x, const at::Tensor& h0,
                                                 const at::Tensor& w_ih, const at::Tensor& w_hh,
                                                 const at::Tensor& b_ih, const at::Tensor& b_hh,
                                                 bool reverse);

}  // namespace torch_tessera
