// max_pool3d and avg_pool3d with their backward, composed of the 2-D
// pooling ops so that every device runs them natively.
//
// Both poolings separate: a 3-D window is a depth window of (H, W)
// windows. The max of the maxima is the maximum, and PyTorch's divisors
// (the window's size, clipped to the padded or to the real input, or an
// override) are products of one factor per dim, so the average of averages
// is the average. Each op first pools every depth slice over (H, W), then
// pools depth with a (kD, 1) window over [N * C, 1, D, Ho * Wo].
//
// Indices: the depth pass picks the first depth holding the maximum (its
// own index is d * Ho * Wo + column), and the (H, W) pass's index at that
// depth gives the rest, so each result is d * H * W + h * W + w of the
// first maximum in (d, h, w) order, as PyTorch's kernel scans.
#include <optional>

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

Tensor as_5d(const char* op, const Tensor& input) {
  TESSERA_CHECK(input.defined(), ValueError, op, ": undefined input");
  TESSERA_CHECK(input.dim() == 4 || input.dim() == 5, ValueError, op,
                ": expected 4D or 5D input, got ", describe(input));
  for (int64_t d = input.dim() - 4; d < input.dim(); ++d) {
    TESSERA_CHECK(input.size(d) > 0, ValueError, op,
                  ": expected input with non-zero sizes except the batch dim, got ",
                  shape_to_string(input.sizes()));
  }
  return input.dim() == 5 ? input : input.unsqueeze(0);
}

Shape drop_batch(const Shape& s, bool batched) {
  return batched ? s : Shape(s.begin() + 1, s.end());
}

// A tensor that only carries sizes and dtype, for the 2-D backward front
// ends, which read nothing else of their `input`.
Tensor shape_only(const Shape& sizes, DType dtype, Device device) {
  return empty({1}, TensorOptions(dtype, device)).expand(sizes);
}

using nn_detail::compute_dtype;
using nn_detail::in_dtype;

void check_grad(const char* op, const Tensor& grad_output, const Tensor& input,
                const Shape& expected) {
  nn_detail::check_same_device(op, grad_output, input);
  TESSERA_CHECK(grad_output.dtype() == input.dtype(), TypeError, op,
                ": grad_output and input must have the same dtype, got ", describe(grad_output),
                " and ", describe(input));
  TESSERA_CHECK(grad_output.sizes() == expected, ValueError, op, ": expected grad_output of size ",
                shape_to_string(expected), ", got ", shape_to_string(grad_output.sizes()));
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const Shape& kernel_size,
                                                   const Shape& stride, const Shape& padding,
                                                   const Shape& dilation, bool ceil_mode) {
  const char* op = "max_pool3d";
  const Tensor in5 = as_5d(op, input);
  TESSERA_CHECK(input.dtype() != DType::kBool, TypeError, op, ": not supported for bool, got ",
                describe(input));
  const nn_detail::PoolWindows p =
      nn_detail::pool_windows(op, in5, 3, kernel_size, stride, padding, dilation, ceil_mode, true);
  const int64_t n = in5.size(0), c = in5.size(1), d = in5.size(2), h = in5.size(3), w = in5.size(4);
  const int64_t od = p.out[2], oh = p.out[3], ow = p.out[4];
  checked_numel(p.out, op);
  auto [plane_max, plane_index] = max_pool2d_with_indices(
      in5.reshape({n, c * d, h, w}), {p.kernel[1], p.kernel[2]}, {p.stride[1], p.stride[2]},
      {p.padding[1], p.padding[2]}, {p.dilation[1], p.dilation[2]}, ceil_mode);
  auto [values, depth_index] = max_pool2d_with_indices(
      plane_max.view({n * c, 1, d, oh * ow}), {p.kernel[0], 1}, {p.stride[0], 1},
      {p.padding[0], 0}, {p.dilation[0], 1}, ceil_mode);
  const Tensor depth = floor_divide(depth_index.view({n * c, od, oh * ow}), Scalar(oh * ow));
  const Tensor in_plane = gather(plane_index.view({n * c, d, oh * ow}), 1, depth);
  const Tensor indices = add(in_plane, mul(depth, Scalar(h * w)));
  const bool batched = input.dim() == 5;
  return {values.view(drop_batch(p.out, batched)), indices.view(drop_batch(p.out, batched))};
}

