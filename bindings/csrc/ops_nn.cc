// tessera.nn.functional: registration of its parts (nn_args.h), and here
// convolutions (1-, 2- and 3-D, plain and transposed) and pooling (max,
// average, power-average, adaptive), with torch.nn.functional's names and
// arguments: an int or a tuple per spatial dim, padding='same'/'valid',
// return_indices=. The runtime has 2-D and 3-D convolutions and pooling;
// 1-D ones run as 2-D ones of height 1, and a transposed convolution is
// the input gradient of the plain one (convolution_backward).
#include <optional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "bindings/csrc/nn_args.h"
#include "runtime/ops/ops.h"

namespace tessera_py {

namespace {

using tessera::Shape;
using tessera::Tensor;

// The 2-D form of a 1-D argument: `first` for the unit height, then s.
Shape with_height(const Shape& s, int64_t first) {
  Shape r{first};
  r.insert(r.end(), s.begin(), s.end());
  return r;
}

// -- Convolution ------------------------------------------------------------

using Padding = std::variant<Shape, std::string>;

// Explicit padding per dim, plus the zeros padding='same' adds after the
// input where a kernel's span is even (PyTorch pads the extra one on the
// right); extra_after is empty when there are none.
struct ConvPadding {
  Shape padding;
  Shape extra_after;
};

ConvPadding conv_padding(const char* op, const Padding& arg, const Tensor& weight,
                         const Shape& stride, const Shape& dilation, size_t rank) {
  if (const Shape* s = std::get_if<Shape>(&arg)) return {spatial_arg(*s, rank, op, "padding"), {}};
  const std::string& mode = std::get<std::string>(arg);
  if (mode == "valid") return {Shape(rank, 0), {}};
  TESSERA_CHECK(mode == "same", ValueError, op, ": invalid padding string '", mode,
                "', should be one of {'valid', 'same'}");
  for (int64_t s : stride) {
    TESSERA_CHECK(s == 1, ValueError, op,
                  ": padding='same' is not supported for strided convolutions, got stride ",
                  tessera::shape_to_string(stride));
  }
  ConvPadding p{Shape(rank), Shape(rank)};
  bool uneven = false;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t span = dilation[d] * (weight.size(static_cast<int64_t>(2 + d)) - 1);
    p.padding[d] = span / 2;
    p.extra_after[d] = span % 2;
    uneven = uneven || span % 2 != 0;
  }
  if (!uneven) p.extra_after.clear();
  return p;
}

// constant_pad's (before, after) pairs, from the last dim, for zeros after
// each of the last extra.size() dims.
Tensor pad_after(const Tensor& x, const Shape& extra) {
  Shape pad;
  for (size_t d = extra.size(); d-- > 0;) pad.insert(pad.end(), {0, extra[d]});
  return tessera::constant_pad(x, pad);
}

Tensor conv(size_t rank, const char* op, const Tensor& input, const Tensor& weight,
            const Tensor* bias, const Shape& stride_arg, const Padding& padding_arg,
            const Shape& dilation_arg, int64_t groups) {
  const bool batched = check_spatial_input(input, static_cast<int64_t>(rank), op);
  TESSERA_CHECK(weight.dim() == static_cast<int64_t>(rank + 2), ValueError, op, ": expected a ",
                rank + 2, "-D weight, got ", tessera::describe(weight));
  const Shape stride = spatial_arg(stride_arg, rank, op, "stride");
  const Shape dilation = spatial_arg(dilation_arg, rank, op, "dilation");
  const ConvPadding pad = conv_padding(op, padding_arg, weight, stride, dilation, rank);
  const Tensor x = pad.extra_after.empty() ? input : pad_after(input, pad.extra_after);
  const Tensor b = optional_tensor(bias);
  if (rank == 2) return tessera::conv2d(x, weight, b, stride, pad.padding, dilation, groups);
  if (rank == 3) return tessera::conv3d(x, weight, b, stride, pad.padding, dilation, groups);
  // The 2-D convolution would name itself in a channel mismatch.
  const int64_t channels = input.size(batched ? 1 : 0);
  TESSERA_CHECK(groups <= 0 || channels == weight.size(1) * groups, ValueError, op,
                ": given groups=", groups, ", weight of size ",
                tessera::shape_to_string(weight.sizes()), ", expected input ",
                tessera::shape_to_string(input.sizes()), " to have ", weight.size(1) * groups,
                " channels, but got ", channels, " channels instead");
  return tessera::conv2d(x.unsqueeze(-2), weight.unsqueeze(-2), b, with_height(stride, 1),
                         with_height(pad.padding, 0), with_height(dilation, 1), groups)
      .squeeze(-2);
}

// conv_transpose(x, w) is the gradient with respect to the input of the
// convolution by w of a y of the transposed convolution's output shape,
// taken with grad_output = x. y only gives the shape (its values would
// feed grad_weight, which is not computed).
Tensor conv_transpose(size_t rank, const char* op, const Tensor& input, const Tensor& weight,
                      const Tensor* bias, const Shape& stride_arg, const Shape& padding_arg,
                      const Shape& output_padding_arg, int64_t groups,
                      const Shape& dilation_arg) {
  const bool batched = check_spatial_input(input, static_cast<int64_t>(rank), op);
  TESSERA_CHECK(weight.dim() == static_cast<int64_t>(rank + 2), ValueError, op, ": expected a ",
                rank + 2, "-D weight, got ", tessera::describe(weight));
  TESSERA_CHECK(tessera::is_floating(input.dtype()) && input.dtype() == weight.dtype(), TypeError,
                op, ": expected floating input and weight of one dtype, got ",
                tessera::describe(input), " and ", tessera::describe(weight));
  TESSERA_CHECK(groups > 0, ValueError, op, ": non-positive groups is not supported, got ",
                groups);
  Shape stride = spatial_arg(stride_arg, rank, op, "stride");
  Shape padding = spatial_arg(padding_arg, rank, op, "padding");
  Shape output_padding = spatial_arg(output_padding_arg, rank, op, "output_padding");
  Shape dilation = spatial_arg(dilation_arg, rank, op, "dilation");
  Tensor x = batched ? input : input.unsqueeze(0);
  TESSERA_CHECK(x.size(1) == weight.size(0) && weight.size(0) % groups == 0, ValueError, op,
                ": weight of size ", tessera::shape_to_string(weight.sizes()), " with groups=",
                groups, " expects input with ", weight.size(0), " channels, got input of size ",
                tessera::shape_to_string(input.sizes()));
  const int64_t out_channels = weight.size(1) * groups;
  if (bias != nullptr) {
    TESSERA_CHECK(bias->dim() == 1 && bias->size(0) == out_channels, ValueError, op,
                  ": expected bias of shape [", out_channels, "], got ", tessera::describe(*bias));
    TESSERA_CHECK(bias->dtype() == input.dtype(), TypeError, op,
                  ": input and bias must have the same dtype, got ", tessera::describe(input),
                  " and ", tessera::describe(*bias));
  }
  for (size_t d = 0; d < rank; ++d) {
    TESSERA_CHECK(stride[d] > 0 && dilation[d] > 0 && padding[d] >= 0, ValueError, op,
                  ": expected positive stride and dilation and non-negative padding, got stride ",
                  tessera::shape_to_string(stride), ", dilation ",
                  tessera::shape_to_string(dilation), ", padding ",
                  tessera::shape_to_string(padding));
    TESSERA_CHECK(output_padding[d] >= 0 &&
                      (output_padding[d] < stride[d] || output_padding[d] < dilation[d]),
                  ValueError, op,
                  ": output padding must be smaller than either stride or dilation, got "
                  "output_padding ", tessera::shape_to_string(output_padding), ", stride ",
                  tessera::shape_to_string(stride), ", dilation ",
                  tessera::shape_to_string(dilation));
  }
  Tensor w = weight;
  if (rank == 1) {
    x = x.unsqueeze(2);
    w = w.unsqueeze(2);
    stride = with_height(stride, 1);
    padding = with_height(padding, 0);
    output_padding = with_height(output_padding, 0);
    dilation = with_height(dilation, 1);
  }
  const size_t dims = stride.size();
  Shape out_sizes{x.size(0), out_channels};
  Shape extra(dims);  // zeros after x where output_padding reaches the stride
  bool any_extra = false;
  for (size_t d = 0; d < dims; ++d) {
    const int64_t in = x.size(static_cast<int64_t>(2 + d));
    const int64_t k = w.size(static_cast<int64_t>(2 + d));
    const int64_t out = (in - 1) * stride[d] - 2 * padding[d] + dilation[d] * (k - 1) +
                        output_padding[d] + 1;
    TESSERA_CHECK(out > 0, ValueError, op, ": the output size would be ", out,
                  " (non-positive) for input ", tessera::shape_to_string(input.sizes()),
                  " and weight ", tessera::shape_to_string(weight.sizes()));
    out_sizes.push_back(out);
    // The convolution over an output of this size has output_padding /
    // stride more positions per dim than x; zeros there add nothing.
    extra[d] = output_padding[d] / stride[d];
    any_extra = any_extra || extra[d] != 0;
  }
  const Tensor grad_output = any_extra ? pad_after(x, extra) : x;
  const Tensor shape_only = tessera::empty(out_sizes, tessera::TensorOptions(x.dtype(), x.device()));
  Tensor out = dims == 3
                   ? std::get<0>(tessera::conv3d_backward(grad_output, shape_only, w, stride,
                                                          padding, dilation, groups,
                                                          {true, false, false}))
                   : std::get<0>(tessera::convolution_backward(grad_output, shape_only, w, stride,
                                                               padding, dilation, groups,
                                                               {true, false, false}));
  if (bias != nullptr) {
    Shape bias_shape(static_cast<size_t>(out.dim() - 1), 1);
    bias_shape[0] = out_channels;
    out = tessera::add(out, bias->reshape(bias_shape));
  }
  if (rank == 1) out = out.squeeze(2);
  return batched ? out : out.squeeze(0);
}

// -- Pooling ----------------------------------------------------------------

using MaxPoolResult = std::variant<Tensor, std::tuple<Tensor, Tensor>>;

// stride=None (or []) means the kernel size, as the runtime's empty Shape.
Shape stride_or_kernel(const std::optional<Shape>& stride) { return stride.value_or(Shape{}); }

MaxPoolResult max_pool(size_t rank, const char* op, const Tensor& input, const Shape& kernel_size,
                       const std::optional<Shape>& stride_arg, const Shape& padding,
                       const Shape& dilation, bool ceil_mode, bool return_indices) {
  check_spatial_input(input, static_cast<int64_t>(rank), op);
  Shape stride = stride_or_kernel(stride_arg);
  if (rank == 1) {
    const Shape k = with_height(spatial_arg(kernel_size, 1, op, "kernel_size"), 1);
    const Shape s = stride.empty() ? k : with_height(spatial_arg(stride, 1, op, "stride"), 1);
    auto [values, indices] = tessera::max_pool2d_with_indices(
        input.unsqueeze(-2), k, s, with_height(spatial_arg(padding, 1, op, "padding"), 0),
        with_height(spatial_arg(dilation, 1, op, "dilation"), 1), ceil_mode);
    // An index into the (1, L) plane is the position in L.
    if (!return_indices) return values.squeeze(-2);
    return std::make_tuple(values.squeeze(-2), indices.squeeze(-2));
  }
  if (!return_indices) {
    return rank == 2 ? tessera::max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode)
                     : tessera::max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode);
  }
  return rank == 2
             ? tessera::max_pool2d_with_indices(input, kernel_size, stride, padding, dilation,
                                                ceil_mode)
             : tessera::max_pool3d_with_indices(input, kernel_size, stride, padding, dilation,
                                                ceil_mode);
}

