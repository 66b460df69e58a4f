// The geometry of a 2-D convolution, shared by the CPU conv kernels.
#pragma once

#include "runtime/core/error.h"
#include "runtime/core/tensor.h"

namespace tessera::cpu::nn {

struct ConvGeometry {
  int64_t n, cin, h, w;      // input
  int64_t cout, cin_g, kh, kw;  // weight
  int64_t oh, ow;            // output
  int64_t sh, sw, ph, pw, dh, dw, groups;
};

inline ConvGeometry conv_geometry(const Tensor& input, const Tensor& weight, const Tensor& out,
                                  const Shape& stride, const Shape& padding, const Shape& dilation,
                                  int64_t groups) {
  TESSERA_CHECK(input.dim() == 4 && weight.dim() == 4 && out.dim() == 4 && stride.size() == 2 &&
                    padding.size() == 2 && dilation.size() == 2 && groups > 0,
                ValueError, "conv2d: the cpu kernel needs 4-D tensors and 2-entry parameters, got ",
                describe(input), ", ", describe(weight), ", ", describe(out));
  return ConvGeometry{input.size(0),  input.size(1), input.size(2), input.size(3),
                      weight.size(0), weight.size(1), weight.size(2), weight.size(3),
                      out.size(2),    out.size(3),   stride[0],     stride[1],
                      padding[0],     padding[1],    dilation[0],   dilation[1],
                      groups};
}

}  // namespace tessera::cpu::nn
