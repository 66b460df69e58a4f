// glu, prelu and the smooth L1 and Huber losses, forward and backward,
// composed of tessera ops (sigmoid, where, abs, sums), so nn.GLU, nn.PReLU,
// nn.SmoothL1Loss and nn.HuberLoss run without the CPU fallback on every
// tessera device. Arithmetic follows PyTorch's CPU kernels.
#include <ATen/ATen.h>
#include <ATen/core/Reduction.h>
#include <ATen/native/Resize.h>
#include <torch/library.h>

#include <tuple>

namespace torch_tessera {
namespace {

at::Tensor& write_out(at::Tensor& out, const at::Tensor& result) {
  at::native::resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}

// -- glu: the first half of `dim` times the sigmoid of the second.

std::pair<at::Tensor, at::Tensor> glu_halves(const at::Tensor& self, int64_t dim) {
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  TORCH_CHECK(self.size(d) % 2 == 0, "glu: halving dimension ", dim,
              " must be even, got size ", self.size(d), " for input ", self.sizes());
  const int64_t half = self.size(d) / 2;
  return {self.narrow(d, 0, half), self.narrow(d, half, half)};
}

at::Tensor composite_glu(const at::Tensor& self, int64_t dim) {
  const auto [a, b] = glu_halves(self, dim);
  return a * b.sigmoid();
}
at::Tensor& composite_glu_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  return write_out(out, composite_glu(self, dim));
}
at::Tensor composite_glu_backward(const at::Tensor& grad, const at::Tensor& self, int64_t dim) {
  const auto [a, b] = glu_halves(self, dim);
  const at::Tensor s = b.sigmoid();
  return at::cat({grad * s, grad * a * s * (1 - s)}, c10::maybe_wrap_dim(dim, self.dim()));
}
at::Tensor& composite_glu_backward_out(const at::Tensor& grad, const at::Tensor& self, int64_t dim,
                                       at::Tensor& grad_input) {
  return write_out(grad_input, composite_glu_backward(grad, self, dim));
}

// -- prelu: x > 0 ? x : weight * x, weight broadcast against x (aten's
// prelu shapes it so before calling the kernel).

at::Tensor composite_prelu(const at::Tensor& self, const at::Tensor& weight) {
  return at::where(self > 0, self, weight * self);
}
std::tuple<at::Tensor, at::Tensor> composite_prelu_backward(const at::Tensor& grad,
                                                            const at::Tensor& self,
                                                            const at::Tensor& weight) {
  const at::Tensor positive = self > 0;
  at::Tensor grad_self = at::where(positive, grad, weight * grad);
  at::Tensor grad_weight =
      at::where(positive, at::zeros({}, grad.options()), self * grad).sum_to_size(weight.sizes());
  return {std::move(grad_self), std::move(grad_weight)};
}

// -- smooth L1 (beta) and Huber (delta) losses, with their reductions.

at::Tensor reduce(const at::Tensor& loss, int64_t reduction) {
  if (reduction == at::Reduction::Mean) return loss.mean();
  if (reduction == at::Reduction::Sum) return loss.sum();
  return loss;
}

// The elementwise gradient scaled as the reduction asks.
at::Tensor reduced_gradient(const at::Tensor& grad, const at::Tensor& local, int64_t reduction) {
  at::Tensor g = grad * local;
  if (reduction == at::Reduction::Mean) g = g / static_cast<double>(local.numel());
  return g;
}

at::Tensor composite_smooth_l1(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                               double beta) {
  const at::Tensor diff = (self - target).abs();
  if (beta == 0) return reduce(diff, reduction);
  return reduce(at::where(diff < beta, diff * diff * (0.5 / beta), diff - 0.5 * beta), reduction);
}
at::Tensor& composite_smooth_l1_out(const at::Tensor& self, const at::Tensor& target,
                                    int64_t reduction, double beta, at::Tensor& out) {
  return write_out(out, composite_smooth_l1(self, target, reduction, beta));
}
at::Tensor composite_smooth_l1_backward(const at::Tensor& grad, const at::Tensor& self,
                                        const at::Tensor& target, int64_t reduction, double beta) {
  const at::Tensor diff = self - target;
  const at::Tensor local =
      beta == 0 ? diff.sign() : at::where(diff.abs() < beta, diff / beta, diff.sign());
  return reduced_gradient(grad, local, reduction);
}
at::Tensor& composite_smooth_l1_backward_out(const at::Tensor& grad, const at::Tensor& self,
                                             const at::Tensor& target, int64_t reduction,
                                             double beta, at::Tensor& grad_input) {
  return write_out(grad_input, composite_smooth_l1_backward(grad, self, target, reduction, beta));
}

at::Tensor composite_huber(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                           double delta) {
  const at::Tensor diff = (self - target).abs();
  return reduce(at::where(diff < delta, diff * diff * 0.5, (diff - 0.5 * delta) * delta), reduction);
}
at::Tensor& composite_huber_out(const at::Tensor& self, const at::Tensor& target,
                                int64_t reduction, double delta, at::Tensor& out) {
  return write_out(out, composite_huber(self, target, reduction, delta));
}
at::Tensor composite_huber_backward(const at::Tensor& grad, const at::Tensor& self,
                                    const at::Tensor& target, int64_t reduction, double delta) {
  const at::Tensor diff = self - target;
  const at::Tensor local = at::where(diff.abs() <= delta, diff, diff.sign() * delta);
  return reduced_gradient(grad, local, reduction);
}
at::Tensor& composite_huber_backward_out(const at::Tensor& grad, const at::Tensor& self,
                                         const at::Tensor& target, int64_t reduction,
                                         double delta, at::Tensor& grad_input) {
  return write_out(grad_input, composite_huber_backward(grad, self, target, reduction, delta));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("glu", TORCH_FN(composite_glu));
  m.impl("glu.out", TORCH_FN(composite_glu_out));
  m.impl("glu_backward", TORCH_FN(composite_glu_backward));
  m.impl("glu_backward.grad_input", TORCH_FN(composite_glu_backward_out));
  m.impl("_prelu_kernel", TORCH_FN(composite_prelu));
  m.impl("_prelu_kernel_backward", TORCH_FN(composite_prelu_backward));
  m.impl("smooth_l1_loss", TORCH_FN(composite_smooth_l1));
  m.impl("smooth_l1_loss.out", TORCH_FN(composite_smooth_l1_out));
  m.impl("smooth_l1_loss_backward", TORCH_FN(composite_smooth_l1_backward));
  m.impl("smooth_l1_loss_backward.grad_input", TORCH_FN(composite_smooth_l1_backward_out));
  m.impl("huber_loss", TORCH_FN(composite_huber));
  m.impl("huber_loss.out", TORCH_FN(composite_huber_out));
  m.impl("huber_loss_backward", TORCH_FN(composite_huber_backward));
  m.impl("huber_loss_backward.out", TORCH_FN(composite_huber_backward_out));
}

}  // namespace torch_tessera
