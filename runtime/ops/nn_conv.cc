// conv2d and its backward: the front ends (validation, output sizes,
// unbatched inputs) over the Conv2d / Conv2dBackward kernels.
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

struct ConvParams {
  Shape stride, padding, dilation;
};

ConvParams check_params(const char* op, const Shape& stride, const Shape& padding,
                        const Shape& dilation, int64_t groups) {
  ConvParams p{nn_detail::pair_arg(op, "stride", stride), nn_detail::pair_arg(op, "padding", padding),
               nn_detail::pair_arg(op, "dilation", dilation)};
  for (int i = 0; i < 2; ++i) {
    TESSERA_CHECK(p.stride[i] > 0, ValueError, op, ": non-positive stride is not supported, got ",
                  shape_to_string(stride));
    TESSERA_CHECK(p.padding[i] >= 0, ValueError, op, ": negative padding is not supported, got ",
                  shape_to_string(padding));
    TESSERA_CHECK(p.dilation[i] > 0, ValueError, op,
                  ": dilation should be greater than zero, got ", shape_to_string(dilation));
  }
  TESSERA_CHECK(groups > 0, ValueError, op, ": non-positive groups is not supported, got ", groups);
  return p;
}

// Checks input [N, Cin, H, W] against weight and returns out's sizes.
Shape conv_out_sizes(const char* op, const Tensor& input, const Tensor& weight,
                     const ConvParams& p, int64_t groups) {
  TESSERA_CHECK(weight.dim() == 4, ValueError, op, ": expected a 4-D weight, got ",
                describe(weight));
  const int64_t cout = weight.size(0), cin_g = weight.size(1);
  TESSERA_CHECK(input.size(1) == cin_g * groups, ValueError, op, ": given groups=", groups,
                ", weight of size ", shape_to_string(weight.sizes()), ", expected input",
                shape_to_string(input.sizes()), " to have ", cin_g * groups,
                " channels, but got ", input.size(1), " channels instead");
  TESSERA_CHECK(cout % groups == 0, ValueError, op, ": given groups=", groups,
                ", expected weight ", shape_to_string(weight.sizes()),
                " to be divisible by groups at dimension 0");
  Shape out = {input.size(0), cout, 0, 0};
  for (int i = 0; i < 2; ++i) {
    const int64_t padded = input.size(2 + i) + 2 * p.padding[i];
    const int64_t span = p.dilation[i] * (weight.size(2 + i) - 1) + 1;
    TESSERA_CHECK(padded >= span, ValueError, op, ": calculated padded input size per channel (",
                  input.size(2) + 2 * p.padding[0], " x ", input.size(3) + 2 * p.padding[1],
                  ") is smaller than the kernel size (", weight.size(2), " x ", weight.size(3),
                  "), input ", shape_to_string(input.sizes()), ", weight ",
                  shape_to_string(weight.sizes()));
    out[2 + i] = (padded - span) / p.stride[i] + 1;
  }
  return out;
}

void check_tensors(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias) {
  nn_detail::check_same_device(op, input, weight);
  TESSERA_CHECK(input.dtype() != DType::kBool, TypeError, op,
                ": bool inputs are not supported, got ", describe(input));
  TESSERA_CHECK(input.dtype() == weight.dtype(), TypeError, op,
                ": input and weight must have the same dtype, got ", describe(input), " and ",
                describe(weight));
  if (bias.defined()) {
    nn_detail::check_same_device(op, input, bias);
    TESSERA_CHECK(bias.dtype() == input.dtype(), TypeError, op,
                  ": input and bias must have the same dtype, got ", describe(input), " and ",
                  describe(bias));
    TESSERA_CHECK(bias.dim() == 1 && bias.size(0) == weight.size(0), ValueError, op,
                  ": expected bias of shape [", weight.size(0), "], got ", describe(bias));
  }
}

}  // namespace

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
              const Shape& padding, const Shape& dilation, int64_t groups) {
  const char* op = "conv2d";
  TESSERA_CHECK(input.dim() == 3 || input.dim() == 4, ValueError, op,
                ": expected 3D (unbatched) or 4D (batched) input, got input of size ",
                shape_to_string(input.sizes()));
  check_tensors(op, input, weight, bias);
  const ConvParams p = check_params(op, stride, padding, dilation, groups);
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
  Shape out_sizes = conv_out_sizes(op, in4, weight, p, groups);
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
  check_tensors(op, input, weight, Tensor());
  nn_detail::check_same_device(op, input, grad_output);
  TESSERA_CHECK(grad_output.dtype() == input.dtype(), TypeError, op,
                ": grad_output and input must have the same dtype, got ", describe(grad_output),
                " and ", describe(input));
  const ConvParams p = check_params(op, stride, padding, dilation, groups);
  Shape out_sizes = conv_out_sizes(op, input, weight, p, groups);
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
