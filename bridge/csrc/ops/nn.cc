// Convolution, 2-D pooling (max, average, adaptive average), embedding backward
// and nll_loss on tessera, forward and backward, over the runtime's nn ops.
//
// Convolution: conv1d/conv2d/conv_transpose* (CIA) -> convolution (CEA) ->
// _convolution, whose backend selection sends any device other than
// CPU/CUDA/MPS to convolution_overrideable (and convolution_backward to
// convolution_backward_overrideable). aten's defaults for those two throw,
// so the boxed CPU fallback never sees them: they must be kernels here.
// The runtime has 2-D and 3-D convolution and their backward; 1-D
// convolutions run as 2-D ones of height 1, and transposed convolutions
// are the backward of a convolution (see conv_transpose).
//
// Attention: scaled_dot_product_attention picks its backend through
// _fused_sdp_choice; attention.cc answers it for tessera.
#include <torch/library.h>

#include <array>
#include <string_view>

#include "bridge/csrc/ops/complex_routing.h"
#include "bridge/csrc/ops/op_helpers.h"
#include "runtime/ops/ops.h"

namespace torch_tessera {
namespace {

using Triple = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

// -- convolution ----------------------------------------------------------------------

struct ConvArgs {
  tessera::Shape stride, padding, dilation, output_padding;
  int64_t groups;
};

// A 1-D convolution is a 2-D one over [N, C, 1, L] with a [O, C/g, 1, k]
// kernel: every spatial parameter gains a leading entry for the unit
// height.
ConvArgs as_2d(const ConvArgs& a) {
  auto widen = [](const tessera::Shape& s, int64_t first) {
    tessera::Shape r{first};
    r.insert(r.end(), s.begin(), s.end());
    return r;
  };
  return {widen(a.stride, 1), widen(a.padding, 0), widen(a.dilation, 1),
          widen(a.output_padding, 0), a.groups};
}

void check_conv_rank(const at::Tensor& input, const at::Tensor& weight, bool transposed) {
  TORCH_CHECK_NOT_IMPLEMENTED(
      input.dim() >= 3 && input.dim() <= 5,
      "convolution: tessera runs 1-D, 2-D and 3-D convolutions (3-D to 5-D input), got input of "
      "shape ",
      input.sizes(), " and weight of shape ", weight.sizes(),
      transposed ? " (transposed)" : "");
}

// output_padding may reach the stride (aten allows up to the dilation);
// then the convolution over the transposed output has floor(output_padding
// / stride) more positions per dim than x. Zeros appended to x fill them
// and add nothing.
tessera::Tensor pad_to_forward_size(const tessera::Tensor& x, const ConvArgs& a) {
  tessera::Shape pad;  // (before, after) pairs from the last dim
  bool any = false;
  for (size_t d = a.stride.size(); d-- > 0;) {
    const int64_t extra = a.output_padding[d] / a.stride[d];
    pad.insert(pad.end(), {0, extra});
    any = any || extra != 0;
  }
  return any ? tessera::constant_pad(x, pad) : x;
}

// The runtime's convolution and its backward for 4-D and 5-D inputs.
tessera::Tensor forward_conv(const tessera::Tensor& x, const tessera::Tensor& w,
                             const tessera::Tensor& b, const ConvArgs& a) {
  if (x.dim() == 5) return tessera::conv3d(x, w, b, a.stride, a.padding, a.dilation, a.groups);
  return tessera::conv2d(x, w, b, a.stride, a.padding, a.dilation, a.groups);
}

std::tuple<tessera::Tensor, tessera::Tensor, tessera::Tensor> backward_conv(
    const tessera::Tensor& grad_output, const tessera::Tensor& x, const tessera::Tensor& w,
    const ConvArgs& a, std::array<bool, 3> mask) {
  if (x.dim() == 5) {
    return tessera::conv3d_backward(grad_output, x, w, a.stride, a.padding, a.dilation, a.groups,
                                    mask);
  }
  return tessera::convolution_backward(grad_output, x, w, a.stride, a.padding, a.dilation,
                                       a.groups, mask);
}

// conv_transpose(x, w) is the input gradient of conv(y, w) for a y of the
// transposed convolution's output shape: run that backward with
// grad_output = x. The input it is given only fixes the shape (its values
// feed grad_weight, which is not asked for).
tessera::Tensor conv_transpose(const tessera::Tensor& x, const tessera::Tensor& w,
                               const ConvArgs& a) {
  const char* op = "conv_transpose";
  const int64_t spatial = static_cast<int64_t>(a.stride.size());
  TESSERA_CHECK(x.dim() == spatial + 2 && w.dim() == spatial + 2, ValueError, op,
                ": expected ", spatial + 2, "-D input and weight, got ",
                tessera::shape_to_string(x.sizes()), " and ",
                tessera::shape_to_string(w.sizes()));
  tessera::Shape out_sizes(static_cast<size_t>(spatial + 2), 0);
  out_sizes[0] = x.size(0);
  out_sizes[1] = w.size(1) * a.groups;
  for (int64_t d = 0; d < spatial; ++d) {
    out_sizes[2 + d] = (x.size(2 + d) - 1) * a.stride[d] - 2 * a.padding[d] +
                       a.dilation[d] * (w.size(2 + d) - 1) + a.output_padding[d] + 1;
  }
  const tessera::Tensor shape_only =
      tessera::empty(out_sizes, tessera::TensorOptions(x.dtype(), x.device()));
  return std::get<0>(
      backward_conv(pad_to_forward_size(x, a), shape_only, w, a, {true, false, false}));
}

tessera::Tensor add_channel_bias(tessera::Tensor out, const tessera::Tensor& bias) {
  if (!bias.defined()) return out;
  tessera::Shape bias_shape(static_cast<size_t>(out.dim() - 1), 1);
  bias_shape[0] = bias.numel();
  return tessera::add(out, bias.reshape(bias_shape));
}

tessera::Tensor convolution_nd(const tessera::Tensor& input, const tessera::Tensor& weight,
                               const tessera::Tensor& bias, bool transposed, const ConvArgs& a) {
  if (!transposed) return forward_conv(input, weight, bias, a);
  return add_channel_bias(conv_transpose(input, weight, a), bias);
}

at::Tensor convolution_overrideable(const at::Tensor& input, const at::Tensor& weight,
                                    const std::optional<at::Tensor>& bias,
                                    c10::IntArrayRef stride, c10::IntArrayRef padding,
                                    c10::IntArrayRef dilation, bool transposed,
                                    c10::IntArrayRef output_padding, int64_t groups) {
  OpScope scope(input, weight);
  check_conv_rank(input, weight, transposed);
  constexpr const char* op = "convolution";
  const ConvArgs args{to_runtime_shape(stride), to_runtime_shape(padding), to_runtime_shape(dilation),
                      to_runtime_shape(output_padding), groups};
  return to_torch(call_runtime([&] {
    const tessera::Tensor x = to_runtime(input, op);
    const tessera::Tensor w = to_runtime(weight, op);
    const tessera::Tensor b = bias.has_value() ? to_runtime(*bias, op) : tessera::Tensor();
    if (input.dim() != 3) return convolution_nd(x, w, b, transposed, args);
    return convolution_nd(x.unsqueeze(2), w.unsqueeze(2), b, transposed, as_2d(args)).squeeze(2);
  }));
}

// Gradients of a 2-D or 3-D convolution, plain or transposed, as (input, weight,
// bias). For the transposed one (out = A_w^T x, A_w the convolution whose
// input has out's shape): d/dx = A_w grad, a forward convolution of the
// gradient; d/dw = the weight gradient of A_w with input grad and output
// gradient x.
std::tuple<tessera::Tensor, tessera::Tensor, tessera::Tensor> convolution_backward_nd(
    const tessera::Tensor& grad_output, const tessera::Tensor& input,
    const tessera::Tensor& weight, bool transposed, const ConvArgs& a,
    std::array<bool, 3> mask) {
  if (!transposed) return backward_conv(grad_output, input, weight, a, mask);
  tessera::Tensor grad_input;
  tessera::Tensor grad_weight;
  tessera::Tensor grad_bias;
  if (mask[0]) {
    grad_input = forward_conv(grad_output, weight, {}, a);
    // Positions past x's size are the zeros pad_to_forward_size appends.
    if (grad_input.sizes() != input.sizes()) {
      for (int64_t d = 2; d < input.dim(); ++d) grad_input = grad_input.narrow(d, 0, input.size(d));
      grad_input = grad_input.contiguous();
    }
  }
  if (mask[1]) {
    grad_weight = std::get<1>(backward_conv(pad_to_forward_size(input, a), grad_output, weight,
                                            a, {false, true, false}));
  }
  if (mask[2]) {
    tessera::Shape dims{0};
    for (int64_t d = 2; d < grad_output.dim(); ++d) dims.push_back(d);
    grad_bias = tessera::sum(grad_output, dims);
  }
  return {grad_input, grad_weight, grad_bias};
}

Triple convolution_backward_overrideable(const at::Tensor& grad_output, const at::Tensor& input,
                                         const at::Tensor& weight, c10::IntArrayRef stride,
                                         c10::IntArrayRef padding, c10::IntArrayRef dilation,
                                         bool transposed, c10::IntArrayRef output_padding,
                                         int64_t groups, std::array<bool, 3> output_mask) {
  OpScope scope(grad_output, input, weight);
  check_conv_rank(input, weight, transposed);
  constexpr const char* op = "convolution_backward";
  const ConvArgs args{to_runtime_shape(stride), to_runtime_shape(padding), to_runtime_shape(dilation),
                      to_runtime_shape(output_padding), groups};
  auto grads = call_runtime([&] {
    const tessera::Tensor g = to_runtime(grad_output, op);
    const tessera::Tensor x = to_runtime(input, op);
    const tessera::Tensor w = to_runtime(weight, op);
    if (input.dim() != 3) return convolution_backward_nd(g, x, w, transposed, args, output_mask);
    auto [gi, gw, gb] = convolution_backward_nd(g.unsqueeze(2), x.unsqueeze(2), w.unsqueeze(2),
                                                transposed, as_2d(args), output_mask);
    return std::make_tuple(gi.defined() ? gi.squeeze(2) : gi, gw.defined() ? gw.squeeze(2) : gw,
                           gb);
  });
  return {to_torch(std::get<0>(grads)), to_torch(std::get<1>(grads)),
          to_torch(std::get<2>(grads))};
}

// -- pooling ----------------------------------------------------------------------------

std::tuple<at::Tensor, at::Tensor> max_pool2d_with_indices(const at::Tensor& self,
                                                           c10::IntArrayRef kernel_size,
                                                           c10::IntArrayRef stride,
                                                           c10::IntArrayRef padding,
                                                           c10::IntArrayRef dilation,
                                                           bool ceil_mode) {
  OpScope scope(self);
  auto [values, indices] = call_runtime([&] {
    return tessera::max_pool2d_with_indices(to_runtime(self, "max_pool2d"),
                                            to_runtime_shape(kernel_size), to_runtime_shape(stride),
                                            to_runtime_shape(padding), to_runtime_shape(dilation), ceil_mode);
  });
  return {to_torch(values), to_torch(indices)};
}

std::tuple<at::Tensor&, at::Tensor&> max_pool2d_with_indices_out(
    const at::Tensor& self, c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
    c10::IntArrayRef padding, c10::IntArrayRef dilation, bool ceil_mode, at::Tensor& out,
    at::Tensor& indices) {
  OpScope scope(self);
  auto [v, i] = call_runtime([&] {
    return tessera::max_pool2d_with_indices(to_runtime(self, "max_pool2d"),
                                            to_runtime_shape(kernel_size), to_runtime_shape(stride),
                                            to_runtime_shape(padding), to_runtime_shape(dilation), ceil_mode);
  });
  write_out_exact(out, v);
  write_out_exact(indices, i);
  return {out, indices};
}

// The runtime's backward scatters by the saved indices; the window
// parameters are implied by them.
at::Tensor max_pool2d_with_indices_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                            c10::IntArrayRef /*kernel_size*/,
                                            c10::IntArrayRef /*stride*/,
                                            c10::IntArrayRef /*padding*/,
                                            c10::IntArrayRef /*dilation*/, bool /*ceil_mode*/,
                                            const at::Tensor& indices) {
  OpScope scope(grad_output, self);
  constexpr const char* op = "max_pool2d_backward";
  return to_torch(call_runtime([&] {
    return tessera::max_pool2d_with_indices_backward(
        to_runtime(grad_output, op), to_runtime(self, op), to_runtime(indices, op));
  }));
}

at::Tensor& max_pool2d_with_indices_backward_out(
    const at::Tensor& grad_output, const at::Tensor& self, c10::IntArrayRef kernel_size,
    c10::IntArrayRef stride, c10::IntArrayRef padding, c10::IntArrayRef dilation, bool ceil_mode,
    const at::Tensor& indices, at::Tensor& grad_input) {
  OpScope scope(grad_output, self);
  constexpr const char* op = "max_pool2d_backward";
  return write_out_exact(grad_input, call_runtime([&] {
                     return tessera::max_pool2d_with_indices_backward(
                         to_runtime(grad_output, op), to_runtime(self, op),
                         to_runtime(indices, op));
                   }));
}

tessera::Tensor avg_pool2d_of(const at::Tensor& self, c10::IntArrayRef kernel_size,
                              c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode,
                              bool count_include_pad, std::optional<int64_t> divisor_override) {
  return tessera::avg_pool2d(to_runtime(self, "avg_pool2d"), to_runtime_shape(kernel_size),
                             to_runtime_shape(stride), to_runtime_shape(padding), ceil_mode, count_include_pad,
                             divisor_override);
}

at::Tensor avg_pool2d(const at::Tensor& self, c10::IntArrayRef kernel_size,
                      c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode,
                      bool count_include_pad, std::optional<int64_t> divisor_override) {
  OpScope scope(self);
  return to_torch(call_runtime([&] {
    return avg_pool2d_of(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                         divisor_override);
  }));
}

at::Tensor& avg_pool2d_out(const at::Tensor& self, c10::IntArrayRef kernel_size,
                           c10::IntArrayRef stride, c10::IntArrayRef padding, bool ceil_mode,
                           bool count_include_pad, std::optional<int64_t> divisor_override,
                           at::Tensor& out) {
  OpScope scope(self);
  return write_out_exact(out, call_runtime([&] {
                     return avg_pool2d_of(self, kernel_size, stride, padding, ceil_mode,
                                          count_include_pad, divisor_override);
                   }));
}

tessera::Tensor avg_pool2d_backward_of(const at::Tensor& grad_output, const at::Tensor& self,
                                       c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                       c10::IntArrayRef padding, bool ceil_mode,
                                       bool count_include_pad,
                                       std::optional<int64_t> divisor_override) {
  constexpr const char* op = "avg_pool2d_backward";
  return tessera::avg_pool2d_backward(to_runtime(grad_output, op), to_runtime(self, op),
                                      to_runtime_shape(kernel_size), to_runtime_shape(stride), to_runtime_shape(padding),
                                      ceil_mode, count_include_pad, divisor_override);
}

at::Tensor avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self,
                               c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                               c10::IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               std::optional<int64_t> divisor_override) {
  OpScope scope(grad_output, self);
  return to_torch(call_runtime([&] {
    return avg_pool2d_backward_of(grad_output, self, kernel_size, stride, padding, ceil_mode,
                                  count_include_pad, divisor_override);
  }));
}

