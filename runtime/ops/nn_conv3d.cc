// conv3d and its backward, composed of the 2-D convolution so that every
// device that runs conv2d runs conv3d natively, at the same arithmetic
// cost.
//
// The depth dim folds into the 2-D problem: output depth od reads input
// depths od * sd - pd + kd * dd for kd < kD, so with
//   X'[n * Dout + od, (g, kd, c), h, w] = x_padded[n, g * Cg + c, od * sd + kd * dd, h, w]
//   W'[o, (kd, c), kh, kw]             = weight[o, c, kd, kh, kw]
// conv3d(x, weight) is conv2d(X', W') with the same groups, rows n * Dout +
// od of the result holding output depth od. Building X' copies the input
// kD / sd times (one strided gather); the backward runs conv2d's backward
// on the same fold and adds each kd's slice of the input gradient back at
// its depths.
#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/conv_checks.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

using Conv3dParams = nn_detail::ConvParams;

// x_padded (contiguous [N, C, Dp, H, W]) seen as [N, Dout, g, kD, Cg, H, W]:
// the strided windows that become X'.
Tensor fold_view(const Tensor& x_padded, int64_t dout, int64_t kd, int64_t groups,
                 const Conv3dParams& p) {
  const int64_t n = x_padded.size(0), c = x_padded.size(1), dp = x_padded.size(2);
  const int64_t h = x_padded.size(3), w = x_padded.size(4), cg = c / groups;
  const int64_t plane = h * w, channel = dp * plane;
  return x_padded.as_strided({n, dout, groups, kd, cg, h, w},
                             {c * channel, p.stride[0] * plane, cg * channel,
                              p.dilation[0] * plane, channel, w, 1});
}

Tensor pad_depth(const Tensor& x, int64_t pad) {
  const Tensor padded = pad == 0 ? x : constant_pad(x, {0, 0, 0, 0, pad, pad});
  return padded.contiguous();
}

// X' of the header comment: [N * Dout, g * kD * Cg, H, W].
Tensor folded_input(const Tensor& x_padded, int64_t dout, int64_t kd, int64_t groups,
                    const Conv3dParams& p) {
  const int64_t n = x_padded.size(0), c = x_padded.size(1);
  return fold_view(x_padded, dout, kd, groups, p)
      .contiguous()
      .view({n * dout, c * kd, x_padded.size(3), x_padded.size(4)});
}

// W' of the header comment: [Cout, kD * Cg, kH, kW].
Tensor folded_weight(const Tensor& weight) {
  return weight.permute({0, 2, 1, 3, 4})
      .contiguous()
      .view({weight.size(0), weight.size(2) * weight.size(1), weight.size(3), weight.size(4)});
}

Tensor as_5d(const char* op, const Tensor& input) {
  TESSERA_CHECK(input.dim() == 4 || input.dim() == 5, ValueError, op,
                ": expected 4D (unbatched) or 5D (batched) input, got input of size ",
                shape_to_string(input.sizes()));
  return input.dim() == 5 ? input : input.unsqueeze(0);
}

}  // namespace

Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Shape& stride,
              const Shape& padding, const Shape& dilation, int64_t groups) {
  const char* op = "conv3d";
  const Tensor in5 = as_5d(op, input);
  nn_detail::check_conv_tensors(op, in5, weight, bias);
  const Conv3dParams p = nn_detail::check_conv_params(op, 3, stride, padding, dilation, groups);
  const Shape sizes = nn_detail::conv_out_sizes(op, in5, weight, p);
  checked_numel(sizes, op);
  const int64_t n = sizes[0], cout = sizes[1], dout = sizes[2];
  const Tensor x_padded = pad_depth(in5, p.padding[0]);
  const Tensor y = conv2d(folded_input(x_padded, dout, weight.size(2), groups, p),
                          folded_weight(weight), bias, {p.stride[1], p.stride[2]},
                          {p.padding[1], p.padding[2]}, {p.dilation[1], p.dilation[2]}, groups);
  Tensor out = y.view({n, dout, cout, sizes[3], sizes[4]}).permute({0, 2, 1, 3, 4}).contiguous();
  return input.dim() == 5 ? out : out.squeeze(0);
}

std::tuple<Tensor, Tensor, Tensor> conv3d_backward(const Tensor& grad_output, const Tensor& input,
                                                   const Tensor& weight, const Shape& stride,
                                                   const Shape& padding, const Shape& dilation,
                                                   int64_t groups,
                                                   std::array<bool, 3> output_mask) {
  const char* op = "conv3d_backward";
  TESSERA_CHECK(input.dim() == 5, ValueError, op, ": expected a 5-D input, got ", describe(input));
  nn_detail::check_conv_tensors(op, input, weight, Tensor());
  nn_detail::check_same_device(op, input, grad_output);
  TESSERA_CHECK(grad_output.dtype() == input.dtype(), TypeError, op,
                ": grad_output and input must have the same dtype, got ", describe(grad_output),
                " and ", describe(input));
  const Conv3dParams p = nn_detail::check_conv_params(op, 3, stride, padding, dilation, groups);
  const Shape sizes = nn_detail::conv_out_sizes(op, input, weight, p);
  TESSERA_CHECK(grad_output.sizes() == sizes, ValueError, op, ": expected grad_output of size ",
                shape_to_string(sizes), ", got ", shape_to_string(grad_output.sizes()));
  const int64_t n = sizes[0], cout = sizes[1], dout = sizes[2], kd = weight.size(2);
  const int64_t c = input.size(1), d = input.size(2), h = input.size(3), w = input.size(4);
  const int64_t dp = d + 2 * p.padding[0];

  const Tensor g2 =
      grad_output.permute({0, 2, 1, 3, 4}).contiguous().view({n * dout, cout, sizes[3], sizes[4]});
  // The folded input feeds only grad_weight; for grad_input alone its
  // shape is enough.
  const Tensor x_padded = output_mask[1] ? pad_depth(input, p.padding[0]) : Tensor();
  const Tensor x2 = output_mask[1]
                        ? folded_input(x_padded, dout, kd, groups, p)
                        : empty({n * dout, c * kd, h, w}, TensorOptions(input.dtype(), input.device()));
  auto [gx2, gw2, gb] = convolution_backward(g2, x2, folded_weight(weight),
                                             {p.stride[1], p.stride[2]},
                                             {p.padding[1], p.padding[2]},
                                             {p.dilation[1], p.dilation[2]}, groups, output_mask);
  Tensor grad_weight;
  if (gw2.defined()) {
    grad_weight = gw2.view({cout, kd, weight.size(1), weight.size(3), weight.size(4)})
                      .permute({0, 2, 1, 3, 4})
                      .contiguous();
  }
  Tensor grad_input;
  if (gx2.defined()) {
    Tensor padded = zeros({n, c, dp, h, w}, TensorOptions(input.dtype(), input.device()));
    const Tensor slices = gx2.view({n, dout, groups, kd, c / groups, h, w});
    const Tensor windows = fold_view(padded, dout, kd, groups, p);
    // Within one kd the output depths land on distinct input depths, so
    // each add is free of overlap; the kD adds accumulate where windows
    // overlap.
    for (int64_t k = 0; k < kd; ++k) {
      Tensor target = windows.select(3, k);
      add_out(target, target, slices.select(3, k));
    }
    grad_input = p.padding[0] == 0 ? padded : padded.narrow(2, p.padding[0], d).contiguous();
  }
  return {grad_input, grad_weight, gb};
}

}  // namespace tessera
