// Gradients of the activations (what autograd calls for relu, gelu, silu,
// sigmoid, tanh, hardswish and hardsigmoid): threshold_backward,
// gelu_backward, silu_backward, sigmoid_backward, tanh_backward,
// hardswish_backward, hardsigmoid_backward, each with its out= form
// (.grad_input, or .out for hardswish_backward).
#include <torch/library.h>

#include <string_view>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "bridge/csrc/ops/pointwise_registration.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

using pointwise::OpName;
using pointwise::RT;

// A backward op as (grad, saved) -> grad_input; the extra argument
// (threshold, approximate) is bound by an adapter below.
using BackwardFn = RT (*)(const RT&, const RT&);

template <OpName kName, BackwardFn kFn>
at::Tensor backward(const at::Tensor& grad, const at::Tensor& saved) {
  return pointwise::gradient(kName.value, grad, saved, kFn);
}

template <OpName kName, BackwardFn kFn>
at::Tensor& backward_out(const at::Tensor& grad, const at::Tensor& saved,
                         at::Tensor& grad_input) {
  return pointwise::gradient_into(kName.value, grad, saved, grad_input, kFn);
}

RT silu_bw(const RT& g, const RT& x) { return tessera::silu_backward(g, x); }
RT sigmoid_bw(const RT& g, const RT& y) { return tessera::sigmoid_backward(g, y); }
RT tanh_bw(const RT& g, const RT& y) { return tessera::tanh_backward(g, y); }
RT hardswish_bw(const RT& g, const RT& x) { return tessera::hardswish_backward(g, x); }
RT hardsigmoid_bw(const RT& g, const RT& x) { return tessera::hardsigmoid_backward(g, x); }

// -- threshold_backward: grad where self > threshold, else 0.
auto threshold_grad(const c10::Scalar& threshold) {
  return [&threshold](const RT& g, const RT& x) {
    return tessera::threshold_backward(g, x, to_runtime_scalar(threshold, "threshold_backward"));
  };
}

at::Tensor threshold_backward(const at::Tensor& grad, const at::Tensor& self,
                              const c10::Scalar& threshold) {
  return pointwise::gradient("threshold_backward", grad, self, threshold_grad(threshold));
}

at::Tensor& threshold_backward_out(const at::Tensor& grad, const at::Tensor& self,
                                   const c10::Scalar& threshold, at::Tensor& grad_input) {
  return pointwise::gradient_into("threshold_backward", grad, self, grad_input,
                                  threshold_grad(threshold));
}

// -- gelu_backward with approximate ("none" or "tanh").
auto gelu_grad(c10::string_view approximate) {
  return [a = std::string_view(approximate.data(), approximate.size())](const RT& g,
                                                                        const RT& x) {
    return tessera::gelu_backward(g, x, a);
  };
}

at::Tensor gelu_backward(const at::Tensor& grad, const at::Tensor& self,
                         c10::string_view approximate) {
  return pointwise::gradient("gelu_backward", grad, self, gelu_grad(approximate));
}

at::Tensor& gelu_backward_out(const at::Tensor& grad, const at::Tensor& self,
                              c10::string_view approximate, at::Tensor& grad_input) {
  return pointwise::gradient_into("gelu_backward", grad, self, grad_input,
                                  gelu_grad(approximate));
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("threshold_backward", TORCH_FN(threshold_backward));
  m.impl("threshold_backward.grad_input", TORCH_FN(threshold_backward_out));
  m.impl("gelu_backward", TORCH_FN(gelu_backward));
  m.impl("gelu_backward.grad_input", TORCH_FN(gelu_backward_out));
  m.impl("silu_backward", TORCH_FN((backward<"silu_backward", &silu_bw>)));
  m.impl("silu_backward.grad_input", TORCH_FN((backward_out<"silu_backward", &silu_bw>)));
  m.impl("sigmoid_backward", TORCH_FN((backward<"sigmoid_backward", &sigmoid_bw>)));
  m.impl("sigmoid_backward.grad_input",
         TORCH_FN((backward_out<"sigmoid_backward", &sigmoid_bw>)));
  m.impl("tanh_backward", TORCH_FN((backward<"tanh_backward", &tanh_bw>)));
  m.impl("tanh_backward.grad_input", TORCH_FN((backward_out<"tanh_backward", &tanh_bw>)));
  m.impl("hardswish_backward", TORCH_FN((backward<"hardswish_backward", &hardswish_bw>)));
  m.impl("hardswish_backward.out",
         TORCH_FN((backward_out<"hardswish_backward", &hardswish_bw>)));
  m.impl("hardsigmoid_backward", TORCH_FN((backward<"hardsigmoid_backward", &hardsigmoid_bw>)));
  m.impl("hardsigmoid_backward.grad_input",
         TORCH_FN((backward_out<"hardsigmoid_backward", &hardsigmoid_bw>)));
}

}  // namespace
}  // namespace torch_tessera
