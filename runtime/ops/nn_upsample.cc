// Upsampling in every mode of torch.nn.functional.interpolate but
// antialias (nearest, nearest-exact, linear and cubic over 1, 2 or 3
// spatial dims) with its backward: composites over index_select and
// resample::gather_sum, so every device runs them natively.
//
// Every mode is separable: the output is the input resized along one
// spatial dim at a time, from the last (the width) to the first, as
// PyTorch's kernels nest their sums,
//   out = sum_d wd (sum_h wh (sum_w ww x)),
// each pass gathering the sources and weights that
// resample::interpolation_taps computes on the host (resample_weights.h).
// The backward gathers the transposed taps in the reverse order, summing
// each output's gradient, times its weights, into the sources it read.
// The interpolating modes, and every backward, compute in float32 for
// 16-bit floats (float64 for float64) and round once at the end.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/gather_sum.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/resample_weights.h"

namespace tessera {

namespace {

using Scales = std::vector<std::optional<double>>;

bool interpolating(Interpolation mode) {
  return mode == Interpolation::kLinear || mode == Interpolation::kCubic;
}

// The aten op of mode over `rank` spatial dims: what errors name. Cubic in
// 1-D and 3-D has no aten op; it gets a name of the same pattern.
const char* op_name(Interpolation mode, size_t rank) {
  static constexpr const char* kNames[4][3] = {
      {"upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d"},
      {"_upsample_nearest_exact1d", "_upsample_nearest_exact2d", "_upsample_nearest_exact3d"},
      {"upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d"},
      {"upsample_cubic1d", "upsample_bicubic2d", "upsample_tricubic3d"},
  };
  return rank >= 1 && rank <= 3 ? kNames[static_cast<int>(mode)][rank - 1] : "upsample";
}

// The letter of spatial dim d of `rank`, for messages: D, H, W.
char dim_letter(size_t rank, size_t d) { return "DHW"[3 - rank + d]; }

std::string layout(size_t rank) {
  std::string s = "(N, C";
  for (size_t d = 0; d < rank; ++d) (s += ", ") += dim_letter(rank, d);
  return s + ")";
}

// "(H: 3, W: 4)"
std::string spatial_sizes(const Shape& sizes, size_t rank) {
  std::string s = "(";
  for (size_t d = 0; d < rank; ++d) {
    if (d) s += ", ";
    ((s += dim_letter(rank, d)) += ": ") += std::to_string(sizes[d]);
  }
  return s + ")";
}

using nn_detail::compute_dtype;
using nn_detail::in_dtype;

Tensor index_tensor(const resample::Groups& single_sources, Device device) {
  Tensor t = empty({static_cast<int64_t>(single_sources.size())},
                   TensorOptions(DType::kI64, host_device()));
  for (size_t i = 0; i < single_sources.size(); ++i) {
    t.data<int64_t>()[i] = single_sources[i][0].index;
  }
  return t.to(device);
}

// A validated upsample call.
struct Resize {
  std::string op;
  Interpolation mode;
  bool align_corners;
  Shape input_size;   // [N, C, spatial...]
  Shape output_size;  // the spatial sizes
  Scales scales;      // one per spatial dim

