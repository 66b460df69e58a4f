// 3-D pooling (max, average, adaptive average) and adaptive max pooling in
// 2-D and 3-D on tessera, forward and backward, over the runtime's
// composites (runtime/ops/nn_pool3d.cc, nn_adaptive_pool.cc,
// nn_adaptive_max_pool.cc). aten's max_pool1d/adaptive_max_pool1d and
// adaptive_avg_pool3d (1x1x1 as a mean) are composite and reach these.
#include <torch/library.h>

#include <optional>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

using Pair = std::tuple<at::Tensor, at::Tensor>;
using PairRef = std::tuple<at::Tensor&, at::Tensor&>;

// -- max_pool3d ------------------------------------------------------------------------------

std::tuple<tessera::Tensor, tessera::Tensor> max_pool3d_of(const at::Tensor& self,
                                                           c10::IntArrayRef kernel_size,
                                                           c10::IntArrayRef stride,
                                                           c10::IntArrayRef padding,
                                                           c10::IntArrayRef dilation,
                                                           bool ceil_mode) {
  return tessera::max_pool3d_with_indices(to_runtime(self, "max_pool3d"),
                                          to_runtime_shape(kernel_size), to_runtime_shape(stride),
                                          to_runtime_shape(padding), to_runtime_shape(dilation),
                                          ceil_mode);
}

Pair max_pool3d_with_indices(const at::Tensor& self, c10::IntArrayRef kernel_size,
                             c10::IntArrayRef stride, c10::IntArrayRef padding,
                             c10::IntArrayRef dilation, bool ceil_mode) {
  OpScope scope(self);
  auto [v, i] = call_runtime(
      [&] { return max_pool3d_of(self, kernel_size, stride, padding, dilation, ceil_mode); });
  return {to_torch(v), to_torch(i)};
}

PairRef max_pool3d_with_indices_out(const at::Tensor& self, c10::IntArrayRef kernel_size,
                                    c10::IntArrayRef stride, c10::IntArrayRef padding,
                                    c10::IntArrayRef dilation, bool ceil_mode, at::Tensor& out,
                                    at::Tensor& indices) {
  OpScope scope(self);
  auto [v, i] = call_runtime(
      [&] { return max_pool3d_of(self, kernel_size, stride, padding, dilation, ceil_mode); });
  write_out_exact(out, v);
  write_out_exact(indices, i);
  return {out, indices};
}

// The backward scatters by the saved indices; the window parameters are
// implied by them.
tessera::Tensor max_pool3d_backward_of(const at::Tensor& grad_output, const at::Tensor& self,
                                       const at::Tensor& indices) {
  constexpr const char* op = "max_pool3d_backward";
  return tessera::max_pool3d_with_indices_backward(
      to_runtime(grad_output, op), to_runtime(self, op), to_runtime(indices, op));
}

at::Tensor max_pool3d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                            c10::IntArrayRef /*kernel_size*/,
                                            c10::IntArrayRef /*stride*/,
                                            c10::IntArrayRef /*padding*/,
                                            c10::IntArrayRef /*dilation*/, bool /*ceil_mode*/,
                                            const at::Tensor& indices) {
  OpScope scope(grad_output, self);
  return to_torch(call_runtime([&] { return max_pool3d_backward_of(grad_output, self, indices); }));
}

at::Tensor& max_pool3d_with_indices_backward_out(
    const at::Tensor& grad_output, const at::Tensor& self, c10::IntArrayRef /*kernel_size*/,
    c10::IntArrayRef /*stride*/, c10::IntArrayRef /*padding*/, c10::IntArrayRef /*dilation*/,
    bool /*ceil_mode*/, const at::Tensor& indices, at::Tensor& grad_input) {
  OpScope scope(grad_output, self);
  return write_out_exact(grad_input, call_runtime([&] {
                           return max_pool3d_backward_of(grad_output, self, indices);
                         }));
}

// -- avg_pool3d ------------------------------------------------------------------------------

struct AvgArgs {
  c10::IntArrayRef kernel_size, stride, padding;
  bool ceil_mode, count_include_pad;
  std::optional<int64_t> divisor_override;
};

tessera::Tensor avg_pool3d_of(const at::Tensor& self, const AvgArgs& a) {
  return tessera::avg_pool3d(to_runtime(self, "avg_pool3d"), to_runtime_shape(a.kernel_size),
                             to_runtime_shape(a.stride), to_runtime_shape(a.padding), a.ceil_mode,
                             a.count_include_pad, a.divisor_override);
}

