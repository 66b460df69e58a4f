// One direction of one GRU layer as a single autograd node, for the same
// reason as lstm_direction.cc: the backward runs the recurrence for the
// gate gradients only (the fused cell's backward and one addmm per step)
// and then takes every weight gradient and the input gradient as one GEMM
// over all T * B rows, where autograd over per-step ops took the hidden
// weight's gradient as one small GEMM per step.
//
// Forward: the input projection of every step with b_ih is one GEMM; each
// step's hidden projection with b_hh is one addmm; the fused GRU cell
// (rnn_cells.cc) takes both with the biases already added. Saved for the
// backward: the outputs (the previous steps' h) and the cells' workspaces.
#include "bridge/csrc/ops/gru_direction.h"

#include <torch/csrc/autograd/custom_function.h>

#include <optional>
#include <vector>

#include "bridge/csrc/ops/recurrent_gradients.h"

namespace torch_tessera {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct GruDirection : public torch::autograd::Function<GruDirection> {
  static variable_list forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& h0,
                               const at::Tensor& w_ih, const at::Tensor& w_hh,
                               const std::optional<at::Tensor>& b_ih,
                               const std::optional<at::Tensor>& b_hh, bool reverse) {
    const int64_t steps = x.size(0), batch = x.size(1), hidden = w_hh.size(1);
    const at::Tensor rows = x.reshape({steps * batch, x.size(2)});
    // Row-major copies of the transposed weights: faster GEMMs per step
    // (see lstm_direction.cc).
    const at::Tensor w_ih_t = w_ih.t().contiguous(), w_hh_t = w_hh.t().contiguous();
    const bool has_bias = b_ih.has_value();
    const at::Tensor input_gates =
        (has_bias ? at::addmm(*b_ih, rows, w_ih_t) : at::mm(rows, w_ih_t))
            .view({steps, batch, 3 * hidden});
    std::vector<at::Tensor> outputs(static_cast<size_t>(steps));
    std::vector<at::Tensor> workspaces(static_cast<size_t>(steps));
    at::Tensor h = h0;
    for (int64_t k = 0; k < steps; ++k) {
      const int64_t t = reverse ? steps - 1 - k : k;
      const at::Tensor hidden_gates = has_bias ? at::addmm(*b_hh, h, w_hh_t) : at::mm(h, w_hh_t);
      auto [hy, workspace] =
          at::_thnn_fused_gru_cell(input_gates[t], hidden_gates, h, std::nullopt, std::nullopt);
      outputs[static_cast<size_t>(t)] = hy;
      workspaces[static_cast<size_t>(t)] = std::move(workspace);
      h = std::move(hy);
    }
    const at::Tensor out = at::stack(outputs);
    ctx->save_for_backward({x, h0, w_ih, w_hh, out, at::stack(workspaces)});
    ctx->saved_data["reverse"] = reverse;
    ctx->saved_data["has_bias"] = has_bias;
    ctx->set_materialize_grads(false);
    return {out, h.clone()};  // a copy: an output viewing another would be tied to it
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &h0 = saved[1], &w_ih = saved[2], &w_hh = saved[3],
                     &out = saved[4], &workspaces = saved[5];
    const bool reverse = ctx->saved_data["reverse"].toBool();
    const bool has_bias = ctx->saved_data["has_bias"].toBool();
    const at::Tensor& grad_out = grads[0];
    const int64_t steps = x.size(0), batch = x.size(1), hidden = w_hh.size(1);
    // Backward through time, the steps in the opposite order to the forward.
    auto step_of = [&](int64_t k) { return reverse ? k : steps - 1 - k; };
    at::Tensor grad_hy = grads[1];
    if (grad_out.defined()) {
      const at::Tensor g = grad_out[step_of(0)];
      grad_hy = grad_hy.defined() ? g + grad_hy : g;
    }
    if (!grad_hy.defined()) grad_hy = at::zeros({batch, hidden}, x.options());
    std::vector<at::Tensor> grad_input_gates(static_cast<size_t>(steps));
    std::vector<at::Tensor> grad_hidden_gates(static_cast<size_t>(steps));
    at::Tensor grad_h0;
    for (int64_t k = 0; k < steps; ++k) {
      const int64_t t = step_of(k);
      auto [grad_in, grad_hid, grad_hx, unused_b_ih, unused_b_hh] =
          at::_thnn_fused_gru_cell_backward(grad_hy, workspaces[t], /*has_bias=*/false);
      // The previous step's h feeds this step's cell (grad_hx) and hidden
      // projection; its own output adds its gradient.
      at::Tensor base = grad_hx;
      if (k + 1 < steps && grad_out.defined()) base = grad_hx + grad_out[step_of(k + 1)];
      at::Tensor grad_h_prev = at::addmm(base, grad_hid, w_hh);
      grad_input_gates[static_cast<size_t>(t)] = std::move(grad_in);
      grad_hidden_gates[static_cast<size_t>(t)] = std::move(grad_hid);
      if (k + 1 == steps) grad_h0 = std::move(grad_h_prev);
      else grad_hy = std::move(grad_h_prev);
    }
    const at::Tensor gi = at::stack(grad_input_gates).view({steps * batch, 3 * hidden});
    const at::Tensor gh = at::stack(grad_hidden_gates).view({steps * batch, 3 * hidden});
    const SequenceGradients g = sequence_gradients(
        x, h0, out, w_ih, gi, gh, reverse, has_bias,
        {ctx->needs_input_grad(0), ctx->needs_input_grad(2), ctx->needs_input_grad(3)});
    return {g.x, grad_h0, g.w_ih, g.w_hh, g.b_ih, g.b_hh, at::Tensor()};
  }
};

}  // namespace

std::tuple<at::Tensor, at::Tensor> gru_direction(const at::Tensor& x, const at::Tensor& h0,
                                                 const at::Tensor& w_ih, const at::Tensor& w_hh,
                                                 const at::Tensor& b_ih, const at::Tensor& b_hh,
                                                 bool reverse) {
  const variable_list result = GruDirection::apply(x, h0, w_ih, w_hh, optional_input(b_ih),
                                                   optional_input(b_hh), reverse);
  return {result[0], result[1]};
}

}  // namespace torch_tessera
