#include "devices/cpu/kernels/conv_dnnl.h"

#include "runtime/ops/ops.h"

namespace tessera::cpu::nn {

using dnnl::memory;

dnnl::engine& dnnl_cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// nChw16c / nChw8c after the widest vector oneDNN will use here, when the
// channels divide into blocks; "any" otherwise (a ragged last block would
// make oneDNN pad every activation).
memory::format_tag blocked_activation_tag(int64_t channels) {
  static const int64_t block =
      dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core ? 16 : 8;
  if (channels % block != 0) return memory::format_tag::any;
  return block == 16 ? memory::format_tag::nChw16c : memory::format_tag::nChw8c;
}

DnnlConvDims::DnnlConvDims(const ConvGeometry& g)
    : src{g.n, g.cin, g.h, g.w},
      dst{g.n, g.cout, g.oh, g.ow},
      weights(g.groups == 1 ? memory::dims{g.cout, g.cin_g, g.kh, g.kw}
                            : memory::dims{g.groups, g.cout / g.groups, g.cin_g, g.kh, g.kw}),
      bias{g.cout},
      strides{g.sh, g.sw},
      dilates{g.dh - 1, g.dw - 1},  // oneDNN counts the gaps: 0 is undilated
      pad_l{g.ph, g.pw},
      // The right padding that yields exactly oh x ow outputs.
      pad_r{(g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.h - g.ph,
            (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.w - g.pw},
      weights_tag(g.groups == 1 ? memory::format_tag::oihw : memory::format_tag::goihw),
      src_tag(blocked_activation_tag(g.cin)),
      dst_tag(blocked_activation_tag(g.cout)) {}

memory::desc DnnlConvDims::compute_src() const {
  return {src, memory::data_type::f32, src_tag};
}
memory::desc DnnlConvDims::compute_dst() const {
  return {dst, memory::data_type::f32, dst_tag};
}
memory::desc DnnlConvDims::any_weights() const {
  return {weights, memory::data_type::f32, memory::format_tag::any};
}
memory::desc DnnlConvDims::plain_bias() const {
  return {bias, memory::data_type::f32, memory::format_tag::x};
}
memory::desc DnnlConvDims::plain_src() const {
  return {src, memory::data_type::f32, memory::format_tag::nchw};
}
memory::desc DnnlConvDims::plain_dst() const {
  return {dst, memory::data_type::f32, memory::format_tag::nchw};
}
memory::desc DnnlConvDims::plain_weights() const {
  return {weights, memory::data_type::f32, weights_tag};
}

dnnl::convolution_forward::primitive_desc DnnlConvDims::forward_training(bool with_bias) const {
  const auto desc =
      with_bias ? dnnl::convolution_forward::desc(
                      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                      compute_src(), any_weights(), plain_bias(), compute_dst(), strides, dilates, pad_l,
                      pad_r)
                : dnnl::convolution_forward::desc(
                      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                      compute_src(), any_weights(), compute_dst(), strides, dilates, pad_l, pad_r);
  return dnnl::convolution_forward::primitive_desc(desc, dnnl_cpu_engine());
}

BatchSlices batch_slices(int64_t n) {
  const int64_t threads = max_threads();
  if (threads <= 1 || n < threads || (n % threads != 0 && n < 4 * threads)) return {1, n};
  const int64_t per = (n + threads - 1) / threads;
  return {(n + per - 1) / per, per};
}

memory DnnlBuffers::make(const memory::desc& desc) {
  blocks_.push_back(empty({static_cast<int64_t>(desc.get_size())},
                          TensorOptions(DType::kU8, host_device())));
  return memory(desc, dnnl_cpu_engine(), blocks_.back().data_ptr());
}

memory to_layout(const memory& user, const memory::desc& want, dnnl::stream& strm,
                 DnnlBuffers& buffers) {
  if (user.get_desc() == want) return user;
  memory out = buffers.make(want);
  dnnl::reorder(user, out).execute(strm, const_cast<memory&>(user), out);
  return out;
}

memory output_in_layout(const memory& user, const memory::desc& want, DnnlBuffers& buffers) {
  return user.get_desc() == want ? user : buffers.make(want);
}

void from_layout(memory& written, memory& user, dnnl::stream& strm) {
  if (written != user) dnnl::reorder(written, user).execute(strm, written, user);
}

}  // namespace tessera::cpu::nn
