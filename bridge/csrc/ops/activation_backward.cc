// Gradients of the activations (what autograd calls for relu, gelu, silu,
// sigmoid, tanh, hardswish and hardsigmoid): threshold_backward,
// gelu_backward, silu_backward, sigmoid_backward, tanh_backward,
// hardswish_backward, hardsigmoid_backward, each with its out= form
// (.grad_input, or .out for hardswish_backward).
#include <torch/library.h>

#include <string_view>

#include "bridge/csrc/ops/op_helpers.h"
#include "bridge/csrc/ops/pointwise_registration.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace torch_tessera {
namespace {

using pointwise::check_device_mix;
using pointwise::check_written;
using pointwise::OpName;
using pointwise::RT;

// A backward op as (grad, saved) -> grad_input; the extra argument
// (threshold, approximate) is bound by an adapter below.
using BackwardFn = RT (*)(const RT&, const RT&);

template <OpName kName, BackwardFn kFn>
at::Tensor backward(const at::Tensor& grad, const at::Tensor& saved) {
  const OpScope scope(grad, saved);
  check_device_mix(kName.value, grad, saved);
  return to_torch(
      call_runtime([&] { return kFn(to_runtime(grad, kName.value), to_runtime(saved, kName.value)); }));
}

// The runtime has the functional forms only: the result is cast into
// grad_input, resized to the broadcast shape first.
template <OpName kName, BackwardFn kFn>
at::Tensor& backward_out(const at::Tensor& grad, const at::Tensor& saved,
                         at::Tensor& grad_input) {
  const OpScope scope(grad, saved, grad_input);
  check_device_mix(kName.value, grad, saved);
  check_written(kName.value, grad, grad_input);
  resize_output(grad_input, pointwise::broadcast_sizes(grad, saved));
  RT o = to_runtime(grad_input, kName.value);
  call_runtime([&] {
    tessera::write_out(kName.value, o,
                       kFn(to_runtime(grad, kName.value), to_runtime(saved, kName.value)));
  });
  return grad_input;
}

RT silu_bw(const RT& g, const RT& x) { return tessera::silu_backward(g, x); }
RT sigmoid_bw(const RT& g, const RT& y) { return tessera::sigmoid_backward(g, y); }
RT tanh_bw(const RT& g, const RT& y) { return tessera::tanh_backward(g, y); }
RT hardswish_bw(const RT& g, const RT& x) { return tessera::hardswish_backward(g, x); }
RT hardsigmoid_bw(const RT& g, const RT& x) { return tessera::hardsigmoid_backward(g, x); }

// -- threshold_backward: grad where self > threshold, else 0.
at::Tensor threshold_backward(const at::Tensor& grad, const at::Tensor& self,
                              const c10::Scalar& threshold) {
  const OpScope scope(grad, self);
  check_device_mix("threshold_backward", grad, self);
  const tessera::Scalar t = to_runtime_scalar(threshold, "threshold_backward");
  return to_torch(call_runtime([&] {
    return tessera::threshold_backward(to_runtime(grad, "threshold_backward"),
                                       to_runtime(self, "threshold_backward"), t);
  }));
}

at::Tensor& threshold_backward_out(const at::Tensor& grad, const at::Tensor& self,
                                   const c10::Scalar& threshold, at::Tensor& grad_input) {
  const OpScope scope(grad, self, grad_input);
  check_device_mix("threshold_backward", grad, self);
  check_written("threshold_backward", grad, grad_input);
  resize_output(grad_input, pointwise::broadcast_sizes(grad, self));
  RT o = to_runtime(grad_input, "threshold_backward");
  const tessera::Scalar t = to_runtime_scalar(threshold, "threshold_backward");
  call_runtime([&] {
    tessera::write_out("threshold_backward", o,
                       tessera::threshold_backward(to_runtime(grad, "threshold_backward"),
                                                   to_runtime(self, "threshold_backward"), t));
  });
  return grad_input;
}

// -- gelu_backward with approximate ("none" or "tanh").
std::string_view view_of(c10::string_view s) { return {s.data(), s.size()}; }

at::Tensor gelu_backward(const at::Tensor& grad, const at::Tensor& self,
                         c10::string_view approximate) {
  const OpScope scope(grad, self);
  check_device_mix("gelu_backward", grad, self);
  return to_torch(call_runtime([&] {
    return tessera::gelu_backward(to_runtime(grad, "gelu_backward"),
                                  to_runtime(self, "gelu_backward"), view_of(approximate));
  }));
}

at::Tensor& gelu_backward_out(const at::Tensor& grad, const at::Tensor& self,
                              c10::string_view approximate, at::Tensor& grad_input) {
  const OpScope scope(grad, self, grad_input);
  check_device_mix("gelu_backward", grad, self);
  check_written("gelu_backward", grad, grad_input);
  resize_output(grad_input, pointwise::broadcast_sizes(grad, self));
  RT o = to_runtime(grad_input, "gelu_backward");
  call_runtime([&] {
    tessera::write_out("gelu_backward", o,
                       tessera::gelu_backward(to_runtime(grad, "gelu_backward"),
                                              to_runtime(self, "gelu_backward"),
                                              view_of(approximate)));
  });
  return grad_input;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
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