at::Tensor& avg_pool2d_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                    c10::IntArrayRef kernel_size, c10::IntArrayRef stride,
                                    c10::IntArrayRef padding, bool ceil_mode,
                                    bool count_include_pad,
                                    std::optional<int64_t> divisor_override,
                                    at::Tensor& grad_input) {
  OpScope scope(grad_output, self);
  return write_out_exact(grad_input, call_runtime([&] {
                     return avg_pool2d_backward_of(grad_output, self, kernel_size, stride,
                                                   padding, ceil_mode, count_include_pad,
                                                   divisor_override);
                   }));
}

// -- adaptive_avg_pool2d: aten's adaptive_avg_pool2d takes a 1x1 output as
// a mean and calls _adaptive_avg_pool2d for every other size.
at::Tensor adaptive_avg_pool2d(const at::Tensor& self, c10::IntArrayRef output_size) {
  OpScope scope(self);
  return to_torch(call_runtime([&] {
    return tessera::adaptive_avg_pool2d(to_runtime(self, "adaptive_avg_pool2d"),
                                        to_runtime_shape(output_size));
  }));
}

at::Tensor& adaptive_avg_pool2d_out(const at::Tensor& self, c10::IntArrayRef output_size,
                                    at::Tensor& out) {
  OpScope scope(self);
  return write_out_exact(out, call_runtime([&] {
                     return tessera::adaptive_avg_pool2d(to_runtime(self, "adaptive_avg_pool2d"),
                                                         to_runtime_shape(output_size));
                   }));
}

