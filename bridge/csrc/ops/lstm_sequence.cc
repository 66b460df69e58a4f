// nn.LSTM's whole-sequence op (aten::lstm.input) on tessera. aten's own
// implementation, which every device but the CPU takes, multiplies each
// time step's input by the input weights separately: two small GEMMs per
// step and layer. Here each layer's input projection for all time steps is
// one GEMM ([T * B, in] x [in, 4H]) before the recurrence, which then runs
// one GEMM (the hidden projection) and the fused cell per step, as
// PyTorch's CPU path does. Composed of differentiable aten ops on tessera
// tensors and registered for AutogradPrivateUse1 (ahead of aten's
// composite), so autograd records them; the backward likewise computes the
// input projection's gradients once per layer. Calls this file does not
// cover (projections, unusual parameter lists) go to aten's
// implementation.
#include <ATen/ATen.h>
#include <ATen/ops/lstm_native.h>
#include <torch/library.h>

#include <tuple>
#include <vector>

#include "bridge/csrc/ops/op_helpers.h"

namespace torch_tessera {
namespace {

struct LayerWeights {
  at::Tensor w_ih, w_hh;
  std::optional<at::Tensor> b_ih, b_hh;
};

// One direction of one layer over x [T, B, in] from (h, c): the outputs
// [T, B, H] and the final (h, c).
std::tuple<at::Tensor, at::Tensor, at::Tensor> run_direction(const at::Tensor& x,
                                                             const LayerWeights& w, at::Tensor h,
                                                             at::Tensor c, bool reverse) {
  const int64_t steps = x.size(0);
  // unbind, not indexing: its backward stacks the step gradients once.
  const std::vector<at::Tensor> input_gates = at::matmul(x, w.w_ih.t()).unbind(0);
  std::vector<at::Tensor> outputs(static_cast<size_t>(steps));
  for (int64_t k = 0; k < steps; ++k) {
    const int64_t t = reverse ? steps - 1 - k : k;
    // A fresh transpose per step, as aten's: each step's weight gradient
    // then comes back in the weight's own layout and accumulates there
    // (one shared transpose would gather them transposed, strided).
    auto cell = at::_thnn_fused_lstm_cell(input_gates[static_cast<size_t>(t)],
                                          at::mm(h, w.w_hh.t()), c, w.b_ih, w.b_hh);
    h = std::get<0>(cell);
    c = std::get<1>(cell);
    outputs[static_cast<size_t>(t)] = h;
  }
  return {at::stack(outputs), h, c};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_sequence(
    const at::Tensor& input, at::TensorList hx, at::TensorList params, bool has_biases,
    int64_t num_layers, double dropout, bool train, bool bidirectional, bool batch_first) {
  const int64_t directions = bidirectional ? 2 : 1;
  const int64_t per_layer = has_biases ? 4 : 2;
  const bool covered = input.dim() == 3 && hx.size() == 2 && num_layers > 0 &&
                       static_cast<int64_t>(params.size()) == num_layers * directions * per_layer &&
                       hx[0].dim() == 3 && hx[0].size(2) == params[1].size(1);  // no projection
  if (!covered || input.size(batch_first ? 1 : 0) == 0) {
    return at::native::lstm(input, hx, params, has_biases, num_layers, dropout, train,
                            bidirectional, batch_first);
  }
  at::Tensor layer_input = batch_first ? input.transpose(0, 1) : input;
  std::vector<at::Tensor> final_h, final_c;
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    std::vector<at::Tensor> direction_outputs;
    for (int64_t d = 0; d < directions; ++d) {
      const int64_t state = layer * directions + d;
      const size_t p = static_cast<size_t>(state * per_layer);
      LayerWeights w{params[p], params[p + 1], std::nullopt, std::nullopt};
      if (has_biases) {
        w.b_ih = params[p + 2];
        w.b_hh = params[p + 3];
      }
      auto [out, h, c] = run_direction(layer_input, w, hx[0][state], hx[1][state], d == 1);
      direction_outputs.push_back(std::move(out));
      final_h.push_back(std::move(h));
      final_c.push_back(std::move(c));
    }
    layer_input = directions == 1 ? direction_outputs[0] : at::cat(direction_outputs, 2);
    if (dropout > 0.0 && train && layer + 1 < num_layers) {
      layer_input = at::dropout(layer_input, dropout, train);
    }
  }
  at::Tensor output = batch_first ? layer_input.transpose(0, 1) : layer_input;
  return {output, at::stack(final_h), at::stack(final_c)};
}

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("lstm.input", TORCH_FN(lstm_sequence));
}

}  // namespace
}  // namespace torch_tessera