at::Tensor avg_pool3d(const at::Tensor& self, c10::IntArrayRef kernel_size,
                      c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode,
                      bool count_include_pad, std::optional<int64_t> divisor_override) {
  OpScope scope(self);
  const AvgArgs a{kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override};
  return to_torch(call_runtime([&] { return avg_pool3d_of(self, a); }));
}

at::Tensor& avg_pool3d_out(const at::Tensor& self, c10::IntArrayRef kernel_size,
                           c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode,
                           bool count_include_pad, std::optional<int64_t> divisor_override,
                           at::Tensor& out) {
  OpScope scope(self);
  const AvgArgs a{kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override};
  return write_out_exact(out, call_runtime([&] { return avg_pool3d_of(self, a); }));
}

tessera::Tensor avg_pool3d_backward_of(const at::Tensor& grad_output, const at::Tensor& self,
                                       const AvgArgs& a) {
  constexpr const char* op = "avg_pool3d_backward";
  return tessera::avg_pool3d_backward(to_runtime(grad_output, op), to_runtime(self, op),
                                      to_runtime_shape(a.kernel_size), to_runtime_shape(a.stride),
                                      to_runtime_shape(a.padding), a.ceil_mode,
                                      a.count_include_pad, a.divisor_override);
}

at::Tensor avg_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                               c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                               c10::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               std::optional<int64_t> divisor_override) {
  OpScope scope(grad_output, self);
  const AvgArgs a{kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override};
  return to_torch(call_runtime([&] { return avg_pool3d_backward_of(grad_output, self, a); }));
}

at::Tensor& avg_pool3d_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                    c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                    c10::IntArrayRef padding, bool ceil_mode,
                                    bool count_include_pad,
                                    std::optional<int64_t> divisor_override,
                                    at::Tensor& grad_input) {
  OpScope scope(grad_output, self);
  const AvgArgs a{kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override};
  return write_out_exact(grad_input,
                         call_runtime([&] { return avg_pool3d_backward_of(grad_output, self, a); }));
}

// -- adaptive_avg_pool3d ---------------------------------------------------------------------

at::Tensor adaptive_avg_pool3d(const at::Tensor& self, c10::IntArrayRef output_size) {
  OpScope scope(self);
  return to_torch(call_runtime([&] {
    return tessera::adaptive_avg_pool3d(to_runtime(self, "adaptive_avg_pool3d"),
                                        to_runtime_shape(output_size));
  }));
}

at::Tensor& adaptive_avg_pool3d_out(const at::Tensor& self, c10::IntArrayRef output_size,
                                    at::Tensor& out) {
  OpScope scope(self);
  return write_out_exact(out, call_runtime([&] {
                           return tessera::adaptive_avg_pool3d(
                               to_runtime(self, "adaptive_avg_pool3d"),
                               to_runtime_shape(output_size));
                         }));
}

tessera::Tensor adaptive_avg_pool3d_backward_of(const at::Tensor& grad_output,
                                                const at::Tensor& self) {
  constexpr const char* op = "adaptive_avg_pool3d_backward";
  return tessera::adaptive_avg_pool3d_backward(to_runtime(grad_output, op), to_runtime(self, op));
}

at::Tensor adaptive_avg_pool3d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  OpScope scope(grad_output, self);
  return to_torch(call_runtime([&] { return adaptive_avg_pool3d_backward_of(grad_output, self); }));
}

at::Tensor& adaptive_avg_pool3d_backward_out(const at::Tensor& grad_output,
                                             const at::Tensor& self, at::Tensor& grad_input) {
  OpScope scope(grad_output, self);
  return write_out_exact(grad_input, call_runtime([&] {
                           return adaptive_avg_pool3d_backward_of(grad_output, self);
                         }));
}

// -- adaptive_max_pool2d / adaptive_max_pool3d -----------------------------------------------

using AdaptiveMax = std::tuple<tessera::Tensor, tessera::Tensor> (*)(const tessera::Tensor&,
                                                                      const tessera::Shape&);
using AdaptiveMaxBackward = tessera::Tensor (*)(const tessera::Tensor&, const tessera::Tensor&,
                                                const tessera::Tensor&);

template <AdaptiveMax kForward, const char* kOp>
Pair adaptive_max_pool(const at::Tensor& self, c10::IntArrayRef output_size) {
  OpScope scope(self);
  auto [v, i] = call_runtime(
      [&] { return kForward(to_runtime(self, kOp), to_runtime_shape(output_size)); });
  return {to_torch(v), to_torch(i)};
}