at::Tensor adaptive_avg_pool2d_backward(const at::Tensor& grad_output, const at::Tensor& self) {
  OpScope scope(grad_output, self);
  constexpr const char* op = "adaptive_avg_pool2d_backward";
  return to_torch(call_runtime([&] {
    return tessera::adaptive_avg_pool2d_backward(to_runtime(grad_output, op), to_runtime(self, op));
  }));
}

// -- embedding ---------------------------------------------------------------------------

// scale_grad_by_freq divides each weight row's gradient by how often its
// index occurs in the batch; every contribution to a row gets the same
// factor, so dividing the summed row is the same thing.
at::Tensor embedding_dense_backward(const at::Tensor& grad_output, const at::Tensor& indices,
                                    int64_t num_weights, int64_t padding_idx,
                                    bool scale_grad_by_freq) {
  OpScope scope(grad_output, indices);
  constexpr const char* op = "embedding_dense_backward";
  return to_torch(call_runtime([&] {
    const tessera::Tensor g = to_runtime(grad_output, op);
    const tessera::Tensor idx = to_runtime(indices, op);
    tessera::Tensor grad_weight = tessera::embedding_dense_backward(g, idx, num_weights, padding_idx);
    if (!scale_grad_by_freq) return grad_weight;
    const tessera::Tensor flat = idx.reshape({idx.numel()}).to(tessera::DType::kI64);
    const tessera::Tensor counts = tessera::scatter_add(
        tessera::zeros({num_weights}, tessera::TensorOptions(g.dtype(), g.device())), 0, flat,
        tessera::ones({idx.numel()}, tessera::TensorOptions(g.dtype(), g.device())));
    // Rows no index hit are zero; clamping their count to 1 keeps them so.
    const tessera::Tensor divisor = tessera::clamp(counts, tessera::Scalar(1.0));
    return tessera::div(grad_weight, divisor.reshape({num_weights, 1}));
  }));
}

