// Softmax, log-softmax, layer norm and batch norm on tessera, forward and
// backward, over the runtime's normalization ops.
//
// Which aten ops PyTorch reaches on PrivateUse1 (checked on 2.13):
// - softmax / log_softmax (CIA) call _softmax / _log_softmax; autograd
//   calls the *_backward_data ops.
// - layer_norm (CIA) calls native_layer_norm, whose CompositeExplicit
//   default would decompose into native_batch_norm: registering it here
//   keeps the fused runtime kernel and the saved (mean, rstd).
// - batch_norm (CIA) -> _batch_norm_impl_index (CIA) -> native_batch_norm,
//   in training and eval; autograd calls native_batch_norm_backward.
//   _native_batch_norm_legit is what torch.export / functionalized graphs
//   call instead; it is the same computation.
// - rms_norm (CIA) decomposes into pointwise ops and mean on every device
//   but CUDA/MPS: aten has no backend entry to register (_fused_rms_norm is
//   CIA as well, and overriding a CIA op would drop its autograd).
#include <torch/library.h>

#include <array>
#include <tuple>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

using Triple = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

tessera::Tensor optional_runtime(const std::optional<at::Tensor>& t, const char* op) {
  return t.has_value() ? to_runtime(*t, op) : tessera::Tensor();
}

// Undefined runtime results (masked-out gradients) stay undefined tensors,
// which autograd reads as "no gradient".
Triple to_torch_triple(const std::tuple<tessera::Tensor, tessera::Tensor, tessera::Tensor>& r) {
  return {to_torch(std::get<0>(r)), to_torch(std::get<1>(r)),
          to_torch(std::get<2>(r))};
}

// -- softmax / log_softmax -------------------------------------------------------

// half_to_float: a float16 input gives a float32 result (CUDA's fused
// path for autocast; CPU torch rejects it, tessera computes it).
std::optional<tessera::DType> softmax_dtype(const at::Tensor& self, bool half_to_float) {
  if (!half_to_float) return std::nullopt;
  TORCH_CHECK(self.scalar_type() == at::kHalf || self.scalar_type() == at::kBFloat16,
              "softmax: half_to_float needs a float16 or bfloat16 input, got ",
              self.scalar_type());
  return tessera::DType::kF32;
}

tessera::Tensor softmax_of(bool is_log, const at::Tensor& self, int64_t dim, bool half_to_float) {
  const char* op = is_log ? "log_softmax" : "softmax";
  const tessera::Tensor x = to_runtime(self, op);
  const std::optional<tessera::DType> dtype = softmax_dtype(self, half_to_float);
  return is_log ? tessera::log_softmax(x, dim, dtype) : tessera::softmax(x, dim, dtype);
}

template <bool kLog>
at::Tensor softmax(const at::Tensor& self, int64_t dim, bool half_to_float) {
  OpScope scope(self);
  return to_torch(call_runtime([&] { return softmax_of(kLog, self, dim, half_to_float); }));
}

template <bool kLog>
at::Tensor& softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float,
                        at::Tensor& out) {
  OpScope scope(self, out);
  return write_out_exact(out,
                   call_runtime([&] { return softmax_of(kLog, self, dim, half_to_float); }));
}

tessera::Tensor softmax_backward_of(bool is_log, const at::Tensor& grad_output,
                                    const at::Tensor& output, int64_t dim,
                                    c10::ScalarType input_dtype) {
  const char* op = is_log ? "_log_softmax_backward_data" : "_softmax_backward_data";
  const tessera::Tensor g = to_runtime(grad_output, op);
  const tessera::Tensor y = to_runtime(output, op);
  const tessera::DType in_dtype = to_runtime_dtype(input_dtype, op);
  return is_log ? tessera::_log_softmax_backward_data(g, y, dim, in_dtype)
                : tessera::_softmax_backward_data(g, y, dim, in_dtype);
}

template <bool kLog>
at::Tensor softmax_backward(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                            c10::ScalarType input_dtype) {
  OpScope scope(grad_output, output);
  return to_torch(call_runtime(
      [&] { return softmax_backward_of(kLog, grad_output, output, dim, input_dtype); }));
}

template <bool kLog>
at::Tensor& softmax_backward_out(const at::Tensor& grad_output, const at::Tensor& output,
                                 int64_t dim, c10::ScalarType input_dtype,
                                 at::Tensor& grad_input) {
  OpScope scope(grad_output, output);
  return write_out_exact(grad_input, call_runtime([&] {
                     return softmax_backward_of(kLog, grad_output, output, dim, input_dtype);
                   }));
}

// -- layer norm ---------------------------------------------------------------------

Triple native_layer_norm(const at::Tensor& input, c10::IntArrayRef normalized_shape,
                         const std::optional<at::Tensor>& weight,
                         const std::optional<at::Tensor>& bias, double eps) {
  OpScope scope(input);
  constexpr const char* op = "native_layer_norm";
  return to_torch_triple(call_runtime([&] {
    return tessera::native_layer_norm(to_runtime(input, op), to_runtime_shape(normalized_shape),
                                      optional_runtime(weight, op), optional_runtime(bias, op),
                                      eps);
  }));
}