Tensor max_pool3d(const Tensor& input, const Shape& kernel_size, const Shape& stride,
                  const Shape& padding, const Shape& dilation, bool ceil_mode) {
  return std::get<0>(
      max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor max_pool3d_with_indices_backward(const Tensor& grad_output, const Tensor& input,
                                        const Tensor& indices) {
  const char* op = "max_pool3d_with_indices_backward";
  const Tensor in5 = as_5d(op, input);
  nn_detail::check_same_device(op, indices, input);
  TESSERA_CHECK(grad_output.dim() == input.dim() && grad_output.sizes() == indices.sizes() &&
                    grad_output.size(0) == input.size(0) &&
                    (input.dim() == 4 || grad_output.size(1) == input.size(1)),
                ValueError, op, ": grad_output ", shape_to_string(grad_output.sizes()),
                ", indices ", shape_to_string(indices.sizes()), " and input ",
                shape_to_string(input.sizes()), " do not match");
  check_grad(op, grad_output, input, grad_output.sizes());
  nn_detail::check_pool_indices(op, indices, in5.size(2) * in5.size(3) * in5.size(4), input);
  // Each index is a position in the flattened (D, H, W) volume: the 2-D
  // backward scatters into a [D * H, W] plane alike (and checks the range).
  const int64_t n = in5.size(0), c = in5.size(1);
  const Tensor g5 = input.dim() == 5 ? grad_output : grad_output.unsqueeze(0);
  const Tensor i5 = input.dim() == 5 ? indices : indices.unsqueeze(0);
  const Shape g4 = {n, c, g5.size(2) * g5.size(3), g5.size(4)};
  const Tensor grad = max_pool2d_with_indices_backward(
      g5.reshape(g4), shape_only({n, c, in5.size(2) * in5.size(3), in5.size(4)}, input.dtype(),
                                 input.device()),
      i5.reshape(g4));
  return grad.view(input.sizes());
}

namespace {

struct AvgArgs {
  const Shape& kernel_size;
  const Shape& stride;
  const Shape& padding;
  bool ceil_mode;
  bool count_include_pad;
  std::optional<int64_t> divisor_override;
};

nn_detail::PoolWindows check_avg(const char* op, const Tensor& in5, const AvgArgs& a) {
  TESSERA_CHECK(is_floating(in5.dtype()), TypeError, op,
                ": only floating dtypes are supported, got ", describe(in5));
  TESSERA_CHECK(!a.divisor_override || *a.divisor_override != 0, ValueError, op,
                ": divisor must be not zero");
  return nn_detail::pool_windows(
      op, in5, 3, a.kernel_size, a.stride, a.padding, {1}, a.ceil_mode, false);
}

// With an override, the (H, W) pass sums (divisor 1) and the depth pass
// divides once.
std::optional<int64_t> plane_divisor(const AvgArgs& a) {
  return a.divisor_override ? std::optional<int64_t>(1) : std::nullopt;
}

}  // namespace

Tensor avg_pool3d(const Tensor& input, const Shape& kernel_size, const Shape& stride,
                  const Shape& padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool3d";
  const Tensor in5 = as_5d(op, input);
  const AvgArgs a{kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override};
  const nn_detail::PoolWindows p = check_avg(op, in5, a);
  checked_numel(p.out, op);
  const int64_t n = in5.size(0), c = in5.size(1), d = in5.size(2), h = in5.size(3), w = in5.size(4);
  const int64_t oh = p.out[3], ow = p.out[4];
  // 16-bit floats average in float32 and round once.
  const DType cdt = compute_dtype(input.dtype());
  const Tensor planes = avg_pool2d(in_dtype(in5, cdt).reshape({n, c * d, h, w}),
                                   {p.kernel[1], p.kernel[2]}, {p.stride[1], p.stride[2]},
                                   {p.padding[1], p.padding[2]}, ceil_mode, count_include_pad,
                                   plane_divisor(a));
  const Tensor out = avg_pool2d(planes.view({n * c, 1, d, oh * ow}), {p.kernel[0], 1},
                                {p.stride[0], 1}, {p.padding[0], 0}, ceil_mode,
                                count_include_pad, divisor_override);
  return in_dtype(out, input.dtype()).view(drop_batch(p.out, input.dim() == 5));
}

Tensor avg_pool3d_backward(const Tensor& grad_output, const Tensor& input,
                           const Shape& kernel_size, const Shape& stride, const Shape& padding,
                           bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool3d_backward";
  const Tensor in5 = as_5d(op, input);
  const AvgArgs a{kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override};
  const nn_detail::PoolWindows p = check_avg(op, in5, a);
  check_grad(op, grad_output, input, drop_batch(p.out, input.dim() == 5));
  const int64_t n = in5.size(0), c = in5.size(1), d = in5.size(2), h = in5.size(3), w = in5.size(4);
  const int64_t od = p.out[2], oh = p.out[3], ow = p.out[4];
  const DType cdt = compute_dtype(input.dtype());
  // The forward's passes transposed, in reverse order: depth, then (H, W).
  const Tensor depth_grad = avg_pool2d_backward(
      in_dtype(grad_output, cdt).reshape({n * c, 1, od, oh * ow}),
      shape_only({n * c, 1, d, oh * ow}, cdt, input.device()), {p.kernel[0], 1}, {p.stride[0], 1},
      {p.padding[0], 0}, ceil_mode, count_include_pad, divisor_override);
  const Tensor grad = avg_pool2d_backward(
      depth_grad.view({n, c * d, oh, ow}), shape_only({n, c * d, h, w}, cdt, input.device()),
      {p.kernel[1], p.kernel[2]}, {p.stride[1], p.stride[2]}, {p.padding[1], p.padding[2]},
      ceil_mode, count_include_pad, plane_divisor(a));
  return in_dtype(grad, input.dtype()).view(input.sizes());
}

}  // namespace tessera
