// adaptive_avg_pool2d/3d and their backward: composites over gathers, so
// every device runs them natively.
//
// The windows (adaptive_windows.h) may overlap where the output size does
// not divide the input's. The forward sums each output's window one dim at
// a time (resample::gather_sum, which masks instead of multiplying by 0, so
// an inf stays in its own windows as in PyTorch) and divides by the
// window's volume. The backward divides by the volumes first and sums, for
// each input position, the windows covering it. 16-bit floats compute in
// float32 and round once, as PyTorch's kernels do.
#include <vector>

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/adaptive_windows.h"
#include "runtime/ops/gather_sum.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

// The volume of each output's window, [O1, ..., Ok] in dtype on device.
Tensor window_volumes(const std::vector<resample::Groups>& dims, DType dtype, Device device) {
  Shape sizes;
  for (const auto& g : dims) sizes.push_back(static_cast<int64_t>(g.size()));
  Tensor t = empty(sizes, TensorOptions(DType::kF64, host_device()));
  double* v = t.data<double>();
  const int64_t total = t.numel();
  for (int64_t flat = 0; flat < total; ++flat) {
    double volume = 1.0;
    int64_t rest = flat;
    for (size_t j = dims.size(); j-- > 0;) {
      const int64_t n = sizes[j];
      volume *= static_cast<double>(dims[j][static_cast<size_t>(rest % n)].size());
      rest /= n;
    }
    v[flat] = volume;
  }
  return t.to(device, dtype);
}

using nn_detail::compute_dtype;
using nn_detail::in_dtype;

Tensor adaptive_avg_pool(const char* op, const Tensor& input, const Shape& output_size,
                         int64_t rank) {
  const Shape out = adaptive::check_sizes(op, input, output_size, rank);
  const Shape out_sizes = adaptive::with_spatial(input.sizes(), out);
  if (checked_numel(out_sizes, op) == 0) {
    return empty(out_sizes, TensorOptions(input.dtype(), input.device()));
  }
  const DType cdt = compute_dtype(input.dtype());
  const int64_t first = input.dim() - rank;
  std::vector<resample::Groups> dims;
  Tensor sums = in_dtype(input, cdt);
  for (int64_t j = 0; j < rank; ++j) {
    dims.push_back(adaptive::windows(out[j], input.size(first + j)));
    sums = resample::gather_sum(sums, first + j, dims.back(), false);
  }
  return in_dtype(div(sums, window_volumes(dims, cdt, input.device())), input.dtype());
}

Tensor adaptive_avg_pool_backward(const char* op, const Tensor& grad_output, const Tensor& input,
                                  int64_t rank) {
  TESSERA_CHECK(grad_output.defined(), ValueError, op, ": undefined grad_output");
  TESSERA_CHECK(grad_output.dim() == input.dim() && grad_output.dim() >= rank, ValueError, op,
                ": expected grad_output of the input's rank, got ", describe(grad_output),
                " for input ", describe(input));
  const int64_t first = input.dim() - rank;
  const Shape out(grad_output.sizes().begin() + first, grad_output.sizes().end());
  adaptive::check_sizes(op, input, out, rank);
  nn_detail::check_same_device(op, grad_output, input);
  TESSERA_CHECK(grad_output.dtype() == input.dtype(), TypeError, op,
                ": expected grad_output of the input's dtype, got ", describe(grad_output),
                " for input ", describe(input));
  TESSERA_CHECK(adaptive::with_spatial(input.sizes(), out) == grad_output.sizes(), ValueError, op,
                ": grad_output ", shape_to_string(grad_output.sizes()), " does not match input ",
                shape_to_string(input.sizes()), " in its leading dims");
  if (grad_output.numel() == 0) {
    return zeros(input.sizes(), TensorOptions(input.dtype(), input.device()));
  }
  std::vector<resample::Groups> dims;
  for (int64_t j = 0; j < rank; ++j) {
    dims.push_back(adaptive::windows(out[j], input.size(first + j)));
  }
  const DType cdt = compute_dtype(input.dtype());
  Tensor g = div(in_dtype(grad_output, cdt), window_volumes(dims, cdt, input.device()));
  // Each input position gathers the windows covering it.
  for (int64_t j = 0; j < rank; ++j) {
    g = resample::gather_sum(g, first + j,
                             resample::transpose(dims[j], input.size(first + j)), false);
  }
  return in_dtype(g, input.dtype());
}

}  // namespace

Tensor adaptive_avg_pool2d(const Tensor& input, const Shape& output_size) {
  return adaptive_avg_pool("adaptive_avg_pool2d", input, output_size, 2);
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& input) {
  return adaptive_avg_pool_backward("adaptive_avg_pool2d_backward", grad_output, input, 2);
}

Tensor adaptive_avg_pool3d(const Tensor& input, const Shape& output_size) {
  return adaptive_avg_pool("adaptive_avg_pool3d", input, output_size, 3);
}

Tensor adaptive_avg_pool3d_backward(const Tensor& grad_output, const Tensor& input) {
  return adaptive_avg_pool_backward("adaptive_avg_pool3d_backward", grad_output, input, 3);
}

}  // namespace tessera
