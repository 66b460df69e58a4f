// adaptive_avg_pool2d and its backward: composites over gathers, so every
// device runs them natively.
//
// Output row i averages input rows [floor(i H / OH), ceil((i + 1) H / OH)),
// windows that may overlap when OH does not divide H; likewise columns.
// The forward sums each output's window one dim at a time (rows, then
// columns; resample::gather_sum, which masks instead of multiplying by 0,
// so an inf stays in its own windows as in PyTorch) and divides by the
// window's size. The backward divides by the sizes first and sums, for
// each input row and column, the windows covering it. 16-bit floats compute
// in float32 and round once, as PyTorch's kernels do.
#include <vector>

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/gather_sum.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

// The adaptive windows of `in` positions pooled into `out`, as groups of
// input positions.
resample::Groups windows(int64_t out, int64_t in) {
  resample::Groups groups(static_cast<size_t>(out));
  for (int64_t i = 0; i < out; ++i) {
    // Sizes are far below 2^31 (checked by the callers), so no overflow.
    const int64_t start = i * in / out, end = ((i + 1) * in + out - 1) / out;
    for (int64_t k = start; k < end; ++k) groups[static_cast<size_t>(i)].push_back({k});
  }
  return groups;
}

// [OH, OW]: the size of each output's window, in dtype on device.
Tensor window_sizes(const resample::Groups& rows, const resample::Groups& cols, DType dtype,
                    Device device) {
  const int64_t oh = static_cast<int64_t>(rows.size()), ow = static_cast<int64_t>(cols.size());
  Tensor t = empty({oh, ow}, TensorOptions(DType::kF64, host_device()));
  for (int64_t i = 0; i < oh; ++i) {
    for (int64_t j = 0; j < ow; ++j) {
      t.data<double>()[i * ow + j] = static_cast<double>(rows[i].size() * cols[j].size());
    }
  }
  return t.to(device, dtype);
}

DType compute_dtype(DType t) {
  return t == DType::kF16 || t == DType::kBF16 ? DType::kF32 : t;
}

Shape check_input(const char* op, const Tensor& input, const Shape& output_size) {
  TESSERA_CHECK(input.defined(), ValueError, op, ": undefined input");
  TESSERA_CHECK(input.dim() == 3 || input.dim() == 4, ValueError, op,
                ": expected a 3-D or 4-D input, got ", describe(input));
  TESSERA_CHECK(is_floating(input.dtype()), TypeError, op, ": expected a floating input, got ",
                describe(input));
  for (int64_t d = input.dim() - 3; d < input.dim(); ++d) {
    TESSERA_CHECK(input.size(d) > 0, ValueError, op,
                  ": expected input to have non-zero size for non-batch dimensions, but input "
                  "has sizes ", shape_to_string(input.sizes()), " with dimension ", d,
                  " being empty");
  }
  const Shape out = nn_detail::pair_arg(op, "output_size", output_size);
  TESSERA_CHECK(out[0] >= 0 && out[1] >= 0, ValueError, op,
                ": elements of output_size must be greater than or equal to 0, got ",
                shape_to_string(out));
  // Keeps i * in in windows() far from overflowing.
  constexpr int64_t kLimit = int64_t{1} << 31;
  TESSERA_CHECK(input.size(-2) < kLimit && input.size(-1) < kLimit && out[0] < kLimit &&
                    out[1] < kLimit,
                ValueError, op, ": sizes beyond 2^31 are not supported, got input ",
                shape_to_string(input.sizes()), " and output_size ", shape_to_string(out));
  return out;
}

Shape with_last_two(const Tensor& t, int64_t h, int64_t w) {
  Shape s = t.sizes();
  s[s.size() - 2] = h;
  s[s.size() - 1] = w;
  return s;
}

Tensor in_dtype(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : t.to(dtype); }

}  // namespace

Tensor adaptive_avg_pool2d(const Tensor& input, const Shape& output_size) {
  const char* op = "adaptive_avg_pool2d";
  const Shape out = check_input(op, input, output_size);
  const Shape out_sizes = with_last_two(input, out[0], out[1]);
  if (checked_numel(out_sizes, op) == 0) {
    return empty(out_sizes, TensorOptions(input.dtype(), input.device()));
  }
  const int64_t h = input.dim() - 2, w = input.dim() - 1;
  const resample::Groups rows = windows(out[0], input.size(h));
  const resample::Groups cols = windows(out[1], input.size(w));
  const DType cdt = compute_dtype(input.dtype());
  Tensor sums = resample::gather_sum(in_dtype(input, cdt), h, rows, false);
  sums = resample::gather_sum(sums, w, cols, false);
  return in_dtype(div(sums, window_sizes(rows, cols, cdt, input.device())), input.dtype());
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& input) {
  const char* op = "adaptive_avg_pool2d_backward";
  TESSERA_CHECK(grad_output.defined(), ValueError, op, ": undefined grad_output");
  TESSERA_CHECK(grad_output.dim() == input.dim() && grad_output.dim() >= 2, ValueError, op,
                ": expected grad_output of the input's rank, got ", describe(grad_output),
                " for input ", describe(input));
  check_input(op, input, {grad_output.size(-2), grad_output.size(-1)});
  nn_detail::check_same_device(op, grad_output, input);
  TESSERA_CHECK(grad_output.dtype() == input.dtype(), TypeError, op,
                ": expected grad_output of the input's dtype, got ", describe(grad_output),
                " for input ", describe(input));
  TESSERA_CHECK(with_last_two(input, grad_output.size(-2), grad_output.size(-1)) ==
                    grad_output.sizes(),
                ValueError, op, ": grad_output ", shape_to_string(grad_output.sizes()),
                " does not match input ", shape_to_string(input.sizes()), " in its leading dims");
  if (grad_output.numel() == 0) {
    return zeros(input.sizes(), TensorOptions(input.dtype(), input.device()));
  }
  const int64_t h = input.dim() - 2, w = input.dim() - 1;
  const resample::Groups rows = windows(grad_output.size(h), input.size(h));
  const resample::Groups cols = windows(grad_output.size(w), input.size(w));
  const DType cdt = compute_dtype(input.dtype());
  Tensor g = div(in_dtype(grad_output, cdt), window_sizes(rows, cols, cdt, input.device()));
  // Each input row (column) gathers the windows covering it.
  g = resample::gather_sum(g, h, resample::transpose(rows, input.size(h)), false);
  g = resample::gather_sum(g, w, resample::transpose(cols, input.size(w)), false);
  return in_dtype(g, input.dtype());
}

}  // namespace tessera