template <AdaptiveMax kForward, const char* kOp>
PairRef adaptive_max_pool_out(const at::Tensor& self, c10::IntArrayRef output_size,
                              at::Tensor& out, at::Tensor& indices) {
  OpScope scope(self);
  auto [v, i] = call_runtime(
      [&] { return kForward(to_runtime(self, kOp), to_runtime_shape(output_size)); });
  write_out_exact(out, v);
  write_out_exact(indices, i);
  return {out, indices};
}

template <AdaptiveMaxBackward kBackward, const char* kOp>
at::Tensor adaptive_max_pool_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                      const at::Tensor& indices) {
  OpScope scope(grad_output, self);
  return to_torch(call_runtime([&] {
    return kBackward(to_runtime(grad_output, kOp), to_runtime(self, kOp),
                     to_runtime(indices, kOp));
  }));
}

template <AdaptiveMaxBackward kBackward, const char* kOp>
at::Tensor& adaptive_max_pool_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                           const at::Tensor& indices, at::Tensor& grad_input) {
  OpScope scope(grad_output, self);
  return write_out_exact(grad_input, call_runtime([&] {
                           return kBackward(to_runtime(grad_output, kOp), to_runtime(self, kOp),
                                            to_runtime(indices, kOp));
                         }));
}

constexpr char kMax2d[] = "adaptive_max_pool2d";
constexpr char kMax3d[] = "adaptive_max_pool3d";
constexpr char kMax2dBackward[] = "adaptive_max_pool2d_backward";
constexpr char kMax3dBackward[] = "adaptive_max_pool3d_backward";

TESSERA_ATEN_KERNELS(m) {
  m.impl("max_pool3d_with_indices", TORCH_FN(max_pool3d_with_indices));
  m.impl("max_pool3d_with_indices.out", TORCH_FN(max_pool3d_with_indices_out));
  m.impl("max_pool3d_with_indices_backward", TORCH_FN(max_pool3d_with_indices_backward));
  m.impl("max_pool3d_with_indices_backward.grad_input",
         TORCH_FN(max_pool3d_with_indices_backward_out));
  m.impl("avg_pool3d", TORCH_FN(avg_pool3d));
  m.impl("avg_pool3d.out", TORCH_FN(avg_pool3d_out));
  m.impl("avg_pool3d_backward", TORCH_FN(avg_pool3d_backward));
  m.impl("avg_pool3d_backward.grad_input", TORCH_FN(avg_pool3d_backward_out));
  m.impl("_adaptive_avg_pool3d", TORCH_FN(adaptive_avg_pool3d));
  m.impl("_adaptive_avg_pool3d.out", TORCH_FN(adaptive_avg_pool3d_out));
  m.impl("adaptive_avg_pool3d.out", TORCH_FN(adaptive_avg_pool3d_out));
  m.impl("_adaptive_avg_pool3d_backward", TORCH_FN(adaptive_avg_pool3d_backward));
  m.impl("_adaptive_avg_pool3d_backward.out", TORCH_FN(adaptive_avg_pool3d_backward_out));
  m.impl("adaptive_avg_pool3d_backward.grad_input", TORCH_FN(adaptive_avg_pool3d_backward_out));
  m.impl("adaptive_max_pool2d",
         TORCH_FN((adaptive_max_pool<&tessera::adaptive_max_pool2d, kMax2d>)));
  m.impl("adaptive_max_pool2d.out",
         TORCH_FN((adaptive_max_pool_out<&tessera::adaptive_max_pool2d, kMax2d>)));
  m.impl("adaptive_max_pool2d_backward",
         TORCH_FN((adaptive_max_pool_backward<&tessera::adaptive_max_pool2d_backward,
                                              kMax2dBackward>)));
  m.impl("adaptive_max_pool2d_backward.grad_input",
         TORCH_FN((adaptive_max_pool_backward_out<&tessera::adaptive_max_pool2d_backward,
                                                  kMax2dBackward>)));
  m.impl("adaptive_max_pool3d",
         TORCH_FN((adaptive_max_pool<&tessera::adaptive_max_pool3d, kMax3d>)));
  m.impl("adaptive_max_pool3d.out",
         TORCH_FN((adaptive_max_pool_out<&tessera::adaptive_max_pool3d, kMax3d>)));
  m.impl("adaptive_max_pool3d_backward",
         TORCH_FN((adaptive_max_pool_backward<&tessera::adaptive_max_pool3d_backward,
                                              kMax3dBackward>)));
  m.impl("adaptive_max_pool3d_backward.grad_input",
         TORCH_FN((adaptive_max_pool_backward_out<&tessera::adaptive_max_pool3d_backward,
                                                  kMax3dBackward>)));
}

}  // namespace
}  // namespace torch_tessera
