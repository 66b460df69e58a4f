// A ConvGeometry in oneDNN's terms, shared by the f32 convolution kernels
// (forward in conv_forward.cc, backward in conv_backward.cc): the engine,
// the dims, strides, dilations and paddings, a forward description, and
// the moves between our NCHW tensors and the layouts oneDNN picks.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <cstring>
#include <vector>

#include "devices/cpu/kernels/conv_common.h"
#include "runtime/core/tensor.h"

namespace tessera::cpu::nn {

dnnl::engine& dnnl_cpu_engine();

struct DnnlConvDims {
  explicit DnnlConvDims(const ConvGeometry& g);

  dnnl::memory::dims src, dst, weights, bias, strides, dilates, pad_l, pad_r;
  dnnl::memory::format_tag weights_tag;  // oihw, or goihw for grouped convolutions
  dnnl::memory::format_tag src_tag, dst_tag;  // see compute_src()

  // The layouts the convolution computes in. Activations: channels blocked
  // by the vector width (nChw16c with AVX-512, nChw8c with AVX2) when the
  // channel count divides, else "any". Left to "any", oneDNN 2.6 picks NHWC
  // for its brgemm kernels, and the NCHW -> NHWC reorder of the input costs
  // about a third of the convolution; the blocked reorder is 7x cheaper and
  // the direct kernel on it is faster too (measured in conv_dnnl.cc).
  // Weights: "any" (oneDNN's pick for that activation layout).
  dnnl::memory::desc compute_src() const;
  dnnl::memory::desc compute_dst() const;
  dnnl::memory::desc any_weights() const;
  dnnl::memory::desc plain_bias() const;
  // Our layouts: src and dst NCHW, weights OIHW (GOIHW).
  dnnl::memory::desc plain_src() const;
  dnnl::memory::desc plain_dst() const;
  dnnl::memory::desc plain_weights() const;

  // The forward training description, the hint the backward primitives need.
  dnnl::convolution_forward::primitive_desc forward_training(bool with_bias) const;
};

// Memory in oneDNN's layouts for one kernel call, taken from the CPU
// device's caching allocator and held until the call ends. Left to oneDNN,
// each call would malloc and free megabytes, which glibc returns to the
// system, so every call page-faulted them in again: a third of the
// ResNet convolution's time went to the reorders into and out of it.
class DnnlBuffers {
 public:
  dnnl::memory make(const dnnl::memory::desc& desc);

 private:
  std::vector<Tensor> blocks_;
};

// `user` (memory over one of our contiguous tensors) in layout `want`:
// user itself, or a reordered copy in memory from `buffers`.
dnnl::memory to_layout(const dnnl::memory& user, const dnnl::memory::desc& want,
                       dnnl::stream& strm, DnnlBuffers& buffers);

// Whether oneDNN offers only its reference implementation for pd ("ref:any",
// a scalar loop per element): then the unfold-and-GEMM path of
// conv_gemm.h runs instead, hundreds of times faster.
inline bool reference_only(const dnnl::primitive_desc_base& pd) {
  return std::strncmp(pd.impl_info_str(), "ref", 3) == 0;
}

}  // namespace tessera::cpu::nn
