// leaky_relu, elu, softplus, hardtanh, log_sigmoid and mish (with selu,
// celu and relu6, which aten builds from elu and hardtanh): functional,
// in-place and out= forms and their backward ops, over the runtime's
// composites (runtime/ops/activation_composite.cc), so they run on every
// tessera device without the CPU fallback.
#include <torch/library.h>

#include <tuple>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "bridge/csrc/ops/pointwise_registration.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/out_check.h"

namespace torch_tessera {
namespace {

using pointwise::check_written;
using pointwise::gradient;
using pointwise::gradient_into;
using pointwise::RT;
using S = const c10::Scalar&;

// -- The forms, each from one runtime function f(x) (or f(grad, saved)).
template <typename F>
at::Tensor functional(const char* op, const at::Tensor& x, F&& f) {
  const OpScope scope(x);
  return to_torch(call_runtime([&] { return f(to_runtime(x, op)); }));
}

template <typename F>
at::Tensor& in_place(const char* op, at::Tensor& self, F&& f) {
  const OpScope scope(self);
  RT s = to_runtime(self, op);
  call_runtime([&] { s.copy_(f(s)); });
  return self;
}

template <typename F>
at::Tensor& into(const char* op, const at::Tensor& x, at::Tensor& out, F&& f) {
  const OpScope scope(x, out);
  check_written(op, x, out);
  resize_output(out, x.sizes());
  RT o = to_runtime(out, op);
  call_runtime([&] { tessera::write_out(op, o, f(to_runtime(x, op))); });
  return out;
}

tessera::Scalar rt(S s) { return to_runtime_scalar(s, "activation"); }

// -- leaky_relu
auto leaky(S slope) {
  return [&slope](const RT& x) { return tessera::leaky_relu(x, rt(slope)); };
}
at::Tensor leaky_relu(const at::Tensor& x, S slope) { return functional("leaky_relu", x, leaky(slope)); }
at::Tensor& leaky_relu_(at::Tensor& x, S slope) { return in_place("leaky_relu_", x, leaky(slope)); }
at::Tensor& leaky_relu_out(const at::Tensor& x, S slope, at::Tensor& out) {
  return into("leaky_relu", x, out, leaky(slope));
}
// With self_is_result, `self` is the result of the in-place form: the same
// sign as the input only for a non-negative slope (PyTorch's rule).
auto leaky_grad(S slope, bool self_is_result) {
  TORCH_CHECK(!self_is_result || slope.toDouble() >= 0.0,
              "In-place leakyReLu backward calculation is triggered with a negative slope which "
              "is not supported. This is caused by calling in-place forward function with a "
              "negative slope, please call out-of-place version instead.");
  return [&slope](const RT& g, const RT& x) { return tessera::leaky_relu_backward(g, x, rt(slope)); };
}
at::Tensor leaky_relu_backward(const at::Tensor& grad, const at::Tensor& self, S slope,
                               bool self_is_result) {
  return gradient("leaky_relu_backward", grad, self, leaky_grad(slope, self_is_result));
}
at::Tensor& leaky_relu_backward_out(const at::Tensor& grad, const at::Tensor& self, S slope,
                                    bool self_is_result, at::Tensor& grad_input) {
  return gradient_into("leaky_relu_backward", grad, self, grad_input,
                       leaky_grad(slope, self_is_result));
}

// -- elu (selu, celu)
auto elu_of(S alpha, S scale, S input_scale) {
  return [&](const RT& x) { return tessera::elu(x, rt(alpha), rt(scale), rt(input_scale)); };
}
at::Tensor elu(const at::Tensor& x, S alpha, S scale, S input_scale) {
  return functional("elu", x, elu_of(alpha, scale, input_scale));
}
at::Tensor& elu_(at::Tensor& x, S alpha, S scale, S input_scale) {
  return in_place("elu_", x, elu_of(alpha, scale, input_scale));
}
at::Tensor& elu_out(const at::Tensor& x, S alpha, S scale, S input_scale, at::Tensor& out) {
  return into("elu", x, out, elu_of(alpha, scale, input_scale));
}
auto elu_grad(S alpha, S scale, S input_scale, bool is_result) {
  return [&, is_result](const RT& g, const RT& v) {
    return tessera::elu_backward(g, rt(alpha), rt(scale), rt(input_scale), is_result, v);
  };
}
at::Tensor elu_backward(const at::Tensor& grad, S alpha, S scale, S input_scale, bool is_result,
                        const at::Tensor& self_or_result) {
  return gradient("elu_backward", grad, self_or_result,
                  elu_grad(alpha, scale, input_scale, is_result));
}
at::Tensor& elu_backward_out(const at::Tensor& grad, S alpha, S scale, S input_scale,
                             bool is_result, const at::Tensor& self_or_result,
                             at::Tensor& grad_input) {
  return gradient_into("elu_backward", grad, self_or_result, grad_input,
                       elu_grad(alpha, scale, input_scale, is_result));
}

// -- softplus
auto softplus_of(S beta, S threshold) {
  return [&](const RT& x) { return tessera::softplus(x, rt(beta), rt(threshold)); };
}
at::Tensor softplus(const at::Tensor& x, S beta, S threshold) {
  return functional("softplus", x, softplus_of(beta, threshold));
}
at::Tensor& softplus_out(const at::Tensor& x, S beta, S threshold, at::Tensor& out) {
  return into("softplus", x, out, softplus_of(beta, threshold));
}
auto softplus_grad(S beta, S threshold) {
  return [&](const RT& g, const RT& x) {
    return tessera::softplus_backward(g, x, rt(beta), rt(threshold));
  };
}
at::Tensor softplus_backward(const at::Tensor& grad, const at::Tensor& self, S beta, S threshold) {
  return gradient("softplus_backward", grad, self, softplus_grad(beta, threshold));
}
at::Tensor& softplus_backward_out(const at::Tensor& grad, const at::Tensor& self, S beta,
                                  S threshold, at::Tensor& grad_input) {
  return gradient_into("softplus_backward", grad, self, grad_input, softplus_grad(beta, threshold));
}

// -- hardtanh (relu6)
auto hardtanh_of(S lo, S hi) {
  return [&](const RT& x) { return tessera::hardtanh(x, rt(lo), rt(hi)); };
}
at::Tensor hardtanh(const at::Tensor& x, S lo, S hi) { return functional("hardtanh", x, hardtanh_of(lo, hi)); }
at::Tensor& hardtanh_(at::Tensor& x, S lo, S hi) { return in_place("hardtanh_", x, hardtanh_of(lo, hi)); }
at::Tensor& hardtanh_out(const at::Tensor& x, S lo, S hi, at::Tensor& out) {
  return into("hardtanh", x, out, hardtanh_of(lo, hi));
}
auto hardtanh_grad(S lo, S hi) {
  return [&](const RT& g, const RT& x) { return tessera::hardtanh_backward(g, x, rt(lo), rt(hi)); };
}
at::Tensor hardtanh_backward(const at::Tensor& grad, const at::Tensor& self, S lo, S hi) {
  return gradient("hardtanh_backward", grad, self, hardtanh_grad(lo, hi));
}
at::Tensor& hardtanh_backward_out(const at::Tensor& grad, const at::Tensor& self, S lo, S hi,
                                  at::Tensor& grad_input) {
  return gradient_into("hardtanh_backward", grad, self, grad_input, hardtanh_grad(lo, hi));
}

// -- log_sigmoid. The buffer PyTorch's CPU kernel keeps for the backward
// is empty here (as on CUDA): the backward recomputes from self.
RT log_sigmoid_of(const RT& x) { return tessera::log_sigmoid(x); }
std::tuple<at::Tensor, at::Tensor> log_sigmoid_forward(const at::Tensor& x) {
  at::Tensor out = functional("log_sigmoid_forward", x, log_sigmoid_of);
  return {out, x.new_empty({0})};
}
std::tuple<at::Tensor&, at::Tensor&> log_sigmoid_forward_out(const at::Tensor& x, at::Tensor& out,
                                                             at::Tensor& buffer) {
  into("log_sigmoid_forward", x, out, log_sigmoid_of);
  resize_output(buffer, {0});
  return {out, buffer};
}
RT log_sigmoid_grad(const RT& g, const RT& x) { return tessera::log_sigmoid_backward(g, x); }
at::Tensor log_sigmoid_backward(const at::Tensor& grad, const at::Tensor& self,
                                const at::Tensor& /*buffer*/) {
  return gradient("log_sigmoid_backward", grad, self, log_sigmoid_grad);
}
at::Tensor& log_sigmoid_backward_out(const at::Tensor& grad, const at::Tensor& self,
                                     const at::Tensor& /*buffer*/, at::Tensor& grad_input) {
  return gradient_into("log_sigmoid_backward", grad, self, grad_input, log_sigmoid_grad);
}

// -- mish
RT mish_of(const RT& x) { return tessera::mish(x); }
at::Tensor mish(const at::Tensor& x) { return functional("mish", x, mish_of); }
at::Tensor& mish_(at::Tensor& x) { return in_place("mish_", x, mish_of); }
at::Tensor& mish_out(const at::Tensor& x, at::Tensor& out) { return into("mish", x, out, mish_of); }
at::Tensor mish_backward(const at::Tensor& grad, const at::Tensor& self) {
  return gradient("mish_backward", grad, self,
                  [](const RT& g, const RT& x) { return tessera::mish_backward(g, x); });
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("leaky_relu", TORCH_FN(leaky_relu));
  m.impl("leaky_relu_", TORCH_FN(leaky_relu_));
  m.impl("leaky_relu.out", TORCH_FN(leaky_relu_out));
  m.impl("leaky_relu_backward", TORCH_FN(leaky_relu_backward));
  m.impl("leaky_relu_backward.grad_input", TORCH_FN(leaky_relu_backward_out));
  m.impl("elu", TORCH_FN(elu));
  m.impl("elu_", TORCH_FN(elu_));
  m.impl("elu.out", TORCH_FN(elu_out));
  m.impl("elu_backward", TORCH_FN(elu_backward));
  m.impl("elu_backward.grad_input", TORCH_FN(elu_backward_out));
  m.impl("softplus", TORCH_FN(softplus));
  m.impl("softplus.out", TORCH_FN(softplus_out));
  m.impl("softplus_backward", TORCH_FN(softplus_backward));
  m.impl("softplus_backward.grad_input", TORCH_FN(softplus_backward_out));
  m.impl("hardtanh", TORCH_FN(hardtanh));
  m.impl("hardtanh_", TORCH_FN(hardtanh_));
  m.impl("hardtanh.out", TORCH_FN(hardtanh_out));
  m.impl("hardtanh_backward", TORCH_FN(hardtanh_backward));
  m.impl("hardtanh_backward.grad_input", TORCH_FN(hardtanh_backward_out));
  m.impl("log_sigmoid_forward", TORCH_FN(log_sigmoid_forward));
  m.impl("log_sigmoid_forward.output", TORCH_FN(log_sigmoid_forward_out));
  m.impl("log_sigmoid_backward", TORCH_FN(log_sigmoid_backward));
  m.impl("log_sigmoid_backward.grad_input", TORCH_FN(log_sigmoid_backward_out));
  m.impl("mish", TORCH_FN(mish));
  m.impl("mish_", TORCH_FN(mish_));
  m.impl("mish.out", TORCH_FN(mish_out));
  m.impl("mish_backward", TORCH_FN(mish_backward));
}

}  // namespace
}  // namespace torch_tessera