Tensor avg_pool(size_t rank, const char* op, const Tensor& input, const Shape& kernel_size,
                const std::optional<Shape>& stride_arg, const Shape& padding, bool ceil_mode,
                bool count_include_pad, std::optional<int64_t> divisor_override) {
  check_spatial_input(input, static_cast<int64_t>(rank), op);
  Shape stride = stride_or_kernel(stride_arg);
  if (rank == 1) {
    const Shape k = with_height(spatial_arg(kernel_size, 1, op, "kernel_size"), 1);
    const Shape s = stride.empty() ? k : with_height(spatial_arg(stride, 1, op, "stride"), 1);
    return tessera::avg_pool2d(input.unsqueeze(-2), k, s,
                               with_height(spatial_arg(padding, 1, op, "padding"), 0), ceil_mode,
                               count_include_pad)
        .squeeze(-2);
  }
  if (rank == 2) {
    return tessera::avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                               divisor_override);
  }
  return tessera::avg_pool3d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                             divisor_override);
}

// PyTorch's lp_pool: (sum over each window of x^p)^(1/p), computed as the
// average of x^p times the window's size (zero padding, no dilation).
Tensor lp_pool(size_t rank, const char* op, const Tensor& input, double norm_type,
               const Shape& kernel_size, const std::optional<Shape>& stride, bool ceil_mode) {
  const Shape kernel = spatial_arg(kernel_size, rank, op, "kernel_size");
  int64_t window = 1;
  for (int64_t k : kernel) window *= k;
  const Tensor avg = avg_pool(rank, op, tessera::pow(input, norm_type), kernel, stride, {0},
                              ceil_mode, true, std::nullopt);
  // sign(avg) * relu(|avg|) keeps the sign of an odd power's average.
  const Tensor signed_avg = tessera::mul(tessera::sign(avg), tessera::relu(tessera::abs(avg)));
  return tessera::pow(tessera::mul(signed_avg, window), 1.0 / norm_type);
}