// -- nll_loss ----------------------------------------------------------------------------

std::string_view reduction_name(int64_t reduction) {
  switch (reduction) {
    case 0: return "none";
    case 1: return "mean";
    case 2: return "sum";
    default: break;
  }
  C10_THROW_ERROR(ValueError, "nll_loss: reduction must be 0 (none), 1 (mean) or 2 (sum), got " +
                                  std::to_string(reduction));
}

std::tuple<tessera::Tensor, tessera::Tensor> nll_loss_forward_of(
    const char* op, const at::Tensor& self, const at::Tensor& target,
    const std::optional<at::Tensor>& weight, int64_t reduction, int64_t ignore_index) {
  const tessera::Tensor w = weight.has_value() ? to_runtime(*weight, op) : tessera::Tensor();
  return tessera::nll_loss_forward(to_runtime(self, op), to_runtime(target, op), w,
                                   reduction_name(reduction), ignore_index);
}

template <const char* kOp>
std::tuple<at::Tensor, at::Tensor> nll_loss_forward(const at::Tensor& self,
                                                    const at::Tensor& target,
                                                    const std::optional<at::Tensor>& weight,
                                                    int64_t reduction, int64_t ignore_index) {
  OpScope scope(self, target);
  auto [loss, total_weight] = call_runtime(
      [&] { return nll_loss_forward_of(kOp, self, target, weight, reduction, ignore_index); });
  return {to_torch(loss), to_torch(total_weight)};
}