  size_t rank() const { return output_size.size(); }
  int64_t in(size_t d) const { return input_size[2 + d]; }
  int64_t out(size_t d) const { return output_size[d]; }
  Shape output_shape() const {
    Shape s = {input_size[0], input_size[1]};
    for (int64_t o : output_size) s.push_back(o);
    return s;
  }
  resample::Groups taps(size_t d, DType compute) const {
    return resample::interpolation_taps(mode, compute, in(d), out(d), align_corners, scales[d]);
  }
};

// Checks an upsample call over `rank` spatial dims; t is the input (the
// forward) or grad_output (the backward), input_size the forward's input
// sizes.
Resize check(size_t rank, Interpolation mode, bool backward, const Tensor& t,
             const Shape& input_size, const Shape& output_size, bool align_corners,
             const Scales& scales) {
  const std::string op = std::string(op_name(mode, rank)) + (backward ? "_backward" : "");
  TESSERA_CHECK(t.defined(), ValueError, op, ": undefined tensor argument");
  TESSERA_CHECK(output_size.size() == rank, ValueError, op, ": expected output_size of ", rank,
                " element", rank == 1 ? "" : "s", ", got ", shape_to_string(output_size));
  TESSERA_CHECK(input_size.size() == rank + 2, ValueError, op, ": expected a ", rank + 2,
                "-D input ", layout(rank), ", got sizes ", shape_to_string(input_size));
  const Shape spatial_in(input_size.begin() + 2, input_size.end());
  bool positive = true;
  for (size_t d = 0; d < rank; ++d) positive = positive && spatial_in[d] > 0 && output_size[d] > 0;
  TESSERA_CHECK(positive, ValueError, op,
                ": input and output sizes should be greater than 0, but got input ",
                spatial_sizes(spatial_in, rank), " output ", spatial_sizes(output_size, rank));
  TESSERA_CHECK(!align_corners || interpolating(mode), ValueError, op,
                ": align_corners applies to the linear and cubic modes only");
  TESSERA_CHECK(scales.empty() || scales.size() == rank, ValueError, op, ": expected ", rank,
                " scale", rank == 1 ? "" : "s", " (one per spatial dim) or none, got ",
                scales.size());
  if (backward || interpolating(mode)) {
    TESSERA_CHECK(is_floating(t.dtype()), TypeError, op, ": expected a floating tensor, got ",
                  describe(t));
  }
  Resize r{op, mode, align_corners, input_size, output_size, scales};
  if (r.scales.empty()) r.scales.assign(rank, std::nullopt);
  // Sizes come from the caller: reject negative batch or channel counts
  // and element counts that overflow before anything is allocated.
  checked_numel(input_size, op.c_str());
  checked_numel(r.output_shape(), op.c_str());
  if (backward) {
    TESSERA_CHECK(t.sizes() == r.output_shape(), ValueError, op, ": expected grad_output of shape ",
                  shape_to_string(r.output_shape()), ", got ", describe(t));
  }
  return r;
}

Resize check_forward(size_t rank, Interpolation mode, const Tensor& input,
                     const Shape& output_size, bool align_corners, const Scales& scales) {
  const Shape input_size = input.defined() ? input.sizes() : Shape{};
  return check(rank, mode, false, input, input_size, output_size, align_corners, scales);
}

// The rank of a generic call: the length of output_size.
size_t rank_of(const Shape& output_size) {
  TESSERA_CHECK(output_size.size() >= 1 && output_size.size() <= 3, ValueError,
                "upsample: expected output_size of 1, 2 or 3 elements (one per spatial dim), got ",
                shape_to_string(output_size));
  return output_size.size();
}

// A result that is not its argument: a resize that changed nothing still
// returns a new tensor.
Tensor fresh(const Tensor& result, const Tensor& argument) {
  return result.is_same(argument) ? argument.clone() : result;
}

Tensor resize(const Resize& r, const Tensor& input) {
  if (input.numel() == 0) return empty(r.output_shape(), TensorOptions(input.dtype(), input.device()));
  const bool weighted = interpolating(r.mode);
  // Nearest only moves values, in any dtype.
  const DType compute = weighted ? compute_dtype(input.dtype()) : input.dtype();
  Tensor x = in_dtype(input, compute);
  for (size_t d = r.rank(); d-- > 0;) {
    const resample::Groups taps = r.taps(d, compute);
    if (resample::is_identity(taps, r.in(d))) continue;
    const int64_t dim = static_cast<int64_t>(2 + d);
    x = weighted ? resample::gather_sum(x, dim, taps, true)
                 : index_select(x, dim, index_tensor(taps, x.device()));
  }
  return fresh(in_dtype(x, input.dtype()), input);
}

Tensor resize_backward(const Resize& r, const Tensor& grad_output) {
  const TensorOptions options(grad_output.dtype(), grad_output.device());
  if (grad_output.numel() == 0) return zeros(r.input_size, options);
  bool same_size = true;
  for (size_t d = 0; d < r.rank(); ++d) same_size = same_size && r.in(d) == r.out(d);
  // PyTorch's CPU bicubic backward copies the gradient when no spatial size
  // changes, whatever the scales.
  if (r.mode == Interpolation::kCubic && same_size) return grad_output.clone();
  const DType compute = compute_dtype(grad_output.dtype());
  Tensor g = in_dtype(grad_output, compute);
  for (size_t d = 0; d < r.rank(); ++d) {
    const resample::Groups taps = r.taps(d, compute);
    if (resample::is_identity(taps, r.in(d))) continue;
    g = resample::gather_sum(g, static_cast<int64_t>(2 + d), resample::transpose(taps, r.in(d)),
                             interpolating(r.mode));
  }
  return fresh(in_dtype(g, grad_output.dtype()), grad_output);
}

}  // namespace

Tensor upsample(const Tensor& input, const Shape& output_size, Interpolation mode,
                bool align_corners, const std::vector<std::optional<double>>& scales) {
  const size_t rank = rank_of(output_size);
  return resize(check_forward(rank, mode, input, output_size, align_corners, scales), input);
}

Tensor upsample_backward(const Tensor& grad_output, const Shape& output_size,
                         const Shape& input_size, Interpolation mode, bool align_corners,
                         const std::vector<std::optional<double>>& scales) {
  const size_t rank = rank_of(output_size);
  return resize_backward(
      check(rank, mode, true, grad_output, input_size, output_size, align_corners, scales),
      grad_output);
}

Tensor upsample_nearest2d(const Tensor& input, const Shape& output_size,
                          std::optional<double> scale_h, std::optional<double> scale_w) {
  return resize(
      check_forward(2, Interpolation::kNearest, input, output_size, false, {scale_h, scale_w}),
      input);
}

Tensor upsample_nearest2d_backward(const Tensor& grad_output, const Shape& output_size,
                                   const Shape& input_size, std::optional<double> scale_h,
                                   std::optional<double> scale_w) {
  return resize_backward(check(2, Interpolation::kNearest, true, grad_output, input_size,
                                 output_size, false, {scale_h, scale_w}),
                           grad_output);
}

Tensor upsample_bilinear2d(const Tensor& input, const Shape& output_size, bool align_corners,
                           std::optional<double> scale_h, std::optional<double> scale_w) {
  return resize(check_forward(2, Interpolation::kLinear, input, output_size, align_corners,
                                {scale_h, scale_w}),
                  input);
}

Tensor upsample_bilinear2d_backward(const Tensor& grad_output, const Shape& output_size,
                                    const Shape& input_size, bool align_corners,
                                    std::optional<double> scale_h,
                                    std::optional<double> scale_w) {
  return resize_backward(check(2, Interpolation::kLinear, true, grad_output, input_size,
                                 output_size, align_corners, {scale_h, scale_w}),
                           grad_output);
}

}  // namespace tessera