// output_size: an int for every dim, or one entry per dim where None keeps
// the input's size.
using AdaptiveSize = std::variant<int64_t, std::vector<std::optional<int64_t>>>;

Shape adaptive_size(const AdaptiveSize& arg, const Tensor& input, size_t rank, const char* op) {
  if (const int64_t* n = std::get_if<int64_t>(&arg)) return Shape(rank, *n);
  const auto& sizes = std::get<std::vector<std::optional<int64_t>>>(arg);
  TESSERA_CHECK(sizes.size() == rank, ValueError, op, ": output_size must be an int or ", rank,
                " entries (ints or None), got ", sizes.size(), " entries");
  Shape out(rank);
  for (size_t d = 0; d < rank; ++d) {
    out[d] = sizes[d].value_or(input.size(input.dim() - static_cast<int64_t>(rank - d)));
  }
  return out;
}

Tensor adaptive_avg_pool(size_t rank, const char* op, const Tensor& input,
                         const AdaptiveSize& output_size) {
  check_spatial_input(input, static_cast<int64_t>(rank), op);
  const Shape out = adaptive_size(output_size, input, rank, op);
  if (rank == 1) {
    return tessera::adaptive_avg_pool2d(input.unsqueeze(-2), with_height(out, 1)).squeeze(-2);
  }
  return rank == 2 ? tessera::adaptive_avg_pool2d(input, out)
                   : tessera::adaptive_avg_pool3d(input, out);
}

