// Argument checks shared by the 2-D and 3-D convolution front ends
// (nn_conv.cc, nn_conv3d.cc): `rank` spatial dims, single-entry Shapes
// applied to every dim, errors worded as PyTorch's.
#pragma once

#include "runtime/core/checked_math.h"
#include "runtime/core/error.h"
#include "runtime/ops/nn_common.h"

namespace tessera::nn_detail {

struct ConvParams {
  Shape stride, padding, dilation;
  int64_t groups;
};

inline ConvParams check_conv_params(const char* op, int64_t rank, const Shape& stride,
                                    const Shape& padding, const Shape& dilation, int64_t groups) {
  auto spatial = [&](const char* name, const Shape& s) {
    return rank == 2 ? pair_arg(op, name, s) : triple_arg(op, name, s);
  };
  ConvParams p{spatial("stride", stride), spatial("padding", padding),
               spatial("dilation", dilation), groups};
  for (size_t i = 0; i < static_cast<size_t>(rank); ++i) {
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

// input and weight (and bias, when defined) on one device, of one dtype
// (not bool); bias [Cout].
inline void check_conv_tensors(const char* op, const Tensor& input, const Tensor& weight,
                               const Tensor& bias) {
  check_same_device(op, input, weight);
  TESSERA_CHECK(input.dtype() != DType::kBool, TypeError, op,
                ": bool inputs are not supported, got ", describe(input));
  TESSERA_CHECK(input.dtype() == weight.dtype(), TypeError, op,
                ": input and weight must have the same dtype, got ", describe(input), " and ",
                describe(weight));
  if (bias.defined()) {
    check_same_device(op, input, bias);
    TESSERA_CHECK(bias.dtype() == input.dtype(), TypeError, op,
                  ": input and bias must have the same dtype, got ", describe(input), " and ",
                  describe(bias));
    TESSERA_CHECK(bias.dim() == 1 && bias.size(0) == weight.size(0), ValueError, op,
                  ": expected bias of shape [", weight.size(0), "], got ", describe(bias));
  }
}

// Checks input [N, Cin, spatial...] against weight [Cout, Cin / groups,
// kernel...] and returns the output's sizes.
inline Shape conv_out_sizes(const char* op, const Tensor& input, const Tensor& weight,
                            const ConvParams& p) {
  const int64_t rank = static_cast<int64_t>(p.stride.size());
  TESSERA_CHECK(weight.dim() == rank + 2, ValueError, op, ": expected a ", rank + 2,
                "-D weight, got ", describe(weight));
  const int64_t cout = weight.size(0), cin_g = weight.size(1);
  TESSERA_CHECK(input.size(1) == cin_g * p.groups, ValueError, op, ": given groups=", p.groups,
                ", weight of size ", shape_to_string(weight.sizes()), ", expected input",
                shape_to_string(input.sizes()), " to have ", cin_g * p.groups,
                " channels, but got ", input.size(1), " channels instead");
  TESSERA_CHECK(cout % p.groups == 0, ValueError, op, ": given groups=", p.groups,
                ", expected weight ", shape_to_string(weight.sizes()),
                " to be divisible by groups at dimension 0");
  Shape out = {input.size(0), cout};
  Shape padded(static_cast<size_t>(rank)), span(static_cast<size_t>(rank));
  for (size_t i = 0; i < static_cast<size_t>(rank); ++i) {
    padded[i] = checked_add(input.size(2 + i), checked_mul(2, p.padding[i], op), op);
    span[i] = checked_add(checked_mul(p.dilation[i], weight.size(2 + i) - 1, op), 1, op);
  }
  for (size_t i = 0; i < static_cast<size_t>(rank); ++i) {
    TESSERA_CHECK(padded[i] >= span[i], ValueError, op,
                  ": calculated padded input size per channel ", shape_to_string(padded),
                  " is smaller than the kernel size ", shape_to_string(span), ", input ",
                  shape_to_string(input.sizes()), ", weight ", shape_to_string(weight.sizes()));
    out.push_back((padded[i] - span[i]) / p.stride[i] + 1);
  }
  return out;
}

}  // namespace tessera::nn_detail
