// A ConvGeometry in oneDNN's terms, shared by the f32 convolution kernels
// (forward in conv_forward.cc, backward in conv_backward.cc): the engine,
// the dims, strides, dilations and paddings, a forward description, and
// the moves between our NCHW tensors and the layouts oneDNN picks.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

#include "devices/cpu/kernels/conv_common.h"
#include "devices/cpu/kernels/gemm_dnnl.h"
#include "devices/cpu/kernels/parallel.h"
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

// The output side of to_layout: memory in layout `want` for a primitive to
// write, `user` itself when its layout is already that one, else a buffer
// from `buffers` that from_layout then reorders into user.
dnnl::memory output_in_layout(const dnnl::memory& user, const dnnl::memory::desc& want,
                              DnnlBuffers& buffers);
void from_layout(dnnl::memory& written, dnnl::memory& user, dnnl::stream& strm);

// A convolution's batch as slices of whole images, each run as one oneDNN
// call on a oneTBB thread with an OpenMP team of one. Debian's oneDNN
// runs on OpenMP, whose threads spin for milliseconds after a primitive:
// the oneTBB ops after it (layer norm and the pointwise GEMMs of a
// ConvNeXt block) ran on about one core, 1.5-2x slower than alone. A batch
// smaller than the thread count, or one that splits unevenly with fewer
// than four images a thread, makes one call on oneDNN's own team instead,
// which splits inside images.
struct BatchSlices {
  int64_t count;  // 1: one call on oneDNN's team
  int64_t per;    // images per slice (the last may have fewer)
  int64_t begin(int64_t s) const { return s * per; }
  int64_t size(int64_t s, int64_t n) const { return std::min(per, n - s * per); }
};

BatchSlices batch_slices(int64_t n);

// Calls f(first image, images) for each slice of the batch: in oneTBB
// tasks with an OpenMP team of one when there are several, else once on
// this thread with oneDNN's team sized to the kernels' threads.
template <typename F>
void for_each_slice(const BatchSlices& slices, int64_t n, const F& f) {
  if (slices.count == 1) {
    match_dnnl_threads();
    f(int64_t{0}, n);
    return;
  }
  parallel_for_each(slices.count, [&](int64_t s) {
    const DnnlOnThisThread one_thread;
    f(slices.begin(s), slices.size(s, n));
  });
}

// The geometry of a slice of `images` images.
inline ConvGeometry with_batch(ConvGeometry g, int64_t images) {
  g.n = images;
  return g;
}

// Whether oneDNN offers only its reference implementation for pd ("ref:any",
// a scalar loop per element): then the unfold-and-GEMM path of
// conv_gemm.h runs instead, hundreds of times faster.
inline bool reference_only(const dnnl::primitive_desc_base& pd) {
  return std::strncmp(pd.impl_info_str(), "ref", 3) == 0;
}

}  // namespace tessera::cpu::nn
