// The fused LSTM and GRU cells behind nn.LSTM, nn.GRU, nn.LSTMCell and
// nn.GRUCell. On every device but the CPU, PyTorch's recurrent layers hand
// a step's gate pre-activations to aten::_thnn_fused_lstm_cell /
// _thnn_fused_gru_cell (and autograd their backward ops); the CPU has no
// kernel for them, so the CPU fallback cannot serve them and the layers
// would not run at all. Here each is composed of tessera ops (pointwise,
// cat, sum), so it runs on whichever device holds the tensors.
//
// The workspace is this file's own (only its backward reads it):
//   LSTM [B, 4H]: the activated gates i, f, g, o;
//   GRU  [B, 5H]: r, z, n, the hidden part of n's pre-activation (with
//        its bias), and hx.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <optional>
#include <tuple>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/lstm_cell_math.h"
#include "bridge/csrc/ops/op_helpers.h"

namespace torch_tessera {
namespace {

// Sum of the gate pre-activations (and the biases, broadcast over the batch).
at::Tensor gate_sum(const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                    const std::optional<at::Tensor>& input_bias,
                    const std::optional<at::Tensor>& hidden_bias) {
  at::Tensor gates = input_gates + hidden_gates;
  if (present(input_bias)) gates = gates + *input_bias;
  if (present(hidden_bias)) gates = gates + *hidden_bias;
  return gates;
}

void check_cell(const char* op, const at::Tensor& input_gates, const at::Tensor& hidden_gates,
                const at::Tensor& state, int64_t gates_per_unit) {
  TORCH_CHECK(input_gates.dim() == 2 && input_gates.sizes() == hidden_gates.sizes(), op,
              ": input_gates and hidden_gates must be [batch, ", gates_per_unit,
              " * hidden] alike, got ", input_gates.sizes(), " and ", hidden_gates.sizes());
  TORCH_CHECK(state.dim() == 2 && state.size(0) == input_gates.size(0) &&
                  state.size(1) * gates_per_unit == input_gates.size(1),
              op, ": the state must be [batch, hidden] for gates ", input_gates.sizes(), ", got ",
              state.sizes());
}

// -- LSTM: c' = f * c + i * g, h' = o * tanh(c').

std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& cx,
    const std::optional<at::Tensor>& input_bias, const std::optional<at::Tensor>& hidden_bias) {
  check_cell("_thnn_fused_lstm_cell", input_gates, hidden_gates, cx, 4);
  // A fresh sum, activated in place: the workspace as it stands.
  at::Tensor gates = gate_sum(input_gates, hidden_gates, input_bias, hidden_bias).contiguous();
  at::Tensor cy = at::empty_like(cx), tanh_cy = at::empty_like(cx), hy = at::empty_like(cx);
  lstm_cell_forward_into(gates, cx, cy, tanh_cy, hy);
  return {std::move(hy), std::move(cy), std::move(gates)};
}

// (grad of the gate pre-activations, grad of cx, grad of the bias).
std::tuple<at::Tensor, at::Tensor, at::Tensor> fused_lstm_cell_backward(
    const std::optional<at::Tensor>& grad_hy, const std::optional<at::Tensor>& grad_cy,
    const at::Tensor& cx, const at::Tensor& cy, const at::Tensor& workspace, bool has_bias) {
  at::Tensor grad_gates = at::empty(workspace.sizes(), workspace.options());
  at::Tensor grad_cx =
      lstm_cell_backward_into(present(grad_hy) ? *grad_hy : at::Tensor(),
                              present(grad_cy) ? *grad_cy : at::Tensor(), cx, cy.tanh(), workspace,
                              grad_gates);
  at::Tensor grad_bias = has_bias ? grad_gates.sum(0) : at::Tensor();
  return {std::move(grad_gates), std::move(grad_cx), std::move(grad_bias)};
}

// -- GRU: n = tanh(in + r * hn), h' = n + z * (h - n), with r, z from the
// sums of the input and hidden parts and hn the hidden part of n (with its
// bias, as PyTorch's GRU defines it).

std::tuple<at::Tensor, at::Tensor> fused_gru_cell(
    const at::Tensor& input_gates, const at::Tensor& hidden_gates, const at::Tensor& hx,
    const std::optional<at::Tensor>& input_bias, const std::optional<at::Tensor>& hidden_bias) {
  check_cell("_thnn_fused_gru_cell", input_gates, hidden_gates, hx, 3);
  auto in = input_gates.chunk(3, 1), hid = hidden_gates.chunk(3, 1);
  if (present(input_bias)) {
    const auto b = input_bias->chunk(3, 0);
    for (int k = 0; k < 3; ++k) in[k] = in[k] + b[k];
  }
  if (present(hidden_bias)) {
    const auto b = hidden_bias->chunk(3, 0);
    for (int k = 0; k < 3; ++k) hid[k] = hid[k] + b[k];
  }
  const at::Tensor r = (in[0] + hid[0]).sigmoid();
  const at::Tensor z = (in[1] + hid[1]).sigmoid();
  const at::Tensor n = (in[2] + r * hid[2]).tanh();
  at::Tensor hy = n + z * (hx - n);
  return {std::move(hy), at::cat({r, z, n, hid[2], hx}, 1)};
}

// (grad of the input gates, of the hidden gates, of hx, of the input bias,
// of the hidden bias).
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, at::Tensor> fused_gru_cell_backward(
    const at::Tensor& grad_hy, const at::Tensor& workspace, bool has_bias) {
  const auto w = workspace.chunk(5, 1);
  const at::Tensor &r = w[0], &z = w[1], &n = w[2], &hn = w[3], &hx = w[4];
  const at::Tensor grad_z = grad_hy * (hx - n) * z * (1 - z);
  const at::Tensor grad_n = grad_hy * (1 - z) * (1 - n * n);
  const at::Tensor grad_r = grad_n * hn * r * (1 - r);
  at::Tensor grad_input_gates = at::cat({grad_r, grad_z, grad_n}, 1);
  at::Tensor grad_hidden_gates = at::cat({grad_r, grad_z, grad_n * r}, 1);
  at::Tensor grad_input_bias, grad_hidden_bias;
  if (has_bias) {
    grad_input_bias = grad_input_gates.sum(0);
    grad_hidden_bias = grad_hidden_gates.sum(0);
  }
  return {std::move(grad_input_gates), std::move(grad_hidden_gates), grad_hy * z,
          std::move(grad_input_bias), std::move(grad_hidden_bias)};
}

}  // namespace

TESSERA_ATEN_KERNELS(m) {
  m.impl("_thnn_fused_lstm_cell", TORCH_FN(fused_lstm_cell));
  m.impl("_thnn_fused_lstm_cell_backward_impl", TORCH_FN(fused_lstm_cell_backward));
  m.impl("_thnn_fused_gru_cell", TORCH_FN(fused_gru_cell));
  m.impl("_thnn_fused_gru_cell_backward", TORCH_FN(fused_gru_cell_backward));
}

}  // namespace torch_tessera
