#include "devices/cpu/kernels/conv_dnnl.h"

namespace tessera::cpu::nn {

using dnnl::memory;

dnnl::engine& dnnl_cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
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
      weights_tag(g.groups == 1 ? memory::format_tag::oihw : memory::format_tag::goihw) {}

memory::desc DnnlConvDims::any_src() const {
  return {src, memory::data_type::f32, memory::format_tag::any};
}
memory::desc DnnlConvDims::any_dst() const {
  return {dst, memory::data_type::f32, memory::format_tag::any};
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
                      any_src(), any_weights(), plain_bias(), any_dst(), strides, dilates, pad_l,
                      pad_r)
                : dnnl::convolution_forward::desc(
                      dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                      any_src(), any_weights(), any_dst(), strides, dilates, pad_l, pad_r);
  return dnnl::convolution_forward::primitive_desc(desc, dnnl_cpu_engine());
}

memory to_layout(const memory& user, const memory::desc& want, dnnl::stream& strm) {
  if (user.get_desc() == want) return user;
  memory out(want, dnnl_cpu_engine());
  dnnl::reorder(user, out).execute(strm, const_cast<memory&>(user), out);
  return out;
}

}  // namespace tessera::cpu::nn
