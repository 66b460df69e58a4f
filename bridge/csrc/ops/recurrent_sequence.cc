// nn.LSTM's and nn.GRU's whole-sequence ops (aten::lstm.input,
// aten::gru.input) on tessera. aten's own implementation, which every
// device but the CPU takes, multiplies each time step's input by the
// input weights separately: two small GEMMs per step and layer. Here each
// layer's input projection for all time steps is one GEMM ([T * B, in] x
// [in, gates]) before the recurrence, which then runs one GEMM (the hidden
// projection) and the fused cell per step, as PyTorch's CPU path does.
// Each direction is one autograd node whose backward takes the weight
// gradients as one GEMM over the sequence (lstm_direction.cc,
// gru_direction.cc). Registered for AutogradPrivateUse1
// (ahead of aten's composite) and PrivateUse1 (inference mode). Calls this
// file does not cover (LSTM projections, unusual parameter lists) go to
// aten's implementation.
#include <ATen/ATen.h>
#include <ATen/ops/gru_native.h>
#include <ATen/ops/lstm_native.h>
#include <torch/library.h>

#include <optional>
#include <tuple>
#include <vector>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/gru_direction.h"
#include "bridge/csrc/ops/lstm_direction.h"
#include "bridge/csrc/ops/op_helpers.h"

namespace torch_tessera {
namespace {

struct LayerWeights {
  at::Tensor w_ih, w_hh;
  std::optional<at::Tensor> b_ih, b_hh;
};

// One direction of one layer: (outputs, final h, final c); c undefined
// for a GRU.
template <bool kLstm>
std::tuple<at::Tensor, at::Tensor, at::Tensor> run_direction(const at::Tensor& x,
                                                             const LayerWeights& w,
                                                             const at::Tensor& h,
                                                             const at::Tensor& c, bool reverse) {
  if constexpr (kLstm) {
    return lstm_direction(x, h, c, w.w_ih, w.w_hh, w.b_ih.value_or(at::Tensor()),
                          w.b_hh.value_or(at::Tensor()), reverse);
  } else {
    auto [out, h_last] = gru_direction(x, h, w.w_ih, w.w_hh, w.b_ih.value_or(at::Tensor()),
                                       w.b_hh.value_or(at::Tensor()), reverse);
    return {out, h_last, at::Tensor()};
  }
}

struct Stack {
  bool has_biases;
  int64_t num_layers;
  double dropout;
  bool train, bidirectional, batch_first;
  int64_t directions() const { return bidirectional ? 2 : 1; }
  int64_t per_layer() const { return has_biases ? 4 : 2; }
};

// Whether this file serves the call: a 3-D input of at least one time
// step (at::stack needs one), one weight set of the plain layout per layer
// and direction, a hidden state as wide as the hidden weights (an LSTM
// projection makes it narrower).
bool covered(const at::Tensor& input, const at::Tensor& h0, at::TensorList params,
             const Stack& s) {
  return input.dim() == 3 && input.size(s.batch_first ? 1 : 0) > 0 && s.num_layers > 0 &&
         static_cast<int64_t>(params.size()) == s.num_layers * s.directions() * s.per_layer() &&
         h0.dim() == 3 && h0.size(2) == params[1].size(1);
}

// The stacked layers: (output, final h, final c); c0 undefined for a GRU.
template <bool kLstm>
std::tuple<at::Tensor, at::Tensor, at::Tensor> run_layers(const at::Tensor& input,
                                                          const at::Tensor& h0,
                                                          const at::Tensor& c0,
                                                          at::TensorList params, const Stack& s) {
  at::Tensor layer_input = s.batch_first ? input.transpose(0, 1) : input;
  std::vector<at::Tensor> final_h, final_c;
  for (int64_t layer = 0; layer < s.num_layers; ++layer) {
    std::vector<at::Tensor> direction_outputs;
    for (int64_t d = 0; d < s.directions(); ++d) {
      const int64_t state = layer * s.directions() + d;
      const size_t p = static_cast<size_t>(state * s.per_layer());
      LayerWeights w{params[p], params[p + 1], std::nullopt, std::nullopt};
      if (s.has_biases) {
        w.b_ih = params[p + 2];
        w.b_hh = params[p + 3];
      }
      auto [out, h, c] = run_direction<kLstm>(layer_input, w, h0[state],
                                              kLstm ? c0[state] : at::Tensor(), d == 1);
      direction_outputs.push_back(std::move(out));
      final_h.push_back(std::move(h));
      if constexpr (kLstm) final_c.push_back(std::move(c));
    }
    layer_input = s.directions() == 1 ? direction_outputs[0] : at::cat(direction_outputs, 2);
    if (s.dropout > 0.0 && s.train && layer + 1 < s.num_layers) {
      layer_input = at::dropout(layer_input, s.dropout, s.train);
    }
  }
  const at::Tensor output = s.batch_first ? layer_input.transpose(0, 1) : layer_input;
  return {output, at::stack(final_h), kLstm ? at::stack(final_c) : at::Tensor()};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> lstm_sequence(
    const at::Tensor& input, at::TensorList hx, at::TensorList params, bool has_biases,
    int64_t num_layers, double dropout, bool train, bool bidirectional, bool batch_first) {
  const Stack s{has_biases, num_layers, dropout, train, bidirectional, batch_first};
  if (hx.size() != 2 || !covered(input, hx[0], params, s)) {
    return at::native::lstm(input, hx, params, has_biases, num_layers, dropout, train,
                            bidirectional, batch_first);
  }
  return run_layers<true>(input, hx[0], hx[1], params, s);
}

std::tuple<at::Tensor, at::Tensor> gru_sequence(const at::Tensor& input, const at::Tensor& hx,
                                                at::TensorList params, bool has_biases,
                                                int64_t num_layers, double dropout, bool train,
                                                bool bidirectional, bool batch_first) {
  const Stack s{has_biases, num_layers, dropout, train, bidirectional, batch_first};
  if (!covered(input, hx, params, s)) {
    return at::native::gru(input, hx, params, has_biases, num_layers, dropout, train,
                           bidirectional, batch_first);
  }
  auto [output, h, c] = run_layers<false>(input, hx, at::Tensor(), params, s);
  return {output, h};
}

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("lstm.input", TORCH_FN(lstm_sequence));
  m.impl("gru.input", TORCH_FN(gru_sequence));
}

// Under inference_mode the autograd keys are skipped: the same kernels.
TESSERA_ATEN_KERNELS(m) {
  m.impl("lstm.input", TORCH_FN(lstm_sequence));
  m.impl("gru.input", TORCH_FN(gru_sequence));
}

}  // namespace
}  // namespace torch_tessera
