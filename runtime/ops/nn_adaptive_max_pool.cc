// adaptive_max_pool2d/3d and their backward: composites over gathers and
// the max reduction, so every device runs them natively.
//
// The maximum over a window of (D, H, W) is taken one dim at a time, the
// last first: each pass gathers every output's window along that dim,
// padded to the longest window by repeating the window's last position (a
// repeat changes neither the maximum nor which position holds it first),
// and reduces it with max. The position the pass picks, combined with the
// positions the earlier passes picked for that slice, gives the flat index
// d * H * W + h * W + w of the first maximum (the last NaN) in (d, h, w)
// order, as PyTorch's kernel scans. The backward scatters each gradient to its index
// through the 2-D max pooling backward over a flattened plane.
#include <algorithm>
#include <vector>

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/adaptive_windows.h"
#include "runtime/ops/nn_common.h"
#include "runtime/ops/ops.h"

namespace tessera {

namespace {

// [out, longest] positions of each window along one dim, padded with the
// window's last position.
Tensor window_table(int64_t out, int64_t in, Device device) {
  int64_t longest = 0;
  for (int64_t i = 0; i < out; ++i) {
    longest = std::max(longest, adaptive::window_end(i, in, out) - adaptive::window_start(i, in, out));
  }
  Tensor t = empty({out, longest}, TensorOptions(DType::kI64, host_device()));
  int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < out; ++i) {
    const int64_t start = adaptive::window_start(i, in, out);
    const int64_t last = adaptive::window_end(i, in, out) - 1;
    for (int64_t k = 0; k < longest; ++k) p[i * longest + k] = std::min(start + k, last);
  }
  return t.to(device);
}

// table [out, longest] seen with `dim` of `like` split into those two.
Tensor table_like(const Tensor& table, const Tensor& like, int64_t dim) {
  Shape view(static_cast<size_t>(like.dim()), 1);
  view[static_cast<size_t>(dim)] = table.size(0);
  view[static_cast<size_t>(dim) + 1] = table.size(1);
  return table.view(view).expand(like.sizes());
}

// PyTorch's kernel keeps the first maximum but the last NaN of a window
// (it takes an element when it is greater, or NaN). `pick` (max's first
// extreme) becomes the last NaN's slot where the window holds one.
Tensor last_nan_or(const Tensor& windows, int64_t dim, const Tensor& pick) {
  const int64_t slots = windows.size(dim);
  Shape along(static_cast<size_t>(windows.dim()), 1);
  along[static_cast<size_t>(dim)] = slots;
  const Tensor slot = arange(Scalar(slots), TensorOptions(DType::kI64, windows.device())).view(along);
  const Tensor nan_slot = where(isnan(windows), slot, Scalar(int64_t{-1}));
  const Tensor last_nan = std::get<0>(max(nan_slot, dim, /*keepdim=*/true));
  return where(ge(last_nan, Scalar(int64_t{0})), last_nan, pick);
}

std::tuple<Tensor, Tensor> adaptive_max_pool(const char* op, const Tensor& input,
                                             const Shape& output_size, int64_t rank) {
  const Shape out = adaptive::check_sizes(op, input, output_size, rank);
  const Shape out_sizes = adaptive::with_spatial(input.sizes(), out);
  if (checked_numel(out_sizes, op) == 0) {
    return {empty(out_sizes, TensorOptions(input.dtype(), input.device())),
            empty(out_sizes, TensorOptions(DType::kI64, input.device()))};
  }
  const int64_t first = input.dim() - rank;
  Tensor values = input;
  Tensor flat;        // position within the dims pooled so far
  int64_t inner = 1;  // their input volume
  for (int64_t j = rank - 1; j >= 0; --j) {
    const int64_t dim = first + j, in = input.size(dim);
    const Tensor table = window_table(out[j], in, input.device());
    Shape split = values.sizes();
    split[static_cast<size_t>(dim)] = table.size(0);
    split.insert(split.begin() + dim + 1, table.size(1));
    const Tensor windows = index_select(values, dim, table.view({-1})).view(split);
    auto [maxima, pick] = max(windows, dim + 1, /*keepdim=*/true);
    pick = last_nan_or(windows, dim + 1, pick);
    const Tensor position = gather(table_like(table, windows, dim), dim + 1, pick).squeeze(dim + 1);
    flat = flat.defined() ? add(gather(flat, dim, position), mul(position, Scalar(inner)))
                          : position;
    values = maxima.squeeze(dim + 1);
    inner *= in;
  }
  return {values, flat};
}

Tensor adaptive_max_pool_backward(const char* op, const Tensor& grad_output, const Tensor& input,
                                  const Tensor& indices, int64_t rank) {
  TESSERA_CHECK(grad_output.defined() && indices.defined(), ValueError, op,
                ": undefined grad_output or indices");
  TESSERA_CHECK(grad_output.dim() == input.dim() && grad_output.sizes() == indices.sizes(),
                ValueError, op, ": grad_output ", shape_to_string(grad_output.sizes()),
                " and indices ", shape_to_string(indices.sizes()),
                " must match each other and the input's rank, input ", describe(input));
  const int64_t first = input.dim() - rank;
  const Shape out(grad_output.sizes().begin() + first, grad_output.sizes().end());
  adaptive::check_sizes(op, input, out, rank);
  TESSERA_CHECK(adaptive::with_spatial(input.sizes(), out) == grad_output.sizes(), ValueError, op,
                ": grad_output ", shape_to_string(grad_output.sizes()), " does not match input ",
                shape_to_string(input.sizes()), " in its leading dims");
  nn_detail::check_same_device(op, grad_output, input);
  TESSERA_CHECK(grad_output.dtype() == input.dtype(), TypeError, op,
                ": expected grad_output of the input's dtype, got ", describe(grad_output),
                " for input ", describe(input));
  int64_t lead = 1, volume_in = 1, volume_out = 1;
  for (int64_t d = 0; d < first; ++d) lead *= input.size(d);
  for (int64_t j = 0; j < rank; ++j) {
    volume_in *= input.size(first + j);
    volume_out *= out[j];
  }
  nn_detail::check_same_device(op, indices, input);
  nn_detail::check_pool_indices(op, indices, volume_in, input);
  // Indices address the flattened spatial volume: scatter into a
  // [volume, 1] plane (the 2-D backward also checks their range).
  const Shape plane_out = {lead, 1, volume_out, 1};
  const Tensor plane_in =
      empty({1}, TensorOptions(input.dtype(), input.device())).expand({lead, 1, volume_in, 1});
  return max_pool2d_with_indices_backward(grad_output.reshape(plane_out), plane_in,
                                          indices.reshape(plane_out))
      .view(input.sizes());
}

}  // namespace

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, const Shape& output_size) {
  return adaptive_max_pool("adaptive_max_pool2d", input, output_size, 2);
}

Tensor adaptive_max_pool2d_backward(const Tensor& grad_output, const Tensor& input,
                                    const Tensor& indices) {
  return adaptive_max_pool_backward("adaptive_max_pool2d_backward", grad_output, input, indices, 2);
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& input, const Shape& output_size) {
  return adaptive_max_pool("adaptive_max_pool3d", input, output_size, 3);
}

Tensor adaptive_max_pool3d_backward(const Tensor& grad_output, const Tensor& input,
                                    const Tensor& indices) {
  return adaptive_max_pool_backward("adaptive_max_pool3d_backward", grad_output, input, indices, 3);
}

}  // namespace tessera
