// max_pool2d and avg_pool2d with their backward: front ends computing the
// output sizes (ceil_mode) as PyTorch does, over the pooling kernels.
#include "runtime/core/error.h"
#include "runtime/ops/dispatch.h"
#include "runtime/ops/indexing_checks.h"
#include "runtime/ops/kernel_signatures.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

Tensor as_4d(const char* op, const Tensor& input) {
  TESSERA_CHECK(input.dim() == 3 || input.dim() == 4, ValueError, op,
                ": expected 3D or 4D input, got ", describe(input));
  for (int64_t d = input.dim() - 3; d < input.dim(); ++d) {
    TESSERA_CHECK(input.size(d) > 0, ValueError, op,
                  ": expected input with non-zero sizes except the batch dim, got ",
                  shape_to_string(input.sizes()));
  }
  return input.dim() == 4 ? input : input.unsqueeze(0);
}

Shape drop_batch(const Shape& s, bool batched) {
  return batched ? s : Shape(s.begin() + 1, s.end());
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const Shape& kernel_size,
                                                   const Shape& stride, const Shape& padding,
                                                   const Shape& dilation, bool ceil_mode) {
  const char* op = "max_pool2d";
  Tensor in4 = as_4d(op, input);
  TESSERA_CHECK(input.dtype() != DType::kBool, TypeError, op, ": not supported for bool, got ",
                describe(input));
  nn_detail::PoolWindows p =
      nn_detail::pool_windows(op, in4, 2, kernel_size, stride, padding, dilation, ceil_mode, true);
  Tensor out = empty(p.out, TensorOptions(input.dtype(), input.device()));
  Tensor idx = empty(p.out, TensorOptions(DType::kI64, input.device()));
  if (out.numel() > 0) {
    call_kernel<kernels::MaxPool2d>(input.device(), out, idx, in4, p.kernel, p.stride, p.padding,
                                    p.dilation);
  }
  const bool batched = input.dim() == 4;
  return {out.view(drop_batch(p.out, batched)), idx.view(drop_batch(p.out, batched))};
}

Tensor max_pool2d(const Tensor& input, const Shape& kernel_size, const Shape& stride,
                  const Shape& padding, const Shape& dilation, bool ceil_mode) {
  return std::get<0>(
      max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& input,
                                        const Tensor& indices) {
  const char* op = "max_pool2d_with_indices_backward";
  Tensor in4 = as_4d(op, input);
  nn_detail::check_same_device(op, grad_output, input);
  nn_detail::check_same_device(op, indices, input);
  TESSERA_CHECK(grad_output.dtype() == input.dtype(), TypeError, op,
                ": grad_output and input must have the same dtype, got ", describe(grad_output),
                " and ", describe(input));
  TESSERA_CHECK(indices.dtype() == DType::kI64, TypeError, op, ": expected int64 indices, got ",
                describe(indices));
  TESSERA_CHECK(grad_output.sizes() == indices.sizes() && grad_output.dim() == input.dim() &&
                    grad_output.size(0) == input.size(0) &&
                    (input.dim() == 3 || grad_output.size(1) == input.size(1)),
                ValueError, op, ": grad_output ", shape_to_string(grad_output.sizes()),
                ", indices ", shape_to_string(indices.sizes()), " and input ",
                shape_to_string(input.sizes()), " do not match");
  Tensor g4 = input.dim() == 4 ? grad_output : grad_output.unsqueeze(0);
  Tensor i4 = input.dim() == 4 ? indices : indices.unsqueeze(0);
  Tensor grad_input = empty(in4.sizes(), TensorOptions(input.dtype(), input.device()));
  if (grad_input.numel() > 0 && indices.numel() > 0) {
    // Indices are usually max_pool2d's own, but a caller may pass any: a
    // device kernel would scatter out of range, so every device checks here.
    const int64_t plane = in4.size(2) * in4.size(3);
    const auto [lo, hi] = indexing::index_min_max(indices);
    const int64_t bad = lo < 0 ? lo : hi;
    TESSERA_CHECK(lo >= 0 && hi < plane, IndexError, op, ": index ", bad,
                  " is out of range for a plane of ", in4.size(2), " x ", in4.size(3));
  }
  if (grad_input.numel() > 0) {
    call_kernel<kernels::MaxPool2dBackward>(input.device(), grad_input, g4, i4);
  }
  return grad_input.view(input.sizes());
}

namespace {

void check_avg_dtype(const char* op, const Tensor& input) {
  TESSERA_CHECK(is_floating(input.dtype()) || input.dtype() == DType::kI64, TypeError, op,
                ": only floating dtypes and int64 are supported, got ", describe(input));
}

int64_t divisor_arg(const char* op, std::optional<int64_t> divisor_override) {
  TESSERA_CHECK(!divisor_override || *divisor_override != 0, ValueError, op,
                ": divisor must be not zero");
  return divisor_override.value_or(0);
}

}  // namespace

Tensor avg_pool2d(const Tensor& input, const Shape& kernel_size, const Shape& stride,
                  const Shape& padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d";
  Tensor in4 = as_4d(op, input);
  check_avg_dtype(op, input);
  const int64_t divisor = divisor_arg(op, divisor_override);
  nn_detail::PoolWindows p =
      nn_detail::pool_windows(op, in4, 2, kernel_size, stride, padding, {1}, ceil_mode, false);
  Tensor out = empty(p.out, TensorOptions(input.dtype(), input.device()));
  if (out.numel() > 0) {
    call_kernel<kernels::AvgPool2d>(input.device(), out, in4, p.kernel, p.stride, p.padding,
                                    count_include_pad, divisor);
  }
  return out.view(drop_batch(p.out, input.dim() == 4));
}

Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& input,
                           const Shape& kernel_size, const Shape& stride, const Shape& padding,
                           bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  const char* op = "avg_pool2d_backward";
  Tensor in4 = as_4d(op, input);
  check_avg_dtype(op, input);
  nn_detail::check_same_device(op, grad_output, input);
  TESSERA_CHECK(grad_output.dtype() == input.dtype(), TypeError, op,
                ": grad_output and input must have the same dtype, got ", describe(grad_output),
                " and ", describe(input));
  const int64_t divisor = divisor_arg(op, divisor_override);
  nn_detail::PoolWindows p =
      nn_detail::pool_windows(op, in4, 2, kernel_size, stride, padding, {1}, ceil_mode, false);
  Tensor g4 = input.dim() == 4 ? grad_output : grad_output.unsqueeze(0);
  TESSERA_CHECK(g4.sizes() == p.out, ValueError, op, ": expected grad_output of size ",
                shape_to_string(drop_batch(p.out, input.dim() == 4)), ", got ",
                shape_to_string(grad_output.sizes()));
  Tensor grad_input = empty(in4.sizes(), TensorOptions(input.dtype(), input.device()));
  if (grad_input.numel() > 0) {
    call_kernel<kernels::AvgPool2dBackward>(input.device(), grad_input, g4, p.kernel, p.stride,
                                            p.padding, count_include_pad, divisor);
  }
  return grad_input.view(input.sizes());
}

}  // namespace tessera
