// conv2d and its backward: the front ends (validation, output sizes,
// unbatched inputs) over the Conv2d / Conv2dBackward kernels.
#include "runtime/core/error.h"
#include "runtime/ops/conv_checks.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
              const Shape& padding, const Shape& dilation, int64_t groups) {
  const char* op = "conv2d";
  TESSERA_CHECK(input.dim() == 3 || input.dim() == 4, ValueError, op,
                ": expected 3D (unbatched) or 4D (batched) input, got input of size ",
                shape_to_string(input.sizes()));
  nn_detail::check_conv_tensors(op, input, weight, bias);
  const nn_detail::ConvParams p =
      nn_detail::check_conv_params(op, 2, stride, padding, dilation, groups);
  if (!is_floating(input.dtype())) {
    // Integer convolutions (PyTorch's CPU has them) run in float64 and are
    // exact while every partial sum stays below 2^53; beyond that PyTorch
    // wraps around and this rounds.
    const Tensor b64 = bias.defined() ? bias.to(DType::kF64) : Tensor();
    return conv2d(input.to(DType::kF64), weight.to(DType::kF64), b64, stride, padding, dilation,
                  groups)
        .to(input.dtype());
  }
  const bool batched = input.dim() == 4;
  Tensor in4 = batched ? input : input.unsqueeze(0);
  Shape out_sizes = nn_detail::conv_out_sizes(op, in4, weight, p);
  Tensor out = empty(out_sizes, TensorOptions(input.dtype(), input.device()));
  if (out.numel() > 0) {
    if (in4.size(1) == 0) {  // empty sums: bias only
      if (bias.defined()) out.copy_(bias.view({1, -1, 1, 1}).expand(out_sizes));
      else out.zero_();
    } else {
      call_kernel<kernels::Conv2d>(input.device(), out, in4, weight, bias, p.stride, p.padding,
                                   p.dilation, groups);
    }
  }
  return batched ? out : out.squeeze(0);
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward(const Tensor& grad_output,
                                                        const Tensor& input, const Tensor& weight,
                                                        const Shape& stride, const Shape& padding,
                                                        const Shape& dilation, int64_t groups,
                                                        std::array<bool, 3> output_mask) {
  const char* op = "convolution_backward";
  TESSERA_CHECK(input.dim() == 4, ValueError, op, ": expected a 4-D input, got ", describe(input));
  nn_detail::check_conv_tensors(op, input, weight, Tensor());
  nn_detail::check_same_device(op, input, grad_output);
  TESSERA_CHECK(grad_output.dtype() == input.dtype(), TypeError, op,
                ": grad_output and input must have the same dtype, got ", describe(grad_output),
                " and ", describe(input));
  const nn_detail::ConvParams p =
      nn_detail::check_conv_params(op, 2, stride, padding, dilation, groups);
  Shape out_sizes = nn_detail::conv_out_sizes(op, input, weight, p);
  TESSERA_CHECK(grad_output.sizes() == out_sizes, ValueError, op, ": expected grad_output of size ",
                shape_to_string(out_sizes), ", got ", shape_to_string(grad_output.sizes()));
  TensorOptions opts(input.dtype(), input.device());
  Tensor gi = output_mask[0] ? empty(input.sizes(), opts) : Tensor();
  Tensor gw = output_mask[1] ? empty(weight.sizes(), opts) : Tensor();
  Tensor gb = output_mask[2] ? empty({weight.size(0)}, opts) : Tensor();
  if (grad_output.numel() == 0 || input.size(1) == 0) {
    // Every sum is empty: all gradients are zero.
    for (Tensor* t : {&gi, &gw, &gb}) {
      if (t->defined()) t->zero_();
    }
    return {gi, gw, gb};
  }
  Tensor gi_k = gi.defined() && gi.numel() > 0 ? gi : Tensor();
  Tensor gw_k = gw.defined() && gw.numel() > 0 ? gw : Tensor();
  Tensor gb_k = gb.defined() && gb.numel() > 0 ? gb : Tensor();
  call_kernel<kernels::Conv2dBackward>(input.device(), gi_k, gw_k, gb_k, grad_output, input, weight,
                                       p.stride, p.padding, p.dilation, groups);
  return {gi, gw, gb};
}

}  // namespace tessera
