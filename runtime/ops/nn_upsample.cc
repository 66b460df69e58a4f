// upsample_nearest2d and upsample_bilinear2d with their backward:
// composites over index_select and resample::gather_sum, so every device
// runs them natively.
//
// Each output row (column) reads one input row (nearest) or two with
// weights (bilinear), computed on the host exactly as PyTorch's kernels do,
// in the compute type (float for f32 and 16-bit floats, double for f64),
// so the same source rows and weights come out. Bilinear interpolates along
// the width, then the height, as PyTorch's
//   h0 (w0 x00 + w1 x01) + h1 (w0 x10 + w1 x11);
// the backward sums each output's gradient, times its weights, into the
// rows it read (the transposed gather). 16-bit floats compute in float32
// and round once.
#include <algorithm>
#include <cmath>
#include <optional>

#include "runtime/core/error.h"
#include "runtime/ops/gather_sum.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

// PyTorch's compute_scales_value: 1 / scale when given, else in / out.
template <typename C>
C scale_of(std::optional<double> scale, int64_t in, int64_t out) {
  return scale && *scale > 0 ? static_cast<C>(1.0 / *scale)
                             : static_cast<C>(in) / static_cast<C>(out);
}

// nearest: floor(i * scale), clamped (PyTorch's nearest_idx, in float).
std::vector<int64_t> nearest_rows(int64_t in, int64_t out, std::optional<double> scale) {
  std::vector<int64_t> rows(static_cast<size_t>(out));
  const float s = scale_of<float>(scale, in, out);
  for (int64_t i = 0; i < out; ++i) {
    if (out == in) rows[i] = i;
    else if (out == 2 * in) rows[i] = i >> 1;
    else rows[i] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(i) * s)), in - 1);
  }
  return rows;
}

// bilinear: the two source rows and weights of each output row, as
// PyTorch's compute_source_index_and_lambda in the compute type C.
template <typename C>
resample::Groups linear_rows(int64_t in, int64_t out, bool align_corners,
                             std::optional<double> scale) {
  resample::Groups groups(static_cast<size_t>(out));
  C ratio;
  if (align_corners) ratio = out > 1 ? static_cast<C>(in - 1) / static_cast<C>(out - 1) : C(0);
  else ratio = scale_of<C>(scale, in, out);
  for (int64_t i = 0; i < out; ++i) {
    if (out == in) {  // a copy (PyTorch's lambdas 1 and 0 on one row)
      groups[i] = {{i, 1.0}};
      continue;
    }
    C real = align_corners ? ratio * static_cast<C>(i)
                           : ratio * (static_cast<C>(i) + C(0.5)) - C(0.5);
    if (!align_corners && real < C(0)) real = C(0);
    const int64_t i0 = std::min(static_cast<int64_t>(std::floor(real)), in - 1);
    const C lambda1 = std::min(std::max(real - static_cast<C>(i0), C(0)), C(1));
    const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
    groups[i] = {{i0, static_cast<double>(C(1) - lambda1)}, {i1, static_cast<double>(lambda1)}};
  }
  return groups;
}

resample::Groups linear_rows(DType compute, int64_t in, int64_t out, bool align_corners,
                             std::optional<double> scale) {
  return compute == DType::kF64 ? linear_rows<double>(in, out, align_corners, scale)
                                : linear_rows<float>(in, out, align_corners, scale);
}

resample::Groups single_rows(const std::vector<int64_t>& rows) {
  resample::Groups groups;
  for (int64_t r : rows) groups.push_back({{r}});
  return groups;
}

Tensor index_tensor(const std::vector<int64_t>& rows, Device device) {
  Tensor t = empty({static_cast<int64_t>(rows.size())}, TensorOptions(DType::kI64, host_device()));
  std::copy(rows.begin(), rows.end(), t.data<int64_t>());
  return t.to(device);
}

DType compute_dtype(DType t) {
  return t == DType::kF16 || t == DType::kBF16 ? DType::kF32 : t;
}

Tensor in_dtype(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : t.to(dtype); }

struct Sizes {
  int64_t h, w, oh, ow;
};