template <const char* kOp>
std::tuple<at::Tensor&, at::Tensor&> nll_loss_forward_out(
    const at::Tensor& self, const at::Tensor& target, const std::optional<at::Tensor>& weight,
    int64_t reduction, int64_t ignore_index, at::Tensor& output, at::Tensor& total_weight) {
  OpScope scope(self, target);
  auto [loss, tw] = call_runtime(
      [&] { return nll_loss_forward_of(kOp, self, target, weight, reduction, ignore_index); });
  write_out_exact(output, loss);
  write_out_exact(total_weight, tw);
  return {output, total_weight};
}

tessera::Tensor nll_loss_backward_of(const char* op, const at::Tensor& grad_output,
                                     const at::Tensor& self, const at::Tensor& target,
                                     const std::optional<at::Tensor>& weight, int64_t reduction,
                                     int64_t ignore_index, const at::Tensor& total_weight) {
  const tessera::Tensor w = weight.has_value() ? to_runtime(*weight, op) : tessera::Tensor();
  return tessera::nll_loss_backward(to_runtime(grad_output, op), to_runtime(self, op),
                                    to_runtime(target, op), w, reduction_name(reduction),
                                    ignore_index, to_runtime(total_weight, op));
}

template <const char* kOp>
at::Tensor nll_loss_backward(const at::Tensor& grad_output, const at::Tensor& self,
                             const at::Tensor& target, const std::optional<at::Tensor>& weight,
                             int64_t reduction, int64_t ignore_index,
                             const at::Tensor& total_weight) {
  OpScope scope(grad_output, self);
  return to_torch(call_runtime([&] {
    return nll_loss_backward_of(kOp, grad_output, self, target, weight, reduction, ignore_index,
                                total_weight);
  }));
}