Triple native_layer_norm_backward(const at::Tensor& grad_out, const at::Tensor& input,
                                  c10::IntArrayRef normalized_shape, const at::Tensor& mean,
                                  const at::Tensor& rstd, const std::optional<at::Tensor>& weight,
                                  const std::optional<at::Tensor>& bias,
                                  std::array<bool, 3> output_mask) {
  OpScope scope(grad_out, input);
  constexpr const char* op = "native_layer_norm_backward";
  return to_torch_triple(call_runtime([&] {
    return tessera::native_layer_norm_backward(
        to_runtime(grad_out, op), to_runtime(input, op), to_runtime_shape(normalized_shape),
        to_runtime(mean, op), to_runtime(rstd, op), optional_runtime(weight, op),
        optional_runtime(bias, op), output_mask);
  }));
}

// -- batch norm ---------------------------------------------------------------------

Triple batch_norm_of(const char* op, const at::Tensor& input,
                     const std::optional<at::Tensor>& weight,
                     const std::optional<at::Tensor>& bias,
                     const std::optional<at::Tensor>& running_mean,
                     const std::optional<at::Tensor>& running_var, bool training,
                     double momentum, double eps) {
  OpScope scope(input);
  // The runtime updates running_mean / running_var in place through their
  // runtime views, which share the torch tensors' memory.
  return to_torch_triple(call_runtime([&] {
    return tessera::batch_norm(to_runtime(input, op), optional_runtime(weight, op),
                               optional_runtime(bias, op), optional_runtime(running_mean, op),
                               optional_runtime(running_var, op), training, momentum, eps);
  }));
}

Triple native_batch_norm(const at::Tensor& input, const std::optional<at::Tensor>& weight,
                         const std::optional<at::Tensor>& bias,
                         const std::optional<at::Tensor>& running_mean,
                         const std::optional<at::Tensor>& running_var, bool training,
                         double momentum, double eps) {
  return batch_norm_of("native_batch_norm", input, weight, bias, running_mean, running_var,
                       training, momentum, eps);
}

Triple native_batch_norm_legit(const at::Tensor& input, const std::optional<at::Tensor>& weight,
                               const std::optional<at::Tensor>& bias, at::Tensor& running_mean,
                               at::Tensor& running_var, bool training, double momentum,
                               double eps) {
  return batch_norm_of("_native_batch_norm_legit", input, weight, bias, running_mean,
                       running_var, training, momentum, eps);
}

Triple native_batch_norm_legit_no_stats(const at::Tensor& input,
                                        const std::optional<at::Tensor>& weight,
                                        const std::optional<at::Tensor>& bias, bool training,
                                        double momentum, double eps) {
  return batch_norm_of("_native_batch_norm_legit", input, weight, bias, std::nullopt,
                       std::nullopt, training, momentum, eps);
}

Triple native_batch_norm_backward(const at::Tensor& grad_out, const at::Tensor& input,
                                  const std::optional<at::Tensor>& weight,
                                  const std::optional<at::Tensor>& running_mean,
                                  const std::optional<at::Tensor>& running_var,
                                  const std::optional<at::Tensor>& save_mean,
                                  const std::optional<at::Tensor>& save_invstd, bool train,
                                  double eps, std::array<bool, 3> output_mask) {
  OpScope scope(grad_out, input);
  constexpr const char* op = "native_batch_norm_backward";
  return to_torch_triple(call_runtime([&] {
    return tessera::batch_norm_backward(
        to_runtime(grad_out, op), to_runtime(input, op), optional_runtime(weight, op),
        optional_runtime(running_mean, op), optional_runtime(running_var, op),
        optional_runtime(save_mean, op), optional_runtime(save_invstd, op), train, eps,
        output_mask);
  }));
}

TESSERA_ATEN_KERNELS(m) {
  m.impl("_softmax", TORCH_FN(softmax<false>));
  m.impl("_softmax.out", TORCH_FN(softmax_out<false>));
  m.impl("_log_softmax", TORCH_FN(softmax<true>));
  m.impl("_log_softmax.out", TORCH_FN(softmax_out<true>));
  m.impl("_softmax_backward_data", TORCH_FN(softmax_backward<false>));
  m.impl("_softmax_backward_data.out", TORCH_FN(softmax_backward_out<false>));
  m.impl("_log_softmax_backward_data", TORCH_FN(softmax_backward<true>));
  m.impl("_log_softmax_backward_data.out", TORCH_FN(softmax_backward_out<true>));

  m.impl("native_layer_norm", TORCH_FN(native_layer_norm));
  m.impl("native_layer_norm_backward", TORCH_FN(native_layer_norm_backward));

  m.impl("native_batch_norm", TORCH_FN(native_batch_norm));
  m.impl("_native_batch_norm_legit", TORCH_FN(native_batch_norm_legit));
  m.impl("_native_batch_norm_legit.no_stats", TORCH_FN(native_batch_norm_legit_no_stats));
  m.impl("native_batch_norm_backward", TORCH_FN(native_batch_norm_backward));
}

}  // namespace
}  // namespace torch_tessera
