// mse_loss and its backward from runtime ops. aten's generated wrapper for
// a device without them allocates a 0-d output and resizes it in the
// fallback, warning on every reduction="none" call. And
// binary_cross_entropy_with_logits: aten's own composite calls log_sigmoid,
// which tessera lacks; the runtime's composite replaces it (autograd's
// backward formula is plain pointwise ops, native already).
#include <ATen/core/Reduction.h>
#include <torch/library.h>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

tessera::Tensor mse(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  const tessera::Tensor x = to_runtime(self, "mse_loss");
  const tessera::Tensor y = to_runtime(target, "mse_loss");
  return call_runtime([&] {
    const tessera::Tensor diff = tessera::sub(x, y);
    const tessera::Tensor squared = tessera::mul(diff, diff);
    switch (reduction) {
      case at::Reduction::None: return squared;
      case at::Reduction::Mean: return tessera::mean(squared);
      case at::Reduction::Sum: return tessera::sum(squared);
    }
    TORCH_CHECK(false, "mse_loss: reduction must be 0 (none), 1 (mean) or 2 (sum), got ",
                reduction);
  });
}

// d/dx of the loss: 2 (x - y) grad, divided by the element count for mean.
tessera::Tensor mse_grad(const at::Tensor& grad_output, const at::Tensor& self,
                         const at::Tensor& target, int64_t reduction) {
  const tessera::Tensor g = to_runtime(grad_output, "mse_loss_backward");
  const tessera::Tensor x = to_runtime(self, "mse_loss_backward");
  const tessera::Tensor y = to_runtime(target, "mse_loss_backward");
  const double scale = reduction == at::Reduction::Mean && self.numel() > 0
                           ? 2.0 / static_cast<double>(self.numel())
                           : 2.0;
  return call_runtime(
      [&] { return tessera::mul(tessera::mul(tessera::sub(x, y), scale), g); });
}

at::Tensor mse_loss(const at::Tensor& self, const at::Tensor& target, int64_t reduction) {
  const OpScope scope(self, target);
  return to_torch(mse(self, target, reduction));
}

at::Tensor& mse_loss_out(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                         at::Tensor& out) {
  const OpScope scope(self, target);
  return write_out(out, mse(self, target, reduction));
}

at::Tensor mse_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target, int64_t reduction) {
  const OpScope scope(self, target);
  return to_torch(mse_grad(grad_output, self, target, reduction));
}

at::Tensor& mse_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                  const at::Tensor& target, int64_t reduction,
                                  at::Tensor& grad_input) {
  const OpScope scope(self, target);
  return write_out(grad_input, mse_grad(grad_output, self, target, reduction));
}

const char* reduction_name(const char* op, int64_t reduction) {
  switch (reduction) {
    case at::Reduction::None: return "none";
    case at::Reduction::Mean: return "mean";
    case at::Reduction::Sum: return "sum";
  }
  TORCH_CHECK(false, op, ": reduction must be 0 (none), 1 (mean) or 2 (sum), got ", reduction);
}

at::Tensor binary_cross_entropy_with_logits(const at::Tensor& self, const at::Tensor& target,
                                            const std::optional<at::Tensor>& weight,
                                            const std::optional<at::Tensor>& pos_weight,
                                            int64_t reduction) {
  constexpr const char* op = "binary_cross_entropy_with_logits";
  const OpScope scope(self, target);
  const char* r = reduction_name(op, reduction);
  return to_torch(call_runtime([&] {
    return tessera::binary_cross_entropy_with_logits(
        to_runtime(self, op), to_runtime(target, op), to_runtime(weight, op).value_or(tessera::Tensor()),
        to_runtime(pos_weight, op).value_or(tessera::Tensor()), r);
  }));
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("binary_cross_entropy_with_logits", TORCH_FN(binary_cross_entropy_with_logits));
  m.impl("mse_loss", TORCH_FN(mse_loss));
  m.impl("mse_loss.out", TORCH_FN(mse_loss_out));
  m.impl("mse_loss_backward", TORCH_FN(mse_loss_backward));
  m.impl("mse_loss_backward.grad_input", TORCH_FN(mse_loss_backward_out));
}

}  // namespace
}  // namespace torch_tessera