Sizes check(const char* op, const Tensor& input, const Shape& input_size, const Shape& output_size,
            bool floating_only) {
  TESSERA_CHECK(input.defined(), ValueError, op, ": undefined tensor argument");
  TESSERA_CHECK(output_size.size() == 2, ValueError, op,
                ": expected output_size of 2 elements, got ", shape_to_string(output_size));
  TESSERA_CHECK(input_size.size() == 4, ValueError, op,
                ": expected a 4-D input (N, C, H, W), got sizes ", shape_to_string(input_size));
  const Sizes s{input_size[2], input_size[3], output_size[0], output_size[1]};
  TESSERA_CHECK(s.h > 0 && s.w > 0 && s.oh > 0 && s.ow > 0, ValueError, op,
                ": input and output sizes should be greater than 0, but got input (H: ", s.h,
                ", W: ", s.w, ") output (H: ", s.oh, ", W: ", s.ow, ")");
  if (floating_only) {
    TESSERA_CHECK(is_floating(input.dtype()), TypeError, op, ": expected a floating tensor, got ",
                  describe(input));
  }
  return s;
}

void check_grad(const char* op, const Tensor& grad, const Shape& input_size, const Sizes& s) {
  const Shape want = {input_size[0], input_size[1], s.oh, s.ow};
  TESSERA_CHECK(grad.sizes() == want, ValueError, op, ": expected grad_output of shape ",
                shape_to_string(want), ", got ", describe(grad));
}

}  // namespace

Tensor upsample_nearest2d(const Tensor& input, const Shape& output_size,
                          std::optional<double> scale_h, std::optional<double> scale_w) {
  const char* op = "upsample_nearest2d";
  const Sizes s = check(op, input, input.sizes(), output_size, false);
  if (input.numel() == 0) {
    return empty({input.size(0), input.size(1), s.oh, s.ow},
                 TensorOptions(input.dtype(), input.device()));
  }
  const Tensor rows = index_tensor(nearest_rows(s.h, s.oh, scale_h), input.device());
  const Tensor cols = index_tensor(nearest_rows(s.w, s.ow, scale_w), input.device());
  return index_select(index_select(input, 2, rows), 3, cols);
}

Tensor upsample_nearest2d_backward(const Tensor& grad_output, const Shape& output_size,
                                   const Shape& input_size, std::optional<double> scale_h,
                                   std::optional<double> scale_w) {
  const char* op = "upsample_nearest2d_backward";
  const Sizes s = check(op, grad_output, input_size, output_size, true);
  check_grad(op, grad_output, input_size, s);
  if (grad_output.numel() == 0) {
    return zeros(input_size, TensorOptions(grad_output.dtype(), grad_output.device()));
  }
  const DType cdt = compute_dtype(grad_output.dtype());
  const auto rows = resample::transpose(single_rows(nearest_rows(s.h, s.oh, scale_h)), s.h);
  const auto cols = resample::transpose(single_rows(nearest_rows(s.w, s.ow, scale_w)), s.w);
  Tensor g = resample::gather_sum(in_dtype(grad_output, cdt), 2, rows, false);
  g = resample::gather_sum(g, 3, cols, false);
  return in_dtype(g, grad_output.dtype());
}

Tensor upsample_bilinear2d(const Tensor& input, const Shape& output_size, bool align_corners,
                           std::optional<double> scale_h, std::optional<double> scale_w) {
  const char* op = "upsample_bilinear2d";
  const Sizes s = check(op, input, input.sizes(), output_size, true);
  if (input.numel() == 0) {
    return empty({input.size(0), input.size(1), s.oh, s.ow},
                 TensorOptions(input.dtype(), input.device()));
  }
  const DType cdt = compute_dtype(input.dtype());
  const auto rows = linear_rows(cdt, s.h, s.oh, align_corners, scale_h);
  const auto cols = linear_rows(cdt, s.w, s.ow, align_corners, scale_w);
  Tensor out = resample::gather_sum(in_dtype(input, cdt), 3, cols, true);
  out = resample::gather_sum(out, 2, rows, true);
  return in_dtype(out, input.dtype());
}

Tensor upsample_bilinear2d_backward(const Tensor& grad_output, const Shape& output_size,
                                    const Shape& input_size, bool align_corners,
                                    std::optional<double> scale_h,
                                    std::optional<double> scale_w) {
  const char* op = "upsample_bilinear2d_backward";
  const Sizes s = check(op, grad_output, input_size, output_size, true);
  check_grad(op, grad_output, input_size, s);
  if (grad_output.numel() == 0) {
    return zeros(input_size, TensorOptions(grad_output.dtype(), grad_output.device()));
  }
  const DType cdt = compute_dtype(grad_output.dtype());
  const auto rows = resample::transpose(linear_rows(cdt, s.h, s.oh, align_corners, scale_h), s.h);
  const auto cols = resample::transpose(linear_rows(cdt, s.w, s.ow, align_corners, scale_w), s.w);
  Tensor g = resample::gather_sum(in_dtype(grad_output, cdt), 2, rows, true);
  g = resample::gather_sum(g, 3, cols, true);
  return in_dtype(g, grad_output.dtype());
}

}  // namespace tessera