MaxPoolResult adaptive_max_pool(size_t rank, const char* op, const Tensor& input,
                                const AdaptiveSize& output_size, bool return_indices) {
  check_spatial_input(input, static_cast<int64_t>(rank), op);
  const Shape out = adaptive_size(output_size, input, rank, op);
  std::tuple<Tensor, Tensor> r;
  if (rank == 1) {
    auto [values, indices] = tessera::adaptive_max_pool2d(input.unsqueeze(-2), with_height(out, 1));
    r = {values.squeeze(-2), indices.squeeze(-2)};
  } else {
    r = rank == 2 ? tessera::adaptive_max_pool2d(input, out)
                  : tessera::adaptive_max_pool3d(input, out);
  }
  if (!return_indices) return std::get<0>(r);
  return r;
}

const char* const kConvNames[] = {"conv1d", "conv2d", "conv3d"};
const char* const kConvTransposeNames[] = {"conv_transpose1d", "conv_transpose2d",
                                           "conv_transpose3d"};
const char* const kMaxPoolNames[] = {"max_pool1d", "max_pool2d", "max_pool3d"};
const char* const kAvgPoolNames[] = {"avg_pool1d", "avg_pool2d", "avg_pool3d"};
const char* const kLpPoolNames[] = {"lp_pool1d", "lp_pool2d", "lp_pool3d"};
const char* const kAdaptiveAvgNames[] = {"adaptive_avg_pool1d", "adaptive_avg_pool2d",
                                         "adaptive_avg_pool3d"};
const char* const kAdaptiveMaxNames[] = {"adaptive_max_pool1d", "adaptive_max_pool2d",
                                         "adaptive_max_pool3d"};

}  // namespace

