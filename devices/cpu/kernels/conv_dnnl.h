// A ConvGeometry in oneDNN's terms, shared by the f32 convolution kernels
// (forward in conv_forward.cc, backward in conv_backward.cc): the engine,
// the dims, strides, dilations and paddings, a forward description, and
// the moves between our NCHW tensors and the layouts oneDNN picks.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "devices/cpu/kernels/conv_common.h"
#include "runtime/core/tensor.h"

namespace tessera::cpu::nn {

dnnl::engine& dnnl_cpu_engine();

struct DnnlConvDims {
  explicit DnnlConvDims(const ConvGeometry& g);

  dnnl::memory::dims src, dst, weights, bias, strides, dilates, pad_l, pad_r;
  dnnl::memory::format_tag weights_tag;  // oihw, or goihw for grouped convolutions

  // f32 descriptions in format "any" (oneDNN picks a blocked layout).
  dnnl::memory::desc any_src() const;
  dnnl::memory::desc any_dst() const;
  dnnl::memory::desc any_weights() const;
  dnnl::memory::desc plain_bias() const;
  // Our layouts: src and dst NCHW, weights OIHW (GOIHW).
  dnnl::memory::desc plain_src() const;
  dnnl::memory::desc plain_dst() const;
  dnnl::memory::desc plain_weights() const;

  // The forward training description, the hint the backward primitives need.
  dnnl::convolution_forward::primitive_desc forward_training(bool with_bias) const;
};

// `user` (memory over one of our contiguous tensors) in layout `want`:
// user itself, or a reordered copy.
dnnl::memory to_layout(const dnnl::memory& user, const dnnl::memory::desc& want,
                       dnnl::stream& strm);

}  // namespace tessera::cpu::nn