template <const char* kOp>
at::Tensor& nll_loss_backward_out(const at::Tensor& grad_output, const at::Tensor& self,
                                  const at::Tensor& target,
                                  const std::optional<at::Tensor>& weight, int64_t reduction,
                                  int64_t ignore_index, const at::Tensor& total_weight,
                                  at::Tensor& grad_input) {
  OpScope scope(grad_output, self);
  return write_out_exact(grad_input, call_runtime([&] {
                     return nll_loss_backward_of(kOp, grad_output, self, target, weight,
                                                 reduction, ignore_index, total_weight);
                   }));
}

// The runtime's nll_loss takes [N, C, d...] inputs, so nll_loss2d
// ([N, C, H, W] with [N, H, W] targets) is the same op.
constexpr char kNllLoss[] = "nll_loss";
constexpr char kNllLoss2d[] = "nll_loss2d";

TESSERA_ATEN_KERNELS(m) {
  m.impl("convolution_overrideable", TORCH_FN(convolution_overrideable));
  m.impl("convolution_backward_overrideable", TORCH_FN(convolution_backward_overrideable));

  m.impl("max_pool2d_with_indices", TORCH_FN(max_pool2d_with_indices));
  m.impl("max_pool2d_with_indices.out", TORCH_FN(max_pool2d_with_indices_out));
  m.impl("max_pool2d_with_indices_backward", TORCH_FN(max_pool2d_with_indices_backward));
  m.impl("max_pool2d_with_indices_backward.grad_input",
         TORCH_FN(max_pool2d_with_indices_backward_out));
  m.impl("avg_pool2d", TORCH_FN(avg_pool2d));
  m.impl("avg_pool2d.out", TORCH_FN(avg_pool2d_out));
  m.impl("avg_pool2d_backward", TORCH_FN(avg_pool2d_backward));
  m.impl("avg_pool2d_backward.grad_input", TORCH_FN(avg_pool2d_backward_out));
  m.impl("_adaptive_avg_pool2d", TORCH_FN(adaptive_avg_pool2d));
  m.impl("adaptive_avg_pool2d.out", TORCH_FN(adaptive_avg_pool2d_out));
  m.impl("_adaptive_avg_pool2d_backward", TORCH_FN(adaptive_avg_pool2d_backward));

  m.impl("embedding_dense_backward", TORCH_FN(embedding_dense_backward));

  m.impl("nll_loss_forward", TORCH_FN(nll_loss_forward<kNllLoss>));
  m.impl("nll_loss_forward.output", TORCH_FN(nll_loss_forward_out<kNllLoss>));
  m.impl("nll_loss_backward", TORCH_FN(nll_loss_backward<kNllLoss>));
  m.impl("nll_loss_backward.grad_input", TORCH_FN(nll_loss_backward_out<kNllLoss>));
  m.impl("nll_loss2d_forward", TORCH_FN(nll_loss_forward<kNllLoss2d>));
  m.impl("nll_loss2d_forward.output", TORCH_FN(nll_loss_forward_out<kNllLoss2d>));
  m.impl("nll_loss2d_backward", TORCH_FN(nll_loss_backward<kNllLoss2d>));
  m.impl("nll_loss2d_backward.grad_input", TORCH_FN(nll_loss_backward_out<kNllLoss2d>));
}

}  // namespace
}  // namespace torch_tessera