void register_nn_conv_pool(py::module_& f) {
  for (size_t rank = 1; rank <= 3; ++rank) {
    const char* name = kConvNames[rank - 1];
    f.def(name, [rank, name](const Tensor& input, const Tensor& weight, const Tensor* bias,
                             const Shape& stride, const Padding& padding, const Shape& dilation,
                             int64_t groups) {
      return conv(rank, name, input, weight, bias, stride, padding, dilation, groups);
    }, "input"_a, "weight"_a, "bias"_a = py::none(), "stride"_a = 1, "padding"_a = 0,
       "dilation"_a = 1, "groups"_a = 1, ReleaseGil(),
       "input [N, C_in, spatial...] or [C_in, spatial...], weight [C_out, C_in / groups, "
       "kernel...]; padding may be 'valid' or 'same' (stride 1).");

    const char* tname = kConvTransposeNames[rank - 1];
    f.def(tname, [rank, tname](const Tensor& input, const Tensor& weight, const Tensor* bias,
                               const Shape& stride, const Shape& padding,
                               const Shape& output_padding, int64_t groups,
                               const Shape& dilation) {
      return conv_transpose(rank, tname, input, weight, bias, stride, padding, output_padding,
                            groups, dilation);
    }, "input"_a, "weight"_a, "bias"_a = py::none(), "stride"_a = 1, "padding"_a = 0,
       "output_padding"_a = 0, "groups"_a = 1, "dilation"_a = 1, ReleaseGil(),
       "weight [C_in, C_out / groups, kernel...]; the adjoint of the convolution.");

    const char* mname = kMaxPoolNames[rank - 1];
    f.def(mname, [rank, mname](const Tensor& input, const Shape& kernel_size,
                               const std::optional<Shape>& stride, const Shape& padding,
                               const Shape& dilation, bool ceil_mode, bool return_indices) {
      return max_pool(rank, mname, input, kernel_size, stride, padding, dilation, ceil_mode,
                      return_indices);
    }, "input"_a, "kernel_size"_a, "stride"_a = py::none(), "padding"_a = 0, "dilation"_a = 1,
       "ceil_mode"_a = false, "return_indices"_a = false, ReleaseGil(),
       "With return_indices, (output, indices into each flattened input plane).");

    const char* aname = kAvgPoolNames[rank - 1];
    if (rank == 1) {
      f.def(aname, [aname](const Tensor& input, const Shape& kernel_size,
                           const std::optional<Shape>& stride, const Shape& padding,
                           bool ceil_mode, bool count_include_pad) {
        return avg_pool(1, aname, input, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, std::nullopt);
      }, "input"_a, "kernel_size"_a, "stride"_a = py::none(), "padding"_a = 0,
         "ceil_mode"_a = false, "count_include_pad"_a = true, ReleaseGil());
    } else {
      f.def(aname, [rank, aname](const Tensor& input, const Shape& kernel_size,
                                 const std::optional<Shape>& stride, const Shape& padding,
                                 bool ceil_mode, bool count_include_pad,
                                 std::optional<int64_t> divisor_override) {
        return avg_pool(rank, aname, input, kernel_size, stride, padding, ceil_mode,
                        count_include_pad, divisor_override);
      }, "input"_a, "kernel_size"_a, "stride"_a = py::none(), "padding"_a = 0,
         "ceil_mode"_a = false, "count_include_pad"_a = true, "divisor_override"_a = py::none(),
         ReleaseGil());
    }

    const char* lname = kLpPoolNames[rank - 1];
    f.def(lname, [rank, lname](const Tensor& input, double norm_type, const Shape& kernel_size,
                               const std::optional<Shape>& stride, bool ceil_mode) {
      return lp_pool(rank, lname, input, norm_type, kernel_size, stride, ceil_mode);
    }, "input"_a, "norm_type"_a, "kernel_size"_a, "stride"_a = py::none(),
       "ceil_mode"_a = false, ReleaseGil(), "(sum over each window of x^p)^(1/p).");

    const char* aaname = kAdaptiveAvgNames[rank - 1];
    f.def(aaname, [rank, aaname](const Tensor& input, const AdaptiveSize& output_size) {
      return adaptive_avg_pool(rank, aaname, input, output_size);
    }, "input"_a, "output_size"_a, ReleaseGil(),
       "Averages over windows that tile the input into output_size (None keeps a dim).");

    const char* amname = kAdaptiveMaxNames[rank - 1];
    f.def(amname, [rank, amname](const Tensor& input, const AdaptiveSize& output_size,
                                 bool return_indices) {
      return adaptive_max_pool(rank, amname, input, output_size, return_indices);
    }, "input"_a, "output_size"_a, "return_indices"_a = false, ReleaseGil());
  }
}

void register_nn_ops(py::module_& m, py::module_& functional) {
  (void)m;  // every nn function lives in tessera.nn.functional
  register_nn_conv_pool(functional);
  register_nn_layers(functional);
  register_nn_activations(functional);
  register_nn_normalization(functional);
  register_nn_losses(functional);
}

}  // namespace tessera_py
